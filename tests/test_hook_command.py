"""Command hooks as real subprocesses: stdin JSON, exit codes, JSON output, timeouts, kills.

Every hook here is a shell script the test writes into a temporary directory.
These tests use real time (MockClock cannot drive subprocesses); waits are
bounded with ``trio.fail_after``.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import trio

from trioexec import (
    CallContext,
    PermissionResult,
    Policy,
    ProgressSender,
    Tool,
    ToolResult,
    ToolUse,
    function_tool,
    run_tools,
)
from trioexec._guard._after import after_call
from trioexec._guard._rails import GuardRails, authorize_call
from trioexec._hooks import _config as _hooks
from trioexec._hooks._command import CommandRun, interpret_command_run, run_command
from trioexec._hooks._config import HookSet
from trioexec._hooks._output import HookResult

if TYPE_CHECKING:
    from trioexec._models import JSONValue

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="checks processes through /proc"
)

Input = dict[str, Any]


class Shell(Tool[Input]):
    """A Bash-like tool whose own permission check is scripted."""

    name = "Bash"

    def __init__(self, own: PermissionResult | None = None) -> None:
        self.own = own if own is not None else PermissionResult.allow()

    async def check_permissions(self, input: Input, ctx: CallContext) -> PermissionResult:  # noqa: A002
        return self.own


def script(tmp_path: Path, name: str, body: str) -> str:
    """Write an executable ``/bin/sh`` script; return the command that runs it."""
    path = tmp_path / name
    path.write_text("#!/bin/sh\n" + body, encoding="utf-8")
    path.chmod(0o755)
    return str(path)


def guard_with(
    *commands: str, event: str = "PreToolUse", timeout: float = 20, **kw: Any
) -> GuardRails:
    hooks = HookSet()
    for command in commands:
        hooks = hooks.with_command_hook(event, "Bash", command, timeout=timeout)  # type: ignore[arg-type]
    return GuardRails(hooks=hooks, **kw)


TOOL_USE = ToolUse("toolu_1", "Bash", {"command": "ls"})


async def authorize(
    guard: GuardRails,
    tool: Tool[Any] | None = None,
    cwd: Path | None = None,
    *,
    hooks_fail_closed: bool = True,
) -> Any:
    ctx = CallContext(TOOL_USE, cwd=cwd or Path.cwd())
    with trio.fail_after(30):
        return await authorize_call(
            guard,
            tool or Shell(),
            TOOL_USE,
            dict(TOOL_USE.input),
            ctx,
            hooks_fail_closed=hooks_fail_closed,
        )


def alive(pid: int) -> bool:
    """Whether ``pid`` is a running (not zombie) process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except FileNotFoundError:
        return False
    return stat[stat.rfind(b")") + 2 :].split()[0] not in (b"Z", b"X")


