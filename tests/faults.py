"""Fault injection: tools, hooks, callbacks and observers that misbehave on purpose.

A :class:`TurnPlan` describes one turn: which calls arrive and when, what each
call's tool, hooks and permission callback do (return, raise an ``Exception``
or a ``BaseException``, ignore cancellation, block in a worker thread, return
garbage or huge output...), which observer raises, and which controls
(interrupt, abort, discard, an enclosing deadline) fire when.  Every choice of
a call lives in its tool_use input, so a plan is plain data that hypothesis
generates and shrinks.

:func:`run_plan` runs a plan on the batch path (``run_tools``) or the
streaming executor and returns an :class:`Observation`; :func:`check_observation`
asserts what must hold whatever the faults were:

- I1: exactly one answer per tool_use (none after a discard), one terminal event;
- I2: results released in tool_use order;
- I3: no unsafe call overlaps another, neither in state nor inside ``Tool.call``;
- I4: no task left alive in trio's task tree;
- a stopped run starts nothing, and an answered call never enters its tool;
- what propagated is what docs/cancellation.md says: the BaseExceptions user
  code raised (one unwrapped, several grouped), else a plain ``trio.Cancelled``
  for an enclosing deadline, else nothing;
- a real answer is the one the plan implies.

I5 (one turn never affects another) is checked by running many plans in one
trio run (:func:`run_session`) and comparing each with the same plan run alone.
Used by ``tests/test_fault_injection.py`` (CI size) and ``benchmarks/soak.py``.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import math
import os
import threading
from typing import TYPE_CHECKING, Any, Literal

import attrs
import trio
import trio.testing
from helpers import Recorder
from hypothesis import strategies as st

from trioexec import (
    CallContext,
    CallEvent,
    GuardRails,
    Observer,
    PermissionResult,
    ProgressSender,
    ResultUpdate,
    Tool,
    ToolOutput,
    ToolRegistry,
    ToolResult,
    ToolUse,
    Turn,
    Update,
    open_streaming_executor,
    run_tools,
)
from trioexec._results._persist import generate_preview, truncated_output_message
from trioexec._texts import CANCEL_MESSAGE, REJECT_MESSAGE
from trioexec.hooks import HookBlockingError, HookInput, HookOutput, HookSet

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping, Sequence

__all__ = [
    "KNOWN_VIOLATIONS",
    "Observation",
    "TurnPlan",
    "check_observation",
    "check_session",
    "live_processes",
    "quiet_logs",
    "run_plan",
    "run_session",
    "session_plans",
    "turn_plans",
]

# Behaviour the harness does not generate (or checks it relaxes) until the
# matching violation of issue 17 is fixed; each is pinned by an xfail test.
KNOWN_VIOLATIONS: frozenset[str] = frozenset()

REJECT = (
    "The user doesn't want to proceed with this tool use. The tool use was rejected "
    "(eg. if it was a file edit, the new_string was NOT written to the file). "
    "STOP what you are doing and wait for the user to tell you how to proceed."
)
NOT_NOW = (
    "The user doesn't want to take this action right now. "
    "STOP what you are doing and wait for the user to tell you how to proceed."
)
SIBLING_PREFIX = "<tool_use_error>Cancelled: parallel tool call "
DENIED_SIBLING_PREFIX = "<tool_use_error>Cancelled: tool call "
"""A sibling stopped after a call was denied (trioexec's texts say so, not "errored")."""
FALLBACK = "<tool_use_error>Error: Streaming fallback - tool execution discarded</tool_use_error>"
NO_SUCH_TOOL = "<tool_use_error>Error: No such tool available: {}</tool_use_error>"
RAISED_PREFIX = "<tool_use_error>Error: the tool raised "
HUGE = 150_000
HUGE_ANSWER = truncated_output_message(size=HUGE, preview=generate_preview("x" * HUGE)[0])
"""What the model gets for a huge output: the runs here have no session folder, so it is cut."""
HOOK_TIMEOUT = 3.0

# -- what user code raised ----------------------------------------------------------------------


class CustomBase(BaseException):
    """A BaseException of the application's own."""


class ToolError(Exception):
    """A tool's ordinary failure."""


class Unprintable(Exception):
    """An exception whose ``__str__`` raises."""

    def __str__(self) -> str:
        raise RuntimeError("__str__ raised")


class Garbage:
    """Tool output whose ``__str__`` raises (so ``map_result`` does)."""

    def __str__(self) -> str:
        raise RuntimeError("garbage output")


@attrs.define
class FaultLog:
    """The BaseExceptions user code raised during one turn, in order."""

    raised: list[BaseException] = attrs.field(factory=list)
    while_cancelled: list[BaseException] = attrs.field(factory=list)
    """Cancelled instances raised while the raiser was being cancelled anyway
    (indistinguishable from that cancellation, so not required to propagate)."""
    at_event: list[int] = attrs.field(factory=list)
    recorder: Recorder | None = None


_LOG: contextvars.ContextVar[FaultLog] = contextvars.ContextVar("trioexec_fault_log")


def raise_base(kind: str) -> None:
    """Raise the BaseException ``kind`` names, recording it in the turn's log."""
    exc: BaseException
    if kind == "keyboard_interrupt":
        exc = KeyboardInterrupt()
    elif kind == "system_exit":
        exc = SystemExit(3)
    else:
        exc = CustomBase(kind)
    log = _LOG.get()
    log.raised.append(exc)
    log.at_event.append(len(log.recorder.events) if log.recorder else 0)
    raise exc


def _being_cancelled() -> bool:
    """Whether a scope around the raiser is cancelled (then a Cancelled is that one)."""
    return trio.current_effective_deadline() == -math.inf


async def raise_stray_cancelled() -> None:
    """Re-raise a Cancelled caught from a scope of the tool's own (a bug in a tool)."""
    caught: trio.Cancelled | None = None
    with trio.CancelScope() as own:
        own.cancel(reason="the tool's own scope")
        try:
            await trio.lowlevel.checkpoint()
        except trio.Cancelled as exc:
            caught = exc
    assert caught is not None
    log = _LOG.get()
    (log.while_cancelled if _being_cancelled() else log.raised).append(caught)
    log.at_event.append(len(log.recorder.events) if log.recorder else 0)
    raise caught


BASE_KINDS = ("keyboard_interrupt", "system_exit", "custom_base")

# -- the tools ----------------------------------------------------------------------------------


class FaultTool(Tool[dict[str, Any]]):
    """A tool whose every step does what the call's input says.

    Input keys (all optional): ``sleep``, ``progress`` (count), ``shield``
    (seconds ignoring cancellation), ``thread`` (``"block"`` or ``"abandon"``:
    wait in a worker thread), ``outcome``, ``modifier``, ``safe``, ``validate``,
    ``map``, ``perm``, ``ask``, ``pre``, ``post``, ``command``.
    """

    input_schema = {"type": "object"}  # noqa: RUF012 - a class attribute like Tool's

    def __init__(self, name: str, *, interrupt: Literal["cancel", "block"], cascades: bool) -> None:
        self.name = name
        self.interrupt_behavior = interrupt
        self.cancels_siblings_on_error = cascades

    def is_concurrency_safe(self, input: dict[str, Any]) -> bool:  # noqa: A002
        safe = input.get("safe", "no")
        if safe == "error":
            raise ToolError("is_concurrency_safe raised")
        if safe in BASE_KINDS:
            raise_base(safe)
        return bool(safe == "yes")

    async def validate_input(self, input: dict[str, Any], ctx: CallContext) -> str | None:  # noqa: A002
        mode = input.get("validate", "ok")
        if mode == "message":
            return f"invalid:{ctx.tool_use.id}"
        if mode == "error":
            raise ToolError(f"validate raised:{ctx.tool_use.id}")
        if mode in BASE_KINDS:
            raise_base(mode)
        if mode == "hang":
            with trio.CancelScope(shield=True):
                await trio.sleep(8.25)
        return None

    async def check_permissions(self, input: dict[str, Any], ctx: CallContext) -> PermissionResult:  # noqa: A002
        mode = input.get("perm", "allow")
        if mode == "deny":
            return PermissionResult.deny(f"denied:{ctx.tool_use.id}")
        if mode == "ask":
            return PermissionResult.ask()
        if mode == "error":
            raise ToolError(f"check_permissions raised:{ctx.tool_use.id}")
        return PermissionResult.allow()

    async def call(
        self,
        input: dict[str, Any],  # noqa: A002
        ctx: CallContext,
        progress: ProgressSender,
    ) -> object:
        tool_id = ctx.tool_use.id
        if input.get("sleep"):
            await trio.sleep(input["sleep"])
        for step in range(input.get("progress", 0)):
            progress(f"{tool_id}:p{step}")
            await trio.sleep(0.25)
        if input.get("shield"):
            with trio.CancelScope(shield=True):
                await trio.sleep(input["shield"])
        thread = input.get("thread")
        if thread is not None:
            release = threading.Event()
            _RELEASES.get().append(release)
            await trio.to_thread.run_sync(release.wait, abandon_on_cancel=thread == "abandon")
        outcome = input.get("outcome", "return")
        if outcome == "error":
            raise ToolError(f"failed:{tool_id}")
        if outcome == "unprintable":
            raise Unprintable
        if outcome == "group":
            raise ExceptionGroup("own nursery", [ToolError(f"failed:{tool_id}")])
        if outcome in BASE_KINDS:
            raise_base(outcome)
        if outcome == "stray_cancelled":
            await raise_stray_cancelled()
        value: object = f"out:{tool_id}"
        if outcome == "garbage":
            value = Garbage()
        elif outcome == "huge":
            value = "x" * HUGE
        elif outcome == "empty":
            value = ""
        modifier = input.get("modifier", "none")
        if modifier == "none":
            return value
        return ToolOutput(value, _modifier(modifier, tool_id))

    def map_result(self, output: object) -> Any:
        if isinstance(output, str) and output.startswith("out:"):
            mode = _MAP_MODES.get().get(output[4:], "ok")
            if mode == "error":
                raise ToolError("map_result raised")
            if mode in BASE_KINDS:
                raise_base(mode)
        return super().map_result(output)


def _modifier(mode: str, tool_id: str) -> Callable[[Mapping[str, object]], Mapping[str, object]]:
    def modify(state: Mapping[str, object]) -> Mapping[str, object]:
        if mode == "error":
            raise ToolError(f"modifier raised:{tool_id}")
        if mode in BASE_KINDS:
            raise_base(mode)
        return {**state, "trail": (*state.get("trail", ()), tool_id)}  # type: ignore[misc]

    return modify


_RELEASES: contextvars.ContextVar[list[threading.Event]] = contextvars.ContextVar("releases")
_MAP_MODES: contextvars.ContextVar[dict[str, str]] = contextvars.ContextVar("map_modes")

TOOLS = {
    "FaultC": FaultTool("FaultC", interrupt="cancel", cascades=False),
    "FaultB": FaultTool("FaultB", interrupt="block", cascades=False),
    "FaultX": FaultTool("FaultX", interrupt="block", cascades=True),
}
REGISTRY = ToolRegistry(list(TOOLS.values()))

# -- hooks and the permission callback ----------------------------------------------------------


async def _hook(hook_input: HookInput, mode: str) -> HookOutput | None:
    if mode == "hang":
        with trio.CancelScope(shield=True):
            await trio.sleep(8.25)
    elif mode == "timeout":
        await trio.sleep(HOOK_TIMEOUT * 2)
    elif mode == "error":
        raise ToolError("hook raised")
    elif mode == "unprintable":
        raise Unprintable
    elif mode in BASE_KINDS:
        raise_base(mode)
    elif mode == "deny":
        return HookOutput(permission_decision="deny", permission_decision_reason="hook denied")
    elif mode == "allow":
        return HookOutput(permission_decision="allow")
    elif mode == "block":
        raise HookBlockingError("hook blocked")
    elif mode == "garbage":
        return "not a HookOutput"  # type: ignore[return-value]
    return None


async def pre_hook(hook_input: HookInput) -> HookOutput | None:
    return await _hook(hook_input, str(hook_input.tool_input.get("pre", "none")))


async def post_hook(hook_input: HookInput) -> HookOutput | None:
    return await _hook(hook_input, str(hook_input.tool_input.get("post", "none")))


async def can_use_tool(name: str, raw: Mapping[str, Any], tool_use_id: str) -> PermissionResult:
    mode = raw.get("ask", "allow")
    if mode == "hang":
        with trio.CancelScope(shield=True):
            await trio.sleep(8.25)
    elif mode == "error":
        raise ToolError("can_use_tool raised")
    elif mode in BASE_KINDS:
        raise_base(mode)
    elif mode == "deny":
        return PermissionResult.deny(f"user denied:{tool_use_id}")
    return PermissionResult.allow()


GUARD = GuardRails(
    hooks=HookSet()
    .with_python_hook("PreToolUse", None, pre_hook, timeout=HOOK_TIMEOUT)
    .with_python_hook("PostToolUse", None, post_hook, timeout=HOOK_TIMEOUT)
    .with_python_hook("PostToolUseFailure", None, post_hook, timeout=HOOK_TIMEOUT),
    can_use_tool=can_use_tool,
)


class FaultyObserver(Observer):
    """Raises ``exc_kind`` on the ``at``-th event it sees (then it is removed)."""

    def __init__(self, at: int, exc_kind: str) -> None:
        self.at = at
        self.exc_kind = exc_kind
        self.seen = 0

    def call_event(self, event: CallEvent) -> None:
        self.seen += 1
        if self.seen == self.at:
            if self.exc_kind == "error":
                raise ToolError("observer raised")
            raise_base(self.exc_kind)


# -- plans --------------------------------------------------------------------------------------

Op = tuple[float, str, int]  # (delay before, "add" | control, call index for "add")


@attrs.frozen
class TurnPlan:
    """One turn: its path, its calls (as the model sends them), and when things happen."""

    path: Literal["batch", "stream"]
    calls: tuple[tuple[str, tuple[tuple[str, Any], ...]], ...]  # (tool name, input items)
    ops: tuple[Op, ...]  # stream: adds and controls; batch: controls only
    max_concurrency: int | None = None
    grace_period: float | None = 5.0
    result_order: Literal["arrival", "completion"] = "arrival"
    deadline: float | None = None
    guarded: bool = True
    observer: tuple[int, str] | None = None

    def tool_uses(self) -> list[ToolUse]:
        return [ToolUse(f"t{i}", name, dict(items)) for i, (name, items) in enumerate(self.calls)]

    @property
    def threaded(self) -> bool:
        return any(dict(items).get("thread") for _, items in self.calls)


@attrs.define
class Observation:
    """What one run of a plan did."""

    plan: TurnPlan
    uses: list[ToolUse]
    updates: list[Update]
    events: list[CallEvent]
    propagated: BaseException | None
    log: FaultLog
    marks: list[tuple[str, int]]  # control -> events seen before it
    deadline_fired: bool
    leaked_tasks: list[str]
    returned_at: float | None = None
    """Seconds after the start when the run returned (None: it raised)."""
    started_at: float = 0.0
    """The clock when the run started (events carry the clock's time)."""

    def summary(self) -> tuple[object, ...]:
        """What the model and the caller see: results (in order) and what propagated."""
        results = [
            (u.result.tool_use_id, _short(u.result.content), u.result.is_error)
            for u in self.updates
            if isinstance(u, ResultUpdate)
        ]
        if self.plan.result_order == "completion" and self.plan.path == "stream":
            results.sort()  # calls completing in one instant leave in scheduling order
        if self.propagated is not None and any(
            not isinstance(leaf, Exception) for leaf in _leaves(self.propagated)
        ):
            # A KeyboardInterrupt or other base exception (from a tool, a hook, a callback
            # or an observer at its n-th event) stops the run at a point that depends on the
            # order trio runs the tasks of one instant, which trio randomises on purpose. So
            # whether a call was stopped by it or by a sibling's error in that same instant
            # may differ between two runs of one plan. Which calls were stopped, and that
            # each was answered once as an error, does not.
            results = [(key, _stop_shape(content), error) for key, content, error in results]
        return tuple(results), _propagated_shape(self.propagated)


_STOP_TEXTS = (REJECT_MESSAGE, CANCEL_MESSAGE)
_SIBLING_STOP = "<tool_use_error>Cancelled: parallel tool call "
EXPLAINED_STOPS = (
    "Interrupted by the user while running: ",
    "Not run: the user interrupted the turn before ",
    "Stopped by the application (",
    "Not run: the application stopped the turn (",
)
"""How trioexec's default texts for a call the user or the application stopped begin."""


def _stop_shape(content: object) -> object:
    """``"<stopped>"`` for an interrupt's or a sibling error's answer, else ``content``."""
    if isinstance(content, str) and (
        content in _STOP_TEXTS or content.startswith((_SIBLING_STOP, *EXPLAINED_STOPS))
    ):
        return "<stopped>"
    return content


def _short(content: object) -> object:
    return ("<huge>", len(content)) if isinstance(content, str) and len(content) > 1000 else content


def _propagated_shape(exc: BaseException | None) -> object:
    if exc is None:
        return None
    if isinstance(exc, BaseExceptionGroup):
        return ("group", sorted(type(leaf).__name__ for leaf in _leaves(exc)))
    return type(exc).__name__


def _leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in _leaves(inner)]
    return [exc]


