"""The two front ends on asyncio: ``run_tools`` (the batch path) and the streaming executor.

Same signatures as trioexec's, except that ``updates`` is an unbounded
``asyncio.Queue`` (it receives :data:`~benchmarks.asyncio_twin._core.END`
never: ``run_tools`` leaves the queue open, as trioexec leaves its channel
open) and :meth:`StreamingExecutor.remaining` is an async iterator over the
executor's queue.  Partitioning, admission and ``RunOutcome`` are trioexec's.
"""

from __future__ import annotations

import asyncio
import contextvars
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from trioexec._core import _concurrency
from trioexec._core._batch import RunOutcome, _admit, _is_safe
from trioexec._core._call import unknown_tool_outcome
from trioexec._core._cancel import DEFAULT_GRACE_PERIOD
from trioexec._core._partition import group_safe_runs
from trioexec._core._policy import Policy, resolve_policy
from trioexec._errors import ConfigurationError
from trioexec._misuse import check_tool_use, checked_tool_uses

from ._core import END, Turn, TwinRunCore, new_twin_core

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
    from pathlib import Path

    from trioexec._contract._registry import ToolRegistry
    from trioexec._contract._tool import ContextState, Tool
    from trioexec._core._call import Call
    from trioexec._core._events import Observer
    from trioexec._core._gate import ResultOrder
    from trioexec._core._timeouts import ToolTimeouts
    from trioexec._guard._rails import GuardRails
    from trioexec._models import ToolUse, Update
    from trioexec._texts import SyntheticTexts

__all__ = ["RunOutcome", "StreamingExecutor", "open_streaming_executor", "run_tools"]


async def run_tools(
    tool_uses: Sequence[ToolUse],
    tools: ToolRegistry | Iterable[Tool[Any]],
    *,
    turn: Turn | None = None,
    context: Mapping[str, object] | None = None,
    max_concurrency: int | None = None,
    guard: GuardRails | None = None,
    cwd: Path | None = None,
    session_dir: Path | None = None,
    observers: Iterable[Observer] = (),
    updates: asyncio.Queue[Any] | None = None,
    grace_period: float | None = DEFAULT_GRACE_PERIOD,
    policy: Policy | None = None,
    synthetic_texts: SyntheticTexts | None = None,
    tool_timeouts: Mapping[str, ToolTimeouts] | None = None,
) -> RunOutcome:
    """trioexec's ``run_tools`` on asyncio: batch by batch, every call answered once.

    Args:
        tool_uses / tools / turn / context / max_concurrency / guard / cwd /
            session_dir / observers / grace_period / policy / synthetic_texts /
            tool_timeouts: as for ``trioexec.run_tools`` (``turn`` is the
            twin's :class:`Turn`).
        updates: an unbounded ``asyncio.Queue`` receiving progress at once and
            each result as it is released.

    Returns:
        The released results, one per tool_use in tool_use order, and the context.

    Raises:
        ConfigurationError: a bounded ``updates`` queue or a bad ``max_concurrency``.
        asyncio.CancelledError: the task running it was cancelled; every call
            was answered on ``updates`` first.
    """
    tool_uses = checked_tool_uses(tool_uses)
    if updates is not None and updates.maxsize > 0:
        raise ConfigurationError("the updates queue must be unbounded (maxsize 0)")
    core = new_twin_core(
        tools, mode="batch", policy=resolve_policy(policy, synthetic_texts=synthetic_texts),
        send=updates, turn=turn, context=context, max_concurrency=max_concurrency, guard=guard,
        cwd=cwd, session_dir=session_dir, observers=observers, grace_period=grace_period,
        tool_timeouts=tool_timeouts,
    )  # fmt: skip
    async with core.open_run(hosted=False):  # (as trioexec: the batches' groups suffice)
        calls = _admit(core, tool_uses)
        runnable = [call for call in calls if call.state == "queued"]
        batches = group_safe_runs(runnable, _is_safe)
        slots = asyncio.Semaphore(core.max_concurrency)
        with core.turn_scope, core.sibling_scope:  # type: ignore[attr-defined]
            for _, batch in batches:
                if core.blocked_reason() is not None:
                    break
                await _run_batch(core, batch, slots)
                core.apply_pending_modifiers()
    return RunOutcome(tuple(core.released), core.context, core.stop_reason, core.result_limits())


async def _run_batch(core: TwinRunCore, calls: Sequence[Call], slots: asyncio.Semaphore) -> None:
    """One batch in its own TaskGroup; a semaphore fills the slots in tool_use order.

    Started in waves of ``START_WAVE`` calls, as trioexec does (one ``sleep(0)`` between).
    """
    wave = _concurrency.START_WAVE
    async with asyncio.TaskGroup() as group:
        since_yield = 0
        for call in calls:
            if since_yield == wave:  # in waves, as trioexec starts a wide batch
                since_yield = 0
                await asyncio.sleep(0)
            if call.state != "queued":
                continue
            await slots.acquire()
            if core.blocked_reason() is not None:
                slots.release()
                break
            core.mark_started(call)
            group.create_task(_run_with_slot(core, call, slots))
            since_yield += 1


async def _run_with_slot(core: TwinRunCore, call: Call, slots: asyncio.Semaphore) -> None:
    try:
        await core.run_call(call)
    finally:
        slots.release()