def group_alive(pgid: int) -> bool:
    """Whether any running process belongs to process group ``pgid``."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_bytes()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        if int(fields[2]) == pgid and fields[0] not in (b"Z", b"X"):
            return True
    return False


async def read_fifo_line(path: Path) -> str:
    """Wait (without blocking trio) for one line written to the FIFO at ``path``."""
    reader = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    keep_open = os.open(path, os.O_WRONLY | os.O_NONBLOCK)  # reads then wait instead of EOF
    stream = trio.lowlevel.FdStream(reader)
    try:
        data = b""
        while not data.endswith(b"\n"):
            data += await stream.receive_some()
        return data.decode()
    finally:
        await stream.aclose()
        os.close(keep_open)


# --- stdin ----------------------------------------------------------------------------------


async def test_pre_tool_use_stdin_env_and_cwd(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    cmd = script(
        tmp_path,
        "record.sh",
        f'cat > "{out}/stdin.json"\nprintf %s "$CLAUDE_PROJECT_DIR" > "{out}/env"\n'
        f'pwd > "{out}/pwd"\n',
    )
    guard = guard_with(cmd, session_id="sess-1", transcript_path="/t.jsonl")
    verdict = await authorize(guard, cwd=tmp_path)
    assert verdict.allowed
    assert json.loads((out / "stdin.json").read_text()) == {
        "session_id": "sess-1",
        "transcript_path": "/t.jsonl",
        "cwd": str(tmp_path),
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "ls"},
        "tool_use_id": "toolu_1",
    }
    assert (out / "env").read_text() == str(tmp_path)
    assert (out / "pwd").read_text().strip() == str(tmp_path)


async def test_bypass_mode_is_reported_with_claude_codes_name(tmp_path: Path) -> None:
    cmd = script(tmp_path, "record.sh", f'cat > "{tmp_path}/stdin.json"\n')
    guard = GuardRails.from_settings(
        {
            "permissions": {"defaultMode": "bypassPermissions"},
            "hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": cmd}]}]},
        }
    )
    await authorize(guard)
    assert (
        json.loads((tmp_path / "stdin.json").read_text())["permission_mode"] == "bypassPermissions"
    )


async def test_post_tool_use_and_failure_stdin(tmp_path: Path) -> None:
    cmd = script(
        tmp_path,
        "record.sh",
        f'cat >> "{tmp_path}/stdin.jsonl"\necho >> "{tmp_path}/stdin.jsonl"\n',
    )
    hooks = (
        HookSet()
        .with_command_hook("PostToolUse", "*", cmd)
        .with_command_hook("PostToolUseFailure", "*", cmd)
    )
    guard = GuardRails(hooks=hooks)
    response = ToolResult("toolu_1", "file1\nfile2")
    with trio.fail_after(30):
        await after_call(guard, Shell(), TOOL_USE, TOOL_USE.input, response=response, cwd=tmp_path)
        await after_call(
            guard,
            Shell(),
            TOOL_USE,
            TOOL_USE.input,
            response=None,
            error="Exit code 1",
            is_interrupt=True,
        )
    post, failure = (
        json.loads(line) for line in (tmp_path / "stdin.jsonl").read_text().split("\n") if line
    )
    assert post["hook_event_name"] == "PostToolUse"
    assert post["tool_response"] == "file1\nfile2"
    assert "error" not in post
    assert failure["hook_event_name"] == "PostToolUseFailure"
    assert (failure["error"], failure["is_interrupt"]) == ("Exit code 1", True)
    assert "tool_response" not in failure


# --- JSON output ----------------------------------------------------------------------------


def pre_json(**specific: JSONValue) -> str:
    return json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", **specific}})


async def test_json_allow_overrides_a_passthrough_tool(tmp_path: Path) -> None:
    cmd = script(tmp_path, "allow.sh", f"echo '{pre_json(permissionDecision='allow')}'\n")
    verdict = await authorize(guard_with(cmd), Shell(PermissionResult.passthrough()))
    assert verdict.allowed
    assert verdict.message is None


async def test_json_deny_with_and_without_reason(tmp_path: Path) -> None:
    bare = script(tmp_path, "deny.sh", f"echo '{pre_json(permissionDecision='deny')}'\n")
    verdict = await authorize(guard_with(bare))
    assert not verdict.allowed
    assert verdict.message == "Hook PreToolUse:Bash denied this tool"
    output = pre_json(permissionDecision="deny", permissionDecisionReason="Use rg, not grep")
    reasoned = script(tmp_path, "deny2.sh", f"echo '{output}'\n")
    verdict = await authorize(guard_with(reasoned))
    assert verdict.message == "Use rg, not grep"


async def test_json_decides_whatever_the_exit_code(tmp_path: Path) -> None:
    deny = script(tmp_path, "deny.sh", f"echo '{pre_json(permissionDecision='deny')}'\nexit 1\n")
    assert not (await authorize(guard_with(deny))).allowed
    allow = script(
        tmp_path,
        "allow.sh",
        f"echo '{pre_json(permissionDecision='allow')}'\necho err >&2\nexit 2\n",
    )
    passthrough = Shell(PermissionResult.passthrough())
    assert (await authorize(guard_with(allow), passthrough)).allowed


async def test_json_updated_input_and_context(tmp_path: Path) -> None:
    output = pre_json(
        permissionDecision="allow",
        updatedInput={"command": "ls -la"},
        additionalContext="listing is cheap",
    )
    cmd = script(tmp_path, "rewrite.sh", f"echo '{output}'\n")
    verdict = await authorize(guard_with(cmd))
    assert verdict.allowed
    assert verdict.input == {"command": "ls -la"}
    assert [(a.kind, a.text) for a in verdict.attachments] == [
        ("additional_context", "listing is cheap")
    ]


async def test_json_continue_false(tmp_path: Path) -> None:
    cmd = script(
        tmp_path, "stop.sh", """echo '{"continue": false, "stopReason": "quota reached"}'\n"""
    )
    verdict = await authorize(guard_with(cmd))
    assert verdict.allowed  # the tool may still run
    assert verdict.stop_reason == "quota reached"
    assert [(a.kind, a.text) for a in verdict.attachments] == [
        ("hook_stopped_continuation", "quota reached")
    ]


async def test_stdout_that_is_not_json_falls_back_to_the_exit_code(tmp_path: Path) -> None:
    cmd = script(tmp_path, "bad.sh", "echo '{\"hookSpecificOutput\": '\nexit 0\n")
    verdict = await authorize(guard_with(cmd))
    assert verdict.allowed  # exit 0, plain output: success, no decision
    assert verdict.hook_errors == ()


async def test_mismatched_event_name_is_a_non_blocking_error(tmp_path: Path) -> None:
    output = json.dumps(
        {"hookSpecificOutput": {"hookEventName": "PostToolUse", "permissionDecision": "deny"}}
    )
    cmd = script(tmp_path, "wrong.sh", f"echo '{output}'\n")
    verdict = await authorize(guard_with(cmd))
    assert verdict.allowed
    assert "hookEventName: expected 'PreToolUse'" in verdict.hook_errors[0]


# --- exit codes -----------------------------------------------------------------------------


async def test_exit_2_with_stderr_denies(tmp_path: Path) -> None:
    cmd = script(tmp_path, "block.sh", "echo 'rm is not allowed here' >&2\nexit 2\n")
    verdict = await authorize(guard_with(cmd))
    assert not verdict.allowed
    # stderr verbatim, its newline included, as Claude Code passes it on
    assert verdict.message == f"PreToolUse:Bash hook error: [{cmd}]: rm is not allowed here\n"


async def test_exit_2_without_stderr_denies(tmp_path: Path) -> None:
    cmd = script(tmp_path, "block.sh", "echo 'stdout is not the reason'\nexit 2\n")
    verdict = await authorize(guard_with(cmd))
    assert verdict.message == f"PreToolUse:Bash hook error: [{cmd}]: No stderr output"


async def test_other_exit_codes_are_non_blocking(tmp_path: Path) -> None:
    cmd = script(tmp_path, "fail.sh", "echo oops >&2\nexit 1\n")
    verdict = await authorize(guard_with(cmd))
    assert verdict.allowed
    assert verdict.hook_errors == (
        f"PreToolUse:Bash hook [{cmd}] failed: Failed with non-blocking status code 1: oops",
    )


async def test_exit_0_plain_output_is_success_without_decision(tmp_path: Path) -> None:
    cmd = script(tmp_path, "ok.sh", "echo all good\n")
    verdict = await authorize(guard_with(cmd), Shell(PermissionResult.passthrough()))
    # no decision: the passthrough becomes an ask, and with no callback a denial
    assert (
        verdict.message
        == "Claude requested permissions to use Bash, but you haven't granted it yet."
    )
    assert verdict.hook_errors == ()


async def test_missing_script_and_missing_cwd(tmp_path: Path) -> None:
    verdict = await authorize(guard_with(str(tmp_path / "nope.sh")))
    assert verdict.allowed
    assert "Failed with non-blocking status code 127" in verdict.hook_errors[0]
    cmd = script(tmp_path, "ok.sh", "exit 0\n")
    # A hook that cannot start: no decision as in Claude Code; trioexec fails closed.
    verdict = await authorize(guard_with(cmd), cwd=tmp_path / "gone", hooks_fail_closed=False)
    assert verdict.allowed
    assert "could not start" in verdict.hook_errors[0]
    verdict = await authorize(guard_with(cmd), cwd=tmp_path / "gone")
    assert not verdict.allowed
    assert verdict.message.startswith(f"PreToolUse:Bash hook error: the hook [{cmd}] could not")


async def test_post_tool_use_exit_2_is_a_blocking_error_record(tmp_path: Path) -> None:
    cmd = script(tmp_path, "lint.sh", "echo 'line 3: unused import' >&2\nexit 2\n")
    guard = guard_with(cmd, event="PostToolUse")
    with trio.fail_after(30):
        verdict = await after_call(
            guard, Shell(), TOOL_USE, TOOL_USE.input, response=ToolResult("toolu_1", "ok")
        )
    assert [(a.tool_use_id, a.kind, a.text) for a in verdict.attachments] == [
        ("toolu_1", "hook_blocking_error", f"[{cmd}]: line 3: unused import\n")
    ]


# --- concurrency, de-duplication, timeouts, kills -----------------------------------------


async def test_matching_command_hooks_run_concurrently(tmp_path: Path) -> None:
    # a writes to f1 then reads f2; b reads f1 then writes f2: run one after the
    # other, the first would wait forever for its partner.
    f1, f2 = tmp_path / "f1", tmp_path / "f2"
    os.mkfifo(f1)
    os.mkfifo(f2)
    ctx = """'{"hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": "%s"}}'"""
    a = script(tmp_path, "a.sh", f'echo a > "{f1}"\nread x < "{f2}"\necho {ctx % "a"}\n')
    b = script(tmp_path, "b.sh", f'read x < "{f1}"\necho b > "{f2}"\necho {ctx % "b"}\n')
    verdict = await authorize(guard_with(a, b, timeout=10))
    assert verdict.hook_errors == ()
    assert [a.text for a in verdict.attachments] == ["a", "b"]  # hook order, not finish order


async def test_identical_commands_run_once(tmp_path: Path) -> None:
    counter = tmp_path / "count"
    cmd = script(tmp_path, "count.sh", f'echo run >> "{counter}"\n')
    hooks = (
        HookSet()
        .with_command_hook("PreToolUse", "Bash", cmd)
        .with_command_hook("PreToolUse", "*", cmd)
        .with_command_hook("PreToolUse", "Bash|Read", cmd)
    )
    await authorize(GuardRails(hooks=hooks))
    assert counter.read_text() == "run\n"


async def test_a_hook_that_times_out_gives_no_decision_and_is_killed(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    body = (
        f'sleep 1000 &\necho "$$ $!" > "{pids}"\nwait\n'
        f"echo '{pre_json(permissionDecision='deny')}'\n"
    )
    cmd = script(tmp_path, "slow.sh", body)
    verdict = await authorize(guard_with(cmd, timeout=1))
    assert verdict.allowed  # the tool proceeds
    assert verdict.hook_errors == (f"PreToolUse:Bash hook [{cmd}] failed: timed out after 1 s",)
    shell, child = map(int, pids.read_text().split())
    assert not alive(shell)
    assert not alive(child)
    assert not group_alive(shell)


async def test_aborting_the_turn_kills_the_hook_process_group(tmp_path: Path) -> None:
    ready = tmp_path / "ready"
    os.mkfifo(ready)
    cmd = script(tmp_path, "hang.sh", f'sleep 1000 &\necho "$$ $!" > "{ready}"\nwait\n')
    guard = guard_with(cmd, timeout=600)
    returned: list[object] = []
    turn = trio.CancelScope()

    async def call() -> None:
        with turn:
            returned.append(await authorize(guard))

    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(call)
            shell, child = map(int, (await read_fifo_line(ready)).split())
            assert alive(shell)
            assert alive(child)
            turn.cancel(reason="test abort")
    assert turn.cancelled_caught  # Cancelled propagated out of authorize_call
    assert returned == []
    assert not alive(shell)
    assert not alive(child)
    assert not group_alive(shell)


async def test_background_processes_left_by_a_finished_hook_are_killed(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    cmd = script(tmp_path, "leave.sh", f'sleep 1000 &\necho $! > "{pids}"\nexit 0\n')
    verdict = await authorize(guard_with(cmd))
    assert verdict.allowed
    assert verdict.hook_errors == ()
    child = int(pids.read_text())
    assert not alive(child)


OWN_GROUP_CHILD = (
    "import os, select, sys\n"
    "os.setpgid(0, 0)\n"
    "with open(sys.argv[1], 'w') as f:\n"
    "    f.write(str(os.getpid()) + '\\n')\n"
    "select.select([], [], [], 1000)  # wait, bounded, until killed\n"
)
"""A child that moves into a process group of its own inside the hook's session (as
coreutils ``timeout`` does), then writes its pid to the FIFO named by its argument."""


def own_group_hook(tmp_path: Path, then: str) -> tuple[str, Path]:
    """A hook that starts :data:`OWN_GROUP_CHILD` in the background, then runs ``then``
    (``$1`` there is the FIFO the child writes its pid to)."""
    ready = tmp_path / "ready"
    os.mkfifo(ready)
    (tmp_path / "child.py").write_text(OWN_GROUP_CHILD)
    body = f'set -- "{ready}"\n"{sys.executable}" "{tmp_path / "child.py"}" "$1" &\n{then}\n'
    return script(tmp_path, "own-group.sh", body), ready


def kill_group(pgid: int) -> None:
    """Clean up after a failed test."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGKILL)