async def run_plan(plan: TurnPlan, *, guard: GuardRails | None = None) -> Observation:
    """Run ``plan`` in the current trio run (any clock); never raises for the plan's faults.

    ``guard`` replaces the Python hooks and callback of a guarded plan (the
    real-process examples bring command hooks).
    """
    recorder = Recorder()
    log = FaultLog(recorder=recorder)
    uses = plan.tool_uses()
    releases: list[threading.Event] = []
    tokens = (
        _LOG.set(log),
        _RELEASES.set(releases),
        _MAP_MODES.set({u.id: str(u.input.get("map", "ok")) for u in uses}),
    )
    observers: list[Observer] = [recorder]
    if plan.observer is not None:
        observers.append(FaultyObserver(*plan.observer))
    turn = Turn()
    updates: list[Update] = []
    marks: list[tuple[str, int]] = []
    propagated: list[BaseException] = []
    returned_at: list[float] = []
    options: dict[str, Any] = {
        "turn": turn,
        "max_concurrency": plan.max_concurrency,
        "grace_period": plan.grace_period,
        "observers": observers,
        "guard": (guard or GUARD) if plan.guarded else None,
    }

    def control(kind: str, executor: Any = None) -> None:
        marks.append((kind, len(recorder.events)))
        if kind == "interrupt":
            turn.interrupt()
        elif kind == "abort":
            turn.abort()
        elif kind == "discard" and executor is not None:
            executor.discard()

    async def batch() -> None:
        send, receive = trio.open_memory_channel[Update](math.inf)

        async def controls() -> None:
            for delay, kind, _ in plan.ops:
                await trio.sleep(delay)
                control(kind)

        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(controls)
                try:
                    await run_tools(uses, REGISTRY, updates=send, **options)
                except BaseException as exc:  # as run_tools raised it, before our nursery
                    propagated.append(exc)
                    raise
                else:
                    returned_at.append(trio.current_time())
                finally:
                    nursery.cancel_scope.cancel(reason="run over")
        finally:
            while True:
                try:
                    updates.append(receive.receive_nowait())
                except trio.WouldBlock:
                    break

    async def stream() -> None:
        executor = None
        try:
            async with open_streaming_executor(
                REGISTRY, result_order=plan.result_order, **options
            ) as executor:
                for delay, kind, index in plan.ops:
                    await trio.sleep(delay)
                    if kind == "add":
                        marks.append(("add", len(recorder.events)))
                        executor.add_tool(uses[index])
                    else:
                        control(kind, executor)
                    updates.extend(executor.drain_nowait())
                async for update in executor.remaining():
                    updates.append(update)  # noqa: PERF401 - keep what arrived if cancelled
        except BaseException as exc:  # as the block raised it
            propagated.append(exc)
            raise
        else:
            returned_at.append(trio.current_time())
        finally:
            if executor is not None:
                updates.extend(executor.drain_nowait())

    async def release_threads() -> None:
        while True:  # a worker thread blocks until the next whole virtual second
            await trio.sleep(1.0)
            for event in releases:
                event.set()

    deadline_fired = False
    started_at = trio.current_time()
    here = trio.lowlevel.current_task()
    before = _tasks_under(here)
    leaked: list[str] = []
    try:
        async with trio.open_nursery() as helpers:
            helpers.start_soon(release_threads)
            deadline = plan.deadline if plan.deadline is not None else math.inf
            with trio.move_on_after(deadline) as outer:
                await (batch() if plan.path == "batch" else stream())
            deadline_fired = outer.cancelled_caught
            leaked = sorted(t.name for t in _tasks_under(here) - before - set(helpers.child_tasks))
            helpers.cancel_scope.cancel(reason="turn over")
    except BaseException:
        pass
    finally:
        for event in releases:
            event.set()
        for var, token in zip((_LOG, _RELEASES, _MAP_MODES), tokens, strict=True):
            var.reset(token)  # type: ignore[attr-defined]
    return Observation(
        plan=plan,
        uses=uses,
        updates=updates,
        events=recorder.events,
        propagated=propagated[0] if propagated else None,
        log=log,
        marks=marks,
        deadline_fired=deadline_fired,
        leaked_tasks=leaked,
        returned_at=returned_at[0] - started_at if returned_at else None,
        started_at=started_at,
    )


