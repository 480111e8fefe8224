"""The batch path: ``run_tools`` (SPEC §2, with §3.2-3.3 cancellation).

Batches run one after another, each in its own nursery.  A safe batch runs its
calls concurrently, slots filled in tool_use order through a
:class:`trio.CapacityLimiter` (a wide one started in waves:
:data:`~trioexec._core._concurrency.START_WAVE`); results leave through the ordered
gate in tool_use order; context modifiers of a safe batch are applied after
the whole batch, in tool_use order.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import attrs
import trio
from trio.lowlevel import enable_ki_protection

from .._contract._tool import ContextState, Tool
from .._errors import ConfigurationError
from .._groups import single_exception
from .._misuse import checked_tool_uses, require_trio
from .._models import Attachment, ResultUpdate, ToolResult, ToolUse, Update
from . import _concurrency
from ._frame import new_run_core, open_run
from ._partition import group_safe_runs
from ._policy import Policy, resolve_policy
from ._run import DEFAULT_GRACE_PERIOD, Call, RunCore
from ._taskless import run_taskless

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from pathlib import Path

    from .._contract._registry import ToolRegistry
    from .._guard._rails import GuardRails
    from .._texts import SyntheticTexts
    from ._events import Observer
    from ._timeouts import ToolTimeouts
    from ._turn import Turn

__all__ = ["RunOutcome", "run_tools"]

# The frame that drives a lone call's coroutine is bookkeeping (a Ctrl-C there
# would drop a step trio sent, abandoning the call mid-await): protected, as
# the rest of this module's frames are.  The call's own code is not
# (``run_call`` disables protection for everything below it).  Marked here:
# ``_taskless`` imports nothing of trio.
enable_ki_protection(run_taskless)


@attrs.frozen
class RunOutcome:
    """What ``run_tools`` returns: the released results (tool_use order) and the final context."""

    updates: tuple[ResultUpdate, ...]
    context: ContextState
    stop_reason: str | None = None
    result_limits: Mapping[str, float] = attrs.field(factory=dict)
    """tool_use id -> its tool's ``max_result_size_chars``: pass it as ``limits=`` to
    :func:`build_user_message` so tools that manage their own size (``math.inf``,
    like ``Read``) are never persisted by the message budget."""

    @property
    def results(self) -> tuple[ToolResult, ...]:
        """The tool_results, one per tool_use, in tool_use order."""
        return tuple(update.result for update in self.updates)

    @property
    def attachments(self) -> tuple[Attachment, ...]:
        """Every record that goes with the results (hook context, stop requests...)."""
        return tuple(a for update in self.updates for a in update.attachments)

    @property
    def stopped_continuation(self) -> bool:
        """A hook asked the agent loop to stop after this turn's results."""
        return self.stop_reason is not None


