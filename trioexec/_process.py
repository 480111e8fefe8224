"""Run a command in its own session, and make sure everything in it dies.

Both the ``Bash`` tool and command hooks spawn through here.  The child is
started with ``start_new_session=True``, so it leads a new session and process
group (``sid == pgid == pid``).  Every process it forks stays in that session
unless it deliberately calls ``setsid`` itself; most stay in the leader's
group too, but some (coreutils ``timeout``, job-control shells) move into a
process group of their own inside the session.  Whatever way the run ends
(normal exit, timeout, cancellation, an exception), every process group of the
session is terminated before :func:`run_process_group` returns or raises:
``SIGTERM`` (plus ``SIGCONT`` so stopped members can act on it), a grace
period, then ``SIGKILL``; with no grace ``SIGKILL`` at once.  Only groups that
have a live member at that moment are signalled, and once the session has no
live member no further signal is sent, so a recycled group id is never hit.

"Live" ignores zombies: an orphaned grandchild that has exited is dead even
if no init process has reaped it yet.  (A process whose main thread has
exited while its other threads run on looks like a zombie in its own
``stat`` and is not one: its threads are read too.)  On Linux the session's
groups are read from ``/proc`` (field 6 of ``/proc/PID/stat`` is the session
id), listed again until a listing shows no new process, so that a member
forking while the stat files are read is not missed; elsewhere only the
leader's group is known, and ``killpg(pgid, 0)`` answers whether it is alive.
"""

from __future__ import annotations

import codecs
import contextlib
import math
import os
import signal
import subprocess
import sys
from typing import TYPE_CHECKING, Literal, TypeAlias

import attrs
import trio
from trio.lowlevel import enable_ki_protection

from ._groups import as_one_await

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from pathlib import Path

__all__ = [
    "DEFAULT_KILL_GRACE",
    "ProcessResult",
    "Stream",
    "live_group_members",
    "live_session_groups",
    "run_process_group",
    "terminate_group",
]

Stream: TypeAlias = Literal["stdout", "stderr"]

DEFAULT_KILL_GRACE = 0.5
"""Seconds between SIGTERM and SIGKILL."""
KILL_WAIT = 5.0
"""How long to wait for the session to empty after SIGKILL before giving up."""
DRAIN_WAIT = 1.0
"""After the session is empty, how long the pipes may take to reach EOF (a
process that left the session with its own ``setsid`` could hold them open)."""
POLL_INTERVAL = 0.01
"""Longest pause between two looks at the session while waiting for it to empty
(the first looks come sooner: a killed group usually vanishes in a millisecond)."""
_READ_SIZE = 65536


@attrs.frozen
class ProcessResult:
    """How a process group run ended.

    ``exit_code`` follows the shell convention: ``128 + N`` when the leader
    was killed by signal N, and ``killed_by`` is then N (None after an exit).
    """

    exit_code: int
    stdout: str
    stderr: str
    timed_out: bool = False
    killed_by: int | None = None


class _CappedBuffer:
    """Keeps the first and the last ``limit // 2`` bytes of a stream, or with
    ``keep_tail=False`` the first ``limit`` bytes (the rest dropped unmarked)."""

    def __init__(self, limit: int, *, keep_tail: bool = True) -> None:
        self.keep_tail = keep_tail
        self.head_limit = limit // 2 if keep_tail else limit
        self.tail_limit = limit - self.head_limit
        self.head = bytearray()
        self.tail = bytearray()
        self.dropped = 0

    def add(self, data: bytes) -> None:
        room = self.head_limit - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data and not self.keep_tail:
            self.dropped += len(data)
        elif data:
            self.tail += data
            excess = len(self.tail) - self.tail_limit
            if excess > 0:
                del self.tail[:excess]
                self.dropped += excess

    def text(self) -> str:
        if not self.dropped or not self.keep_tail:
            return bytes(self.head + self.tail).decode("utf-8", errors="replace")
        return (
            self.head.decode("utf-8", errors="replace")
            + f"\n\n... [{self.dropped} bytes of output truncated] ...\n\n"
            + self.tail.decode("utf-8", errors="replace")
        )


