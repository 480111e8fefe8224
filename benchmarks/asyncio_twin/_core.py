"""The run core on asyncio: trioexec's :class:`RunCore`, with the runtime parts replaced.

Everything that *decides* is trioexec's own code, inherited unchanged:
admission, the start rule, the ordered gate, answers, cascades, the synthetic
texts, release and context modifiers (``RunCore`` calls into ``_call``,
``_gate``, ``_partition`` and ``Cancellation``).  What is rewritten here is
what *runs*:

- ``open_run``: an ``asyncio.TaskGroup`` instead of a nursery (a batch run
  has none, as in trioexec), inside a
  :class:`~benchmarks.asyncio_twin._scope.Scope` (the run scope);
- ``call_raised``: what the call's task body (``run_call``, the twin's
  lifecycle in ``_lifecycle.py``) asks when a call raised; it has to work out
  whether a ``CancelledError`` came from one of the run's scopes, from outside,
  or from the tool itself (trio tells by the effective deadline; asyncio
  cannot, so the scopes keep the record);
- the grace watchdog and the time-limit watch: loop timers instead of tasks;
- :class:`Turn`: ``abort`` reads the loop's clock;
- updates go to an unbounded ``asyncio.Queue`` (closed with a sentinel:
  queues cannot be closed).
"""

from __future__ import annotations

import asyncio
import logging
import math
from contextlib import asynccontextmanager, nullcontext
from typing import TYPE_CHECKING, Any

import attrs

from trioexec._core._call import Answer, Call, Expiry, LimitKind
from trioexec._core._cancel import (
    DEFAULT_GRACE_PERIOD,
    Cancellation,
    cancel_at_end_of_instant,
    raised_outcome,
)
from trioexec._core._frame import run_core_arguments
from trioexec._core._run import RunCore
from trioexec._core._timeouts import ToolTimeouts
from trioexec._core._turn import Turn as _TrioTurn

from ._lifecycle import AsyncioSoloLock, run_call
from ._loop import at_end_of_instant
from ._scope import Scope, cancelling_scope

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable, Iterable

    from trioexec._contract._registry import ToolRegistry
    from trioexec._contract._tool import Tool
    from trioexec._core._lifecycle import CallEnv
    from trioexec._core._runtime import Runtime
    from trioexec._models import Update
    from trioexec._texts import SyntheticTexts

__all__ = ["END", "GraceWatchdog", "TimeoutWatch", "Turn", "TwinRunCore", "new_twin_core"]

logger = logging.getLogger("trioexec")

END = object()
"""Put on the updates queue when the run releases nothing more (a queue has no close)."""


def _now() -> float:
    return asyncio.get_running_loop().time()


class Turn(_TrioTurn):
    """trioexec's :class:`~trioexec.Turn` for asyncio runs: ``abort`` reads the loop's clock."""

    def abort(self) -> None:
        """Hard stop: cancel every call of the turn, ``"block"`` tools included."""
        if self.aborted:
            return
        self.aborted = True
        self.interrupted = True
        now = _now()
        for run in list(self._runs):
            cancel_at_end_of_instant(run.turn_scope, now)  # type: ignore[arg-type]
            run.on_abort()


