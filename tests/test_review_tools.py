"""Review of the standard tools, process handling and guard rails: each test pins one finding.

Each test reproduced a defect, now fixed; they stay as regression tests.  Most
of them first prove, with a real shell in a temporary directory, that the
command really has the effect in question (a precondition that does not hold
there fails the test with ``pytest.fail``).  Real processes mean real time: every wait is bounded
with ``trio.fail_after`` and nothing asserts on durations.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import sys
import tracemalloc
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import trio

from trioexec import CallContext, GuardRails, ProgressSender, ToolUse, function_tool, run_tools
from trioexec._hook_command import run_command
from trioexec.hooks import HookInput, HookOutput, HookSet
from trioexec.lowlevel import authorize_call
from trioexec.permissions import PermissionContext, PermissionModeName
from trioexec.tools import (
    BashInput,
    BashProgress,
    BashTool,
    EditInput,
    EditTool,
    GlobInput,
    GlobTool,
    ReadInput,
    ReadTool,
    default_tools,
    is_read_only_command,
)

if TYPE_CHECKING:
    from collections.abc import Iterator


linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
GIT_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_AUTHOR_NAME": "r",
    "GIT_AUTHOR_EMAIL": "r@example.com",
    "GIT_COMMITTER_NAME": "r",
    "GIT_COMMITTER_EMAIL": "r@example.com",
}


def needs(*programs: str) -> pytest.MarkDecorator:
    missing = [p for p in programs if shutil.which(p) is None]
    return pytest.mark.skipif(bool(missing), reason=f"needs {', '.join(missing)}")


def context(name: str, cwd: Path) -> CallContext:
    return CallContext(tool_use=ToolUse("toolu_1", name, {}), cwd=cwd)


def no_progress(_: object) -> None:
    pass


async def shell(command: str, cwd: Path) -> str:
    """Run ``command`` with bash in ``cwd`` (bounded); its stdout."""
    with trio.fail_after(30):
        done = await trio.run_process(
            ["bash", "-c", command],
            cwd=cwd,
            env={**os.environ, **GIT_ENV},
            check=False,
            capture_stdout=True,
            capture_stderr=True,
        )
    return done.stdout.decode(errors="replace")


async def bash_auto_allowed(command: str, cwd: Path) -> bool:
    """Whether Bash's own check allows ``command`` without asking anyone."""
    result = await BashTool().check_permissions(BashInput(command), context("Bash", cwd))
    return result.behavior == "allow"


def proves(effect: bool, what: str) -> None:
    if not effect:
        pytest.fail(f"precondition: {what}")


# -- the read-only classifier calls writing (or program-running) commands safe ---------------


@needs("git", "bash")
@pytest.mark.parametrize(
    "command",
    ["git grep -iO'touch pwned' hello", "git grep --open='touch pwned' hello"],
    ids=["short-cluster", "abbreviated"],
)
async def test_git_grep_pager_option_runs_a_program_yet_is_auto_allowed(
    command: str, tmp_path: Path
) -> None:
    (tmp_path / "f").write_text("hello\n")
    await shell("git init -q . && git add f", tmp_path)
    await shell(command, tmp_path)
    proves((tmp_path / "pwned").exists(), f"{command} ran its pager string")
    assert not is_read_only_command(command)
    assert not await bash_auto_allowed(command, tmp_path)


@needs("bash", "sort", "file", "date")
@pytest.mark.parametrize(
    ("command", "probe", "effect"),
    [
        ("sort --outp=out data", "sort --outp=out data", "out"),
        (
            "sort -S 1K --compress-prog=sh data",
            "sort -S 1K --compress-prog=sh data",
            "pwned",
        ),
        ("file --comp -m magic", "file --comp -m magic", "magic.mgc"),
        # Never run: it would set the clock.  The probe shows --se is taken for --set.
        ("date --se=2000-01-01", "date --se 2>&1 | grep -q -e --set && touch set", "set"),
    ],
    ids=["sort-output", "sort-compress-program", "file-compile", "date-set"],
)
async def test_abbreviated_long_option_that_writes_is_read_only(
    command: str, probe: str, effect: str, tmp_path: Path
) -> None:
    (tmp_path / "data").write_text("touch pwned\n" * 300)
    (tmp_path / "magic").write_text("0\tstring\thello\tHELLO\n")
    await shell(probe, tmp_path)
    proves((tmp_path / effect).exists(), f"{probe!r} created {effect}")
    assert not is_read_only_command(command)


@needs("git", "bash")
async def test_git_stash_dashdash_list_is_a_push(tmp_path: Path) -> None:
    (tmp_path / "list").write_text("committed\n")
    await shell("git init -q . && git add list && git commit -qm init", tmp_path)
    (tmp_path / "list").write_text("changed\n")
    await shell("git stash -- list", tmp_path)
    proves((tmp_path / "list").read_text() == "committed\n", "git stash -- list reverted it")
    assert not is_read_only_command("git stash -- list")