@enable_ki_protection
async def run_process_group(
    argv: Sequence[str],
    *,
    cwd: Path | str,
    env: Mapping[str, str] | None = None,
    stdin: bytes | None = None,
    deadline: float = math.inf,
    on_start: Callable[[int], None] | None = None,
    on_output: Callable[[Stream, str, int], None] | None = None,
    max_output_bytes: int = 1_048_576,
    keep_tail: bool = True,
    kill_grace: float = DEFAULT_KILL_GRACE,
    merge_stderr: bool = False,
) -> ProcessResult:
    """Run ``argv`` in a new process group and collect its output.

    Returns once the leader has exited (or the deadline passed) and nothing
    is left alive in its session: processes the leader left running, in its
    group or in another group of the session, are terminated then.

    Args:
        argv: the program and its arguments.
        cwd: working directory of the child.
        env: the child's environment (None: inherit).
        stdin: bytes written to the child's stdin, which is then closed (a
            child that exits without reading them is fine); None: ``/dev/null``.
        deadline: the trio clock time at which the session is terminated and
            the result marked ``timed_out``, its output kept (a per-call
            limit that, unlike an enclosing ``fail_after``, still returns).
        on_start: called with the pid (= process group id) once it runs.
        on_output: called with ``(stream, text, total bytes so far)`` for each
            chunk read, as it arrives (decoded incrementally as UTF-8).
        max_output_bytes: per stream, only the first and last halves of this
            many bytes are kept; the middle is replaced by a marker.
        keep_tail: False keeps the first ``max_output_bytes`` bytes instead
            and drops the rest without a marker.  Either way every byte is
            read, so a chatty child never blocks on a full pipe.
        kill_grace: seconds between SIGTERM and SIGKILL; 0 sends SIGKILL at once.
        merge_stderr: the child's stderr is its stdout (one pipe, as ``2>&1``),
            so the output keeps the order it was written in; ``stderr`` is
            then empty.

    Cancellation: every group of the session is terminated as above
    (SIGTERM, then SIGKILL after ``kill_grace``); this cleanup is shielded, so
    when ``Cancelled`` propagates no process of the session is alive any more.

    Raises:
        OSError: the program could not be started.
    """
    process = await trio.lowlevel.open_process(
        list(argv),
        stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT if merge_stderr else subprocess.PIPE,
        cwd=cwd,
        env=dict(env) if env is not None else None,
        start_new_session=True,
    )
    buffers: dict[Stream, _CappedBuffer] = {
        "stdout": _CappedBuffer(max_output_bytes, keep_tail=keep_tail),
        "stderr": _CappedBuffer(max_output_bytes, keep_tail=keep_tail),
    }
    counter = [0]
    timed_out = False
    try:
        if on_start is not None:
            on_start(process.pid)
        with as_one_await():  # (a lone KeyboardInterrupt in a pump leaves as raised)
            async with trio.open_nursery() as nursery:
                if process.stdin is not None and stdin is not None:
                    nursery.start_soon(_feed, process.stdin, stdin)
                nursery.start_soon(_pump, process.stdout, "stdout", buffers, counter, on_output)
                if process.stderr is not None:
                    nursery.start_soon(_pump, process.stderr, "stderr", buffers, counter, on_output)
                with trio.move_on_at(deadline) as limit:
                    await process.wait()
                timed_out = limit.cancelled_caught
                # The leader is gone (or timed out): end what is left of its session,
                # so that background children release the pipes.
                await terminate_group(process, kill_grace=kill_grace)
                nursery.cancel_scope.deadline = trio.current_time() + DRAIN_WAIT
    finally:
        with trio.CancelScope(shield=True):
            await terminate_group(process, kill_grace=kill_grace)
            with trio.move_on_after(KILL_WAIT):
                await process.wait()
            for pipe in (process.stdin, process.stdout, process.stderr):
                if pipe is not None:
                    await pipe.aclose()
    returncode = process.returncode
    return ProcessResult(
        exit_code=_exit_code(returncode),
        stdout=buffers["stdout"].text(),
        stderr=buffers["stderr"].text(),
        timed_out=timed_out,
        killed_by=-returncode if returncode is not None and returncode < 0 else None,
    )