async def test_a_finished_hook_ends_a_child_in_its_own_group(tmp_path: Path) -> None:
    # The hook prints the child's pid once the child has left the hook's group.
    cmd, _ = own_group_hook(tmp_path, 'cat "$1"')
    with trio.fail_after(30):
        run = await run_command(cmd, b"", cwd=tmp_path)
    child = int(run.stdout)
    try:
        assert run.returncode == 0
        assert not alive(child)
        assert not group_alive(child)
    finally:
        kill_group(child)


async def test_cancelling_a_hook_ends_a_child_in_its_own_group(tmp_path: Path) -> None:
    cmd, ready = own_group_hook(tmp_path, "wait")
    finished: list[CommandRun] = []

    async def run() -> None:
        finished.append(await run_command(cmd, b"", cwd=tmp_path))

    child = 0
    try:
        with trio.fail_after(30):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(run)
                child = int(await read_fifo_line(ready))
                assert alive(child)
                assert group_alive(child)
                nursery.cancel_scope.cancel(reason="test abort")
        assert finished == []
        assert not alive(child)
        assert not group_alive(child)
    finally:
        if child:
            kill_group(child)


# --- the runner itself ------------------------------------------------------------------------


async def test_output_is_capped_and_the_rest_drained(tmp_path: Path) -> None:
    cmd = script(tmp_path, "chatty.sh", "head -c 300000 /dev/zero | tr '\\0' x\necho tail >&2\n")
    with trio.fail_after(30):
        run = await run_command(cmd, b"", cwd=tmp_path, limit=10)
    assert run == CommandRun(0, "x" * 10, "tail\n")