def _tasks_under(task: trio.lowlevel.Task) -> set[trio.lowlevel.Task]:
    """``task`` and every task in its nurseries, recursively."""
    found: set[trio.lowlevel.Task] = set()
    pending = [task]
    while pending:
        current = pending.pop()
        if current not in found:
            found.add(current)
            for nursery in current.child_nurseries:
                pending.extend(nursery.child_tasks)
    return found


# -- checks -------------------------------------------------------------------------------------


def check_observation(obs: Observation, *, known: frozenset[str] = KNOWN_VIOLATIONS) -> None:
    """Assert the invariants and the propagation rule for one run."""
    plan = obs.plan
    events = obs.events
    queued = [e.tool_use_id for e in events if e.kind == "queued"]
    assert len(queued) == len(set(queued)), "a call was queued twice"
    uses = [u for u in obs.uses if u.id in set(queued)]
    order = [u.id for u in uses]
    if plan.path == "batch":
        assert order == [u.id for u in obs.uses], "run_tools did not track every call"
    by_id = {u.id: u for u in uses}
    discard_mark = next((m for kind, m in obs.marks if kind == "discard"), None)
    discarded = discard_mark is not None and plan.path == "stream"

    # I1: one terminal event each; one released result each (none after a discard).
    terminal: dict[str, list[int]] = {}
    for index, event in enumerate(events):
        if event.kind in ("completed", "cancelled"):
            terminal.setdefault(event.tool_use_id, []).append(index)
    stop = _stop_index(obs, terminal)
    late = {e.tool_use_id for e in events[stop or len(events) :] if e.kind == "started"}
    for key in order:
        if "start_after_stop" in known and key in late:
            continue  # a call started after the stop may be lost until 17.1 is fixed
        assert len(terminal.get(key, [])) == 1, f"{key}: {len(terminal.get(key, []))} answers"
    results = [u.result for u in obs.updates if isinstance(u, ResultUpdate)]
    released = [r.tool_use_id for r in results]
    assert len(released) == len(set(released)), "a call was answered twice"
    if not discarded and not ("start_after_stop" in known and late):
        assert sorted(released) == sorted(order), f"unanswered: {set(order) - set(released)}"
    released_events = [e.tool_use_id for e in events if e.kind == "released"]
    assert released_events == released, "the channel and the events disagree"

    # I2: arrival order (completion order: never past an executing unsafe call).
    if plan.result_order == "arrival" or plan.path == "batch":
        assert released == order[: len(released)], "results out of order"

    # I3, on the executing state and on the span of Tool.call.
    safe = {key: _is_safe(by_id[key]) for key in order}
    limit = plan.max_concurrency or 10
    _check_exclusive(events, order, safe, limit, "started", ("completed", "cancelled"))
    _check_exclusive(events, order, safe, limit, "call_began", ("call_ended",))

    # I4: nothing the run started is alive.
    assert not obs.leaked_tasks, f"tasks left behind: {obs.leaked_tasks}"

    # A stopped run starts nothing; an answered call never enters its tool.
    if "start_after_stop" not in known:
        assert not late, f"started after the run was stopped: {sorted(late)}"
    if "run_after_answer" not in known:
        for index, event in enumerate(events):
            if event.kind == "call_began" and event.tool_use_id in terminal:
                assert index < terminal[event.tool_use_id][0], f"{event.tool_use_id} ran answered"

    # Each answer is one the plan allows.
    final = {r.tool_use_id: r for r in results}
    for key in order:
        if len(terminal.get(key, [])) != 1:
            continue  # tolerated above
        (index,) = terminal[key]
        event = events[index]
        result = final.get(key)
        if result is None:
            continue
        assert result.tool_use_id == key
        if event.kind == "completed":
            _check_real_answer(by_id[key], result, obs)
        else:
            _check_synthetic_answer(result, event.reason)

    _check_propagated(obs, known)


