"""Sibling cancellation and every other way a run's calls are stopped (SPEC §3.1-3.4).

Owns the two scopes of a run and why its calls are stopped (:class:`Cancellation`),
the synthetic answers a stopped call gets, the grace period for calls that
ignore cancellation (:class:`GraceWatchdog`), and :func:`cancel_at_end_of_instant`,
the one way a scope is cancelled here.

Scopes, outermost first::

    turn scope       (Turn.abort)            one per run, registered with the Turn
      sibling scope  (cascading tool error,  the calls' nursery's own scope (one per
                      discard)                batch / streaming run), a child of the turn scope
          call scope (Turn.interrupt)        one per "cancel" call ("block" calls have none)

Until the calls' nursery opens, a stand-in scope takes the sibling
cancellations (:meth:`Cancellation.adopt_sibling_scope` carries them over).

Cancelling the sibling scope never cancels the turn scope: a failing shell
command stops its siblings, never the turn.  Nothing here calls back into the
run core; the core tells these objects what happened and applies their answers.
"""

from __future__ import annotations

import logging
import math
from typing import TYPE_CHECKING

import trio
from trio.lowlevel import enable_ki_protection

from .._contract._format_error import fit_text
from .._groups import exception_name, is_cancellation
from .._models import ToolResult
from .._texts import (
    CANCEL_MESSAGE,
    REJECT_MESSAGE,
    STREAMING_FALLBACK_MESSAGE,
    application_stopped_message,
    describe_tool_use,
    interrupted_message,
    sibling_error_message,
    sibling_stopped_message,
    timeout_message,
    tool_use_error,
)
from ._call import Call, CallOutcome, DeniedOutcome, error_outcome

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from .._texts import SyntheticTexts
    from ._call import Expiry
    from ._events import CancelReason

__all__ = [
    "DEFAULT_GRACE_PERIOD",
    "NEVER_STARTED_BATCH",
    "NEVER_STARTED_STREAMING",
    "Cancellation",
    "GraceWatchdog",
    "cancel_at_end_of_instant",
    "delivered_by_a_scope",
    "raised_outcome",
]

logger = logging.getLogger("trioexec")

DEFAULT_GRACE_PERIOD = 5.0
"""Seconds a cancelled call may keep running before it is answered on its behalf."""

NEVER_STARTED_STREAMING = REJECT_MESSAGE
"""What a streaming call that never started gets (as Claude Code)."""

NEVER_STARTED_BATCH = CANCEL_MESSAGE
"""What a batch-path call that never started gets (SPEC §3.3)."""


def cancel_at_end_of_instant(scope: trio.CancelScope, now: float) -> None:
    """Cancel ``scope`` at the next scheduler tick rather than at once.

    Setting the deadline to *now* makes trio cancel the scope when it next
    processes deadlines, before it runs any task again.  Every task already
    woken in this instant therefore finishes its step first: a call whose
    work completed in the same (virtual) instant keeps its real result, and
    the outcome never depends on trio's randomised scheduling order.
    """
    if scope.deadline > now:
        scope.deadline = now


def delivered_by_a_scope(exc: BaseException) -> bool:
    """Whether ``exc`` is a cancellation some enclosing scope delivered.

    A ``Cancelled`` (or a group of nothing else) while no scope around the
    call is cancelled was raised by the tool itself, from a scope of its own:
    it is the tool's own ``BaseException``, never absorbed as a cancellation.
    """
    return is_cancellation(exc) and trio.current_effective_deadline() == -math.inf


def raised_outcome(call: Call, exc: BaseException) -> CallOutcome:
    """The answer to a call whose tool code raised a ``BaseException`` that stops the run."""
    text = tool_use_error(f"Error: the tool raised {exception_name(exc)}; the run was stopped")
    return error_outcome(call.tool_use.id, text)


SIBLING_ERROR_PENDING = CallOutcome(
    ToolResult("", "", is_error=True), cancel_reason="sibling_error"
)
"""What a call stopped by a sibling's error holds until its release (never released as is)."""