@enable_ki_protection
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
    updates: trio.MemorySendChannel[Update] | None = None,
    grace_period: float | None = DEFAULT_GRACE_PERIOD,
    policy: Policy | None = None,
    synthetic_texts: SyntheticTexts | None = None,
    tool_timeouts: Mapping[str, ToolTimeouts] | None = None,
) -> RunOutcome:
    """Run one turn's tool calls, batch by batch, and answer every one of them.

    Args:
        tool_uses: the calls, in the order the model sent them.
        tools: the turn's tools (or a :class:`ToolRegistry`).
        turn: the turn to interrupt/abort through (a fresh one by default).
        context: the shared context tools see; modifiers produce the returned one.
        max_concurrency: calls running at once in a safe batch (default: the
            environment variables of SPEC §2, else 10).
        guard: permission rules, hooks and the ``can_use_tool`` callback
            (:class:`GuardRails`); None: the tools' own permission checks decide
            and an "ask" is refused.
        cwd / session_dir: passed to tools; ``session_dir`` enables persistence
            (without it an oversized result is cut to a ``<truncated-output>``
            preview that says how much was cut: bounded either way).
        observers: see :class:`Observer`.
        updates: an unbounded memory channel that receives progress at once and
            each result as it is released.  It is not closed: the run is one
            producer among the application's turns, and the channel's owner
            (one listener across turns, say) closes it.  For a channel that
            ends with the run, hand it a clone the caller closes:
            ``with send.clone() as mine: await run_tools(..., updates=mine)``.
        grace_period: seconds a cancelled call that ignores cancellation (a
            shielded tool) may keep running before it is answered on its behalf
            and a warning is logged; None waits silently.  Its task is awaited
            either way.
        policy: the rules where trioexec and Claude Code differ
            (:class:`~trioexec.Policy`; default ``Policy()``, trioexec's).  On
            this path it decides the result order within a safe batch, whether
            a cascading error cancels the run's other calls and which errors
            cascade, and the texts of stopped calls.
        synthetic_texts: shorthand for the policy's ``synthetic_texts`` knob
            (overrides it when given): ``"claude-code"`` (Claude Code's bytes)
            or ``"trioexec"`` (whether the call had started, what stopped it,
            and the output it had produced so far).
        tool_timeouts: tool name -> :class:`~trioexec.ToolTimeouts` overriding
            that tool's ``timeout`` / ``idle_timeout`` for this run.

    Returns:
        The released results (exactly one per tool_use, in tool_use order) and
        the final context.

    Raises:
        TypeError: ``tool_uses`` is a single ToolUse or holds something that is
            not one (the message names the item and its index); nothing runs.
        RuntimeError: not called inside a trio run (``asyncio.run``, say).
        ConfigurationError: ``max_concurrency`` is not a positive integer, the
            ``updates`` channel is bounded, or ``policy`` is not a Policy.
        BaseException: user code (a tool, a hook, a context modifier, an
            observer) raised something that is not an ``Exception``: the run
            stopped, every call is still answered on ``updates``, and it
            propagates unwrapped (several: one ``BaseExceptionGroup``).
            Errors from tools never escape.
        trio.Cancelled: an enclosing scope was cancelled; one plain
            ``Cancelled``, after every call was answered on ``updates``.
    """
    require_trio("run_tools")
    tool_uses = checked_tool_uses(tool_uses)
    if updates is not None and updates.statistics().max_buffer_size != math.inf:
        raise ConfigurationError("the updates channel must be unbounded (math.inf buffer)")
    core = new_run_core(
        tools,
        mode="batch",
        policy=resolve_policy(policy, synthetic_texts=synthetic_texts),
        send=updates,
        turn=turn,
        context=context,
        max_concurrency=max_concurrency,
        guard=guard,
        cwd=cwd,
        session_dir=session_dir,
        observers=observers,
        grace_period=grace_period,
        tool_timeouts=tool_timeouts,
    )
    # Async hooks outlive their call: only then does the run need a nursery of its own.
    async with open_run(core, hosted=core.env.background is not None):
        await _run_batches(core, tool_uses)
    return RunOutcome(tuple(core.released), core.context, core.stop_reason, core.result_limits())


@enable_ki_protection
async def _run_batches(core: RunCore, tool_uses: Sequence[ToolUse]) -> None:
    """Admit the calls, then run them batch by batch inside the turn scope."""
    calls = _admit(core, tool_uses)
    # Calls answered at admission (refused ids) never run: no batch, no barrier.
    runnable = [call for call in calls if call.state == "queued"]
    if not runnable:  # nothing to run: still a checkpoint, as every trio call is
        await trio.lowlevel.checkpoint()
        return
    batches = group_safe_runs(runnable, _is_safe)
    limiter: trio.CapacityLimiter | None = None  # made once a batch does not fit
    try:
        with core.turn_scope:  # each batch's nursery is the sibling scope
            for _, batch in batches:
                # Stopped, or cancelled from outside while the last batch
                # ignored it: no later batch starts.
                await trio.lowlevel.checkpoint_if_cancelled()
                if core.blocked_reason() is not None:
                    break
                if limiter is None and len(batch) > core.max_concurrency:
                    limiter = trio.CapacityLimiter(core.max_concurrency)
                await _run_batch(core, batch, limiter)
                core.apply_pending_modifiers()
    except BaseExceptionGroup as group:
        # unwrap_single, written out (hot path: docs/performance.md#inlined)
        only = single_exception(group)
        if only is None:
            raise
        raise only from None