def _is_safe(tool_use: ToolUse) -> bool:
    return tool_use.name in TOOLS and tool_use.input.get("safe") == "yes"


def _check_exclusive(
    events: Sequence[CallEvent],
    order: list[str],
    safe: dict[str, bool],
    limit: int,
    open_kind: str,
    close_kinds: tuple[str, ...],
) -> None:
    position = {key: index for index, key in enumerate(order)}
    running: set[str] = set()
    finished: set[str] = set()
    for event in events:
        key = event.tool_use_id
        if event.kind == open_kind:
            if not safe[key]:
                assert not running, f"unsafe {key} {open_kind} beside {running}"
            else:
                assert all(safe[o] for o in running), f"{key} {open_kind} beside an unsafe call"
            earlier_unsafe = [o for o in order[: position[key]] if not safe[o]]
            assert all(o in finished for o in earlier_unsafe if o in _opened(events, open_kind)), (
                f"{key} overtook an unsafe call"
            )
            running.add(key)
            if open_kind == "started":
                assert len(running) <= limit
        elif event.kind in close_kinds:
            running.discard(key)
            finished.add(key)


def _opened(events: Sequence[CallEvent], kind: str) -> set[str]:
    return {e.tool_use_id for e in events if e.kind == kind}


def _stop_index(obs: Observation, terminal: dict[str, list[int]]) -> int | None:
    """The first event index after which no call may start."""
    candidates = [m for kind, m in obs.marks if kind in ("interrupt", "abort", "discard")]
    candidates += obs.log.at_event[: len(obs.log.raised) + len(obs.log.while_cancelled)]
    for key, indices in terminal.items():
        event = obs.events[indices[0]]
        tool_use = next((u for u in obs.uses if u.id == key), None)
        if (
            tool_use is not None
            and tool_use.name == "FaultX"
            and event.kind == "completed"
            and isinstance(event.data, ToolResult)
            and event.data.is_error
        ):
            candidates.append(indices[0] + 1)
    if obs.deadline_fired and obs.plan.deadline is not None:
        deadline = obs.plan.deadline
        after = [i for i, e in enumerate(obs.events) if e.time - obs.started_at > deadline]
        if after:
            candidates.append(after[0])
    return min(candidates, default=None)


