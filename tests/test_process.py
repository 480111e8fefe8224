"""Process groups: a cancelled or finished command (Bash's, a hook's) leaves no process behind.

These tests run real processes, so they use real time (no MockClock); every
wait is bounded with ``trio.fail_after``.  Liveness is read from ``/proc``
here, independently of the code under test.  A zombie (state ``Z``) counts as
gone: it has exited and only waits to be reaped by init.
"""

from __future__ import annotations

import contextlib
import math
import os
import shlex
import signal
import sys
from pathlib import Path

import pytest
import trio
from helpers import alive, call_context, ignore_progress, linux_only, needs, reaping

from trioexec import CallContext, ProgressSender, ToolUse
from trioexec._hooks._command import run_command
from trioexec._process import live_session_groups, terminate_group
from trioexec.tools import (
    BashInput,
    BashProgress,
    BashTool,
    ShellTimeoutError,
)

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def proc_state(pid: int) -> tuple[str, int] | None:
    """(state letter, process group) of ``pid`` from /proc, or None if it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except (FileNotFoundError, ProcessLookupError):
        return None
    fields = stat[stat.rfind(b")") + 2 :].split()
    return fields[0].decode(), int(fields[2])


def is_alive(pid: int) -> bool:
    state = proc_state(pid)
    return state is not None and state[0] not in ("Z", "X")


def live_members(pgid: int) -> list[int]:
    members = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            state = proc_state(int(name))
            if state is not None and state[1] == pgid and state[0] not in ("Z", "X"):
                members.append(int(name))
    return members


def context(cwd: Path) -> CallContext:
    return CallContext(tool_use=ToolUse("toolu_1", "Bash", {}), cwd=cwd)


class Running:
    """A Bash call running in a nursery under its own cancel scope, with its progress."""

    def __init__(self, tool: BashTool, command: str, cwd: Path) -> None:
        self.tool = tool
        self.command = command
        self.cwd = cwd
        self.scope = trio.CancelScope()
        self.finished = trio.Event()
        self.send, self.progress = trio.open_memory_channel[BashProgress](math.inf)
        self.output = ""
        self.result: str | None = None

    async def run(self) -> None:
        with self.scope:
            self.result = await self.tool.call(
                BashInput(self.command), context(self.cwd), self.send.send_nowait
            )
        self.finished.set()

    async def started(self) -> int:
        update = await self.progress.receive()
        assert update.stream is None
        return update.pid

    async def wait_for_output(self, text: str) -> None:
        while text not in self.output:
            update = await self.progress.receive()
            self.output += update.text

    async def cancel(self, reason: str, *, within: float) -> None:
        """Cancel the call's scope (as a sibling error or an abort does); wait until it ends."""
        with trio.fail_after(within):
            self.scope.cancel(reason=reason)
            await self.finished.wait()


async def test_cancelled_sleep_leaves_no_process(tmp_path: Path) -> None:
    running = Running(BashTool(), "sleep 30", tmp_path)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(running.run)
        with trio.fail_after(10):
            pgid = await running.started()
        assert pgid in live_members(pgid)
        # What a sibling error does: the enclosing cancel scope is cancelled.
        await running.cancel("a sibling errored", within=1)
        assert live_members(pgid) == []
        assert not is_alive(pgid)
    assert running.scope.cancelled_caught
    assert running.result is None


async def test_cancelled_command_with_a_grandchild_leaves_nothing(tmp_path: Path) -> None:
    # sh forks the sleep (a grandchild of the tool) and prints its pid.
    running = Running(BashTool(), "sh -c 'sleep 30 & echo $!; wait'", tmp_path)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(running.run)
        with trio.fail_after(10):
            pgid = await running.started()
            await running.wait_for_output("\n")
        grandchild = int(running.output.strip())
        assert is_alive(grandchild)
        assert grandchild != pgid
        assert grandchild in live_members(pgid)
        assert len(live_members(pgid)) >= 2
        await running.cancel("a sibling errored", within=1)
        assert not is_alive(grandchild)
        assert live_members(pgid) == []


async def test_sigterm_is_followed_by_sigkill_after_the_grace(tmp_path: Path) -> None:
    # The trap makes the shell and the sleep it starts ignore SIGTERM.
    command = "trap '' TERM; sleep 30 & echo $!; wait"
    running = Running(BashTool(kill_grace=0.2), command, tmp_path)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(running.run)
        with trio.fail_after(10):
            pgid = await running.started()
            await running.wait_for_output("\n")
        sleeper = int(running.output.strip())
        await running.cancel("abort", within=3)
        assert not is_alive(sleeper)
        assert live_members(pgid) == []


