"""Running a scenario: scripted tools, one turn, virtual time, recorded events.

:func:`run_scenario` runs on whatever clock the current trio run has; the
command line (:func:`run_scenario_sync`) uses
``trio.testing.MockClock(autojump_threshold=0)``, so virtual time jumps
straight to the next deadline and a scenario of hours takes milliseconds.

**The script.**  Stream mode hands each call to the streaming executor at
its ``at`` time and drains what is releasable after each arrival, then reads
``remaining()`` once the last call is in.  Batch mode hands every call to
``run_tools`` at time 0.  Actions (``interrupt``, ``abort``: the turn;
``discard``: the executor) happen at their time; once the run has answered
every call, actions still pending are dropped.

**One instant, one outcome.**  trio deliberately runs the tasks woken in the
same instant in a random order.  To keep runs byte-identical, each scripted
step at time *t* waits until every task has settled at *t*
(``trio.testing.wait_all_tasks_blocked``) before it acts: a call that
finishes at *t* is finished before an action or a new call of time *t*.
Calls of one instant are added back to back, in file order, and before the
actions of that instant.  Recorded events are listed by time, then by the
call's arrival order; one call's own events keep the order they happened in.
Results are listed the same way: by release time, then by arrival (with
``result_order: "completion"`` calls completing in one instant are released in
whatever order the scheduler ran them, which is trio's seeded order here and
FIFO on asyncio; the listing does not depend on it).
"""

from __future__ import annotations

import contextlib
import itertools
import math
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import trio
import trio.testing

from .._contract._permission_context import PermissionContext
from .._contract._registry import ToolRegistry
from .._contract._tool import PermissionResult
from .._core._batch import run_tools
from .._core._events import CallEvent, Observer
from .._core._streaming import StreamingExecutor, open_streaming_executor
from .._core._turn import Turn
from .._guard._rails import GuardRails
from .._hooks._config import HookSet
from .._models import JSONValue, ResultUpdate, ToolResult, Update
from .._results._budget import ContentReplacementState, apply_message_budget
from ._report import RunEvent, ScenarioRun

if TYPE_CHECKING:
    from ._model import ActionSpec, CallSpec, HookSpec, Scenario, ToolSpec
    from ._scripted import ScriptedTool

__all__ = ["run_scenario", "run_scenario_sync", "scripted_tool"]


def scripted_tool(spec: ToolSpec, *, tool_type: type[ScriptedTool] | None = None) -> ScriptedTool:
    """The scripted tool a ``tools`` entry describes (``tool_type``: a ScriptedTool subclass)."""
    # Imported here: trioexec.testing re-exports this module's functions.
    from ._scripted import ScriptedTool

    return (tool_type or ScriptedTool)(
        spec.name,
        concurrency_safe=spec.concurrency_safe,
        interrupt_behavior=spec.interrupt_behavior,
        cancels_siblings_on_error=spec.cancels_siblings_on_error,
        max_result_size_chars=spec.max_result_size_chars,
        aliases=spec.aliases,
        permission=spec.permission,
        description=spec.description,
        timeout=spec.timeout,
        idle_timeout=spec.idle_timeout,
    )


class _Recorder(Observer):
    """Collects events; :meth:`events` puts them in canonical order, relative to the start."""

    def __init__(self, start: float, arrival: Mapping[str, int]) -> None:
        self._start = start
        self._arrival = arrival
        self._raw: list[CallEvent] = []

    def call_event(self, event: CallEvent) -> None:
        self._raw.append(event)

    def in_release_order(self, updates: Sequence[ResultUpdate]) -> list[ResultUpdate]:
        """``updates`` by release time, then by arrival (a stable sort: nothing else moves)."""
        start, arrival, unknown = self._start, self._arrival, len(self._arrival)
        released = {
            event.tool_use_id: round(event.time - start, 6)
            for event in self._raw
            if event.kind == "released"
        }
        return sorted(
            updates,
            key=lambda u: (
                released.get(u.result.tool_use_id, math.inf),
                arrival.get(u.result.tool_use_id, unknown),
            ),
        )

    def events(self) -> tuple[RunEvent, ...]:
        start, arrival, unknown = self._start, self._arrival, len(self._arrival)
        keyed = [
            (round(event.time - start, 6) + 0.0, arrival.get(event.tool_use_id, unknown), seq)
            for seq, event in enumerate(self._raw)
        ]
        keyed.sort()  # seq is unique: ties never reach the events themselves
        raw = self._raw
        return tuple(
            RunEvent(
                t,
                raw[seq].tool_use_id,
                raw[seq].kind,
                raw[seq].data,
                raw[seq].reason,
                raw[seq].detail,
            )
            for t, _, seq in keyed
        )