class Cancellation:
    """The turn and sibling scopes of one run, and why its calls are being stopped.

    Attributes:
        turn_scope: the outermost scope around the run's calls; the turn's
            :meth:`~trioexec.Turn.abort` cancels it.
        sibling_scope: the child of ``turn_scope`` a cascade (or a discard) cancels.
        cascade: ``(time, index, description)`` of the cascading error that
            names the sibling-error text: the earliest, ties broken by arrival.
        cause: the first reason the run's executing calls were stopped.
        discarded: the attempt was abandoned (streaming fallback).
        faulted: user code raised: a ``BaseException`` from a tool, a hook, a
            modifier or an observer, or any exception from the body of the
            run's ``async with``; the run is stopped and it propagates at the end.
        outer_reason: trio's reason when an enclosing scope stopped the run
            (``cancelled``): the scope's ``reason=``, else how it was cancelled.
        texts: which words stopped calls are answered with.
        partial_output: whether an explained answer carries the output so far.
    """

    __slots__ = (
        "_sibling_text",
        "cascade",
        "cause",
        "discarded",
        "faulted",
        "never_started_text",
        "outer_reason",
        "partial_output",
        "sibling_scope",
        "texts",
        "turn_scope",
    )

    def __init__(
        self,
        never_started_text: str,
        texts: SyntheticTexts = "claude-code",
        *,
        partial_output: bool = True,
    ) -> None:
        self.turn_scope = trio.CancelScope()
        self.sibling_scope = trio.CancelScope()
        self.cascade: tuple[float, int, str, bool] | None = None
        """The naming failure: (when, arrival index, description, it was a denial)."""
        self.cause: CancelReason | None = None
        self.discarded = False
        self.faulted = False
        self.never_started_text = never_started_text
        self.outer_reason: str | None = None
        self.texts: SyntheticTexts = texts
        self.partial_output = partial_output
        self._sibling_text: tuple[str, str] | None = None  # (description, its text), made once

    def stopped_from_outside(self, cancelled: trio.Cancelled) -> bool:
        """Whether ``cancelled`` came from an enclosing scope, not from the run's own.

        Records trio's reason (the first one) and makes ``cancelled`` the
        run's cause; False when the run's scopes explain it.
        """
        # Every stop of the run's own records its cause before it cancels the
        # sibling scope; the scope alone says nothing (it is the calls'
        # nursery's, which trio also cancels when a body or a child raises).
        if self.cause is not None or self.turn_scope.cancel_called:
            return False
        if self.outer_reason is None:
            self.outer_reason = cancelled.reason or f"{cancelled.source} cancellation"
        self.record_cause("cancelled")
        return True

    def blocked_reason(self, *, turn_interrupted: bool) -> CancelReason | None:
        """Why no new call may start now (None: calls may start).

        The one rule for "the run is stopped": whatever stopped it (a discard,
        an enclosing scope, a ``BaseException`` from user code, an interrupt
        or abort, a cascading error), no call starts after it.
        """
        if self.discarded:
            return "streaming_fallback"
        if self.cause == "cancelled":
            return "cancelled"
        if self.faulted:
            return self.cause or "user_interrupted"
        if turn_interrupted:
            return "user_interrupted"
        if self.cascade is not None:
            return "sibling_error"
        return None

    def adopt_sibling_scope(self, scope: trio.CancelScope) -> None:
        """The calls' nursery opened: its own scope is the sibling scope from now on.

        A run needs no scope of its own between the turn scope and its calls'
        nursery: the nursery's scope is that child of the turn scope, one
        scope fewer per run.  Until a nursery opens, a stand-in scope takes
        the cancellations; a stop asked of it carries over to ``scope``.
        """
        before = self.sibling_scope
        if before is scope:
            return
        if before.cancel_called:
            scope.cancel(reason="the run's siblings were stopped before their nursery opened")
        elif before.deadline < scope.deadline:
            scope.deadline = before.deadline
        self.sibling_scope = scope

    def record_cause(self, reason: CancelReason) -> None:
        """Remember the first reason executing calls were stopped."""
        if self.cause is None:
            self.cause = reason

    def start_cascade(self, call: Call, now: float) -> None:
        """``call`` failed with a cascading error: its siblings are cancelled this instant.

        When several cascading calls fail, the first to fail names the text;
        failures of one instant are ordered by arrival.
        """
        denied = isinstance(call.outcome, DeniedOutcome)
        candidate = (now, call.index, describe_tool_use(call.tool_use), denied)
        if self.cascade is None or candidate < self.cascade:
            self.cascade = candidate
        self.record_cause("sibling_error")
        cancel_at_end_of_instant(self.sibling_scope, now)

    def discard(self, now: float, *, cancel: bool = True) -> bool:
        """Abandon the attempt (and with ``cancel`` stop every executing call).

        Returns False if the attempt was already discarded.
        """
        if self.discarded:
            return False
        self.discarded = True
        self.record_cause("streaming_fallback")
        if cancel:
            cancel_at_end_of_instant(self.sibling_scope, now)
        return True

    def reason_for(self, call: Call) -> CancelReason:
        """Why ``call`` is being stopped: its own reason, else the run's, else an interrupt."""
        return call.cancel_reason or self.cause or "user_interrupted"

    def answer_now(self, call: Call, reason: CancelReason, *, started: bool) -> CallOutcome:
        """The answer a stopped call holds from now on: :meth:`synthetic`'s, except that a
        sibling-error answer is a placeholder until the call's release, where the core
        asks :meth:`synthetic` for its text (only then is the naming failure settled)."""
        if reason == "sibling_error":
            return SIBLING_ERROR_PENDING
        return self.synthetic(call, reason, started=started)

    def sibling_error_answer(self, call: Call) -> CallOutcome:
        """The sibling-error answer of ``call`` at its release (the naming failure is settled).

        Claude Code's words name only the failing call, so they are written
        once per naming failure and shared by every sibling.
        """
        if self.texts == "trioexec":
            return self.synthetic(call, "sibling_error", started=call.started)
        assert self.cascade is not None
        description = self.cascade[2]
        cached = self._sibling_text
        if cached is None or cached[0] != description:
            cached = self._sibling_text = (description, sibling_error_message(description))
        # Positional (result, attachments, context_modifier, stop_reason,
        # cancel_reason): an attrs __init__ takes them a third faster, once per sibling.
        return CallOutcome(
            ToolResult(call.tool_use.id, cached[1], True), (), None, None, "sibling_error"
        )

    def synthetic(
        self, call: Call, reason: CancelReason, *, started: bool, expiry: Expiry | None = None
    ) -> CallOutcome:
        """The answer a stopped call gets instead of its tool's.

        With ``texts == "claude-code"`` these are Claude Code's bytes; with
        ``"trioexec"`` each says whether the call had started, what stopped it
        and what it had printed so far (:meth:`Call.output_so_far`, cut like
        any error text).  A timeout has no Claude Code text: both variants give
        the explained one.  A sibling-error answer names the cascading call
        (settled only once every earlier call is answered: the core asks again
        at release).
        """
        name = call.tool_use.name
        honest = self.texts == "trioexec"
        shows_output = started and self.partial_output and (honest or expiry is not None)
        output = fit_text(call.output_so_far()) if shows_output else ""
        detail: str | None = None
        if reason == "sibling_error":
            assert self.cascade is not None
            if honest:
                text = sibling_stopped_message(
                    self.cascade[2], name, started=started, output=output, denied=self.cascade[3]
                )
            else:
                text = sibling_error_message(self.cascade[2])
        elif reason == "streaming_fallback":
            text = STREAMING_FALLBACK_MESSAGE
        elif reason == "timeout":
            assert expiry is not None
            text = timeout_message(
                name, kind=expiry.kind, limit=expiry.limit, elapsed=expiry.elapsed, output=output
            )
            detail = f"{expiry.kind} of {expiry.limit:g} s after {round(expiry.elapsed, 6):g} s"
        elif reason == "cancelled" and honest:
            detail = self.outer_reason or "cancelled"
            text = application_stopped_message(name, detail, started=started, output=output)
        elif honest:
            text = interrupted_message(name, started=started, output=output)
        elif started:
            text = REJECT_MESSAGE
        else:
            text = self.never_started_text
        if reason == "cancelled":
            detail = self.outer_reason
        return CallOutcome(ToolResult(call.tool_use.id, text, True), (), None, None, reason, detail)