def _check_real_answer(tool_use: ToolUse, result: ToolResult, obs: Observation) -> None:
    """A real answer (tool, validation, permission or hook) matches what the plan implies."""
    job = tool_use.input
    key = tool_use.id
    content = result.content
    if tool_use.name not in TOOLS:
        assert content == NO_SUCH_TOOL.format(tool_use.name)
        return
    if isinstance(content, str) and content.startswith(RAISED_PREFIX):
        assert result.is_error
        return  # a BaseException stopped the run; checked with what propagated
    validate = job.get("validate", "ok")
    if validate == "message":
        assert content == f"<tool_use_error>invalid:{key}</tool_use_error>"
        return
    if validate == "error":
        assert content == f"<tool_use_error>validate raised:{key}</tool_use_error>"
        return
    if not result.is_error:
        outcome = job.get("outcome", "return")
        expected = {"return": f"out:{key}", "huge": HUGE_ANSWER}.get(outcome)
        if expected is not None and job.get("map", "ok") == "ok":
            assert content == expected, f"{key}: {str(content)[:80]}"
        elif outcome == "empty":
            assert isinstance(content, str)
            assert "completed with no output" in content
        return
    # An error: the tool's own, a permission or hook denial, or a mapping failure.
    assert isinstance(content, str)
    allowed = [
        f"failed:{key}",
        "Unprintable: <exception str() failed>",
        "map_result raised",
        "garbage output",  # str() of the output raised while mapping
        f"denied:{key}",
        f"user denied:{key}",
        f"check_permissions raised:{key}",
        "can_use_tool raised",
        "hook denied",
        "hook blocked",
        "hook error",
        "permission",
        "Permission",
        "not granted",
        "not a HookOutput",
        "concurrency-safe",
    ]
    assert any(part in content for part in allowed) or content.startswith(
        (REJECT[:20], *EXPLAINED_STOPS)
    ), (
        f"{key}: unexpected error {content[:120]!r}"
    )