class GraceWatchdog:
    """Answers a cancelled call on its behalf once it ignored cancellation for ``grace_period``.

    trioexec runs a watch task in the run's nursery; here one loop timer
    stands in (asyncio has timers without tasks), and the answer waits for the
    end of the instant like every cancellation of the twin.
    """

    def __init__(self, grace_period: float | None, answer: Callable[[Call], None]) -> None:
        self.grace_period = grace_period
        self.active = False
        self._answer = answer
        self._waiting: dict[Call, None] = {}
        self._timer: asyncio.TimerHandle | None = None

    def request(self, call: Call, now: float) -> None:
        """Cancellation of ``call`` was requested at ``now`` (the first request counts)."""
        if call.cancel_requested_at is not None:
            return
        call.cancel_requested_at = now
        if self.grace_period is None or not self.active:
            return
        self._waiting[call] = None
        self._schedule()

    def request_all(self, calls: Iterable[Call], now: float) -> None:
        """:meth:`request` for each of ``calls``, with one timer update (a cascade)."""
        added = False
        for call in calls:
            if call.cancel_requested_at is None:
                call.cancel_requested_at = now
                if self.grace_period is not None and self.active:
                    self._waiting[call] = None
                    added = True
        if added:
            self._schedule()

    def answered(self, call: Call) -> None:
        """``call`` has its answer: stop watching it."""
        self._waiting.pop(call, None)
        if not self._waiting and self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _schedule(self) -> None:
        assert self.grace_period is not None
        due = min(c.cancel_requested_at or 0.0 for c in self._waiting) + self.grace_period
        if self._timer is not None:
            if self._timer.when() <= due:
                return
            self._timer.cancel()
        self._timer = asyncio.get_running_loop().call_at(due, self._due)

    def _due(self) -> None:
        self._timer = None
        at_end_of_instant(self.answer_overdue)

    def answer_overdue(self) -> None:
        assert self.grace_period is not None
        now = _now()
        for call in sorted(self._waiting, key=lambda c: c.index):
            requested = call.cancel_requested_at
            if requested is not None and now >= requested + self.grace_period:
                logger.warning(
                    "tool call %s (%s) ignored cancellation for %.1fs; answering it on its "
                    "behalf and waiting for its task to end",
                    call.tool_use.id,
                    call.tool_use.name,
                    now - requested,
                )
                self._waiting.pop(call, None)
                self._answer(call)
        if self._waiting:
            self._schedule()


@attrs.define(eq=False)
class _Armed:
    timer: asyncio.Timeout
    limits: ToolTimeouts
    began: float
    last_progress: float
    handle: asyncio.TimerHandle | None = None
    fired: LimitKind | None = None
    fired_at: float = 0.0

    def due(self) -> tuple[float, LimitKind]:
        total = math.inf if self.limits.timeout is None else self.began + self.limits.timeout
        idle = (
            math.inf
            if self.limits.idle_timeout is None
            else self.last_progress + self.limits.idle_timeout
        )
        return (idle, "idle_timeout") if idle < total else (total, "timeout")


class TimeoutWatch:
    """The tools' time limits, each call step inside an ``asyncio.timeout``.

    ``asyncio.timeout`` fires the moment its deadline comes, before a tool
    that returns in that same instant has run; trioexec's rule is that such a
    tool keeps its result.  So each step's ``asyncio.timeout`` starts with no
    deadline; a loop timer notices the limit ran out and, at the end of the
    instant, reschedules the timeout to *now*.  Progress moves the idle limit.
    """

    def __init__(self) -> None:
        self._armed: dict[str, _Armed] = {}

    def arm(self, tool_use_id: str, timer: asyncio.Timeout, limits: ToolTimeouts) -> None:
        """The call step of ``tool_use_id`` begins now, under ``limits``."""
        now = _now()
        armed = _Armed(timer, limits, now, now)
        self._armed[tool_use_id] = armed
        self._schedule(armed)

    def touch(self, tool_use_id: str) -> None:
        """A progress update arrived: the idle limit starts again."""
        armed = self._armed.get(tool_use_id)
        if armed is not None and armed.fired is None:
            armed.last_progress = _now()
            if armed.limits.idle_timeout is not None:
                self._schedule(armed)

    def disarm(self, tool_use_id: str) -> Expiry | None:
        """The call step ended; which limit stopped it, if one did."""
        armed = self._armed.pop(tool_use_id, None)
        if armed is None:
            return None
        if armed.handle is not None:
            armed.handle.cancel()
        if armed.fired is None:
            return None
        limit = armed.limits.timeout if armed.fired == "timeout" else armed.limits.idle_timeout
        assert limit is not None
        return Expiry(armed.fired, limit, armed.fired_at - armed.began)

    def _schedule(self, armed: _Armed) -> None:
        if armed.handle is not None:
            armed.handle.cancel()
            armed.handle = None
        due, _ = armed.due()
        if due < math.inf:
            armed.handle = asyncio.get_running_loop().call_at(due, self._due, armed)

    def _due(self, armed: _Armed) -> None:
        armed.handle = None
        at_end_of_instant(lambda: self._check(armed))

    def _check(self, armed: _Armed) -> None:
        if armed.fired is not None or armed not in self._armed.values():
            return
        now = _now()
        due, kind = armed.due()
        if due <= now:
            armed.fired, armed.fired_at = kind, now
            armed.timer.reschedule(now)  # fires on the next pass: the task is blocked by then
        else:
            self._schedule(armed)