async def test_background_children_do_not_outlive_a_finished_command(tmp_path: Path) -> None:
    tool = BashTool()
    progress: list[BashProgress] = []
    with trio.fail_after(10):
        output = await tool.call(
            BashInput("sleep 30 & echo $!"), context(tmp_path), progress.append
        )
    assert not is_alive(int(output))
    assert live_members(progress[0].pid) == []


async def test_timeout_ends_the_group_and_reports_exit_code_first(tmp_path: Path) -> None:
    tool = BashTool()
    progress: list[BashProgress] = []
    with trio.fail_after(10), pytest.raises(ShellTimeoutError) as caught:
        await tool.call(
            BashInput("echo partial; sleep 30", timeout=300), context(tmp_path), progress.append
        )
    assert str(caught.value) == "Exit code 143\nCommand timed out after 300 ms\npartial"
    assert caught.value.exit_code == 143
    assert live_members(progress[0].pid) == []


async def test_output_streams_as_progress_while_the_command_runs(tmp_path: Path) -> None:
    running = Running(BashTool(), "echo first; echo oops >&2; sleep 30", tmp_path)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(running.run)
        with trio.fail_after(10):
            pid = await running.started()
            await running.wait_for_output("first\n")
            await running.wait_for_output("oops\n")
        # Both lines arrived while the sleep still runs: output is read incrementally.
        assert live_members(pid)
        running.scope.cancel(reason="test over")
    assert live_members(pid) == []


def own_group_child(*, ignore_term: bool = False) -> str:
    """A command that starts a Python child which moves into a process group of its
    own (``setpgid(0, 0)``, as coreutils ``timeout`` does), stays in the session,
    writes its pid to the FIFO ``started`` once it has moved, then sleeps."""
    code = "import os, select, signal\n"
    if ignore_term:
        code += "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    code += (
        "os.setpgid(0, 0)\n"
        "with open('started', 'w') as f:\n"
        "    f.write(str(os.getpid()) + '\\n')\n"
        "select.select([], [], [], 60)  # wait, bounded, until killed\n"
    )
    return f"mkfifo started; {shlex.quote(sys.executable)} -c {shlex.quote(code)} & cat started"