def _check_synthetic_answer(result: ToolResult, reason: str | None) -> None:
    content = result.content
    assert result.is_error
    assert isinstance(content, str)
    if reason == "sibling_error":
        assert content.startswith(SIBLING_PREFIX) or (
            content.startswith(DENIED_SIBLING_PREFIX) and "was denied permission" in content
        ), content[:120]
    elif reason == "streaming_fallback":
        assert content == FALLBACK
    else:
        assert content in (REJECT, NOT_NOW) or content.startswith(EXPLAINED_STOPS), content[:120]


def _check_propagated(obs: Observation, known: frozenset[str]) -> None:
    """The docs' rule: user code's BaseExceptions, else a plain Cancelled, else nothing."""
    expected = obs.log.raised
    got = obs.propagated
    if expected:
        assert got is not None, f"swallowed: {expected!r}"
        leaves = _leaves(got)
        if "start_after_stop" in known:  # 17.1: a start into the closing nursery
            leaves = [leaf for leaf in leaves if "closed to new arrivals" not in str(leaf)]
        if "plain_cancelled" in known or "unwrapped" in known:
            leaves = [leaf for leaf in leaves if leaf not in obs.log.while_cancelled]
            leaves = [
                leaf for leaf in leaves if not isinstance(leaf, trio.Cancelled) or leaf in expected
            ]
        assert {id(x) for x in leaves} == {id(x) for x in expected}, (
            f"propagated {got!r}, user code raised {expected!r}"
        )
        if len(expected) == 1 and "unwrapped" not in known:
            assert got is expected[0], f"a lone {expected[0]!r} came back as {got!r}"
        return
    if got is None:
        deadline = obs.plan.deadline
        returned = obs.returned_at
        assert deadline is None or returned is None or returned <= deadline, (
            "the enclosing deadline passed during the run but nothing propagated"
        )
        return
    if "plain_cancelled" in known:
        assert all(isinstance(leaf, trio.Cancelled) for leaf in _leaves(got)), repr(got)
    else:
        assert type(got) is trio.Cancelled, f"outer cancellation came back as {got!r}"
    assert obs.deadline_fired, f"{got!r} propagated with no enclosing deadline"