class _TwinCancellation(Cancellation):
    """trioexec's cancellation bookkeeping, over the twin's scopes.

    ``start_cascade`` and ``discard`` are inherited: they cancel the sibling
    scope through ``cancel_at_end_of_instant``, which a :class:`Scope` honours.
    """

    def __init__(
        self, never_started_text: str, texts: SyntheticTexts, *, partial_output: bool
    ) -> None:
        super().__init__(never_started_text, texts, partial_output=partial_output)
        self.turn_scope = Scope()  # type: ignore[assignment]
        self.sibling_scope = Scope()  # type: ignore[assignment]

    def stopped_by(self, outer: Scope | None, exc: BaseException) -> bool:
        """Whether the run was stopped by an enclosing scope (or a bare ``Task.cancel``)."""
        if self.cause is not None or self.turn_scope.cancel_called:
            return False
        if self.sibling_scope.cancel_called:
            return False
        if self.outer_reason is None:
            if outer is not None:
                self.outer_reason = outer.reason or "scope cancellation"
            else:
                message = exc.args[0] if exc.args and isinstance(exc.args[0], str) else None
                self.outer_reason = message or "task cancellation"
        self.record_cause("cancelled")
        return True


class TwinRunCore(RunCore):
    """:class:`trioexec._core._run.RunCore` with asyncio underneath (see the module docstring)."""

    def __init__(self, registry: ToolRegistry, *, env: CallEnv, **options: Any) -> None:  # noqa: ANN401
        grace = options.get("grace_period", DEFAULT_GRACE_PERIOD)
        env = attrs.evolve(
            env,
            timeout_watch=TimeoutWatch(),
            solo=None if env.solo is None else AsyncioSoloLock(),
            background=None,  # ``async: true`` hooks run inline here (their answers ignored)
        )
        super().__init__(registry, env=env, **options)
        trio_side = self.cancellation
        self.cancellation = _TwinCancellation(
            trio_side.never_started_text, trio_side.texts, partial_output=trio_side.partial_output
        )
        self.watchdog = GraceWatchdog(grace, self.answer_overdue)  # type: ignore[assignment]
        self._send_queue: asyncio.Queue[object] | None = options.get("send")  # type: ignore[assignment]
        self._output_closed = False
        if self.turn.aborted:
            self.turn_scope.cancel(reason="user_interrupted")

    # ------------------------------------------------------------ the run

    @asynccontextmanager
    async def open_run(self, *, hosted: bool = True) -> AsyncIterator[asyncio.TaskGroup | None]:  # type: ignore[override]
        """The frame of one run (trioexec's ``open_run``, on a TaskGroup).

        The body's own exception is caught inside the group: an
        ``asyncio.TaskGroup`` would cancel every call at once and wrap it; the
        run instead stops at the end of the instant and raises it at the end.
        ``hosted=False`` is trioexec's run without a nursery of its own (a
        batch run: its batches' groups are all it needs; the watches are
        loop timers here), and yields None.
        """
        body_error: BaseException | None = None
        exit_error: BaseException | None = None
        run_scope = Scope()
        try:
            with run_scope:
                async with asyncio.TaskGroup() if hosted else nullcontext() as group:
                    self.run_scope = run_scope  # type: ignore[assignment]
                    self.watchdog.active = True  # type: ignore[attr-defined]
                    try:
                        yield group
                    except BaseException as exc:
                        body_error = exc
                        self.note_outer_cancellation(exc)
                        if isinstance(exc, asyncio.CancelledError):
                            raise
                        self.stop_run()
        except BaseException as exc:
            exit_error = exc
        finally:
            self.watchdog.active = False  # type: ignore[attr-defined]
            try:
                if not self.discarded:
                    self.answer_unstarted(self.blocked_reason() or "user_interrupted")
                self.apply_pending_modifiers()
            finally:
                self.turn._detach(self)
        propagate = self._propagates(exit_error, body_error)
        if propagate is not None:
            raise propagate from None

    def _propagates(
        self, exit_error: BaseException | None, body_error: BaseException | None
    ) -> BaseException | None:
        """trioexec's rule (``_core._frame.what_propagates``) with asyncio's exception types."""
        raised = list(self.faults)
        if (
            body_error is not None
            and not isinstance(body_error, asyncio.CancelledError)
            and not any(body_error is fault for fault in raised)
        ):
            if not raised:
                return body_error
            raised.insert(0, body_error)
        if len(raised) == 1:
            return raised[0]
        if raised:
            return BaseExceptionGroup("several tool calls raised", raised)
        if exit_error is None:
            return None
        if isinstance(exit_error, BaseExceptionGroup):
            rest = exit_error.split(asyncio.CancelledError)[1]
            if rest is None:
                return asyncio.CancelledError()
            return rest.exceptions[0] if len(rest.exceptions) == 1 else rest
        return exit_error

    run_call = run_call
    """Task body of one call (:func:`benchmarks.asyncio_twin._lifecycle.run_call`, the
    lifecycle itself: one frame between the task and the tool, as in trioexec)."""

    def complete(self, call: Call, outcome: Answer, *, cascade: bool = True) -> None:
        """trioexec's ``complete``; a discarded run also says when its last call is done.

        The twin's streaming host waits for that moment (trioexec's host waits for
        its nursery to empty instead): the core tells the front end only when a
        call may start or all is released, and a discarded run releases nothing.
        """
        super().complete(call, outcome, cascade=cascade)
        if self.cancellation.discarded and not self.executing_count:
            self.on_settled()

    def call_raised(self, call: Call, exc: BaseException) -> BaseException | None:
        """Answer a call whose lifecycle raised ``exc``; return what propagates (None: nothing).

        A ``CancelledError`` one of the scopes delivered (or a ``Task.cancel``
        from outside) answers the call and propagates; anything else (a
        ``CancelledError`` the tool raised itself, ``KeyboardInterrupt``...)
        is answered now and stops the run, and propagates when the run ends.
        """
        if isinstance(exc, asyncio.CancelledError) and _delivered_by_a_scope():
            self.note_outer_cancellation(exc)
            self.finish_stopped(call)
            return exc
        self.record_fault(exc, call)
        if call.state == "executing":
            self.complete(call, call.returned or raised_outcome(call, exc), cascade=False)
        return None

    def note_outer_cancellation(self, exc: BaseException) -> None:
        if not isinstance(exc, asyncio.CancelledError):
            return
        cancellation = self.cancellation
        assert isinstance(cancellation, _TwinCancellation)
        outer = cancelling_scope()
        if outer is not None and (
            outer is self.turn_scope
            or outer is self.sibling_scope
            or outer is self.run_scope
            or any(outer is call.scope for call in self.calls)
        ):
            return  # one of the run's own scopes: its reason is on record already
        if cancellation.stopped_by(outer, exc):
            self._stop_executing("cancelled")

    def _deliver(self, update: Update) -> None:
        if self._send_queue is not None and not self._output_closed:
            self._send_queue.put_nowait(update)

    def close_output(self) -> None:
        """Put the end marker on the updates queue (once)."""
        if self._send_queue is not None and not self._output_closed:
            self._output_closed = True
            self._send_queue.put_nowait(END)