@needs("bash", "uniq")
async def test_uniq_operands_after_dashdash_write_a_file(tmp_path: Path) -> None:
    (tmp_path / "-f").write_text("a\na\n")
    await shell("uniq -- -f out", tmp_path)
    proves((tmp_path / "out").exists(), "uniq wrote its second operand")
    assert not is_read_only_command("uniq -- -f out")


# -- Bash / Glob auto-allow reads outside the working directory --------------------------------


@needs("bash")
@pytest.mark.parametrize("form", ["{..,x}/outside.txt", "{ABS,x}"], ids=["dotdot", "absolute"])
async def test_brace_expansion_leaves_the_working_directory(form: str, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (tmp_path / "outside.txt").write_text("OUTSIDE\n")
    command = "cat " + form.replace("ABS", str(tmp_path / "outside.txt"))
    proves("OUTSIDE" in await shell(command, project), f"{command} read the outside file")
    assert not await bash_auto_allowed(command, project)


@needs("bash")
async def test_bash_reads_through_a_symlink_that_read_would_ask_for(tmp_path: Path) -> None:
    project, outside = tmp_path / "project", tmp_path / "outside"
    project.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text("SECRET\n")
    (project / "link").symlink_to(outside)
    read = await ReadTool().check_permissions(
        ReadInput("link/secret.txt"), context("Read", project)
    )
    proves(read.behavior != "allow", "Read does not allow the outside file by itself")
    proves("SECRET" in await shell("cat link/secret.txt", project), "cat read the target")
    assert not await bash_auto_allowed("cat link/secret.txt", project)


@pytest.mark.parametrize("pattern", ["../*", "ABS/*"], ids=["dotdot", "absolute"])
async def test_glob_pattern_lists_outside_the_working_directory(
    pattern: str, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (tmp_path / "outside.txt").write_text("x")
    glob = GlobInput(pattern.replace("ABS", str(tmp_path)))
    ctx = context("Glob", project)
    proves("outside.txt" in await GlobTool().call(glob, ctx, no_progress), "it lists outside")
    assert (await GlobTool().check_permissions(glob, ctx)).behavior != "allow"


# -- permission rules -------------------------------------------------------------------------


@needs("bash")
@pytest.mark.parametrize(
    "command",
    [
        "cat x #'\ntouch pwned #'",
        "cat $'\\'' x; touch pwned #'",
        "cat <<EOF\ncat '\nEOF\ntouch pwned #'",
    ],
    ids=["comment", "ansi-c-quote", "here-doc"],
)
async def test_prefix_allow_rule_covers_a_hidden_second_command(
    command: str, tmp_path: Path
) -> None:
    (tmp_path / "x").write_text("x\n")
    await shell(command, tmp_path)
    proves((tmp_path / "pwned").exists(), "bash ran the hidden touch")
    guard = GuardRails(PermissionContext(allow=["Bash(cat:*)"]))
    use = ToolUse("toolu_1", "Bash", {"command": command})
    verdict = await authorize_call(
        guard, BashTool(), use, BashInput(command), context("Bash", tmp_path)
    )
    assert not verdict.allowed


@needs("bash")
@pytest.mark.parametrize(
    ("rule", "mode", "command"),
    [
        ("rm:*", "bypass", "'rm' -f victim"),
        ("rm:*", "bypass", "\\rm -f victim"),
        ("rm:*", "bypass", "nice rm -f victim"),
        ("rm:*", "bypass", "env -i rm -f victim"),
        ("rm:*", "bypass", "timeout -s KILL 5 rm -f victim"),
        ("rm:*", "bypass", "command -p rm -f victim"),
        ("cat:*", "default", "'cat' victim"),
    ],
)
async def test_deny_rule_is_bypassed(
    rule: str, mode: PermissionModeName, command: str, tmp_path: Path
) -> None:
    (tmp_path / "victim").write_text("VICTIM\n")
    out = await shell(command, tmp_path)
    proves(not (tmp_path / "victim").exists() or "VICTIM" in out, f"{command} ran")
    guard = GuardRails(PermissionContext(deny=[f"Bash({rule})"], mode=mode))
    use = ToolUse("toolu_1", "Bash", {"command": command})
    verdict = await authorize_call(
        guard, BashTool(), use, BashInput(command), context("Bash", tmp_path)
    )
    assert not verdict.allowed


def secrets_project(tmp_path: Path) -> Path:
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "key.txt").write_text("TOKEN=abc\n")
    (tmp_path / "docs").symlink_to("secrets")
    return tmp_path


SECRET_DENY = GuardRails(PermissionContext(deny=["Read(./secrets/**)", "Grep(./secrets/**)"]))


async def test_read_deny_rule_holds_for_the_real_path(tmp_path: Path) -> None:
    """Guard: the deny rule itself works when the path is written plainly."""
    cwd = secrets_project(tmp_path)
    use = ToolUse("toolu_1", "Read", {"file_path": "secrets/key.txt"})
    outcome = await run_tools([use], default_tools(cwd), cwd=cwd, guard=SECRET_DENY)
    denied = cwd / "secrets" / "key.txt"
    assert outcome.results[0].content == f"Permission to read {denied} has been denied."


async def test_read_deny_rule_is_bypassed_through_a_symlink(tmp_path: Path) -> None:
    cwd = secrets_project(tmp_path)
    use = ToolUse("toolu_1", "Read", {"file_path": "docs/key.txt"})
    outcome = await run_tools([use], default_tools(cwd), cwd=cwd, guard=SECRET_DENY)
    assert "TOKEN" not in str(outcome.results[0].content)


async def test_grep_of_a_parent_directory_shows_denied_files(tmp_path: Path) -> None:
    cwd = secrets_project(tmp_path)
    use = ToolUse("toolu_1", "Grep", {"pattern": "TOKEN", "output_mode": "content"})
    outcome = await run_tools([use], default_tools(cwd), cwd=cwd, guard=SECRET_DENY)
    assert "TOKEN=abc" not in str(outcome.results[0].content)


# -- processes that outlive their command -----------------------------------------------------


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2 :].split()[0] not in (b"Z", b"X")