@enable_ki_protection
async def _feed(pipe: trio.abc.SendStream, data: bytes) -> None:
    """Write ``data`` to the child's stdin and close it; a child that exits
    (or closes stdin) without reading everything is not an error."""
    with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
        async with pipe:
            await pipe.send_all(data)


@enable_ki_protection
async def _pump(
    pipe: trio.abc.ReceiveStream | None,
    name: Stream,
    buffers: dict[Stream, _CappedBuffer],
    counter: list[int],
    on_output: Callable[[Stream, str, int], None] | None,
) -> None:
    assert pipe is not None
    buffer = buffers[name]
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    while True:
        chunk = await pipe.receive_some(_READ_SIZE)
        final = not chunk
        buffer.add(bytes(chunk))
        counter[0] += len(chunk)
        if on_output is not None:
            text = decoder.decode(chunk, final=final)
            if text:
                on_output(name, text, counter[0])
        if final:
            return


def _exit_code(returncode: int | None) -> int:
    if returncode is None:
        return -1
    return 128 - returncode if returncode < 0 else returncode


@enable_ki_protection
async def terminate_group(process: trio.Process, *, kill_grace: float = DEFAULT_KILL_GRACE) -> None:
    """End every process of ``process``'s session: SIGTERM, grace, SIGKILL.

    Each live process group of the session (the leader's own and any a
    descendant moved into with ``setpgid``) gets the signals; on platforms
    without ``/proc`` only the leader's group.  With ``kill_grace <= 0`` the
    groups get SIGKILL straight away.  Returns at once when nothing is alive
    (no signal is sent then), otherwise when the session is empty or
    :data:`KILL_WAIT` seconds after SIGKILL; groups that show up while it
    waits get SIGKILL too.  The leader is reaped along the way.  Not shielded:
    callers that must finish it under cancellation shield it themselves.
    """
    groups = await _live_groups(process)
    if not groups:
        return
    if kill_grace > 0:
        for pgid in groups:
            _signal_group(pgid, signal.SIGTERM)
            _signal_group(pgid, signal.SIGCONT)
        with trio.move_on_after(kill_grace):
            await _wait_session_gone(process)
            return
    with trio.move_on_after(KILL_WAIT):
        await _wait_session_gone(process, kill=True)


@enable_ki_protection
async def _wait_session_gone(process: trio.Process, *, kill: bool = False) -> None:
    """Poll until no process of the session is alive, quickly at first (there
    is no event for that); with ``kill``, SIGKILL every live group each time."""
    delay = 0.001
    while groups := await _live_groups(process):
        if kill:
            for pgid in groups:
                _signal_group(pgid, signal.SIGKILL)
        await trio.sleep(delay)
        delay = min(delay * 2, POLL_INTERVAL)


async def _live_groups(process: trio.Process) -> list[int]:
    process.poll()  # reap the leader if it has exited, so it is not counted as a zombie
    return await trio.to_thread.run_sync(live_session_groups, process.pid)


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, sig)


def live_session_groups(sid: int) -> list[int]:
    """The ids of the process groups that have a live (not zombie) member in
    session ``sid`` (the leader's own group, ``sid``, first when alive).

    An empty answer is exact: the session had no live member when the scan
    ended, and then it can never get one (only a member forks members).  A
    non-empty answer lists the groups as of one look at every process; a group
    that appears later is found by the next call.

    Without ``/proc`` the session cannot be listed: the answer is then
    ``[sid]`` when the group ``sid`` is alive, else ``[]``.
    """
    if not _has_proc():
        return [sid] if _killpg_alive(sid) else []
    found = _proc_live_processes(lambda _pgid, session: session == sid)
    groups = {pgid for _, pgid, _ in found}
    return sorted(groups, key=lambda pgid: (pgid != sid, pgid))


