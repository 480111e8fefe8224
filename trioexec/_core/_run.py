"""The run core: one coordinator shared by the batch path and the streaming executor.

One :class:`RunCore` per ``run_tools`` call or streaming executor.  It admits
calls (:meth:`RunCore.new_call`), applies the start rule, runs each call's
lifecycle (:meth:`RunCore.run_call`; an interruptible call in a scope of its
own), records answers and releases them through the ordered gate.  Its parts
live next door:

- ``_call``: the call record and its states;
- ``_start_rule``: which call may start beside the executing ones (:class:`ExecutingSet`);
- ``_gate``: which completed calls may leave now (:class:`OrderedGate`);
- ``_cancel``: the turn and sibling scopes, why calls are stopped, the
  synthetic answers and the grace watchdog;
- ``_stopping`` (:class:`StopRules`, the core's base): what a cascade, an
  interrupt, an abort, a discard or an overdue call does to each call;
- ``_thread_progress``: progress a worker thread sends, handed to the run's thread;
- ``_run``: the core built from a front end's options, and ``open_run()``,
  the frame both front ends run inside (the nursery outside the run's
  scopes, the promise that every call is answered, what propagates).

Apart from :meth:`~RunCore.run_call` nothing here awaits: the front ends
call into the core at every state change.
"""

from __future__ import annotations

import logging
from threading import get_ident
from typing import TYPE_CHECKING

import trio
from trio.lowlevel import enable_ki_protection

from .._errors import ConfigurationError
from .._groups import split_cancelled
from .._models import ProgressUpdate, ResultUpdate, ToolResult, ToolUse, Update
from ._call import Answer, Call, CallOutcome, error_outcome, id_problem, unknown_tool_outcome
from ._cancel import (
    DEFAULT_GRACE_PERIOD,
    SIBLING_ERROR_PENDING,
    Cancellation,
    GraceWatchdog,
    cancel_at_end_of_instant,
    delivered_by_a_scope,
    raised_outcome,
)
from ._events import CallEvent, CallEventKind, CancelReason, ObserverSet
from ._gate import OrderedGate, ResultOrder
from ._lifecycle import CallEnv, run_call
from ._partition import admit
from ._policy import DEFAULT_POLICY, Policy, cascade_rule
from ._runtime import TRIO_RUNTIME, Runtime
from ._start_rule import ExecutingSet
from ._stopping import StopRules
from ._thread_progress import current_token, hand_over

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from .._contract._registry import ToolRegistry
    from .._contract._tool import ContextModifier, ContextState
    from ._call import Expiry
    from ._turn import Turn
    from ._update_channel import UpdateSink

__all__ = ["DEFAULT_GRACE_PERIOD", "Call", "ResultOrder", "RunCore"]

logger = logging.getLogger("trioexec")


