"""The streaming executor (SPEC §3): tools start while the model is still streaming.

::

    async with open_streaming_executor(tools, turn=turn) as executor:
        async for event in model_stream:
            if sealed_tool_use(event):
                executor.add_tool(tool_use)          # sync, never blocks
            for update in executor.drain_nowait():   # progress + releasable results
                show(update)
        async for update in executor.remaining():    # the rest, in order
            show(update)

The executor's nursery lives inside the ``async with``; no async generator
yields from inside it.  Updates travel through one unbounded channel
(``_update_channel``, handed over a burst at a time): progress at once,
results through the ordered gate.
"""

from __future__ import annotations

import contextvars
from collections import deque
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import trio
from trio.lowlevel import enable_ki_protection

from .._misuse import check_tool_use, require_trio
from .._models import ToolUse, Update
from . import _concurrency
from ._call import unknown_tool_outcome
from ._frame import new_run_core, open_run
from ._policy import Policy, resolve_policy
from ._run import DEFAULT_GRACE_PERIOD, ResultOrder, RunCore
from ._update_channel import UpdateReceiveChannel, open_update_channel

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterable, Mapping
    from pathlib import Path

    from .._contract._registry import ToolRegistry
    from .._contract._tool import ContextState, Tool
    from .._guard._rails import GuardRails
    from .._texts import SyntheticTexts
    from ._call import Call
    from ._events import Observer
    from ._timeouts import ToolTimeouts
    from ._turn import Turn

__all__ = ["StreamingExecutor", "open_streaming_executor"]

_HOST_TASK = "trioexec.StreamingExecutor: turn and sibling scopes"
_CALL_TASK = "trioexec.StreamingExecutor: tool call"
_STARTER_TASK = "trioexec.StreamingExecutor: wave starter"