@contextlib.contextmanager
def reaping(pids: list[int]) -> Iterator[None]:
    """Kill (by group) whatever of ``pids`` the test left alive: its own processes."""
    try:
        yield
    finally:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)


# `timeout` puts itself in a process group of its own (setpgid), inside the same session;
# the fifo makes sure it has done so before the shell goes on.
IN_OWN_GROUP = (
    "mkfifo started; timeout 60 sh -c 'echo $PPID > started; exec sleep 60' & cat started"
)


@linux_only
@needs("timeout", "mkfifo")
async def test_bash_background_child_in_its_own_group_outlives_the_command(
    tmp_path: Path,
) -> None:
    pids: list[int] = []
    with reaping(pids), trio.fail_after(30):
        out = await BashTool().call(BashInput(IN_OWN_GROUP), context("Bash", tmp_path), no_progress)
        pids.append(int(out.split()[0]))
        assert not alive(pids[0])


@linux_only
@needs("timeout")
async def test_bash_cancelled_leaves_a_child_in_its_own_group(tmp_path: Path) -> None:
    pids: list[int] = []
    started = trio.Event()

    def progress(update: object) -> None:
        if isinstance(update, BashProgress) and update.stream == "stdout" and not pids:
            pids.append(int(update.text.split()[0]))
            started.set()

    command = "timeout 60 sh -c 'echo $PPID; exec sleep 60'; true"
    sender: ProgressSender = progress
    with reaping(pids), trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(
                BashTool().call, BashInput(command), context("Bash", tmp_path), sender
            )
            await started.wait()
            nursery.cancel_scope.cancel()
        assert not alive(pids[0])


@linux_only
@needs("timeout", "mkfifo")
async def test_command_hook_child_in_its_own_group_outlives_the_hook(tmp_path: Path) -> None:
    pids: list[int] = []
    with reaping(pids), trio.fail_after(30):
        run = await run_command(IN_OWN_GROUP, b"{}", cwd=tmp_path)
        pids.append(int(run.stdout.split()[0]))
        assert not alive(pids[0])


# -- hooks ------------------------------------------------------------------------------------


async def test_post_tool_use_failure_hooks_get_the_run_cwd(tmp_path: Path) -> None:
    seen: dict[str, str] = {}

    async def record(event: HookInput) -> HookOutput | None:
        seen[event.hook_event_name] = event.cwd
        return None

    @function_tool(name="Job")
    async def job(args: dict[str, Any], ctx: CallContext, progress: ProgressSender) -> str:
        if args.get("fail"):
            raise RuntimeError("boom")
        return "ok"

    hooks = (
        HookSet()
        .with_python_hook("PostToolUse", "*", record)
        .with_python_hook("PostToolUseFailure", "*", record)
    )
    uses = [ToolUse("toolu_1", "Job", {}), ToolUse("toolu_2", "Job", {"fail": True})]
    await run_tools(uses, [job], cwd=tmp_path, guard=GuardRails(hooks=hooks))
    proves(seen.get("PostToolUse") == str(tmp_path), "PostToolUse hooks see the run's cwd")
    assert seen.get("PostToolUseFailure") == str(tmp_path)


# -- Edit and Read ----------------------------------------------------------------------------


async def test_edit_inserting_lines_into_a_crlf_file_keeps_it_crlf(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_bytes(b"a\r\nb\r\n")
    tool, ctx = EditTool(), context("Edit", tmp_path)
    edit = EditInput("f.txt", "a", "a\nx")
    proves(await tool.validate_input(edit, ctx) is None, "the edit validates")
    await tool.call(edit, ctx, no_progress)
    assert (tmp_path / "f.txt").read_bytes() == b"a\r\nx\r\nb\r\n"


async def test_read_of_a_huge_single_line_stays_bounded_in_memory(tmp_path: Path) -> None:
    size = 16 * 1024 * 1024
    (tmp_path / "min.js").write_bytes(b"a" * size)
    tracemalloc.start()
    try:
        text = await ReadTool().call(ReadInput("min.js"), context("Read", tmp_path), no_progress)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    proves(isinstance(text, str) and text.endswith(" [line truncated]"), "the line was cut")
    assert peak < size // 4
