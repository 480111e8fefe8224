"""Session transcripts: one JSON line per message, written as the agent adds it, read by hooks."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import trio
from messages_server import MessagesServer, response, text, tool_use

from trioexec import GuardRails
from trioexec._anthropic._transcript import Transcript, default_transcript_path
from trioexec._cli._main import main
from trioexec._errors import ConfigurationError

if TYPE_CHECKING:
    import subprocess

pytestmark = pytest.mark.filterwarnings(
    "ignore:Async generator '(anthropic|httpx|httpcore):ResourceWarning"
)

COPY_HOOK = """\
import json, shutil, sys
from pathlib import Path
data = json.load(sys.stdin)
out = Path(sys.argv[1])
(out / (data["tool_use_id"] + ".input.json")).write_text(json.dumps(data))
if data["transcript_path"]:
    shutil.copyfile(data["transcript_path"], out / (data["tool_use_id"] + ".jsonl"))
"""


@pytest.fixture
def state_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path_factory.mktemp("state")
    monkeypatch.setenv("XDG_STATE_HOME", str(home))
    return home


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "notes.txt").write_text("alpha\nbeta\n")
    return tmp_path


def _lines(path: Path) -> list[dict[str, Any]]:
    raw = path.read_text(encoding="utf-8")
    assert raw.endswith("\n")
    return [json.loads(line) for line in raw.splitlines()]


def _empty(folder: Path) -> bool:
    return not any(folder.iterdir())


def _copy_hook_settings(tmp_path: Path) -> tuple[Path, Path]:
    copies = tmp_path / "copies"
    copies.mkdir()
    script = tmp_path / "copy_hook.py"
    script.write_text(COPY_HOOK)
    settings = tmp_path / "settings.json"
    command = f"{sys.executable} {script} {copies}"
    hook = {"matcher": "Read", "hooks": [{"type": "command", "command": command}]}
    settings.write_text(json.dumps({"hooks": {"PreToolUse": [hook]}}))
    return settings, copies


async def _agent(server: MessagesServer, *args: str) -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env.update(ANTHROPIC_BASE_URL=server.url, ANTHROPIC_API_KEY="dummy-key")
    with trio.fail_after(60):
        return await trio.run_process(
            [sys.executable, "-m", "trioexec", "agent", *args],
            stdin=b"",
            capture_stdout=True,
            capture_stderr=True,
            check=False,
            env=env,
        )


def _two_reads() -> list[Any]:
    read = {"file_path": "notes.txt"}
    return [
        response(tool_use(0, "toolu_1", "Read", read), stop_reason="tool_use"),
        response(text(0, "Again."), tool_use(1, "toolu_2", "Read", read), stop_reason="tool_use"),
        response(text(0, "Done.")),
    ]


def test_each_line_carries_the_fields_hooks_read_chained_by_parent_uuid(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "er" / "t.jsonl"
    with Transcript(path, session_id="s-1", cwd=tmp_path) as transcript:
        first = transcript.append({"role": "user", "content": "hi"})
        reply = {"role": "assistant", "content": [{"type": "text", "text": "yo"}]}
        second = transcript.append(reply)
    lines = _lines(path)
    assert [line["type"] for line in lines] == ["user", "assistant"]
    assert [line["uuid"] for line in lines] == [first, second]
    assert [line["parentUuid"] for line in lines] == [None, first]
    assert {line["sessionId"] for line in lines} == {"s-1"}
    assert {line["cwd"] for line in lines} == {str(tmp_path)}
    assert lines[0]["message"] == {"role": "user", "content": "hi"}
    assert lines[1]["timestamp"].endswith("Z")
    assert transcript.path.is_absolute()
    with pytest.raises(ValueError, match="closed"):
        transcript.append({"role": "user", "content": "late"})


@pytest.mark.parametrize("kind", ["directory", "under a file"])
def test_a_path_that_cannot_be_written_is_a_configuration_error(tmp_path: Path, kind: str) -> None:
    (tmp_path / "file").write_text("")
    path = tmp_path if kind == "directory" else tmp_path / "file" / "t.jsonl"
    with pytest.raises(ConfigurationError, match="cannot write the transcript") as caught:
        Transcript(path)
    assert str(path) in str(caught.value)


def test_the_default_path_names_the_project_as_claude_code_does(state_home: Path) -> None:
    path = default_transcript_path(Path("/home/me/app"), "abc")
    assert path == state_home / "trioexec" / "projects" / "-home-me-app" / "abc.jsonl"
    with pytest.raises(ValueError, match="session id"):
        default_transcript_path(Path("/x"), "../escape")


def test_the_agent_gives_its_guard_rails_the_transcript_path_and_session(tmp_path: Path) -> None:
    anthropic = pytest.importorskip("anthropic")
    from trioexec.anthropic import Agent

    with Transcript(tmp_path / "t.jsonl", session_id="s-9") as transcript:
        agent = Agent(
            anthropic.AsyncAnthropic(api_key="k"),
            tools=[],
            model="m",
            guard=GuardRails(session_id="other"),
            transcript=transcript,
        )
    assert agent.guard is not None
    assert agent.guard.transcript_path == str(tmp_path / "t.jsonl")
    assert agent.guard.session_id == "s-9"


async def test_a_command_hook_reading_transcript_path_sees_every_earlier_message(
    workspace: Path, tmp_path_factory: pytest.TempPathFactory, state_home: Path
) -> None:
    settings, copies = _copy_hook_settings(tmp_path_factory.mktemp("hook"))
    transcript = tmp_path_factory.mktemp("out") / "session.jsonl"
    with MessagesServer(_two_reads()) as server:
        done = await _agent(
            server, "--cwd", str(workspace), "--settings", str(settings),
            "--transcript", str(transcript), "--json", "read", "it",
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    messages = json.loads(done.stdout)["messages"]
    lines = _lines(transcript)
    assert [line["message"] for line in lines] == messages  # one line per message, in order
    assert [line["type"] for line in lines] == [m["role"] for m in messages]
    hook_input = json.loads((copies / "toolu_2.input.json").read_text())
    assert hook_input["transcript_path"] == str(transcript)
    assert {line["sessionId"] for line in lines} == {hook_input["session_id"]}
    # The first hook saw the prompt; the second the prompt, turn 1 and its results.
    assert _lines(copies / "toolu_1.jsonl") == lines[:1]
    assert _lines(copies / "toolu_2.jsonl") == lines[:3]
    assert _empty(state_home)  # --transcript: nothing at the default place


async def test_by_default_the_transcript_is_under_the_state_home(
    workspace: Path, state_home: Path
) -> None:
    with MessagesServer([response(text(0, "Hi."))]) as server:
        done = await _agent(server, "--cwd", str(workspace), "--json", "hello")
    assert done.returncode == 0, done.stderr
    folder = state_home / "trioexec" / "projects" / str(workspace).replace("/", "-")
    (path,) = folder.iterdir()
    lines = _lines(path)
    assert [line["type"] for line in lines] == ["user", "assistant"]
    assert path.name == f"{lines[0]['sessionId']}.jsonl"


async def test_no_transcript_writes_nothing_and_hooks_get_an_empty_path(
    workspace: Path, tmp_path_factory: pytest.TempPathFactory, state_home: Path
) -> None:
    settings, copies = _copy_hook_settings(tmp_path_factory.mktemp("hook"))
    with MessagesServer(_two_reads()) as server:
        done = await _agent(
            server, "--cwd", str(workspace), "--settings", str(settings), "--no-transcript",
            "--json", "read",
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads((copies / "toolu_1.input.json").read_text())["transcript_path"] == ""
    assert _empty(state_home)
    assert not list(copies.glob("*.jsonl"))


async def test_an_unwritable_transcript_is_a_usage_error_before_any_request(
    workspace: Path,
) -> None:
    with MessagesServer([response(text(0, "Hi."))]) as server:
        done = await _agent(
            server, "--cwd", str(workspace), "--transcript", str(workspace / "notes.txt" / "t"),
            "hello",
        )  # fmt: skip
        assert server.requests == []
    assert done.returncode == 2
    err = done.stderr.decode()
    assert "trioexec agent: --transcript: cannot write the transcript" in err
    assert "notes.txt/t" in err


@pytest.mark.parametrize(
    "args", [["--help"], ["--cwd", "/nonexistent/dir", "hi"], ["--transcript", "x"]]
)
def test_help_and_usage_errors_write_no_transcript(
    args: list[str], state_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    try:
        code = main(["agent", *args])
    except SystemExit as exit_:
        code = exit_.code  # type: ignore[assignment]
    assert code in (0, 2)
    assert not any(state_home.iterdir())
    assert not any(tmp_path.iterdir())


def test_both_transcript_options_at_once_is_a_usage_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["agent", "--transcript", "x", "--no-transcript", "hi"])
    assert exit_.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err