class StreamingExecutor:
    """Runs tool calls as they arrive; see :func:`open_streaming_executor`."""

    def __init__(self, core: RunCore, updates: UpdateReceiveChannel) -> None:
        self._core = core
        self._updates = updates
        self._nursery: trio.Nursery | None = None
        # Calls started before the host task opened the calls' nursery: it
        # starts their tasks first thing (None once it has, or has stopped).
        self._pending: list[Call] | None = []
        self._input_closed = False
        self._input_ended: trio.Event | None = None  # made when the host has to wait for it
        self._closed = False
        # Every call starts from a copy of the context the executor was opened
        # in: never from the context of the call whose completion started it,
        # nor from the host's.  The host's own context is a copy taken in the
        # same instant, and only the call it runs in its body runs in it (the
        # host starts every other call from this one), so that call needs no
        # copy of its own.
        self._base = contextvars.copy_context()
        # Waves (see START_WAVE): how many call tasks were started since the
        # starter last ran, and the started calls whose tasks wait for it
        # (None while no starter is needed).
        self._wave = _concurrency.START_WAVE
        self._spawned = 0
        self._backlog: deque[Call] | None = None
        core.on_settled = self._on_settled

    # ------------------------------------------------------------ public API

    @enable_ki_protection
    def add_tool(self, tool_use: ToolUse) -> None:
        """Queue a sealed tool_use; it may start at once.  Synchronous, never blocks.

        An unknown tool is answered at once with the no-such-tool error.  After
        :meth:`discard` the call is recorded (queued, then cancelled with reason
        ``streaming_fallback``) but never released.

        Raises:
            TypeError: ``tool_use`` is not a :class:`ToolUse` (the message names
                its index among the calls added); nothing is queued.
            RuntimeError: called after :meth:`remaining` or after the executor closed.
        """
        core = self._core
        if type(tool_use) is not ToolUse:  # the message is written only when needed
            check_tool_use(tool_use, where=f"add_tool: call #{len(core.calls)} (0-based)")
        if self._closed:
            raise RuntimeError("add_tool() on a closed executor: its async with block has exited")
        if self._input_closed and not core.discarded:
            raise RuntimeError("add_tool() after remaining(): the model's response has ended")
        call = core.new_call(tool_use)
        if call.state != "queued":
            return  # answered at admission (an unusable id)
        if core.cancellation.discarded:
            core.complete_without_starting(call, "streaming_fallback")
            return
        if call.compiled is None:
            core.complete(call, unknown_tool_outcome(tool_use))
            return
        reason = core.blocked_reason(call)
        if reason is not None:  # interrupted, aborted or cascaded: it will never start
            core.complete_without_starting(call, reason)
            core.settle()
            return
        # A queued call releases nothing: it may only start.  Usually it is the
        # only queued call and may start at once: its task is started here.
        nursery, pending = self._nursery, self._pending
        if nursery is None and pending is None:
            return  # the host is gone: nothing starts any more
        if not core.start_if_first(call):
            self._start_queued()  # (the general rule)
        elif nursery is not None:
            if self._backlog is None and self._spawned < self._wave:
                self._spawned += 1
                self._base.run(_start_call, nursery, core, call)
            else:
                self._defer(nursery, (call,))
        else:  # the host starts it as it opens the nursery
            assert pending is not None
            pending.append(call)

    def drain_nowait(self) -> list[Update]:
        """Every update deliverable now: progress, and results the gate has released."""
        return self._updates.receive_all_nowait()

    @enable_ki_protection
    def remaining(self) -> UpdateReceiveChannel:
        """The model's response has ended: iterate this for everything still to come.

        No more :meth:`add_tool` after this call.  The channel ends once every
        call has been released (promptly, after a :meth:`discard`).

        ``async for`` over it is a cancellation point on every update and a
        schedule point whenever it waits: the updates that became ready
        together (a burst) are handed over without a scheduler round trip
        each (:class:`~trioexec.lowlevel.UpdateReceiveChannel`); its
        ``receive()`` is a full checkpoint.  Iterating it while cancelled
        raises ``Cancelled`` and takes nothing out of it.
        """
        self._end_input()
        self._core.settle()
        return self._updates

    @enable_ki_protection
    def discard(self) -> None:
        """Abandon this attempt (streaming fallback): cancel executing calls, release nothing more.

        Use a new executor for the retry; no stale tool_use id can leak into it.
        Under a policy whose ``discard_cancels`` is off (Claude Code's), executing
        calls are not cancelled: they run to their end, unreleased, and their
        progress is no longer forwarded; leaving the ``async with`` waits for them.
        """
        self._end_input()
        self._core.discard()

    @property
    def context(self) -> ContextState:
        """The shared context, with the modifiers of released calls applied in release order."""
        return self._core.context

    @property
    def stop_reason(self) -> str | None:
        """Set when a hook asked the agent loop to stop after this turn."""
        return self._core.stop_reason

    @property
    def result_limits(self) -> dict[str, float]:
        """tool_use id -> its tool's ``max_result_size_chars`` (``limits=`` for the budget)."""
        return self._core.result_limits()

    @property
    def in_progress_ids(self) -> frozenset[str]:
        """tool_use ids started but not yet released."""
        return frozenset(self._core.in_progress)

    @property
    def interruptible(self) -> bool:
        """Whether everything executing would stop on :meth:`Turn.interrupt`."""
        return self._core.interruptible

    # ------------------------------------------------------------ internals

    @enable_ki_protection
    def _start_queued(self) -> None:
        """Start the queued calls the start rule allows (their tasks, once the host runs)."""
        core = self._core
        nursery = self._nursery
        # Each loop stops once nothing is queued (hot path: docs/performance.md#inlined).
        if nursery is not None:
            run = self._base.run  # start_soon copies the context it is called in
            while (call := core.start_next()) is not None:
                if self._backlog is None and self._spawned < self._wave:
                    self._spawned += 1
                    run(_start_call, nursery, core, call)
                else:
                    self._defer(nursery, (call,))
                if not core.may_have_queued:
                    break
        elif self._pending is not None:  # the host starts them as it opens the nursery
            while (call := core.start_next()) is not None:
                self._pending.append(call)
                if not core.may_have_queued:
                    break

    @enable_ki_protection
    def _defer(self, nursery: trio.Nursery, calls: Iterable[Call]) -> None:
        """Leave ``calls``' tasks to the wave starter: a wave of tasks awaits its first step.

        The calls have started (they are executing); only their tasks come
        later, from the starter, which starts the waiting tasks in tool_use
        order, a wave at a time.
        """
        backlog = self._backlog
        if backlog is None:
            backlog = self._backlog = deque()
            nursery.start_soon(self._start_waves, nursery, name=_STARTER_TASK)
        backlog.extend(calls)

    @enable_ki_protection
    async def _start_waves(self, nursery: trio.Nursery) -> None:
        """Start the backlog's call tasks a wave at a time, a schedule point between.

        The calls started before it take their first steps before more tasks
        pile up (:data:`~trioexec._core._concurrency.START_WAVE`).  It waits on
        nothing but the scheduler, and its schedule points are not cancel
        points: every call it was handed gets its task, even in a stopped run
        (such a call is answered there, at its first step), and the calls'
        nursery, whose child it is, cannot close before.
        """
        backlog = self._backlog
        assert backlog is not None
        run, core, size = self._base.run, self._core, self._wave
        while True:
            wave = [backlog.popleft() for _ in range(min(size, len(backlog)))]
            run(_start_calls, nursery, core, wave)
            if not backlog:
                break
            await trio.lowlevel.cancel_shielded_checkpoint()
        self._backlog = None
        self._spawned = len(wave)  # not yet run: the direct path may add one wave more

    @enable_ki_protection
    def _on_settled(self) -> None:
        core = self._core
        if core.may_have_queued:
            self._start_queued()
        if self._input_closed and core.all_released and not core.executing_count:
            core.close_output()

    @enable_ki_protection
    def _end_input(self) -> None:
        """No call comes any more (the response ended, or the attempt was discarded)."""
        self._input_closed = True
        if self._input_ended is not None:
            self._input_ended.set()

    @enable_ki_protection
    async def _host(self) -> None:
        """Owns the turn scope, the sibling scope and the calls' nursery.

        Started with ``start_soon``, it gets as far as the nursery without a
        checkpoint and starts the calls :meth:`add_tool` started before it
        ran: the first in its own body (inside the nursery, like a child;
        when there are others, after one schedule point, so that it runs in
        the same scheduler pass as they do), the others as tasks.  It keeps
        the nursery's body going until the input ends; then the nursery
        closes once the last call's task has ended (a call completing starts
        the next ones from its own task, so no call is ever started in a
        closed nursery).  Once it is cancelled, no call starts any more.

        When the input ended before it ran, with one call started and none
        queued, no other call can ever start: that call runs here, inside
        the two scopes, and no nursery is opened for calls that cannot come.
        """
        core = self._core
        try:
            with core.turn_scope:
                pending, self._pending = self._pending, None
                if self._input_closed and pending and len(pending) == 1 and not core.has_queued:
                    with core.sibling_scope:
                        await core.run_call(pending[0])
                    return
                async with trio.open_nursery() as nursery:
                    core.cancellation.adopt_sibling_scope(nursery.cancel_scope)
                    self._nursery = nursery
                    try:
                        if pending:
                            if len(pending) > 1:  # one trip into the base context for all
                                first = pending[1 : self._wave + 1]
                                self._base.run(_start_calls, nursery, core, first)
                                self._spawned = len(first)
                                if len(pending) > self._wave + 1:  # a wide burst
                                    self._defer(nursery, pending[self._wave + 1 :])
                                # The first runs here with the others, not a scheduler
                                # pass before them: its result would wake the consumer
                                # for one update, and the rest of the burst again.
                                await trio.lowlevel.cancel_shielded_checkpoint()
                            await core.run_call(pending[0])
                        if not self._input_closed:
                            self._input_ended = trio.Event()
                            await self._input_ended.wait()
                    except BaseException:
                        self._nursery = None  # it may close at any moment now
                        raise
        finally:
            self._nursery = None
            self._pending = None

    @enable_ki_protection
    def _close_input(self) -> None:
        """The body of the ``async with`` is done: no more calls."""
        if not self._input_closed:
            self._end_input()
            self._core.settle()


