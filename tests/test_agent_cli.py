"""``trioexec agent`` end to end: a subprocess on the real SDK against a local replaying server."""

from __future__ import annotations

import io
import json
import os
import re
import signal
import subprocess
import sys
import threading
from typing import TYPE_CHECKING, Any

import anthropic
import pytest
import trio
from messages_server import (
    Drop,
    MessagesServer,
    Raw,
    Status,
    WaitFor,
    message_start,
    response,
    stream_error,
    text,
    tool_use,
)

from trioexec import ToolRegistry, ToolUse
from trioexec._cli._agent_terminal import Display
from trioexec._cli._main import main
from trioexec.anthropic import FailedAttempt
from trioexec.tools import default_tools

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.filterwarnings(
    "ignore:Async generator '(anthropic|httpx|httpcore):ResourceWarning"
)


@pytest.fixture(autouse=True)
def _state_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Transcripts go to a temporary state home, never the user's."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("state")))


def _env(server: MessagesServer, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env.update(ANTHROPIC_BASE_URL=server.url, ANTHROPIC_API_KEY="dummy-key", **extra)
    return env


async def agent(
    server: MessagesServer, *args: str, stdin: bytes = b"", **env: str
) -> subprocess_result:
    with trio.fail_after(60):
        return await trio.run_process(
            [sys.executable, "-m", "trioexec", "agent", *args],
            stdin=stdin,
            capture_stdout=True,
            capture_stderr=True,
            check=False,
            env=_env(server, **env),
        )


subprocess_result = Any


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "notes.txt").write_text("alpha\nbeta\n")
    return tmp_path


async def test_agent_json_runs_a_tool_and_prints_the_whole_conversation(workspace: Path) -> None:
    turn_1 = response(
        text(0, "Reading it."),
        tool_use(1, "toolu_read", "Read", {"file_path": "notes.txt"}),
        tool_use(2, "toolu_grep", "Grep", {"pattern": "beta", "path": "."}),
        stop_reason="tool_use",
    )
    with MessagesServer([turn_1, response(text(0, "It says alpha, beta."))]) as server:
        done = await agent(
            server, "--cwd", str(workspace), "--json", "--model", "m-1", "read", "notes"
        )
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["turns"] == 2
    assert document["stop_reason"] == "end_turn"
    messages = document["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant"]
    assert messages[0] == {"role": "user", "content": "read notes"}
    answers = messages[2]["content"]
    assert [(a["type"], a["tool_use_id"]) for a in answers] == [
        ("tool_result", "toolu_read"),
        ("tool_result", "toolu_grep"),
    ]
    assert "alpha" in answers[0]["content"]
    assert not answers[0].get("is_error")
    first, second = server.requests
    assert first["model"] == "m-1"
    assert first["tools"] == ToolRegistry(default_tools(workspace)).to_api()
    assert str(workspace) in first["system"]
    assert second["messages"] == messages[:3]


async def test_agent_prints_streamed_text_and_live_tool_lines(workspace: Path) -> None:
    turn_1 = response(
        text(0, "Looking."), tool_use(1, "toolu_1", "Read", {"file_path": "notes.txt"}),
        stop_reason="tool_use",
    )  # fmt: skip
    with MessagesServer([turn_1, response(text(0, "Done."))]) as server:
        done = await agent(server, "--cwd", str(workspace), "go", ANTHROPIC_MODEL="env-model")
    assert done.returncode == 0, done.stderr
    out = done.stdout.decode()
    assert out.startswith("Looking.\n  ▶ Read(notes.txt)\n  ✓ Read(notes.txt)  ")
    assert out.endswith("Done.\n")
    assert server.requests[0]["model"] == "env-model"