async def test_stdin_is_delivered_even_when_unread(tmp_path: Path) -> None:
    ignore = script(tmp_path, "ignore.sh", "exit 0\n")
    echo = script(tmp_path, "echo.sh", "cat\n")
    big = b"y" * 500_000
    with trio.fail_after(30):
        assert (await run_command(ignore, big, cwd=tmp_path)).returncode == 0
        run = await run_command(echo, big, cwd=tmp_path, limit=len(big))
    assert run.stdout == big.decode()


async def test_a_hook_killed_by_a_signal_reports_a_negative_status(tmp_path: Path) -> None:
    with trio.fail_after(30):
        run = await run_command("echo before; kill -9 $$", b"", cwd=tmp_path)
    assert run == CommandRun(-9, "before\n", "")


async def test_cancelling_a_hook_kills_its_group_without_a_sigterm_first(tmp_path: Path) -> None:
    ready = tmp_path / "ready"
    os.mkfifo(ready)
    marker = tmp_path / "got-term"
    cmd = script(
        tmp_path,
        "trap.sh",
        f'trap \'echo term > "{marker}"\' TERM\nsleep 1000 &\necho "$$ $!" > "{ready}"\nwait\n',
    )
    finished: list[CommandRun] = []

    async def run() -> None:
        finished.append(await run_command(cmd, b"", cwd=tmp_path))

    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(run)
            shell, child = map(int, (await read_fifo_line(ready)).split())
            nursery.cancel_scope.cancel(reason="test abort")
    assert finished == []
    assert not group_alive(shell)
    assert not alive(child)
    assert not marker.exists()  # SIGKILL at once: the TERM trap never ran


