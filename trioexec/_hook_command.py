"""Command hooks: a shell command, the hook JSON on stdin, its answer on stdout.

Each command runs through ``/bin/sh -c`` in a new session, so it leads its own
process group and everything it starts can be killed at once.  stdout and
stderr are captured up to :data:`HOOK_OUTPUT_LIMIT` bytes each (the rest is
read and dropped, so a chatty hook never blocks on a full pipe).  When the
hook ends, times out, or the caller is cancelled, the whole group is killed
and the kill is awaited (shielded, at most :data:`KILL_GRACE` seconds) before
control returns: no process of a hook outlives its run.

How the output is read (SPEC §5): stdout starting with ``{`` is JSON and
decides, whatever the exit code; invalid JSON is a non-blocking error.
Otherwise exit 0 is success, exit 2 a blocking error
``[{command}]: {stderr or 'No stderr output'}``, anything else a
non-blocking error.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
from typing import TYPE_CHECKING

import attrs
import trio

from ._hook_output import HookResult, parse_hook_json, result_from_output
from .tools._process import live_group_members

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

__all__ = [
    "HOOK_OUTPUT_LIMIT",
    "KILL_GRACE",
    "CommandRun",
    "interpret_command_run",
    "run_command",
]

HOOK_OUTPUT_LIMIT = 1_000_000
"""Bytes of stdout (and of stderr) kept per hook run."""

KILL_GRACE = 5.0
"""Seconds a killed process group may take to disappear before we stop waiting."""

DRAIN_WAIT = 1.0
"""Seconds the pipes may take to reach end of file once the command has exited (a
process that left the group with its own ``setsid`` could hold them open)."""


@attrs.frozen
class CommandRun:
    """A finished command: exit status (negative: killed by that signal) and output."""

    returncode: int
    stdout: str
    stderr: str


async def run_command(
    command: str,
    stdin: bytes,
    *,
    cwd: Path,
    env: Mapping[str, str] | None = None,
    limit: int = HOOK_OUTPUT_LIMIT,
) -> CommandRun:
    """Run ``command`` with ``/bin/sh -c`` in its own process group and wait for it.

    Returns when the command has exited; any process it left running in its
    group is killed then (a hook that must leave something running detaches
    it with ``setsid``).

    Raises:
        OSError: the shell could not be started (e.g. ``cwd`` does not exist).

    On cancellation the process group is killed with SIGKILL and reaped before
    Cancelled propagates.
    """
    process = await trio.lowlevel.open_process(
        command,
        shell=True,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=os.fspath(cwd),
        env=env,
        start_new_session=True,
    )
    assert process.stdin is not None
    assert process.stdout is not None
    assert process.stderr is not None
    stdout, stderr = bytearray(), bytearray()
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_feed, process.stdin, stdin)
            nursery.start_soon(_read_capped, process.stdout, stdout, limit)
            nursery.start_soon(_read_capped, process.stderr, stderr, limit)
            returncode = await process.wait()
            # End what the command left running in its group, so that background
            # children release the pipes; then give the pipes a moment to drain.
            await _kill_group(process)
            nursery.cancel_scope.deadline = trio.current_time() + DRAIN_WAIT
    finally:
        with trio.move_on_after(KILL_GRACE, shield=True):
            await _kill_group(process)
        with trio.CancelScope(shield=True):
            for stream in (process.stdin, process.stdout, process.stderr):
                await stream.aclose()
    return CommandRun(
        returncode,
        stdout.decode("utf-8", errors="replace"),
        stderr.decode("utf-8", errors="replace"),
    )


async def _feed(stream: trio.abc.SendStream, data: bytes) -> None:
    with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
        async with stream:
            await stream.send_all(data)


async def _read_capped(stream: trio.abc.ReceiveStream, buffer: bytearray, limit: int) -> None:
    async for chunk in stream:
        room = limit - len(buffer)
        if room > 0:
            buffer += chunk[:room]


async def _kill_group(process: trio.Process) -> None:
    """SIGKILL the process group led by ``process``, reap the leader, await the rest."""
    pgid = process.pid
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        return  # the leader is reaped and nothing else is left in the group
    except PermissionError:  # pragma: no cover - a member changed its credentials
        pass
    await process.wait()
    delay = 0.001
    while await trio.to_thread.run_sync(live_group_members, pgid):
        await trio.sleep(delay)
        delay = min(delay * 2, 0.05)


def interpret_command_run(run: CommandRun, command: str, event: str) -> HookResult:
    """Turn a finished command's exit code and output into a :class:`HookResult`."""
    text = run.stdout.strip()
    if text.startswith("{"):
        try:
            data = json.loads(text)
        except ValueError as exc:
            return HookResult(label=command, error=f"invalid JSON output: {exc}")
        try:
            output = parse_hook_json(data, event)
        except ValueError as exc:
            return HookResult(label=command, error=f"invalid JSON output: {exc}")
        return result_from_output(output, event, command)
    stderr = run.stderr.strip() or "No stderr output"
    if run.returncode == 0:
        return HookResult(label=command)
    if run.returncode == 2:
        return HookResult(label=command, blocking_error=f"[{command}]: {stderr}")
    return HookResult(
        label=command, error=f"Failed with non-blocking status code {run.returncode}: {stderr}"
    )