def kill_group(pid: int) -> None:
    """Clean up after a failed test: the child's own group."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)


async def test_a_finished_command_ends_a_child_in_its_own_group(tmp_path: Path) -> None:
    progress: list[BashProgress] = []
    with trio.fail_after(30):
        output = await BashTool().call(
            BashInput(own_group_child()), context(tmp_path), progress.append
        )
    child = int(output.split()[0])
    try:
        state = proc_state(child)
        assert state is None or state[0] in ("Z", "X")
        assert live_members(child) == []
        assert live_members(progress[0].pid) == []
    finally:
        kill_group(child)


async def test_cancelling_ends_every_group_of_the_session(tmp_path: Path) -> None:
    command = own_group_child(ignore_term=True) + "; sleep 60"
    running = Running(BashTool(kill_grace=0.2), command, tmp_path)
    child = 0
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(running.run)
            with trio.fail_after(30):
                pgid = await running.started()
                await running.wait_for_output("\n")
            child = int(running.output.split()[0])
            state = proc_state(child)
            assert state is not None
            assert state[1] == child  # a group of its own
            assert live_session_groups(pgid) == [pgid, child]
            # The child ignores SIGTERM: only the SIGKILL after the grace ends it.
            await running.cancel("abort", within=10)
            assert not is_alive(child)
            assert live_members(child) == []
            assert live_session_groups(pgid) == []
    finally:
        if child:
            kill_group(child)


async def test_a_timeout_ends_a_child_in_its_own_group(tmp_path: Path) -> None:
    progress: list[BashProgress] = []
    command = own_group_child() + "; sleep 60"
    with trio.fail_after(30), pytest.raises(ShellTimeoutError) as caught:
        await BashTool().call(BashInput(command, timeout=1000), context(tmp_path), progress.append)
    child = int(caught.value.stdout.split()[0])
    try:
        assert not is_alive(child)
        assert live_session_groups(progress[0].pid) == []
    finally:
        kill_group(child)


# -- children that leave the command's process group are still ended -----------------------------


# `timeout` puts itself in a process group of its own (setpgid), inside the same session;
# the fifo makes sure it has done so before the shell goes on.
IN_OWN_GROUP = (
    "mkfifo started; timeout 60 sh -c 'echo $PPID > started; exec sleep 60' & cat started"
)


@linux_only
@needs("timeout", "mkfifo")
async def test_bash_kills_a_background_child_in_its_own_group_when_the_command_ends(
    tmp_path: Path,
) -> None:
    pids: list[int] = []
    with reaping(pids), trio.fail_after(30):
        out = await BashTool().call(
            BashInput(IN_OWN_GROUP), call_context("Bash", tmp_path), ignore_progress
        )
        pids.append(int(out.split()[0]))
        assert not alive(pids[0])


@linux_only
@needs("timeout")
async def test_cancelled_bash_kills_a_child_in_its_own_group(tmp_path: Path) -> None:
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
                BashTool().call, BashInput(command), call_context("Bash", tmp_path), sender
            )
            await started.wait()
            nursery.cancel_scope.cancel()
        assert not alive(pids[0])


@linux_only
@needs("timeout", "mkfifo")
async def test_a_command_hook_child_in_its_own_group_is_killed_when_the_hook_ends(
    tmp_path: Path,
) -> None:
    pids: list[int] = []
    with reaping(pids), trio.fail_after(30):
        run = await run_command(IN_OWN_GROUP, b"{}", cwd=tmp_path)
        pids.append(int(run.stdout.split()[0]))
        assert not alive(pids[0])


@linux_only
async def test_ending_a_session_kills_a_child_forked_while_proc_is_being_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One listing of /proc is not a snapshot: the leader forks a child after the
    # listing and exits before its own stat is read, so that listing shows only
    # the leader's zombie.  The child must still be found and killed.
    go_read, go_write = os.pipe()
    out_read, out_write = os.pipe()
    process = await trio.lowlevel.open_process(
        ["/bin/sh", "-c", "read go; sleep 30 & echo $!; exit 0"],
        stdin=go_read,
        stdout=out_write,
        cwd=tmp_path,
        start_new_session=True,
    )
    os.close(go_read)
    os.close(out_write)
    real_listdir = os.listdir
    listings: list[list[str]] = []
    child: list[int] = []

    def listdir(path: str = ".") -> list[str]:
        names = real_listdir(path)
        if path == "/proc" and not listings:
            listings.append(names)
            os.write(go_write, b"go\n")
            line = b""
            while not line.endswith(b"\n"):
                line += os.read(out_read, 64)
            child.append(int(line))
            os.waitid(os.P_PID, process.pid, os.WEXITED | os.WNOWAIT)  # a zombie, unreaped
        return names

    try:
        with reaping([process.pid]), trio.fail_after(30):
            monkeypatch.setattr(os, "listdir", listdir)
            await terminate_group(process, kill_grace=0)
            monkeypatch.undo()
            assert str(process.pid) in listings[0]
            assert str(child[0]) not in listings[0]
            assert not alive(child[0])
            assert live_session_groups(process.pid) == []
    finally:
        monkeypatch.undo()
        os.close(go_write)
        os.close(out_read)
        with trio.fail_after(5):
            await process.wait()


THREAD_OUTLIVES_MAIN = """
import ctypes, os, sys, threading

libc = ctypes.CDLL(None)
main = threading.main_thread().ident

def outlive():
    libc.pthread_join(ctypes.c_ulong(main), None)  # returns once the main thread has ended
    while open("/proc/self/stat", "rb").read().rsplit(b")", 1)[1].split()[0] != b"Z":
        os.sched_yield()  # the kernel marks the process a moment after
    print(os.getpid(), flush=True)
    sys.stdin.buffer.read()  # runs on until its stdin closes (or it is killed)

threading.Thread(target=outlive).start()
libc.pthread_exit(None)  # the main thread ends; the other runs on
"""


@linux_only
async def test_a_process_whose_main_thread_exited_is_alive_while_another_thread_runs(
    tmp_path: Path,
) -> None:
    # Its own stat says "zombie" (the state of its main thread); it still runs,
    # holds its files and its session, and must be found and killed.
    in_read, in_write = os.pipe()
    out_read, out_write = os.pipe()
    process = await trio.lowlevel.open_process(
        [sys.executable, "-c", THREAD_OUTLIVES_MAIN],
        stdin=in_read,
        stdout=out_write,
        cwd=tmp_path,
        start_new_session=True,
    )
    os.close(in_read)
    os.close(out_write)
    try:
        with reaping([process.pid]), trio.fail_after(30):
            line = b""
            while not line.endswith(b"\n"):
                line += await trio.to_thread.run_sync(os.read, out_read, 64)
            assert int(line) == process.pid  # printed once its main thread had ended
            assert not alive(process.pid)  # what its own stat says
            assert live_session_groups(process.pid) == [process.pid]
            await terminate_group(process, kill_grace=0)
            assert live_session_groups(process.pid) == []
    finally:
        os.close(in_write)
        os.close(out_read)
        with trio.fail_after(5):
            await process.wait()  # reaped: no Process is left to the collector running