@pytest.mark.parametrize("size", [10, 200_000], ids=["small", "persisted"])
async def test_the_session_folder_is_removed_unless_a_result_was_persisted_there(
    workspace: Path, tmp_path_factory: pytest.TempPathFactory, size: int
) -> None:
    temporary = tmp_path_factory.mktemp("tmp")
    (workspace / "big.txt").write_text("x" * size)
    turn_1 = response(
        tool_use(0, "toolu_cat", "Bash", {"command": "cat big.txt"}), stop_reason="tool_use"
    )
    with MessagesServer([turn_1, response(text(0, "Read it."))]) as server:
        done = await agent(
            server, "--cwd", str(workspace), "--permission-mode", "bypassPermissions", "go",
            TMPDIR=str(temporary),
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    left = list(temporary.glob("trioexec-agent-*"))
    if size < 30_000:
        assert left == []
    else:
        (folder,) = left  # the model was told to read the output there: it stays
        (saved,) = (folder / "tool-results").iterdir()
        assert saved.read_text() == "x" * size
        assert str(saved) in server.requests[1]["messages"][-1]["content"][0]["content"]


async def test_max_turns_reached_exits_1_with_one_line(workspace: Path) -> None:
    again = response(tool_use(0, "toolu_1", "Glob", {"pattern": "*.txt"}), stop_reason="tool_use")
    with MessagesServer([again]) as server:
        done = await agent(server, "--cwd", str(workspace), "--max-turns", "1", "--json", "go")
    assert done.returncode == 1
    lines = done.stderr.decode().splitlines()
    assert lines == [
        "trioexec agent: stopped after 1 turns (--max-turns) while the model still called tools"
    ]
    document = json.loads(done.stdout)
    assert document["stop_reason"] == "max_turns"
    assert document["messages"][-1]["content"][0]["tool_use_id"] == "toolu_1"


@pytest.mark.parametrize(
    ("failure", "error"),
    [
        (Drop(), "IncompleteStreamError: the stream ended before message_stop"),
        (stream_error(), "APIStatusError: Overloaded (path: /v1/messages, type: overloaded_error)"),
    ],
    ids=["dropped", "error-event"],
)
async def test_a_failed_stream_never_runs_a_sealed_side_effect_twice(
    workspace: Path, failure: Any, error: str
) -> None:
    command = "echo ran >> ran.log"
    cut = [
        message_start(),
        *text(0, "Logging."),
        *tool_use(1, "toolu_log", "Bash", {"command": command}),
        failure,
    ]
    with MessagesServer([cut, response(text(0, "Logged once."))]) as server:
        done = await agent(
            server, "--cwd", str(workspace), "--permission-mode", "bypassPermissions", "log it"
        )
    assert done.returncode == 0, done.stderr
    assert (workspace / "ran.log").read_text() == "ran\n"
    assert len(server.requests) == 2
    stdout = done.stdout.decode()
    assert re.fullmatch(
        r"Logging\.\n  ▶ Bash\(echo ran >> ran\.log\)\n"
        r"  ✓ Bash\(echo ran >> ran\.log\)  \d+\.\d\ds\nLogged once\.\n",
        stdout,
    ), stdout
    assert done.stderr.decode().splitlines() == [
        f"trioexec agent: the stream failed after 1 tool call ({error}); "
        "the model continues from its result",
        "  Bash(echo ran >> ran.log): kept: it ran once, and the model is told its result",
    ]
    cut_message, answers = server.requests[1]["messages"][1:]
    assert cut_message["content"][-1]["id"] == "toolu_log"
    assert answers["content"][0]["tool_use_id"] == "toolu_log"
    assert "Your previous message was cut off" in answers["content"][-1]["text"]


async def test_a_malformed_event_is_retried_then_reported_as_a_stream_error(
    workspace: Path,
) -> None:
    bad = [message_start(), Raw("event: message_delta\ndata: {oops\n\n")]
    with MessagesServer([bad, bad, bad]) as server:
        done = await agent(server, "--cwd", str(workspace), "--json", "go")
    assert done.returncode == 1
    lines = done.stderr.decode().splitlines()
    assert lines[-1].startswith(
        "trioexec agent: stream error: MalformedStreamError: the stream sent a malformed "
        "event (JSONDecodeError: "
    )
    retried = [line for line in lines if "retrying" in line]
    assert len(retried) == 2
    assert retried[1].startswith(
        "trioexec agent: the stream failed (MalformedStreamError: the stream sent a malformed "
    )
    assert retried[1].endswith("; retrying (attempt 3)")
    assert len(server.requests) == 3
    assert json.loads(done.stdout)["stop_reason"] == "api_error"


async def test_no_api_key_is_a_usage_error_before_any_request(workspace: Path) -> None:
    with MessagesServer([response(text(0, "never sent"))]) as server:
        env = {k: v for k, v in _env(server).items() if k != "ANTHROPIC_API_KEY"}
        with trio.fail_after(60):
            done = await trio.run_process(
                [sys.executable, "-m", "trioexec", "agent", "--cwd", str(workspace), "go"],
                capture_stdout=True, capture_stderr=True, check=False, env=env,
            )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.decode().splitlines() == [
        "trioexec agent: no API key: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN for a "
        "bearer token)"
    ]
    assert done.stdout == b""
    assert server.requests == []


async def test_an_api_error_exits_1_with_one_line(workspace: Path) -> None:
    with MessagesServer([[Status(401, "authentication_error", "invalid x-api-key")]]) as server:
        done = await agent(server, "--cwd", str(workspace), "go")
    assert done.returncode == 1
    (line,) = done.stderr.decode().splitlines()
    assert line.startswith("trioexec agent: API error: AuthenticationError")
    assert "invalid x-api-key" in line


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--max-turns", "0", "go"], "must be at least 1"),
        (["--permission-mode", "yolo", "go"], "yolo"),
        (["--cwd", "/nonexistent/dir", "go"], "not a directory"),
        ([], "PROMPT"),
    ],
)
def test_usage_errors_exit_2(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    try:
        code = main(["agent", *args])
    except SystemExit as exit_:  # argparse's own usage errors
        code = exit_.code  # type: ignore[assignment]
    assert code == 2
    assert message in capsys.readouterr().err


async def test_an_ask_is_refused_with_its_own_reason_when_stdin_is_not_a_terminal(
    workspace: Path,
) -> None:
    settings = workspace / "ask.json"
    settings.write_text(json.dumps({"permissions": {"ask": ["Bash"]}}))
    turn_1 = response(
        tool_use(0, "toolu_sh", "Bash", {"command": "touch made"}), stop_reason="tool_use"
    )
    with MessagesServer([turn_1, response(text(0, "ok"))]) as server:
        done = await agent(
            server, "--cwd", str(workspace), "--settings", str(settings), "--json", "go"
        )
    assert done.returncode == 0, done.stderr
    (answer,) = json.loads(done.stdout)["messages"][2]["content"]
    assert answer["is_error"] is True
    # Claude Code's -p mode: the ask's own reason.
    assert answer["content"] == (
        "Claude requested permissions to use Bash, but you haven't granted it yet."
    )
    assert not (workspace / "made").exists()


@pytest.mark.parametrize(("answer", "runs"), [(b"y\n", True), (b"n\n", False)])
async def test_an_ask_is_a_question_on_a_terminal(
    workspace: Path, answer: bytes, runs: bool
) -> None:
    settings = workspace / "ask.json"
    settings.write_text(json.dumps({"permissions": {"ask": ["Bash"]}}))
    turn_1 = response(
        tool_use(0, "toolu_sh", "Bash", {"command": "touch made"}), stop_reason="tool_use"
    )
    controller, terminal = os.openpty()
    try:
        os.write(controller, answer)  # typed ahead: the terminal holds it for the prompt
        with MessagesServer([turn_1, response(text(0, "ok"))]) as server:
            with trio.fail_after(60):
                done = await trio.run_process(
                    [sys.executable, "-m", "trioexec", "agent", "--cwd", str(workspace),
                     "--settings", str(settings), "--json", "go"],
                    stdin=terminal, capture_stdout=True, capture_stderr=True, check=False,
                    env=_env(server),
                )  # fmt: skip
    finally:
        os.close(controller)
        os.close(terminal)
    assert done.returncode == 0, done.stderr
    assert "Allow Bash(touch made)? [y/N]" in done.stderr.decode()
    (result,) = json.loads(done.stdout)["messages"][2]["content"]
    assert (workspace / "made").exists() is runs
    assert bool(result.get("is_error")) is not runs
    if not runs:
        assert result["content"].startswith("The user doesn't want to proceed")


async def test_the_first_ctrl_c_interrupts_the_turn_and_the_second_aborts_it(
    workspace: Path,
) -> None:
    release = threading.Event()
    script = response(
        text(0, "Waiting."),
        tool_use(1, "toolu_sleep", "Bash", {"command": "sleep 30"}),  # "block": runs on
        [WaitFor(release, timeout=30)],
        stop_reason="tool_use",
    )
    out = bytearray()
    err = bytearray()

    async def read_until(stream: Any, into: bytearray, needle: bytes) -> None:
        while needle not in into:
            chunk = await stream.receive_some()
            if not chunk:
                raise AssertionError(f"{needle!r} never came: {bytes(into)!r}")
            into.extend(chunk)

    with MessagesServer([script]) as server:
        try:
            with trio.fail_after(30):
                process = await trio.lowlevel.open_process(
                    [sys.executable, "-m", "trioexec", "agent", "--cwd", str(workspace), "go"],
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    env=_env(server),
                )
                assert process.stdout is not None
                assert process.stderr is not None
                await read_until(process.stdout, out, "▶ Bash(sleep 30)".encode())
                process.send_signal(signal.SIGINT)
                await read_until(process.stderr, err, b"Ctrl-C again stops everything]")
                process.send_signal(signal.SIGINT)
                code = await process.wait()
                while chunk := await process.stdout.receive_some():
                    out.extend(chunk)
        finally:
            release.set()
    assert code == 130
    assert (
        b"[interrupting the turn: nothing new starts; still running: Bash(sleep 30). "
        b"Ctrl-C again stops everything]"
    ) in err  # the "block" Bash runs on after one Ctrl-C, and the line says so
    assert "⊘ Bash(sleep 30)".encode() in out
    assert b"user_interrupted" in out
    assert len(server.requests) == 1


def test_the_terminal_says_what_became_of_each_call_of_a_discarded_attempt() -> None:
    """Under a Claude Code preset (``stream_failure="retry"``) each call's fate is one line."""
    out, err = io.StringIO(), io.StringIO()
    display = Display(out, err, quiet=False)
    calls = [
        ToolUse("toolu_1", "Bash", {"command": "echo ran >> ran.log"}),
        ToolUse("toolu_2", "Bash", {"command": "sleep 30"}),
        ToolUse("toolu_3", "Read", {"file_path": "notes.txt"}),
    ]
    for call in calls:
        display.describe(call)
    failure = anthropic.APIConnectionError(request=None)  # type: ignore[arg-type]
    fates = ("discarded", "cancelled", "not_started")
    display.stream_failed(FailedAttempt(1, failure, False, tuple(zip(calls, fates, strict=True))))
    display.retry(1, failure)
    assert err.getvalue().splitlines() == [
        "trioexec agent: the stream failed (APIConnectionError: Connection error.); attempt 1 "
        "and its 3 tool calls are discarded",
        "  Bash(echo ran >> ran.log): ran to its end; its result is discarded (the model is not "
        "told it ran)",
        "  Bash(sleep 30): stopped while running (it may have done part of its work); its result "
        "is discarded",
        "  Read(notes.txt): never started",
        "trioexec agent: retrying (attempt 2)",
    ]
