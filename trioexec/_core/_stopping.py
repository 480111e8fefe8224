"""How a run stops its calls: a cascade, an interrupt, an abort, a discard, an overdue call.

:class:`StopRules` is the part of :class:`~trioexec._core._run.RunCore` that turns
"the run is being stopped" into what happens to each call: executing calls
learn why (their scope is cancelled by the scope that owns them, see
``_cancel``), queued calls that can no longer start are answered at once, and
a call that ignored its cancellation past the grace period is answered on its
behalf.  The scopes and texts live in ``_cancel``; admission, completion and
release stay in ``_run``, which these methods call (a base class, not a
component: each stop ends in answers only the core can give).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from trio.lowlevel import enable_ki_protection

from ._cancel import cancel_at_end_of_instant

if TYPE_CHECKING:
    from collections.abc import Callable

    from ._call import Answer, Call
    from ._cancel import Cancellation, GraceWatchdog
    from ._events import CancelReason
    from ._policy import Policy
    from ._runtime import Runtime
    from ._start_rule import ExecutingSet

__all__ = ["StopRules"]


class StopRules:
    """What stops the calls of a run (the base of :class:`~trioexec._core._run.RunCore`)."""

    if TYPE_CHECKING:  # what the run core provides
        calls: list[Call]
        policy: Policy
        cancellation: Cancellation
        watchdog: GraceWatchdog
        in_progress: set[str]
        on_settled: Callable[[], None]
        _executing: ExecutingSet
        _next_start: int
        _spares_blocking: bool
        runtime: Runtime

        def settle(self) -> None: ...
        def close_output(self) -> None: ...
        def complete(self, call: Call, outcome: Answer, *, cascade: bool = True) -> None: ...
        def complete_without_starting(self, call: Call, reason: CancelReason) -> None: ...

    @enable_ki_protection
    def _start_cascade(self, call: Call) -> None:
        now = self.runtime.now()
        self.cancellation.start_cascade(call, now)
        self._stop_executing("sibling_error")
        self._answer_queued("sibling_error")

    @enable_ki_protection
    def on_interrupt(self) -> None:
        """The turn was interrupted: stop ``"cancel"`` calls, answer unstartable ones."""
        now = self.runtime.now()
        for call in list(self._executing):
            if call.interrupt_behavior == "cancel" and call.scope is not None:
                if call.cancel_reason is None:
                    call.cancel_reason = "user_interrupted"
                self.watchdog.request(call, now)
                cancel_at_end_of_instant(call.scope, now)
        self._answer_queued("user_interrupted", cancel_only=self._spares_blocking)
        self.settle()

    @enable_ki_protection
    def on_abort(self) -> None:
        """The turn was aborted (its scope cancels everything): record why."""
        self._stop_executing("user_interrupted")
        self._answer_queued("user_interrupted")
        self.settle()

    @enable_ki_protection
    def discard(self) -> None:
        """Abandon the run: cancel executing calls (if the policy says so), release nothing more."""
        cancels = self.policy.discard_cancels
        if not self.cancellation.discard(self.runtime.now(), cancel=cancels):
            return
        # Nothing is released from now on: a finished call the gate was holding
        # is no longer in progress (an executing one leaves when its task ends).
        self.in_progress.intersection_update(call.tool_use.id for call in self._executing)
        if cancels:
            self._stop_executing("streaming_fallback")
        self._answer_queued("streaming_fallback")
        self.close_output()
        self.on_settled()

    @enable_ki_protection
    def _answer_queued(
        self, reason: CancelReason, *, but: Call | None = None, cancel_only: bool = False
    ) -> None:
        """Calls that can no longer start are answered now (``cancel_only``: not "block" ones)."""
        for call in self.calls[self._next_start :]:
            if call.state == "queued" and call is not but and not (cancel_only and call.blocks):
                self.complete_without_starting(call, reason)

    @enable_ki_protection
    def _stop_executing(self, reason: CancelReason) -> None:
        """Record why every executing call is being stopped (its scope is cancelled)."""
        self.cancellation.record_cause(reason)
        for call in self._executing:
            if call.cancel_reason is None:
                call.cancel_reason = reason
        self.watchdog.request_all(self._executing, self.runtime.now())

    @enable_ki_protection
    def answer_overdue(self, call: Call) -> None:
        """The watchdog's answer for a call that ignored cancellation past its grace.

        A call whose tool returned by now (its post steps still running) keeps
        its real result.
        """
        if call.returned is not None:
            self.complete(call, call.returned)
            return
        reason = self.cancellation.reason_for(call)
        self.complete(call, self.cancellation.answer_now(call, reason, started=True))