class RunCore(StopRules):
    """Admission, the start rule, answers and release for the calls of one run."""

    def __init__(
        self,
        registry: ToolRegistry,
        *,
        env: CallEnv,
        turn: Turn,
        context: ContextState,
        max_concurrency: int,
        send: UpdateSink | None,
        never_started_text: str,
        defer_modifiers: bool,
        grace_period: float | None = DEFAULT_GRACE_PERIOD,
        policy: Policy = DEFAULT_POLICY,
        runtime: Runtime = TRIO_RUNTIME,
    ) -> None:
        if grace_period is not None and not grace_period >= 0:
            raise ConfigurationError(f"grace_period must be >= 0 or None, not {grace_period!r}")
        self.registry = registry
        self.runtime = runtime
        """The clock and scope factory (:mod:`trioexec._core._runtime`)."""
        self.env = env
        self.turn = turn
        self.observers: ObserverSet = env.observers
        self._observed = env.observed  # nobody observes: no event is built
        self.context: ContextState = context
        self.max_concurrency = max_concurrency
        self.policy = policy
        self.gate = OrderedGate(policy.result_order, defer_modifiers=defer_modifiers)
        self.cancellation = Cancellation(
            never_started_text, policy.synthetic_texts, partial_output=policy.partial_output
        )
        self._cascades = cascade_rule(policy, batch=defer_modifiers)
        self._spares_blocking = not defer_modifiers and policy.interrupt_queued == "by-behavior"
        self.watchdog = GraceWatchdog(grace_period)  # answers through the run while it is open
        self.calls: list[Call] = []
        self.released: list[ResultUpdate] = []
        self.in_progress: set[str] = set()
        self.stop_reason: str | None = None
        self._send = send
        self._executing = ExecutingSet(max_concurrency)
        self._ids: set[str] = set()
        self._next_start = 0
        self._interruptible = False
        self._thread = get_ident()  # progress from any other thread goes through the token
        self._token = current_token()
        self.faults: list[BaseException] = []
        """BaseExceptions user code raised during the run, in order: they propagate at its end."""
        self.run_scope: trio.CancelScope | None = None
        """What stopping the run cancels: its nursery's scope, or the turn's (set at the start)."""
        self.has_run_nursery = True
        """False: no nursery of its own; its calls' nurseries host the watches in turn."""
        self.on_settled: Callable[[], None] = _nothing
        """Told when a call may start or everything is released (by :meth:`complete`), and
        at every :meth:`settle`: the front end starts queued calls or closes its output."""
        if self._observed:  # (an empty set never faults: no reference cycle for nothing)
            self.observers.on_fault = self.record_fault
        self.turn._attach(self)  # the run/turn handshake

    @property
    def turn_scope(self) -> trio.CancelScope:
        """The outermost scope around the run's calls (the turn's abort cancels it)."""
        return self.cancellation.turn_scope

    @property
    def sibling_scope(self) -> trio.CancelScope:
        """The child of the turn scope that a cascade or a discard cancels."""
        return self.cancellation.sibling_scope

    @property
    def discarded(self) -> bool:
        """The attempt was abandoned: nothing is released any more."""
        return self.cancellation.discarded

    # ------------------------------------------------------------------ the run

    def host_watches(self, nursery: trio.Nursery | None) -> None:
        """Where the grace watchdog and the time-limit watch start their task (None: nowhere).

        The run's own nursery for a run that has one; else each calls'
        nursery in turn, while it is open (both watches shield themselves).
        """
        self.watchdog.nursery = nursery
        if self.env.timeout_watch is not None:
            self.env.timeout_watch.nursery = nursery

    @enable_ki_protection
    def record_fault(self, exc: BaseException, call: Call | None = None) -> None:
        """User code raised a ``BaseException``: stop the run; it propagates at the end.

        The run stops at the end of this instant (no call starts from now on;
        executing calls are cancelled and answered as interrupted), so a
        second BaseException raised in the same instant is kept too.  ``call``
        (the one whose code raised) is left for the caller to answer.
        """
        if any(exc is fault for fault in self.faults):
            return
        self.faults.append(exc)
        self.stop_run(but=call)

    @enable_ki_protection
    def stop_run(self, *, but: Call | None = None) -> None:
        """Stop the run at the end of this instant: nothing starts, everything is cancelled."""
        self.cancellation.faulted = True
        self._stop_executing("user_interrupted")
        self._answer_queued("user_interrupted", but=but)
        if self.run_scope is not None:
            cancel_at_end_of_instant(self.run_scope, self.runtime.now())

    # ------------------------------------------------------------------ calls

    @enable_ki_protection
    def new_call(self, tool_use: ToolUse, *, inspect: bool = True) -> Call:
        """Track a new call (state ``queued``).

        A call whose id is unusable (characters other than letters, digits,
        ``_`` and ``-``, or the id of an earlier call of this run) is answered
        at once with an error and never runs: ids end up in file names and
        pair results with calls.  With ``inspect=False`` no tool code runs (the
        call counts as unsafe): used to admit the rest of a run after a tool's
        code raised a ``BaseException``.
        """
        problem = id_problem(tool_use.id, self._ids)
        compiled = None if problem else self.registry.lookup(tool_use.name)
        call = Call(len(self.calls), tool_use, compiled)
        self._ids.add(tool_use.id)
        # Tracked before any tool code runs: whatever that code raises, the call
        # is known and gets its answer.
        self.calls.append(call)
        if problem is not None:
            self._emit(call, "queued")
            self.complete(call, error_outcome(tool_use.id, problem))
            return call
        if compiled is not None and inspect:
            try:
                call.admission, call.parsed = admit(tool_use, compiled)
            except BaseException as exc:
                self._emit(call, "queued")
                self.record_fault(exc, call)  # first: answering it must not start another
                self.complete(call, raised_outcome(call, exc), cascade=False)
                raise
        if self._observed:
            self._emit(call, "queued")
        return call

    def blocked_reason(self, call: Call | None = None) -> CancelReason | None:
        """Why no new call (``call``, when given) may start now (None: it may start)."""
        turn = self.turn
        cancellation = self.cancellation
        if cancellation.cause is None and not cancellation.faulted and not turn.interrupted:
            return None  # nothing ever stopped the run (every stop records a cause or a fault)
        # An interrupt may spare "block" calls (Policy.interrupt_queued).
        spared = self._spares_blocking and not turn.aborted and (call is None or call.blocks)
        return cancellation.blocked_reason(turn_interrupted=turn.interrupted and not spared)

    def can_start(self, call: Call) -> bool:
        """SPEC §3 start rule plus the concurrency limit (:class:`ExecutingSet`)."""
        return self._executing.may_start(call)

    @property
    def may_have_queued(self) -> bool:
        """Whether a call may still be waiting to start (no later call has started)."""
        return self._next_start < len(self.calls)

    @property
    def has_queued(self) -> bool:
        """Whether a call is still queued (exact, unlike :attr:`may_have_queued`)."""
        return any(call.state == "queued" for call in self.calls[self._next_start :])

    def next_startable(self) -> Iterator[Call]:
        """Queued calls that may start now, in arrival order (streaming)."""
        while (call := self.start_next()) is not None:
            yield call

    @enable_ki_protection
    def start_next(self) -> Call | None:
        """Start the first queued call if it may start now (:meth:`mark_started`); None if not.

        The start rule scans in arrival order and stops at the first call that
        cannot start, so a safe call never overtakes an earlier unsafe one.
        """
        if self.blocked_reason() is not None:
            return None
        calls = self.calls
        index = self._next_start
        while index < len(calls) and calls[index].state != "queued":
            index += 1
        self._next_start = index
        if index >= len(calls):
            return None
        call = calls[index]
        return call if self.start_if_first(call) else None

    @enable_ki_protection
    def start_if_first(self, call: Call) -> bool:
        """Start ``call`` if no earlier call is queued and it may start now (the run
        is known not to be stopped); False leaves it to :meth:`start_next`."""
        if self._next_start != call.index or not self._executing.may_start(call):
            return False
        self.mark_started(call)
        self._next_start = call.index + 1  # no call up to it is queued any more
        return True

    @enable_ki_protection
    def mark_started(self, call: Call) -> None:
        """Move ``call`` to ``executing``; an interruptible call gets its own scope.

        Only a ``"cancel"`` call needs a scope of its own (:meth:`on_interrupt`
        cancels it alone); a ``"block"`` call is stopped only by the run's
        scopes (hot path: docs/performance.md#no-scope).
        """
        call.state = "executing"
        call.started = True
        if call.interrupt_behavior == "cancel":
            call.scope = self.runtime.new_scope()
        call.context_at_start = self.context
        self._executing.add(call)
        self.in_progress.add(call.tool_use.id)
        if self._observed:
            self._emit(call, "started")
            self._update_interruptible()

    run_call = run_call
    """Task body of one call (:func:`trioexec._core._lifecycle.run_call`, the lifecycle itself:
    one frame between the task and the tool)."""

    @enable_ki_protection
    def call_raised(self, call: Call, exc: BaseException) -> BaseException | None:
        """Answer a call whose lifecycle raised ``exc``; return what propagates (None: nothing)."""
        if delivered_by_a_scope(exc):
            self.note_outer_cancellation(exc)
            self.finish_stopped(call)
            return exc
        cancelled, failures = split_cancelled(exc)
        if cancelled is not None and failures is not None and delivered_by_a_scope(cancelled):
            # The tool's own nursery failed while being cancelled: the
            # cancellation wins; the failures are only logged.
            logger.warning(
                "tool call %s (%s) failed while being cancelled",
                call.tool_use.id,
                call.tool_use.name,
                exc_info=failures,
            )
            self.finish_stopped(call)
            return cancelled
        # Not an Exception (KeyboardInterrupt, SystemExit, a Cancelled no
        # scope delivered...): the call is answered now, the run stops, and
        # the exception propagates when the run ends.  Its siblings are
        # answered as interrupted, never as a sibling error.  A call whose
        # tool had returned (a hook raised afterwards) keeps its result.
        self.record_fault(exc, call)  # first: answering it must not start another
        if call.state == "executing":
            self.complete(call, call.returned or raised_outcome(call, exc), cascade=False)
        return None

    @enable_ki_protection
    def finish_stopped(self, call: Call) -> None:
        """Answer a call the run stopped (no-op once answered): its tool's real
        answer if it had returned, else the synthetic answer for why it stopped."""
        if call.state != "executing":
            return
        if call.returned is not None:
            self.complete(call, call.returned)
            return
        reason = call.cancel_reason  # (Cancellation.reason_for, without the call)
        if reason == "sibling_error":  # a cascade's siblings: the settled text waits for release
            self.complete(call, SIBLING_ERROR_PENDING)
            return
        cancellation = self.cancellation
        reason = cancellation.reason_for(call)
        self.complete(call, cancellation.answer_now(call, reason, started=True))

    def timed_out(self, call: Call, expiry: Expiry) -> CallOutcome:
        """The answer of a call whose own time limit stopped its call step."""
        return self.cancellation.synthetic(call, "timeout", started=True, expiry=expiry)

    def note_outer_cancellation(self, exc: BaseException) -> None:
        """A ``Cancelled`` none of the run's scopes explains: an enclosing scope stopped the run."""
        leaf = exc
        while isinstance(leaf, BaseExceptionGroup) and leaf.exceptions:
            leaf = leaf.exceptions[0]
        if isinstance(leaf, trio.Cancelled) and self.cancellation.stopped_from_outside(leaf):
            self._stop_executing("cancelled")

    @enable_ki_protection
    def progress(self, call: Call, data: object) -> None:
        """Deliver a progress item at once (never held behind results).

        From another thread (a tool working in ``trio.to_thread.run_sync`` or
        a thread of its own) the item is handed to the run's thread
        (:meth:`trio.lowlevel.TrioToken.run_sync_soon`: thread-safe, in order)
        and delivered there, before the call's result; once the trio run has
        ended it is dropped, as progress after a call's answer always is.
        """
        if get_ident() != self._thread:
            hand_over(self._token, self.progress, call, data)
            return
        if self.discarded or call.state != "executing":
            return
        call.log_progress(data)
        watch = self.env.timeout_watch
        if watch is not None:
            watch.touch(call.tool_use.id)
        self._emit(call, "progress", data=data)
        self._deliver(ProgressUpdate(call.tool_use.id, data))

    @enable_ki_protection
    def complete(self, call: Call, outcome: Answer, *, cascade: bool = True) -> None:
        """Record a call's answer, start a cascade if it calls for one, open the gate.

        A plain answer (a :class:`ResultUpdate`: the tool's result, nothing else
        to carry) is never synthetic; it is released as it is.
        """
        if call.outcome is not None:
            return  # answered already, on its behalf, after it ignored cancellation
        if call.state == "executing":
            self._executing.remove(call)
            if call.cancel_requested_at is not None:
                self.watchdog.answered(call)
        call.state = "completed"
        call.outcome = outcome
        self.gate.completed(call)
        if self.cancellation.discarded:  # never released: it is no longer in progress either
            self.in_progress.discard(call.tool_use.id)
        if isinstance(outcome, CallOutcome) and outcome.cancel_reason is not None:
            if self._observed:
                self._emit(
                    call,
                    "cancelled",
                    data=_event_data(outcome),
                    reason=outcome.cancel_reason,
                    detail=outcome.cancel_detail,
                )
        else:
            if self._observed:
                self._emit(call, "completed", data=outcome.result)
            if cascade and outcome.result.is_error and self._cascades(call):
                self._start_cascade(call)
        if self._observed:
            self._update_interruptible()
        self._release_ready()
        calls = self.calls
        if self._next_start < len(calls) or len(self.released) == len(calls):
            # may_have_queued or all_released (hot path: docs/performance.md#inlined)
            self.on_settled()

    @enable_ki_protection
    def settle(self) -> None:
        """Release what the gate allows, then let the front end start more calls."""
        self._release_ready()
        self.on_settled()

    @enable_ki_protection
    def answer_unstarted(self, reason: CancelReason) -> None:
        """Answer every call that has not started (the run is ending), then release."""
        self._answer_queued(reason)
        self._release_ready()

    @enable_ki_protection
    def complete_without_starting(self, call: Call, reason: CancelReason) -> None:
        """Answer a queued call that never started: synthetically, or, for an
        unknown tool, with the no-such-tool error (lookup comes first, SPEC §4),
        unless the attempt was discarded (then nothing is answered for real)."""
        call.state = "completed"
        self.gate.completed(call)
        if call.compiled is None and reason != "streaming_fallback":
            call.outcome = unknown_tool_outcome(call.tool_use)
            self._emit(call, "completed", data=call.outcome.result)
            return
        outcome = call.outcome = self.cancellation.answer_now(call, reason, started=False)
        self._emit(
            call,
            "cancelled",
            data=_event_data(outcome),
            reason=reason,
            detail=outcome.cancel_detail,
        )

    # ------------------------------------------------------------ release

    @enable_ki_protection
    def _release_ready(self) -> None:
        if self.cancellation.discarded:
            return
        cancellation = self.cancellation  # (read again after each release: an observer may discard)
        gate = self.gate
        if gate.order == "arrival":  # the head call, while it may leave (performance.md#inlined)
            calls = self.calls
            while (call := gate.head(calls)) is not None:
                if call.state == "queued" and not self._settle_unstartable(call):
                    return
                self._release(call)
                gate.passed(call)
                if cancellation.discarded:  # an observer discarded the attempt
                    return
            return
        for call in gate.releasable(self.calls, unsafe_running=self._executing.unsafe_running):
            if call.state == "queued" and not self._settle_unstartable(call):
                break
            self._release(call)
            if cancellation.discarded:  # an observer discarded the attempt
                break

    def _settle_unstartable(self, call: Call) -> bool:
        """Answer a queued call that can never start now; True if it was answered."""
        reason = self.blocked_reason()
        if reason is None:
            return False
        self.complete_without_starting(call, reason)
        return True

    @enable_ki_protection
    def _release(self, call: Call) -> None:
        assert call.outcome is not None
        call.state = "released"
        outcome = call.outcome
        if call.started:  # (an id refused at admission never did)
            self.in_progress.discard(call.tool_use.id)
        modifier: ContextModifier | None = None
        if type(outcome) is ResultUpdate:  # a plain answer: released as it is
            update = outcome
        else:
            assert isinstance(outcome, CallOutcome)
            if outcome.cancel_reason == "sibling_error":
                # The description is settled now: every earlier call has an answer.
                outcome = call.outcome = self.cancellation.sibling_error_answer(call)
            if outcome.stop_reason is not None and self.stop_reason is None:
                self.stop_reason = outcome.stop_reason
            update = ResultUpdate(outcome.result, outcome.attachments)
            modifier = outcome.context_modifier
        self.released.append(update)
        if self._send is not None:
            self._deliver(update)
        # The modifier is user code that may raise: it runs once the answer is out.
        if modifier is not None:
            modifier = self.gate.at_release(call.index, modifier)
            if modifier is not None:
                self._apply_modifier(call.tool_use.id, modifier)
        if self._observed:
            self._emit(call, "released", data=update.result)

    @enable_ki_protection
    def apply_pending_modifiers(self) -> None:
        """Batch path: apply a safe batch's modifiers in tool_use order, after the batch."""
        for index, modifier in self.gate.take_deferred():
            self._apply_modifier(self.calls[index].tool_use.id, modifier)

    def _apply_modifier(self, tool_use_id: str, modifier: ContextModifier) -> None:
        """A modifier that raises is a bug in its tool: logged, and the context is kept.

        A ``BaseException`` is not swallowed: it stops the run and propagates
        at its end (:meth:`record_fault`).
        """
        try:
            self.context = modifier(self.context)
        except Exception:
            logger.exception("the context modifier of tool call %s raised; ignored", tool_use_id)
        except BaseException as exc:
            self.record_fault(exc)

    def _deliver(self, update: Update) -> None:
        if self._send is None:
            return
        try:  # noqa: SIM105 - a try costs nothing on the happy path; a suppress() context does
            self._send.send_nowait(update)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass  # nobody listens any more (the consumer closed its end)

    @enable_ki_protection
    def close_output(self) -> None:
        """Close the update channel (the run releases nothing more)."""
        if self._send is not None:
            self._send.close()

    def result_limits(self) -> dict[str, float]:
        """tool_use id -> its tool's ``max_result_size_chars``, for the message budget."""
        return {
            call.tool_use.id: call.compiled.tool.max_result_size_chars
            for call in self.calls
            if call.compiled is not None
        }

    @property
    def all_released(self) -> bool:
        """Every call so far has been released."""
        return len(self.released) == len(self.calls)

    @property
    def executing_count(self) -> int:
        """How many calls are executing now."""
        return len(self._executing)

    # ------------------------------------------------------------ bookkeeping

    def _update_interruptible(self) -> None:
        """Tell observers when :attr:`interruptible` changed (called only when observed)."""
        interruptible = self.interruptible
        if interruptible != self._interruptible:
            self._interruptible = interruptible
            if self.observers:
                self.observers.interruptible_changed(interruptible)

    @property
    def interruptible(self) -> bool:
        """Whether everything executing is interruptible (a UI may offer "Esc to cancel")."""
        return self._executing.interruptible

    def _emit(
        self,
        call: Call,
        kind: CallEventKind,
        *,
        data: object = None,
        reason: CancelReason | None = None,
        detail: str | None = None,
    ) -> None:
        if self.observers:
            event = CallEvent(self.runtime.now(), call.tool_use.id, kind, data, reason, detail)
            self.observers.call_event(event)


def _event_data(outcome: CallOutcome) -> ToolResult | None:
    """A sibling-error text is settled only at release; the other answers are final now."""
    return None if outcome.cancel_reason == "sibling_error" else outcome.result


def _nothing() -> None:
    return None
