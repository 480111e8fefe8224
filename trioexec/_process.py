"""Run a command in its own process group, and make sure the whole group dies.

Both the ``Bash`` tool and command hooks spawn through here.  The child is
started with ``start_new_session=True``, so it leads a new session and process
group (``pgid == pid``) that every process it forks joins unless it
deliberately calls ``setsid`` itself.  Whatever way the run ends (normal exit,
timeout, cancellation, an exception), the group is terminated before
:func:`run_process_group` returns or raises: ``SIGTERM`` (plus ``SIGCONT`` so
stopped members can act on it), a grace period, then ``SIGKILL``; with no grace
``SIGKILL`` at once.  Once the group has no live member no further signal is
sent, so a recycled process-group id is never hit.

"Live" ignores zombies: an orphaned grandchild that has exited is dead even
if no init process has reaped it yet.  On Linux the group is read from
``/proc``; elsewhere ``killpg(pgid, 0)`` answers.
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

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from pathlib import Path

__all__ = [
    "DEFAULT_KILL_GRACE",
    "ProcessResult",
    "Stream",
    "live_group_members",
    "run_process_group",
    "terminate_group",
]

Stream: TypeAlias = Literal["stdout", "stderr"]

DEFAULT_KILL_GRACE = 0.5
"""Seconds between SIGTERM and SIGKILL."""
KILL_WAIT = 5.0
"""How long to wait for the group to vanish after SIGKILL before giving up."""
DRAIN_WAIT = 1.0
"""After the group is gone, how long the pipes may take to reach EOF (a member
that escaped the group with its own ``setsid`` could hold them open)."""
POLL_INTERVAL = 0.01
"""Longest pause between two looks at the group while waiting for it to die
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
) -> ProcessResult:
    """Run ``argv`` in a new process group and collect its output.

    Returns once the leader has exited (or the deadline passed) and nothing
    is left alive in its group: members the leader left running are
    terminated then.

    Args:
        argv: the program and its arguments.
        cwd: working directory of the child.
        env: the child's environment (None: inherit).
        stdin: bytes written to the child's stdin, which is then closed (a
            child that exits without reading them is fine); None: ``/dev/null``.
        deadline: the trio clock time at which the group is terminated and
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

    Cancellation: the whole group is terminated as above (SIGTERM, then
    SIGKILL after ``kill_grace``); this cleanup is shielded, so when
    ``Cancelled`` propagates no member of the group is alive any more.

    Raises:
        OSError: the program could not be started.
    """
    process = await trio.lowlevel.open_process(
        list(argv),
        stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
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
        async with trio.open_nursery() as nursery:
            if process.stdin is not None and stdin is not None:
                nursery.start_soon(_feed, process.stdin, stdin)
            nursery.start_soon(_pump, process.stdout, "stdout", buffers, counter, on_output)
            nursery.start_soon(_pump, process.stderr, "stderr", buffers, counter, on_output)
            with trio.move_on_at(deadline) as limit:
                await process.wait()
            timed_out = limit.cancelled_caught
            # The leader is gone (or timed out): end what is left of its group,
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


async def _feed(pipe: trio.abc.SendStream, data: bytes) -> None:
    """Write ``data`` to the child's stdin and close it; a child that exits
    (or closes stdin) without reading everything is not an error."""
    with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
        async with pipe:
            await pipe.send_all(data)


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


async def terminate_group(process: trio.Process, *, kill_grace: float = DEFAULT_KILL_GRACE) -> None:
    """End every process of ``process``'s group: SIGTERM, grace, SIGKILL.

    With ``kill_grace <= 0`` the group gets SIGKILL straight away.  Returns at
    once when no member is alive (no signal is sent then), otherwise when the
    group is empty or :data:`KILL_WAIT` seconds after SIGKILL.  The leader is
    reaped along the way.  Not shielded: callers that must finish it under
    cancellation shield it themselves.
    """
    pgid = process.pid
    if not await _group_alive(process):
        return
    if kill_grace > 0:
        _signal_group(pgid, signal.SIGTERM)
        _signal_group(pgid, signal.SIGCONT)
        with trio.move_on_after(kill_grace):
            await _wait_group_gone(process)
            return
    _signal_group(pgid, signal.SIGKILL)
    with trio.move_on_after(KILL_WAIT):
        await _wait_group_gone(process)


async def _wait_group_gone(process: trio.Process) -> None:
    # There is no event for a group's end: poll, quickly at first.
    delay = 0.001
    while await _group_alive(process):
        await trio.sleep(delay)
        delay = min(delay * 2, POLL_INTERVAL)


async def _group_alive(process: trio.Process) -> bool:
    process.poll()  # reap the leader if it has exited, so it is not counted as a zombie
    return bool(await trio.to_thread.run_sync(live_group_members, process.pid))


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, sig)


def live_group_members(pgid: int) -> list[int]:
    """The pids of the live (not zombie) processes whose process group is ``pgid``."""
    if sys.platform.startswith("linux") and os.path.isdir("/proc"):
        return _proc_group_members(pgid)
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return []
    except PermissionError:
        pass
    return [pgid]


def _proc_group_members(pgid: int) -> list[int]:
    members: list[int] = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as stat_file:
                stat = stat_file.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 2 and int(fields[2]) == pgid and fields[0] not in (b"Z", b"X"):
            members.append(int(name))
    return members