class StreamingExecutor:
    """trioexec's streaming executor on asyncio; see :func:`open_streaming_executor`."""

    def __init__(self, core: TwinRunCore, queue: asyncio.Queue[Any]) -> None:
        self._core = core
        self._queue = queue
        self._group: asyncio.TaskGroup | None = None
        self._input_closed = False
        self._closed = False
        self._ended = False
        self._idle = asyncio.Event()
        self._base = contextvars.copy_context()  # every call starts from a copy of this
        core.on_settled = self._on_settled

    def add_tool(self, tool_use: ToolUse) -> None:
        """Queue a sealed tool_use; it may start at once.  Synchronous, never blocks.

        Raises:
            TypeError: ``tool_use`` is not a ``ToolUse``.
            RuntimeError: called after :meth:`remaining` or after the executor closed.
        """
        core = self._core
        check_tool_use(tool_use, where=f"add_tool: call #{len(core.calls)} (0-based)")
        if self._closed:
            raise RuntimeError("add_tool() on a closed executor: its async with block has exited")
        if self._input_closed and not core.discarded:
            raise RuntimeError("add_tool() after remaining(): the model's response has ended")
        call = core.new_call(tool_use)
        if call.state != "queued":
            return
        if core.discarded:
            core.complete_without_starting(call, "streaming_fallback")
            return
        if call.compiled is None:
            core.complete(call, unknown_tool_outcome(tool_use))
            return
        reason = core.blocked_reason(call)
        if reason is not None:
            core.complete_without_starting(call, reason)
        core.settle()

    def drain_nowait(self) -> list[Update]:
        """Every update deliverable now: progress, and results the gate has released."""
        drained: list[Update] = []
        while not self._ended:
            try:
                item = self._queue.get_nowait()
            except asyncio.QueueEmpty:
                break
            if item is END:
                self._ended = True
                self._queue.put_nowait(END)  # a closed channel stays closed: for remaining() too
                break
            drained.append(item)
        return drained

    def remaining(self) -> AsyncIterator[Update]:
        """The model's response has ended: iterate this for everything still to come."""
        self._input_closed = True
        self._core.settle()
        return self._rest()

    async def _rest(self) -> AsyncIterator[Update]:
        while not self._ended:
            item = await self._queue.get()
            if item is END:
                self._ended = True
                self._queue.put_nowait(END)
                return
            yield item

    def discard(self) -> None:
        """Abandon this attempt: cancel executing calls, release nothing more."""
        self._input_closed = True
        self._core.discard()

    @property
    def context(self) -> ContextState:
        """The shared context, with released calls' modifiers applied in release order."""
        return self._core.context

    @property
    def stop_reason(self) -> str | None:
        """Set when a hook asked the agent loop to stop after this turn."""
        return self._core.stop_reason

    @property
    def result_limits(self) -> dict[str, float]:
        """tool_use id -> its tool's ``max_result_size_chars``."""
        return self._core.result_limits()

    @property
    def in_progress_ids(self) -> frozenset[str]:
        """tool_use ids started but not yet released."""
        return frozenset(self._core.in_progress)

    def _on_settled(self) -> None:
        core = self._core
        if self._group is not None:
            for call in core.next_startable():
                try:
                    self._group.create_task(core.run_call(call), context=self._base.copy())
                except RuntimeError:  # the group is shutting down: answered at the end
                    break
        if not self._input_closed or core.executing_count:
            return
        if core.all_released:
            core.close_output()
            self._idle.set()
        elif core.discarded:
            self._idle.set()

    async def _host(self, started: asyncio.Future[None]) -> None:
        """Owns the turn scope, the sibling scope and the calls' TaskGroup."""
        core = self._core
        try:
            with core.turn_scope, core.sibling_scope:  # type: ignore[attr-defined]
                async with asyncio.TaskGroup() as group:
                    self._group = group
                    try:
                        started.set_result(None)
                        core.settle()
                        await self._idle.wait()
                    finally:
                        self._group = None
        finally:
            self._group = None
        core.settle()


@asynccontextmanager
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
    """trioexec's ``open_streaming_executor`` on asyncio (same options and semantics).

    Raises:
        ConfigurationError: an invalid ``max_concurrency``, ``policy`` or ``result_order``.
        asyncio.CancelledError: the task was cancelled (every call answered first).
    """
    run_policy = resolve_policy(policy, result_order=result_order, synthetic_texts=synthetic_texts)
    queue: asyncio.Queue[Any] = asyncio.Queue()
    core = new_twin_core(
        tools, mode="stream", policy=run_policy, send=queue, turn=turn, context=context,
        max_concurrency=max_concurrency, guard=guard, cwd=cwd, session_dir=session_dir,
        observers=observers, grace_period=grace_period, tool_timeouts=tool_timeouts,
    )  # fmt: skip
    executor = StreamingExecutor(core, queue)
    try:
        async with core.open_run() as group:
            assert group is not None  # (a hosted run has its group)
            started: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            group.create_task(executor._host(started))
            await started
            yield executor
            executor._input_closed = True
            core.settle()
    finally:
        executor._closed = True
        core.on_settled = _nothing_to_start  # no cycle core -> executor -> core once it is over
        if core.all_released:
            core.close_output()


def _nothing_to_start() -> None:
    """What a finished run's core calls when a call settles: nothing can start any more."""