def test_interpret_command_run() -> None:
    def interpret(code: int, out: str = "", err: str = "") -> HookResult:
        return interpret_command_run(CommandRun(code, out, err), "x.sh", "PreToolUse")

    assert interpret(0, "  \n") == interpret(0) == HookResult(label="x.sh")
    assert interpret(2, "", "  why \n").blocking_error == "[x.sh]:   why \n"
    assert interpret(-9).error == "Failed with non-blocking status code -9: No stderr output"
    assert interpret(0, '  {"decision": "block"}\n').decision == "deny"


# -- a PreToolUse command hook that cannot start ----------------------------------------------


@pytest.mark.parametrize(
    "failure",
    [
        OSError(errno.EAGAIN, "Resource temporarily unavailable"),
        OSError(errno.ENOMEM, "Cannot allocate memory"),
        FileNotFoundError(errno.ENOENT, "No such file or directory", "/bin/sh"),
    ],
    ids=["EAGAIN", "ENOMEM", "ENOENT"],
)
@pytest.mark.parametrize("preset", Policy.preset_names())
async def test_a_pre_tool_use_hook_that_cannot_start_denies_the_call_under_trioexecs_policy(
    monkeypatch: pytest.MonkeyPatch, failure: OSError, preset: str
) -> None:
    """Fail closed (trioexec): process or memory exhaustion never bypasses a policy hook.
    Claude Code's presets keep its behaviour: the hook gives no decision."""

    async def cannot_start(*args: Any, **kwargs: Any) -> CommandRun:
        raise failure

    monkeypatch.setattr(_hooks, "run_command", cannot_start)
    ran: list[str] = []

    @function_tool(name="Bash", input_schema={"type": "object"})
    async def bash(job: dict[str, Any], ctx: CallContext, progress: ProgressSender) -> str:
        ran.append(ctx.tool_use.id)
        return "ran"

    guard = guard_with("/usr/local/bin/policy-check")
    outcome = await run_tools([TOOL_USE], [bash], guard=guard, policy=Policy.preset(preset))
    (result,) = outcome.results
    if preset == "trioexec":
        assert ran == []
        assert result.is_error
        assert "could not start" in str(result.content)
        assert "/usr/local/bin/policy-check" in str(result.content)
    else:
        assert ran == ["toolu_1"]
        assert result.content == "ran"