# -- strategies ---------------------------------------------------------------------------------

SLEEPS = (0.0, 0.0, 0.5, 1.0, 2.0)
DELAYS = (0.0, 0.0, 0.5, 1.0, 1.5)


def call_plans(
    known: frozenset[str], *, base: bool = True
) -> st.SearchStrategy[tuple[str, tuple[tuple[str, Any], ...]]]:
    """One call: a tool name and the input that scripts every step of it.

    ``base=False`` leaves out every BaseException (for runs compared with each
    other while the first of two same-instant BaseExceptions still decides).
    """
    outcomes = ["error", "error", "unprintable", "group", "garbage", "huge"]
    outcomes += ["empty", *BASE_KINDS]
    if "stray_cancelled" not in known:
        outcomes.append("stray_cancelled")
    modifiers = ["ok", "ok", "error"]
    if "modifier_base" not in known:
        modifiers += ["keyboard_interrupt", "custom_base"]
    choices: dict[str, list[Any]] = {
        "sleep": list(SLEEPS[1:]),
        "progress": [1, 2],
        # Off the 0.25 s grid while a grace expiry may tie with a return (17.10).
        "shield": [1.8, 7.3] if "grace_tie" in known else [1.75, 7.25],
        "thread": ["block", "abandon"],
        "outcome": outcomes,
        "modifier": modifiers,
        "safe": ["yes", "yes", "yes", "error", "keyboard_interrupt"],
        "validate": ["message", "error", "system_exit", "hang"],
        "map": ["error", "custom_base"],
        "perm": ["deny", "ask", "ask", "error"],
        "ask": ["deny", "error", "keyboard_interrupt", "hang"],
        "pre": [
            *("allow", "deny", "block", "error", "unprintable", "custom_base"),
            *("hang", "timeout", "garbage"),
        ],
        "post": ["block", "error", "system_exit", "hang", "timeout"],
        "command": ["ls", "make test " * 8],
    }
    if not base:
        choices = {
            key: [v for v in values if v not in BASE_KINDS and v != "stray_cancelled"]
            for key, values in choices.items()
        }
    # Each step is usually well behaved (an absent key means the plain default).
    # One integer encodes every choice of a call: one draw keeps generation
    # cheap, and shrinking towards 0 heads for the plainest call.
    weights = {"sleep": 1, "outcome": 2, "safe": 1, "command": 2}
    table = [([None] * weights.get(key, 5) + values, key) for key, values in choices.items()]
    space = math.prod(len(options) for options, _ in table)

    def decode(number: int) -> tuple[tuple[str, Any], ...]:
        pairs: list[tuple[str, Any]] = []
        for options, key in table:
            number, digit = divmod(number, len(options))
            if options[digit] is not None:
                pairs.append((key, options[digit]))
        return tuple(pairs)

    items = st.integers(0, space - 1).map(decode)
    name = st.sampled_from(["FaultC", "FaultB", "FaultX", "FaultC", "FaultB", "Ghost"])
    return st.tuples(name, items)