def live_group_members(pgid: int) -> list[int]:
    """The pids of the live (not zombie) processes whose process group is ``pgid``.

    As with :func:`live_session_groups`, an empty answer is exact.
    """
    if _has_proc():
        return [pid for pid, _, _ in _proc_live_processes(lambda group, _sid: group == pgid)]
    return [pgid] if _killpg_alive(pgid) else []


def _has_proc() -> bool:
    return sys.platform.startswith("linux") and os.path.isdir("/proc")


def _killpg_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


MAX_LISTINGS = 1000
"""Most listings of ``/proc`` in one scan (see :func:`_proc_live_processes`)."""


def _proc_live_processes(wanted: Callable[[int, int], bool]) -> list[tuple[int, int, int]]:
    """``(pid, pgid, sid)`` of the live (not zombie) processes in ``/proc`` for
    which ``wanted(pgid, sid)`` holds.

    One listing of ``/proc`` is not a snapshot.  A process can fork after the
    directory was listed and exit before its own ``stat`` is read: the scan
    then sees a zombie (or nothing) and misses the child, which lives on, so
    a busy session would look empty.  Hence, until a wanted live process is
    found, the directory is listed again and the pids new since the last
    listing are read, until a listing shows no new pid.  A wanted process
    alive after that last listing was then read alive, or was forked by one
    that was alive after it, and so was read alive: an empty answer is exact.
    (Linux hands out pids in increasing order, the order ``/proc`` lists
    them in, so a child forked during a listing shows up in it or in the
    next; only a wrap-around of ``pid_max`` within one scan could hide it.)
    A host that forks without pause could keep every listing new; after
    :data:`MAX_LISTINGS` the answer is the one the scan has.
    """
    found: list[tuple[int, int, int]] = []
    seen: set[str] = set()
    for _ in range(MAX_LISTINGS):
        new = [name for name in os.listdir("/proc") if name.isdigit() and name not in seen]
        if not new:
            break
        seen.update(new)
        for name in new:
            process = _read_live_process(name)
            if process is not None and wanted(process[1], process[2]):
                found.append(process)
        if found:
            break
    return found


def _read_live_process(name: str) -> tuple[int, int, int] | None:
    """``(pid, pgid, sid)`` of ``/proc/{name}``, or None if it is gone or a zombie.

    A process whose main thread has exited while other threads run on shows
    as a zombie in its own ``stat``; it is alive (and holds the pipes, the
    files, the session) as long as one of its threads is: those are read too.
    """
    fields = _stat_fields(f"/proc/{name}/stat")
    if fields is None or len(fields) <= 3:
        return None
    if fields[0] in (b"Z", b"X") and not _other_thread_runs(name):
        return None
    return int(name), int(fields[2]), int(fields[3])


def _other_thread_runs(name: str) -> bool:
    """Whether a thread of the zombie-looking ``/proc/{name}`` is not itself a zombie."""
    try:
        threads = os.listdir(f"/proc/{name}/task")
    except OSError:
        return False
    for thread in threads:
        fields = _stat_fields(f"/proc/{name}/task/{thread}/stat")
        if fields and fields[0] not in (b"Z", b"X"):
            return True
    return False


def _stat_fields(path: str) -> list[bytes] | None:
    """The fields of a ``stat`` file after ``(comm)``: state, ppid, pgrp, session, ...

    None if it cannot be read (the process or thread is gone).
    """
    try:
        with open(path, "rb") as stat_file:
            stat = stat_file.read()
    except OSError:
        return None
    return stat[stat.rfind(b")") + 2 :].split()