def _is_safe(call: Call) -> bool:
    return call.safe


@enable_ki_protection
def _admit(core: RunCore, tool_uses: Sequence[ToolUse]) -> list[Call]:
    """Track every call; if a tool's code raises a BaseException, admit the rest blind."""
    calls: list[Call] = []
    try:
        for use in tool_uses:
            calls.append(core.new_call(use))  # noqa: PERF401 - stops at the first raise
    except BaseException:
        for use in tool_uses[len(core.calls) :]:
            core.new_call(use, inspect=False)  # answered as unstarted by run_tools
        raise
    return calls


@enable_ki_protection
async def _run_batch(
    core: RunCore, calls: Sequence[Call], limiter: trio.CapacityLimiter | None
) -> None:
    lends = not core.has_run_nursery  # this batch's nursery hosts the watches while it runs
    try:
        async with trio.open_nursery() as nursery:
            core.cancellation.adopt_sibling_scope(nursery.cancel_scope)
            if lends:
                core.host_watches(nursery)
            await _start_batch(core, calls, limiter, nursery)
    finally:
        if lends:
            core.host_watches(None)


@enable_ki_protection
async def _start_batch(
    core: RunCore,
    calls: Sequence[Call],
    limiter: trio.CapacityLimiter | None,
    nursery: trio.Nursery,
) -> None:
    """Start a batch's calls in ``nursery`` (a lone call runs here, in its body).

    A wide batch starts in waves (:data:`~trioexec._core._concurrency.START_WAVE`):
    a schedule point, never a cancel point, after each wave's starts.
    """
    if len(calls) == 1 and not _in_main_task():
        # A lone call (a one-call turn, every unsafe call) runs in the
        # nursery's own body: the same scopes around it, and a copy of the
        # context as a task of its own would have, without spawning one.
        call = calls[0]
        if call.state == "queued" and core.blocked_reason() is None:
            core.mark_started(call)
            if core.blocked_reason() is None:
                await run_taskless(core.run_call(call))
            else:  # an observer stopped the run as the call started: a task's
                # start comes after the stop takes effect, so the call is stopped
                nursery.start_soon(core.run_call, call)
        return
    wave = _concurrency.START_WAVE
    # When the whole batch fits (batches run one after another, so every slot
    # is free), the same starts in the same order, without the limiter.
    slots = None if limiter is None or len(calls) <= limiter.total_tokens else limiter
    since_yield = 0
    for call in calls:
        if since_yield == wave:
            since_yield = 0
            await trio.lowlevel.cancel_shielded_checkpoint()
        if call.state != "queued":
            continue  # answered meanwhile (e.g. all calls after an interrupt)
        if slots is not None:
            try:
                slots.acquire_on_behalf_of_nowait(call)  # no scheduler round trip when free
            except trio.WouldBlock:
                await slots.acquire_on_behalf_of(call)
                since_yield = 0  # (that was a schedule point)
        if core.blocked_reason() is not None:
            if slots is not None:
                slots.release_on_behalf_of(call)
            break
        core.mark_started(call)
        if slots is None:
            nursery.start_soon(core.run_call, call)
        else:
            nursery.start_soon(_run_with_slot, core, call, slots)
        since_yield += 1


def _in_main_task() -> bool:
    """Whether this is the task ``trio.run`` started (or a system task).

    trio delivers a KeyboardInterrupt to the main task, thrown into whatever it
    awaits: a tool run in that task's body would get the KeyboardInterrupt
    instead of a cancellation.  From the main task a lone call keeps a task of
    its own; the KeyboardInterrupt then reaches the batch nursery, which
    cancels the call.
    """
    parent = trio.lowlevel.current_task().parent_nursery
    return parent is not None and parent.parent_task is trio.lowlevel.current_root_task()


@enable_ki_protection
async def _run_with_slot(core: RunCore, call: Call, limiter: trio.CapacityLimiter) -> None:
    try:
        await core.run_call(call)
    finally:
        limiter.release_on_behalf_of(call)