async def run_scenario(scenario: Scenario, *, session_dir: Path | str) -> ScenarioRun:
    """Run one scenario in the current trio run and return what it produced.

    Args:
        scenario: the parsed scenario.
        session_dir: where oversized results are persisted; kept as given
            (a relative folder gives relative paths in the output).

    On cancellation the run's calls are cancelled with it and nothing is
    returned.
    """
    folder = Path(session_dir)
    start = trio.current_time()
    arrival = {call.id: index for index, call in enumerate(scenario.calls)}
    recorder = _Recorder(start, arrival)
    registry = ToolRegistry([scripted_tool(spec) for spec in scenario.tools])
    turn = Turn()
    options: dict[str, Any] = {
        "turn": turn,
        "context": {},
        "max_concurrency": scenario.max_concurrency,
        "session_dir": folder,
        "observers": [recorder],
        "policy": scenario.policy,
    }
    guard = _guard_rails(scenario)
    if guard is not None:
        options["guard"] = guard
    if scenario.mode == "batch":
        updates, context, stop_reason = await _run_batch(scenario, registry, turn, start, options)
    else:
        updates, context, stop_reason = await _run_stream(scenario, registry, turn, start, options)
    updates = recorder.in_release_order(updates)
    results = await _apply_budget(scenario, registry, [u.result for u in updates], folder)
    return ScenarioRun(
        scenario=scenario,
        results=tuple(results),
        events=recorder.events(),
        attachments=tuple(item for u in updates for item in u.attachments),
        context=dict(context),
        stop_reason=stop_reason,
        session_dir=str(session_dir),
    )


def run_scenario_sync(scenario: Scenario, *, session_dir: Path | str | None = None) -> ScenarioRun:
    """Run a scenario in a fresh ``trio.run`` on a MockClock (virtual time).

    ``session_dir`` defaults to a fresh temporary folder, which is kept (the
    output may point into it).
    """
    if session_dir is None:
        session_dir = tempfile.mkdtemp(prefix="trioexec-scenario-")
    clock = trio.testing.MockClock(autojump_threshold=0)
    folder = session_dir

    async def main() -> ScenarioRun:
        return await run_scenario(scenario, session_dir=folder)

    with _repeatable_scheduling():
        return trio.run(main, clock=clock)


@contextlib.contextmanager
def _repeatable_scheduling() -> Iterator[None]:
    """Fix how trio orders tasks that wake in the same scheduler pass, for this run.

    Arrival-order runs do not depend on it (cancellations and releases are
    settled by arrival), but in ``result_order: "completion"`` calls that
    complete in the same virtual instant leave in the order trio happens to run
    them.  trio randomises that order; the switch it provides for property-based
    testing makes it a fixed, seeded order instead, so the same file gives the
    same bytes on every run.  Without that switch (a future trio), nothing changes.
    """
    run_module = getattr(getattr(trio, "_core", None), "_run", None)
    rng = getattr(run_module, "_r", None)
    if (
        run_module is None
        or rng is None
        or not hasattr(run_module, "_ALLOW_DETERMINISTIC_SCHEDULING")
    ):
        yield
        return
    saved_flag = run_module._ALLOW_DETERMINISTIC_SCHEDULING
    saved_state = rng.getstate()
    run_module._ALLOW_DETERMINISTIC_SCHEDULING = True
    rng.seed(0)
    try:
        yield
    finally:
        run_module._ALLOW_DETERMINISTIC_SCHEDULING = saved_flag
        rng.setstate(saved_state)


Outcome = tuple[list[ResultUpdate], Mapping[str, object], str | None]


async def _settle_at(start: float, at: float) -> None:
    """Sleep until ``at`` (virtual, relative to ``start``), then until all tasks are blocked."""
    await trio.sleep_until(start + at)
    await trio.testing.wait_all_tasks_blocked()


def _act(
    action: ActionSpec,
    turn: Turn,
    discard: Callable[[], None] | None,
    application: trio.CancelScope,
) -> None:
    if action.do == "interrupt":
        turn.interrupt()
    elif action.do == "abort":
        turn.abort()
    elif action.do == "deadline":  # the application's enclosing scope, not the user
        application.cancel(reason=action.reason or "deadline")
    elif discard is not None:
        discard()


async def _run_batch(
    scenario: Scenario,
    registry: ToolRegistry,
    turn: Turn,
    start: float,
    options: dict[str, Any],
) -> Outcome:
    application = trio.CancelScope()

    async def perform_actions() -> None:
        for action in sorted(scenario.actions, key=lambda action: action.at):  # stable
            await _settle_at(start, action.at)
            _act(action, turn, None, application)

    uses = [call.tool_use() for call in scenario.calls]
    send, receive = trio.open_memory_channel[Update](math.inf)
    outcome = None
    with application:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(perform_actions)
            outcome = await run_tools(uses, registry, updates=send, **options)
            nursery.cancel_scope.cancel(reason="scenario run complete")
    send.close()
    if outcome is not None:
        return list(outcome.updates), outcome.context, outcome.stop_reason
    # A deadline stopped the run: every call was still answered, on the channel.
    released = [u async for u in receive if isinstance(u, ResultUpdate)]
    return released, {}, None


