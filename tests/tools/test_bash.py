"""The Bash tool: results, errors, validation, permissions, and a sibling-error run.

Real processes, real time: waits are bounded with ``trio.fail_after``.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import trio
from helpers import bash_auto_allowed, call_context, needs, proves, real_bash

from trioexec import (
    CallContext,
    PermissionResult,
    ProgressUpdate,
    ResultUpdate,
    ToolUse,
    Update,
    run_tools,
)
from trioexec._contract._format_error import format_tool_error
from trioexec._contract._validation import compile_tool
from trioexec._texts import sibling_stopped_message
from trioexec.lowlevel import live_group_members
from trioexec.tools import (
    BashInput,
    BashProgress,
    BashTool,
    ReadInput,
    ReadTool,
    ShellError,
    ShellSpawnError,
    ShellTimeoutError,
)

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX shells")


def context(cwd: Path, command: str = "") -> CallContext:
    return CallContext(tool_use=ToolUse("toolu_1", "Bash", {"command": command}), cwd=cwd)


async def run(command: str, cwd: Path, tool: BashTool | None = None, **kw: Any) -> str:
    with trio.fail_after(10):
        return await (tool or BashTool()).call(
            BashInput(command, **kw), context(cwd, command), lambda _: None
        )


async def test_output_is_stdout_then_stderr(tmp_path: Path) -> None:
    assert await run("echo out; echo err >&2", tmp_path) == "out\nerr"


async def test_runs_in_the_call_working_directory(tmp_path: Path) -> None:
    assert await run("pwd", tmp_path) == str(await trio.Path(tmp_path).resolve())


async def test_no_output_is_an_empty_string(tmp_path: Path) -> None:
    assert await run("true", tmp_path) == ""


async def test_non_zero_exit_is_an_error_beginning_with_exit_code(tmp_path: Path) -> None:
    with pytest.raises(ShellError) as caught:
        await run("echo out; echo err >&2; exit 3", tmp_path)
    # stderr is merged into stdout in write order, as in Claude Code.
    assert str(caught.value) == "Exit code 3\nout\nerr"
    assert caught.value.exit_code == 3
    # The runtime's formatter reads the same attributes and gets the same text.
    assert format_tool_error(caught.value) == "Exit code 3\nout\nerr"


async def test_exit_without_output_still_names_the_code(tmp_path: Path) -> None:
    with pytest.raises(ShellError, match=r"\AExit code 1\Z"):
        await run("false", tmp_path)


async def test_killed_by_a_signal_reads_as_128_plus_the_signal(tmp_path: Path) -> None:
    with pytest.raises(ShellError, match=r"\AExit code 137\Z"):
        await run("kill -KILL $$", tmp_path)


async def test_timeout_message_survives_the_runtime_formatter(tmp_path: Path) -> None:
    with pytest.raises(ShellTimeoutError) as caught:
        await run("sleep 30", tmp_path, timeout=1000)
    assert str(caught.value) == "Exit code 143\nCommand timed out after 1s"
    assert format_tool_error(caught.value) == str(caught.value)


async def test_output_over_the_cap_is_cut_in_the_middle(tmp_path: Path) -> None:
    tool = BashTool(max_output_bytes=100)
    output = await run("seq 1 10000", tmp_path, tool)
    assert output.startswith("1\n2\n3\n")
    assert output.endswith("9999\n10000")
    assert "bytes of output truncated" in output
    assert len(output) < 200


async def test_progress_counts_bytes_of_the_merged_output(tmp_path: Path) -> None:
    updates: list[BashProgress] = []
    with trio.fail_after(10):
        await BashTool().call(
            BashInput("printf a; printf de >&2"), context(tmp_path), updates.append
        )
    assert updates[0].stream is None
    assert {u.pid for u in updates} == {updates[0].pid}
    # stderr goes to the stdout pipe (Claude Code's merged output): one stream.
    assert {u.stream for u in updates[1:]} == {"stdout"}
    assert "".join(u.text for u in updates[1:]) == "ade"
    assert updates[-1].total_bytes == 3


async def test_a_missing_working_directory_is_a_spawn_error(tmp_path: Path) -> None:
    with pytest.raises(ShellSpawnError, match="Cannot run the command in"):
        await run("ls", tmp_path / "missing")


async def test_validation_refuses_empty_commands_and_bad_timeouts(tmp_path: Path) -> None:
    tool = BashTool()
    ctx = context(tmp_path)
    assert await tool.validate_input(BashInput("  "), ctx) == "command is empty"
    message = "timeout must be between 1 and 600000 milliseconds"
    assert await tool.validate_input(BashInput("ls", timeout=0), ctx) == message
    assert await tool.validate_input(BashInput("ls", timeout=600_001), ctx) == message
    assert await tool.validate_input(BashInput("ls", timeout=600_000), ctx) is None


def test_declared_behaviour() -> None:
    tool = BashTool()
    assert tool.name == "Bash"
    assert tool.interrupt_behavior == "block"
    assert tool.cancels_siblings_on_error is True
    assert tool.max_result_size_chars == 30_000
    schema = compile_tool(tool).schema
    assert schema["required"] == ["command"]
    assert set(schema["properties"]) == {  # type: ignore[arg-type]
        "command",
        "timeout",
        "description",
        "dangerouslyDisableSandbox",  # Claude Code's escape from its sandbox
    }


async def test_permissions_allow_read_only_commands_in_the_working_directory(
    tmp_path: Path,
) -> None:
    tool = BashTool()
    ctx = context(tmp_path)
    assert await tool.check_permissions(BashInput("git status"), ctx) == PermissionResult.allow()
    passthrough = PermissionResult.passthrough()
    assert await tool.check_permissions(BashInput("rm -rf build"), ctx) == passthrough
    assert await tool.check_permissions(BashInput("cat ~/.ssh/id_rsa"), ctx) == passthrough


@pytest.mark.parametrize(
    ("command", "allowed"),
    [
        ("cat link/secret.txt", False),
        ("cat link", False),
        ("cat filelink", False),
        ("cat l*/secret.txt", False),
        ("ls *", False),
        ("cat < filelink", False),
        ("grep -ffilelink x", False),
        ("grep --file=filelink x", False),
        ("cd sub && cat up", False),
        ("cd sub && ls", True),
        ("cat sub/inner.txt", True),
        ("cat sub/*.txt", True),
        ("cat sub/inlink", True),
        ("cat missing.txt", True),
    ],
)
async def test_permissions_follow_symlinks_out_of_the_working_directory(
    tmp_path: Path, command: str, allowed: bool
) -> None:
    project, outside = tmp_path / "project", tmp_path / "outside"
    (project / "sub").mkdir(parents=True)
    outside.mkdir()
    (outside / "secret.txt").write_text("SECRET\n")
    (project / "sub" / "inner.txt").write_text("inner\n")
    (project / "link").symlink_to(outside)
    (project / "filelink").symlink_to(outside / "secret.txt")
    (project / "sub" / "up").symlink_to(outside / "secret.txt")
    (project / "sub" / "inlink").symlink_to(project / "sub" / "inner.txt")
    result = await BashTool().check_permissions(BashInput(command), context(project))
    assert (result == PermissionResult.allow()) is allowed


async def test_each_permission_check_looks_at_the_disk_afresh(tmp_path: Path) -> None:
    """A command judged once is judged again: a name swapped for a symlink meanwhile is seen."""
    project, outside = tmp_path / "project", tmp_path / "outside"
    (project / "data").mkdir(parents=True)
    outside.mkdir()
    (outside / "secret.txt").write_text("SECRET\n")
    tool, ctx = BashTool(), context(project)
    for command in ("cat data/secret.txt", "cd data && cat secret.txt", "ls data"):
        assert await tool.check_permissions(BashInput(command), ctx) == PermissionResult.allow()
    (project / "data").rmdir()
    (project / "data").symlink_to(outside)
    for command in ("cat data/secret.txt", "cd data && cat secret.txt", "ls data"):
        result = await tool.check_permissions(BashInput(command), ctx)
        assert result != PermissionResult.allow(), command
    (project / "data").unlink()
    (project / "data").mkdir()
    (project / "data" / "secret.txt").symlink_to(outside / "secret.txt")
    assert await tool.check_permissions(BashInput("cat data/secret.txt"), ctx) != (
        PermissionResult.allow()
    )


async def test_a_symlinked_working_directory_keeps_its_own_files_inside(tmp_path: Path) -> None:
    real = tmp_path / "real"
    (real / "src").mkdir(parents=True)
    (real / "src" / "a.txt").write_text("a\n")
    (tmp_path / "alias").symlink_to(real)
    ctx = context(tmp_path / "alias")
    for command in ("cat src/a.txt", "cd src && cat a.txt", "ls src", "wc -l src/a.txt"):
        result = await BashTool().check_permissions(BashInput(command), ctx)
        assert result == PermissionResult.allow(), command


def test_rule_content_is_matched_with_the_bash_rule_syntax(tmp_path: Path) -> None:
    tool = BashTool()
    ctx = context(tmp_path)
    assert tool.match_rule_content(
        "npm run test:*", BashInput("npm run test -- -k x"), ctx, behavior="allow"
    )
    assert not tool.match_rule_content(
        "npm run test:*", BashInput("npm run test && rm -rf /"), ctx, behavior="allow"
    )
    assert tool.match_rule_content("git status", BashInput("git status"), ctx, behavior="allow")


class GatedBash(BashTool):
    """Bash whose ``false`` command waits for a gate, so it fails only once asked to."""

    def __init__(self, gate: trio.Event) -> None:
        super().__init__()
        self.gate = gate

    async def call(self, input: BashInput, ctx: CallContext, progress: Any) -> str:  # noqa: A002
        if input.command == "false":
            await self.gate.wait()
        return await super().call(input, ctx, progress)


async def test_a_failing_sibling_cancels_a_running_command_and_its_group(tmp_path: Path) -> None:
    gate = trio.Event()
    uses = [
        ToolUse("toolu_sleep", "Bash", {"command": "sleep 30"}),
        ToolUse("toolu_fail", "Bash", {"command": "false"}),
    ]
    send, receive = trio.open_memory_channel[Update](math.inf)
    pids: list[int] = []
    outcome = None

    async def drive() -> None:
        nonlocal outcome
        outcome = await run_tools(uses, [GatedBash(gate)], cwd=tmp_path, updates=send)

    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(drive)
            async for update in receive:
                if isinstance(update, ProgressUpdate) and isinstance(update.data, BashProgress):
                    pids.append(update.data.pid)
                    gate.set()  # the sleep runs: now let its sibling fail
                if isinstance(update, ResultUpdate) and update.result.tool_use_id == "toolu_fail":
                    break
    assert outcome is not None
    sleep_result, fail_result = outcome.results
    assert fail_result.is_error
    assert fail_result.content == "Exit code 1"
    assert sleep_result.is_error
    assert sleep_result.content == sibling_stopped_message("Bash(false)", "Bash", started=True)
    assert pids
    assert live_group_members(pids[0]) == []


# -- reads out of the working directory are never auto-allowed -----------------------------------


@needs("bash")
@pytest.mark.parametrize("form", ["{..,x}/outside.txt", "{ABS,x}"], ids=["dotdot", "absolute"])
async def test_brace_expansion_out_of_the_working_directory_is_not_auto_allowed(
    form: str, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (tmp_path / "outside.txt").write_text("OUTSIDE\n")
    command = "cat " + form.replace("ABS", str(tmp_path / "outside.txt"))
    proves("OUTSIDE" in await real_bash(command, project), f"{command} read the outside file")
    assert not await bash_auto_allowed(command, project)


@needs("bash")
async def test_bash_through_a_symlink_out_of_the_working_directory_is_not_auto_allowed(
    tmp_path: Path,
) -> None:
    project, outside = tmp_path / "project", tmp_path / "outside"
    project.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text("SECRET\n")
    (project / "link").symlink_to(outside)
    read = await ReadTool().check_permissions(
        ReadInput("link/secret.txt"), call_context("Read", project)
    )
    proves(read.behavior != "allow", "Read does not allow the outside file by itself")
    proves("SECRET" in await real_bash("cat link/secret.txt", project), "cat read the target")
    assert not await bash_auto_allowed("cat link/secret.txt", project)