def _delivered_by_a_scope() -> bool:
    """A ``CancelledError`` some scope (or a ``Task.cancel``) delivered, not one the tool raised."""
    task = asyncio.current_task()
    return cancelling_scope() is not None or (task is not None and task.cancelling() > 0)


@attrs.frozen
class AsyncioRuntime:
    """The twin's runtime: the loop's clock, and its own scopes for calls."""

    def now(self) -> float:
        """The loop's clock."""
        return _now()

    def new_scope(self) -> Scope:
        """One call's scope."""
        return Scope()


ASYNCIO_RUNTIME: Runtime = AsyncioRuntime()  # type: ignore[assignment]  # (a Scope, not trio's)


def new_twin_core(
    tools: ToolRegistry | Iterable[Tool[Any]],
    *,
    turn: Turn | None,
    **options: Any,  # noqa: ANN401
) -> TwinRunCore:
    """trioexec's ``new_run_core`` building a :class:`TwinRunCore` (same defaults and rules).

    The seam: trioexec's ``run_core_arguments`` and a runtime of the twin's own
    (its loop's clock, its :class:`Scope`), nothing the production core carries
    for the twin alone.
    """
    registry, arguments = run_core_arguments(tools, turn=turn or Turn(), **options)
    return TwinRunCore(registry, **arguments, runtime=ASYNCIO_RUNTIME)