@asynccontextmanager
@enable_ki_protection
async def open_streaming_executor(
    tools: ToolRegistry | Iterable[Tool[Any]],
    *,
    turn: Turn | None = None,
    context: Mapping[str, object] | None = None,
    max_concurrency: int | None = None,
    guard: GuardRails | None = None,
    policy: Policy | None = None,
    result_order: ResultOrder | None = None,
    cwd: Path | None = None,
    session_dir: Path | None = None,
    observers: Iterable[Observer] = (),
    grace_period: float | None = DEFAULT_GRACE_PERIOD,
    synthetic_texts: SyntheticTexts | None = None,
    tool_timeouts: Mapping[str, ToolTimeouts] | None = None,
) -> AsyncIterator[StreamingExecutor]:
    """Open a streaming executor for one attempt at one turn.

    Leaving the block normally waits for every call to be answered (like a
    nursery); leaving it with an exception cancels every call.  Either way no
    task started here outlives the block.

    Args:
        tools: the turn's tools (or a :class:`ToolRegistry`).
        turn: the turn to interrupt/abort through (a fresh one by default).
        context: the shared context tools see.
        max_concurrency: calls running at once (default: SPEC §2's variables,
            else 10); no limit here when the policy's ``cap_streaming`` is off.
        policy: the rules where trioexec and Claude Code differ
            (:class:`~trioexec.Policy`; default ``Policy()``, trioexec's):
            result order, the concurrency cap, which errors cascade, what an
            interrupt does to queued calls, what :meth:`StreamingExecutor.discard`
            does to executing ones, and the texts of stopped calls.
        result_order: shorthand for the policy's ``result_order`` knob
            (overrides it when given): ``"arrival"`` (the ordered gate) or
            ``"completion"`` (Claude Code's order: safe calls' results as they
            complete).
        guard / cwd / session_dir / observers / grace_period / synthetic_texts /
            tool_timeouts: as for :func:`run_tools`.

    Raises:
        RuntimeError: not entered inside a trio run (``asyncio.run``, say).
        ConfigurationError: an invalid ``max_concurrency``, ``policy`` or ``result_order``.
        BaseException: the body's own exception, exactly as raised; or what
            user code (a tool, hook, modifier, observer) raised that is not an
            ``Exception``, unwrapped (several: one ``BaseExceptionGroup``).
        trio.Cancelled: an enclosing scope was cancelled (one plain ``Cancelled``).
    """
    require_trio("open_streaming_executor")
    run_policy = resolve_policy(policy, result_order=result_order, synthetic_texts=synthetic_texts)
    send, updates = open_update_channel()
    core = new_run_core(
        tools, mode="stream", policy=run_policy, send=send, turn=turn, context=context,
        max_concurrency=max_concurrency, guard=guard, cwd=cwd, session_dir=session_dir,
        observers=observers, grace_period=grace_period, tool_timeouts=tool_timeouts,
    )  # fmt: skip
    executor = StreamingExecutor(core, updates)
    try:
        async with open_run(core) as nursery:
            assert nursery is not None  # a hosted run
            nursery.start_soon(executor._host, name=_HOST_TASK)
            yield executor
            executor._close_input()  # the block is done: no more calls
    finally:
        executor._closed = True
        core.on_settled = _nothing_to_start  # no cycle core -> executor -> core once over
        if core.all_released:
            core.close_output()


@enable_ki_protection
def _start_call(nursery: trio.Nursery, core: RunCore, call: Call) -> None:
    """Start ``call``'s task (in a copy of the context this is run in)."""
    nursery.start_soon(core.run_call, call, name=_CALL_TASK)


@enable_ki_protection
def _start_calls(nursery: trio.Nursery, core: RunCore, calls: list[Call]) -> None:
    """Start each of ``calls``' tasks (each in its own copy of the context this is run in)."""
    run_call = core.run_call
    for call in calls:
        nursery.start_soon(run_call, call, name=_CALL_TASK)


def _nothing_to_start() -> None:
    """What a finished run's core calls when a call settles: nothing can start any more."""
