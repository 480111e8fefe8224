"""Command hooks: a shell command, the hook JSON on stdin, its answer on stdout.

Each command runs through ``/bin/sh -c`` in a new session, so everything it
starts (in its process group or in another group of the session) can be
killed (the spawning, capture and kill are :mod:`trioexec._process`'s, shared
with the ``Bash`` tool).  stdout and stderr are captured up to
:data:`HOOK_OUTPUT_LIMIT` bytes each (the rest is read and dropped, so a
chatty hook never blocks on a full pipe).  When the hook ends, times out, or
the caller is cancelled, every group of the session gets SIGKILL and the kill
is awaited (shielded, at most :data:`~trioexec._process.KILL_WAIT` seconds)
before control returns: no process of a hook outlives its run.

How the output is read (as Claude Code reads it): stdout starting with
``{`` that parses as JSON decides, whatever the exit code (JSON of the wrong
shape is a non-blocking error); anything else, including stdout that starts
with ``{`` but does not parse, is plain output: exit 0 is success, exit 2 a
blocking error ``[{command}]: {stderr or 'No stderr output'}`` (stderr
verbatim), anything else a non-blocking error.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING

import attrs

from .._process import run_process_group
from ._output import HookResult, parse_hook_json, result_from_output

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

__all__ = [
    "HOOK_OUTPUT_LIMIT",
    "CommandRun",
    "interpret_command_run",
    "run_command",
]

HOOK_OUTPUT_LIMIT = 1_000_000
"""Bytes of stdout (and of stderr) kept per hook run."""


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
    """Run ``command`` with ``/bin/sh -c`` in its own session and wait for it.

    ``stdin`` is written to the command's stdin, which is then closed.  Returns
    when the command has exited; any process it left running in its session is
    killed then (a hook that must leave something running detaches it with
    ``setsid``).

    Raises:
        OSError: the shell could not be started (e.g. ``cwd`` does not exist).

    On cancellation every process group of the session is killed with SIGKILL
    and reaped before Cancelled propagates.
    """
    run = await run_process_group(
        ["/bin/sh", "-c", command],
        cwd=os.fspath(cwd),
        env=env,
        stdin=stdin,
        max_output_bytes=limit,
        keep_tail=False,
        kill_grace=0,
    )
    returncode = -run.killed_by if run.killed_by is not None else run.exit_code
    return CommandRun(returncode, run.stdout, run.stderr)


def interpret_command_run(run: CommandRun, command: str, event: str) -> HookResult:
    """Turn a finished command's exit code and output into a :class:`HookResult`.

    As Claude Code does: stdout that starts with ``{`` and parses as JSON
    decides (a JSON object of the wrong shape is a non-blocking error);
    stdout that starts with ``{`` but does not parse is plain output, so the
    exit code decides.  A blocking error carries stderr verbatim (untrimmed).
    """
    text = run.stdout.strip()
    if text.startswith("{"):
        try:
            data = json.loads(text)
        except ValueError:
            data = _NOT_JSON
        if data is not _NOT_JSON:
            try:
                output = parse_hook_json(data, event)
            except ValueError as exc:
                return HookResult(label=command, error=f"JSON validation failed: {exc}")
            return result_from_output(output, event, command)
    if run.returncode == 0:
        return HookResult(label=command)
    if run.returncode == 2:
        return HookResult(
            label=command,
            blocking_error=f"[{command}]: {run.stderr or 'No stderr output'}",
        )
    stderr = run.stderr.strip() or "No stderr output"
    return HookResult(
        label=command, error=f"Failed with non-blocking status code {run.returncode}: {stderr}"
    )


_NOT_JSON = object()
