"""Run one command confined: prepare, serve its proxy, run, check, tell the model.

:func:`run_confined` is what the ``Bash`` tool awaits instead of running
its shell directly when the sandbox confines the command.  The process
itself is started by the caller's ``run`` (the tool's own
``run_process_group`` call, with its deadline, output capture and killing
of the whole session), so cancellation, timeouts and exit codes are the
tool's as before.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

import attrs
import trio

from ..._groups import as_one_await
from ._proxy import Proxy, open_proxy
from ._report import violation_note

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Mapping
    from pathlib import Path

    from ..._contract._permission_context import PermissionContext
    from ..._process import ProcessResult
    from ._sandbox import Confinement, Sandbox

__all__ = ["run_confined"]


async def run_confined(
    sandbox: Sandbox,
    command: list[str],
    *,
    cwd: Path,
    env: Mapping[str, str] | None,
    permissions: PermissionContext | None,
    run: Callable[[list[str], dict[str, str] | None], Awaitable[ProcessResult]],
) -> ProcessResult:
    """Run ``command`` in ``sandbox`` through ``run(argv, env)``.

    Args:
        sandbox: the active sandbox.
        command: the program and its arguments (``[shell, "-c", text]``).
        cwd: the working directory (writable inside).
        env: the environment (None: inherited).
        permissions: the rules in force (``Edit`` allow and ``Read`` deny
            rules add writable and hidden paths).
        run: starts the process and collects its result.

    Returns:
        ``run``'s result, with the ``<sandbox_violations>`` block appended to
        its stderr when the sandbox refused something (see
        :func:`~._report.violation_note`).  Protected paths the command
        created are removed first.

    Raises:
        OSError: what ``run`` raised (the program could not be started).

    On cancellation the proxy (if any) is closed with its connections, the
    created protected paths are removed, and ``Cancelled`` propagates.
    """
    proxy: Proxy | None = None
    confined: Confinement | None = None
    failure: OSError | None = None
    result: ProcessResult | None = None

    async def prepare_and_run(socket_path: str | None) -> None:
        nonlocal confined, result, failure
        prepare = functools.partial(
            sandbox.prepare,
            command,
            cwd=cwd,
            env=env,
            permissions=permissions,
            proxy_socket=socket_path,
        )
        try:
            if sandbox.needs_thread(permissions):  # Read patterns may walk directories
                confined = await trio.to_thread.run_sync(prepare)
            else:
                confined = prepare()
            result = await run(confined.argv, confined.env)
        except OSError as exc:
            failure = exc

    removed: list[str] = []
    try:
        if sandbox.wants_proxy:
            settings = sandbox.settings
            with as_one_await():
                async with open_proxy(
                    sandbox.proxy_dir, settings.allowed_domains, settings.denied_domains
                ) as proxy:
                    await prepare_and_run(proxy.path)
        else:
            await prepare_and_run(None)
    finally:
        if confined is not None:
            removed = confined.watch.remove_created()
    if failure is not None:
        raise failure
    assert result is not None
    assert confined is not None
    note = violation_note(
        f"{result.stderr}\n{result.stdout}",
        plan=confined.plan,
        settings=sandbox.settings,
        tmpdir=sandbox.tmpdir,
        removed=removed,
        refused_hosts=proxy.refused if proxy is not None else (),
    )
    if note is None:
        return result
    # After the command's own output (stderr is merged into it, as Claude Code does).
    return attrs.evolve(result, stdout=f"{result.stdout.rstrip()}\n{note}")
