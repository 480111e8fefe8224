"""``async: true`` hooks: run in the background of the run, answered on a later call.

Claude Code starts an async hook and goes on without waiting for it; the hook
cannot block, decide or rewrite anything (the call has already proceeded), and
when it has finished, the ``systemMessage`` or ``additionalContext`` of its
JSON output reaches the model on the next turn (with ``asyncRewake: true``,
which implies ``async``, so does the stderr of an exit code 2; Claude Code
also wakes an idle model with it, trioexec has no idle model to wake).

trioexec does the same inside structured concurrency.  :class:`BackgroundHooks`
starts each async hook as a task of the run's own nursery (the one
:func:`~trioexec._core._frame.open_run` opens, outside the turn and sibling
scopes, so an interrupt does not stop it; a run with async hooks always has
one), each in its own cancel scope under
the hook's own timeout.  What a finished hook says goes into the
:class:`AsyncHookMailbox` of the :class:`~trioexec.GuardRails`, which outlives
the run; the next call those guard rails decide (in this run or a later one)
carries it as ``additional_context`` records, so the model reads it with the
results of its next turn.

No hook outlives its run: when the run's body is done, the hooks still
running get :attr:`BackgroundHooks.grace` seconds (``GuardRails.async_hook_grace``)
while the run waits, then their scopes are cancelled, which kills each
hook's process group and reaps it before the run returns.  A run stopped by
an exception or cancelled from outside cancels them at once.
"""

from __future__ import annotations

import logging
import math
from typing import TYPE_CHECKING

import trio
from trio.lowlevel import enable_ki_protection

from .._models import Attachment

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from ._output import HookResult

__all__ = ["DEFAULT_ASYNC_HOOK_GRACE", "AsyncHookMailbox", "BackgroundHooks"]

logger = logging.getLogger("trioexec.hooks")

DEFAULT_ASYNC_HOOK_GRACE = 5.0
"""Seconds a run waits, once its calls are done, for async hooks still running."""


class AsyncHookMailbox:
    """What finished async hooks said, waiting for the next call to carry it.

    One per :class:`~trioexec.GuardRails` (a session's worth of runs); not
    shared between trio runs.
    """

    def __init__(self) -> None:
        self._records: list[tuple[str, str]] = []

    def __bool__(self) -> bool:
        return bool(self._records)

    def put(self, hook_name: str, text: str) -> None:
        """Keep ``text`` said by the hook of ``hook_name`` (``PostToolUse:Bash``)."""
        self._records.append((hook_name, text))

    def take(self, tool_use_id: str) -> tuple[Attachment, ...]:
        """Everything kept so far, as ``additional_context`` records of ``tool_use_id``."""
        if not self._records:
            return ()
        records, self._records = self._records, []
        return tuple(
            Attachment(tool_use_id, "additional_context", text, hook_name)
            for hook_name, text in records
        )


class BackgroundHooks:
    """The async hooks of one run: started in its nursery, bounded by its end.

    ``nursery`` is set by the run while it is open; without it (guard rails
    used outside a run) :meth:`start` refuses and the hook runs in line.
    """

    def __init__(self, mailbox: AsyncHookMailbox, grace: float) -> None:
        self.mailbox = mailbox
        self.grace = grace
        self.nursery: trio.Nursery | None = None
        self.started = 0
        """How many async hooks this run started in the background."""
        self._scopes: set[trio.CancelScope] = set()
        self._deadline = math.inf

    @property
    def running(self) -> int:
        """How many are still running."""
        return len(self._scopes)

    @enable_ki_protection
    def start(
        self,
        hook_name: str,
        label: str,
        run: Callable[[], Awaitable[HookResult]],
        *,
        rewake: bool = False,
    ) -> bool:
        """Start ``run`` (one hook run) in the background; False: no run is open.

        Args:
            hook_name: ``{event}:{tool}``, what the model reads its messages as.
            label: the command (or Python hook), for the log.
            run: runs the hook under its own timeout and returns how it ended;
                it never raises for a failing hook.
            rewake: ``asyncRewake``: a blocking error (exit 2 and its stderr)
                is kept for the model too.
        """
        nursery = self.nursery
        if nursery is None:
            return False
        scope = trio.CancelScope(deadline=self._deadline)
        self._scopes.add(scope)
        self.started += 1
        nursery.start_soon(
            self._run, scope, hook_name, label, run, rewake, name=f"async hook {label}"
        )
        return True

    @enable_ki_protection
    def wind_down(self) -> None:
        """The run's calls are done: what still runs gets ``grace`` seconds, then is cancelled."""
        self._deadline = trio.current_time() + self.grace
        for scope in self._scopes:
            scope.deadline = min(scope.deadline, self._deadline)

    async def _run(
        self,
        scope: trio.CancelScope,
        hook_name: str,
        label: str,
        run: Callable[[], Awaitable[HookResult]],
        rewake: bool,
    ) -> None:
        try:
            with scope:
                result = await run()
                if result.error is not None:
                    logger.warning(
                        "async %s hook %r failed: %s",
                        hook_name,
                        label,
                        result.error,
                        exc_info=result.exception,
                    )
                said = [result.system_message, result.additional_context]
                if rewake:
                    said.append(result.blocking_error)
                for text in said:
                    if text:
                        self.mailbox.put(hook_name, text)
            if scope.cancelled_caught:
                logger.warning(
                    "async %s hook %r was still running when its run ended; it was stopped",
                    hook_name,
                    label,
                )
        finally:
            self._scopes.discard(scope)