async def _run_stream(
    scenario: Scenario,
    registry: ToolRegistry,
    turn: Turn,
    start: float,
    options: dict[str, Any],
) -> Outcome:
    released: list[ResultUpdate] = []

    def keep(items: Sequence[Update]) -> None:
        released.extend(item for item in items if isinstance(item, ResultUpdate))

    steps = _timeline(scenario.calls, scenario.actions)
    last_call = max((i for i, (_, call, _) in enumerate(steps) if call is not None), default=-1)
    application = trio.CancelScope()  # a ``deadline`` action cancels it
    context: Mapping[str, object] = {}
    stop_reason: str | None = None
    opened: list[StreamingExecutor] = []
    with application:
        try:
            async with open_streaming_executor(registry, **options) as executor:
                opened.append(executor)
                all_added = trio.Event()

                async def drive() -> None:
                    if last_call < 0:
                        all_added.set()
                    for index, (at, call, action) in enumerate(steps):
                        await _settle_at(start, at)
                        if call is not None:
                            for each in call:
                                executor.add_tool(each.tool_use())
                            keep(executor.drain_nowait())
                        if action is not None:
                            _act(action, turn, executor.discard, application)
                            keep(executor.drain_nowait())
                        if index == last_call:
                            all_added.set()

                async with trio.open_nursery() as nursery:
                    nursery.start_soon(drive)
                    await all_added.wait()
                    async for update in executor.remaining():
                        keep([update])
                    nursery.cancel_scope.cancel(reason="scenario run complete")
                context, stop_reason = executor.context, executor.stop_reason
        finally:
            if opened:  # whatever ended the run, keep what the executor released on the way out
                keep(opened[0].drain_nowait())
    return released, context, stop_reason


Step = tuple[float, "list[CallSpec] | None", "ActionSpec | None"]


def _timeline(calls: Sequence[CallSpec], actions: Sequence[ActionSpec]) -> list[Step]:
    """Scripted steps in time order: each instant's calls (one group), then its actions."""
    steps: list[tuple[float, int, int, Step]] = []
    for at, group in itertools.groupby(calls, key=lambda call: call.at):
        steps.append((at, 0, 0, (at, list(group), None)))
    for index, action in enumerate(actions):
        steps.append((action.at, 1, index, (action.at, None, action)))
    steps.sort(key=lambda item: item[:3])
    return [item[3] for item in steps]


async def _apply_budget(
    scenario: Scenario,
    registry: ToolRegistry,
    results: list[ToolResult],
    session_dir: Path,
) -> list[ToolResult]:
    """The per-message budget over the released results (SPEC §7)."""
    names = {call.id: call.name for call in scenario.calls}
    limits: dict[str, float] = {}
    for result in results:
        found = registry.lookup(names.get(result.tool_use_id, ""))
        limits[result.tool_use_id] = math.inf if found is None else found.tool.max_result_size_chars
    return await apply_message_budget(
        results,
        state=ContentReplacementState(),
        session_dir=session_dir,
        budget=scenario.message_budget,
        limits=limits,
    )


def _guard_rails(scenario: Scenario) -> GuardRails | None:
    """The scenario's rules, mode, scripted hooks and ``can_use_tool``; None when it has none."""
    if not scenario.uses_guard_rails:
        return None
    rules = scenario.permissions or {}
    permissions = PermissionContext(
        allow=rules.get("allow", ()),
        ask=rules.get("ask", ()),
        deny=rules.get("deny", ()),
        mode=scenario.permission_mode,
    )
    hooks = HookSet()
    for spec in scenario.hooks:
        hooks = hooks.with_python_hook(spec.event, spec.matcher, _scripted_hook(spec))
    answer = scenario.can_use_tool
    return GuardRails(
        permissions=permissions,
        hooks=hooks,
        can_use_tool=None if answer is None else _CanUseTool(answer == "allow"),
    )


def _scripted_hook(spec: HookSpec) -> Any:  # noqa: ANN401 - a PythonHook
    from ._scripted_hooks import ScriptedHook  # see scripted_tool()

    return ScriptedHook(
        sleep=spec.sleep,
        decision=spec.decision,
        reason=spec.reason,
        updated_input=spec.updated_input,
        additional_context=spec.additional_context,
        continue_=spec.continue_,
        stop_reason=spec.stop_reason,
        error=spec.error,
        blocking=spec.blocking,
    )


class _CanUseTool:
    """The application's fixed answer to every "ask"."""

    def __init__(self, allow: bool) -> None:
        self._allow = allow

    async def __call__(
        self, tool_name: str, tool_input: Mapping[str, JSONValue], tool_use_id: str
    ) -> PermissionResult:
        await trio.lowlevel.checkpoint()
        return PermissionResult.allow() if self._allow else PermissionResult("deny")