class GraceWatchdog:
    """Answers calls that ignore cancellation once their grace period has passed.

    A tool that shields itself (or never reaches a checkpoint) cannot be
    stopped; ``grace_period`` seconds after its cancellation was requested
    its call is answered on its behalf (``answer(call)``) and a warning is
    logged.  The task itself is still awaited by its nursery: no task
    outlives the run.  This holds whoever cancelled: a sibling's error, an
    interrupt, or the application's own enclosing scope (the watch sleeps in
    a shielded scope, so the cancellation that stops the calls does not stop
    the watch, even when it runs in the calls' own nursery).

    No task runs while nothing is being cancelled: the watch task is started
    (in ``nursery``: the run's, or the calls' one) at the first cancellation
    request and ends as soon as no requested call is left unanswered.  Per
    call it costs O(1): the request time (on the call), an append and a
    count; only a watch that wakes looks through the requested calls.

    The count only decides when the watch wakes early; what it watches is
    read from the calls themselves (those requested with no answer yet)
    each time it wakes.  A miscount can therefore neither end the watch
    while a call is unanswered (it wakes, finds the call, sleeps again) nor
    keep it alive past the last answer (it always sleeps until the earliest
    due time of a call it found unanswered, and ends once it finds none).

    The run lends the watchdog its nursery and its ``answer`` for its
    lifetime (:meth:`open` / :meth:`close`); outside it a request is only
    recorded.  Holding the run's method only while the run is open keeps a
    finished run free of reference cycles: its records are freed at once,
    not by the cycle collector.

    Attributes:
        grace_period: seconds, or None to wait silently.
        nursery: where the watch task runs, while the run is open.
    """

    __slots__ = (
        "_answer",
        "_requested",
        "_running",
        "_scope",
        "_unanswered",
        "grace_period",
        "nursery",
    )

    def __init__(self, grace_period: float | None) -> None:
        self.grace_period = grace_period
        self.nursery: trio.Nursery | None = None
        self._answer: Callable[[Call], None] = _answer_nothing
        self._requested: list[Call] = []  # in request order; answered ones are dropped lazily
        self._unanswered = 0  # how many of them have no answer yet (a hint: see the class)
        self._running = False
        self._scope: trio.CancelScope | None = None

    def open(self, nursery: trio.Nursery | None, answer: Callable[[Call], None]) -> None:
        """The run is open: watch in ``nursery``; ``answer(call)`` answers an overdue call.

        A run without a nursery of its own lends the watchdog each of its
        calls' nurseries in turn (``nursery`` is set while one is open): the
        watch sleeps shielded, so it outlasts their cancellation.
        """
        self.nursery = nursery
        self._answer = answer

    def close(self) -> None:
        """The run is over: nothing more is watched, and its ``answer`` is let go."""
        self.nursery = None
        self._answer = _answer_nothing
        self._requested = []
        self._unanswered = 0

    @enable_ki_protection
    def request(self, call: Call, now: float) -> None:
        """Cancellation of ``call`` was requested at ``now`` (the first request counts)."""
        self.request_all((call,), now)

    @enable_ki_protection
    def request_all(self, calls: Iterable[Call], now: float) -> None:
        """Cancellation of each of ``calls`` was requested at ``now`` (a cascade stops
        every executing call; for each, the first request counts)."""
        watched = self.grace_period is not None and self.nursery is not None
        added = 0
        for call in calls:
            if call.cancel_requested_at is None:
                call.cancel_requested_at = now
                if watched:
                    self._requested.append(call)
                    added += 1
        if not added:
            return
        self._unanswered += added
        assert self.grace_period is not None
        assert self.nursery is not None
        if not self._running:
            self._running = True
            self.nursery.start_soon(self._watch)
        elif self._scope is not None:
            self._scope.deadline = min(self._scope.deadline, now + self.grace_period)

    @enable_ki_protection
    def answered(self, call: Call) -> None:
        """``call``, whose cancellation was requested, has its answer (the last wakes the watch)."""
        if not self._unanswered:
            return  # it was requested while nothing was watched
        self._unanswered -= 1
        if not self._unanswered and self._scope is not None:
            self._scope.cancel(reason="no cancelled call left unanswered")

    @enable_ki_protection
    async def _watch(self) -> None:
        assert self.grace_period is not None
        grace = self.grace_period
        try:
            while waiting := self._waiting():
                self._unanswered = len(waiting)  # re-read: a miscount lasts one sleep at most
                due = min(c.cancel_requested_at or 0.0 for c in waiting) + grace
                # Shielded: an enclosing scope's cancellation (the application's
                # own, say) is what this watch is for, so it must not end it.
                with trio.CancelScope(deadline=due, shield=True) as scope:
                    self._scope = scope
                    await trio.sleep_forever()
                self._scope = None
                # The end-of-instant rule: every task woken in the instant the
                # grace ran out finishes its step first, so a call returning
                # in that very instant keeps its real result.
                await trio.lowlevel.cancel_shielded_checkpoint()
                self._answer_overdue()
        finally:
            self._scope = None
            self._running = False

    def _waiting(self) -> list[Call]:
        """The requested calls still unanswered (the answered are dropped here, once)."""
        self._requested = [call for call in self._requested if call.outcome is None]
        return self._requested

    @enable_ki_protection
    def _answer_overdue(self) -> None:
        assert self.grace_period is not None
        now = trio.current_time()
        for call in sorted(self._waiting(), key=lambda c: c.index):
            requested = call.cancel_requested_at
            if (
                call.outcome is None
                and requested is not None
                and now >= requested + self.grace_period
            ):
                logger.warning(
                    "tool call %s (%s) ignored cancellation for %.1fs; answering it on its "
                    "behalf and waiting for its task to end",
                    call.tool_use.id,
                    call.tool_use.name,
                    now - requested,
                )
                self._answer(call)


def _answer_nothing(call: Call) -> None:
    """The watchdog's answer while no run is open (it never watches then)."""