@st.composite
def turn_plans(
    draw: st.DrawFn,
    *,
    known: frozenset[str] = KNOWN_VIOLATIONS,
    max_calls: int = 6,
    threads: bool = True,
    offset: float = 0.0,
) -> TurnPlan:
    """A whole turn on one path, with its controls.

    ``offset`` moves the controls and the deadline off the instants where
    calls change state (all multiples of 0.25 s): a control that lands in the
    same instant as a call starting or being released from another task may
    resolve either way, so runs compared with each other avoid those ties.
    """
    path = draw(st.sampled_from(["batch", "stream"]))
    base = not offset or "base_same_instant" not in known
    calls = draw(st.lists(call_plans(known, base=base), min_size=1, max_size=max_calls))
    if not threads:
        calls = [(n, tuple(kv for kv in items if kv[0] != "thread")) for n, items in calls]
    controls = ["interrupt", "abort"] + (["discard"] if path == "stream" else [])
    control_ops = draw(
        st.lists(
            st.tuples(st.sampled_from(DELAYS), st.sampled_from(controls), st.just(0)), max_size=2
        )
    )
    if offset:  # off the grid, and never two controls in one virtual instant
        control_ops = [
            (max(d, 0.5) + (offset if i == 0 else 0), k, n)
            for i, (d, k, n) in enumerate(control_ops)
        ]
    if path == "stream":
        adds: list[Op] = [(draw(st.sampled_from(DELAYS)), "add", i) for i in range(len(calls))]
        if offset:  # every call arrives before the first control, each at its own instant
            # 2**-10 s apart: no call's events share an instant with another call's
            # arrival (a stop in one task and a start from the body's would tie).
            ops = [(d + 2.0**-10, kind, i) for d, kind, i in adds] + control_ops
        else:
            ops = draw(st.permutations(adds + control_ops))
            # keep the adds in arrival order
            add_iter = iter(sorted((op for op in ops if op[1] == "add"), key=lambda op: op[2]))
            ops = [next(add_iter) if op[1] == "add" else op for op in ops]
    else:
        ops = control_ops
    graces = [5.0, None] if "grace_tie" in known else [5.0, None, 1.0, 0.5]
    observer_kinds = ["error"] + (
        [] if "observer_base" in known or not base else ["keyboard_interrupt"]
    )
    deadline = None
    if "start_after_stop" not in known or "plain_cancelled" not in known:
        deadline = draw(st.none() | st.sampled_from([0.5, 1.0, 2.25, 6.0]))
        if deadline is not None:
            deadline += offset
    return TurnPlan(
        path=path,
        calls=tuple(calls),
        ops=tuple(ops),
        max_concurrency=draw(st.sampled_from([None, 1, 2])),
        grace_period=draw(st.sampled_from(graces)),
        result_order=draw(st.sampled_from(["arrival", "arrival", "completion"])),
        deadline=deadline,
        guarded=draw(st.booleans()),
        observer=draw(st.none() | st.tuples(st.integers(1, 12), st.sampled_from(observer_kinds))),
    )


def session_plans(
    *, known: frozenset[str] = KNOWN_VIOLATIONS, max_turns: int = 50
) -> st.SearchStrategy[list[TurnPlan]]:
    """1 to ``max_turns`` turns (no worker threads: their timing is real, not virtual)."""
    return st.lists(
        turn_plans(known=known, max_calls=4, threads=False, offset=0.125),
        min_size=1,
        max_size=max_turns,
    )


# -- running ------------------------------------------------------------------------------------


def run_virtual(plan: TurnPlan) -> Observation:
    """One plan in a fresh trio run on a MockClock (autojump)."""
    return trio.run(run_plan, plan, clock=trio.testing.MockClock(autojump_threshold=0))


async def run_session(plans: Sequence[TurnPlan], width: int = 3) -> list[Observation]:
    """Many turns in one trio run: groups of up to ``width`` concurrent turns, one after another."""
    observations: list[Observation | None] = [None] * len(plans)

    async def one(index: int) -> None:
        observations[index] = await run_plan(plans[index])

    for start in range(0, len(plans), width):
        async with trio.open_nursery() as nursery:
            for index in range(start, min(start + width, len(plans))):
                nursery.start_soon(one, index)
    assert all(o is not None for o in observations)
    return [o for o in observations if o is not None]


def check_session(
    plans: Sequence[TurnPlan], *, known: frozenset[str] = KNOWN_VIOLATIONS, width: int = 3
) -> int:
    """Run ``plans`` together, check each, and compare each with itself run alone (I5)."""
    together = trio.run(
        run_session, plans, width, clock=trio.testing.MockClock(autojump_threshold=0)
    )
    for plan, obs in zip(plans, together, strict=True):
        check_observation(obs, known=known)
        alone = run_virtual(plan)
        check_observation(alone, known=known)
        assert obs.summary() == alone.summary(), (
            f"a turn's results depend on the other turns: {obs.summary()} != {alone.summary()}"
        )
    return len(plans)


_PF_EXITING = 0x4  # the kernel's flag for a task already on its way out
_SIGKILL_BIT = 1 << (9 - 1)


def live_processes() -> dict[int, str]:
    """pid -> state of every live process, read from /proc.

    Not live: a zombie, a process already exiting, and one with a SIGKILL pending. The
    kernel tears a killed process down asynchronously, so on a loaded machine a process
    killed a moment ago (for instance a hook's grandchild, which only init can reap) may
    still show as running; it can never run another instruction of its own.
    """
    found: dict[int, str] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
            if fields[0] in (b"Z", b"X") or int(fields[6]) & _PF_EXITING:
                continue
            if _sigkill_pending(entry):
                continue
        except (OSError, ValueError, IndexError):
            continue
        found[int(entry)] = fields[0].decode()
    return found


def _sigkill_pending(pid: str) -> bool:
    with open(f"/proc/{pid}/status", "rb") as status:
        for line in status:
            pending = line.startswith((b"SigPnd:", b"ShdPnd:"))
            if pending and int(line.split()[1], 16) & _SIGKILL_BIT:
                return True
    return False


@contextlib.contextmanager
def quiet_logs() -> Iterator[None]:
    """Silence trioexec's loggers: faults log on purpose, thousands of times."""
    logger = logging.getLogger("trioexec")
    level = logger.level
    logger.setLevel(logging.CRITICAL + 1)
    try:
        yield
    finally:
        logger.setLevel(level)
