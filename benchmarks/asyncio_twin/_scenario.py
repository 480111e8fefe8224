"""Scenario files on the twin: trioexec's scenario runner, step for step, on a virtual-time loop.

Reused from trioexec: the file parser (``load_scenario``), the event recorder
and its canonical order, the step timeline, the output writer
(``ScenarioRun.dumps``), the message-budget decision and the scripted tools'
behaviour (subclasses here only change how they wait).  Rewritten: the driving
(``asyncio`` tasks, :func:`~benchmarks.asyncio_twin._loop.wait_all_tasks_blocked`
in place of trio's), the application scope of a ``deadline`` action, and the
budget's file writes (blocking, as trioexec writes under a MockClock).

trio randomises the order of tasks woken in one instant (trioexec's runner
seeds it); asyncio runs callbacks in FIFO order.  Neither order reaches the
output of an arrival-order run: every cancellation waits for the end of the
instant and every scripted step for all tasks to block.
"""

from __future__ import annotations

import asyncio
import math
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from trioexec._contract._permission_context import PermissionContext
from trioexec._contract._registry import ToolRegistry
from trioexec._contract._tool import PermissionResult
from trioexec._guard._rails import GuardRails
from trioexec._hooks._config import HookSet
from trioexec._models import JSONValue, ResultUpdate, ToolResult, Update
from trioexec._results._budget import ContentReplacementState, choose_replacements
from trioexec._scenario._report import ScenarioRun
from trioexec._scenario._runner import _Recorder, _timeline, scripted_tool
from trioexec._scenario._scripted import ScriptedTool
from trioexec._scenario._scripted_hooks import ScriptedHook

from ._core import Turn
from ._frontends import StreamingExecutor, open_streaming_executor, run_tools
from ._lifecycle import write_exclusive_sync
from ._loop import VirtualClockLoop, wait_all_tasks_blocked
from ._scope import Scope

if TYPE_CHECKING:
    from trioexec._scenario._model import ActionSpec, HookSpec, Scenario

__all__ = ["AsyncioScriptedHook", "AsyncioScriptedTool", "run_scenario", "run_scenario_sync"]


class AsyncioScriptedTool(ScriptedTool):
    """trioexec's scripted tool, waiting with ``asyncio.sleep``."""

    async def wait(self, seconds: float) -> None:
        """Sleep on the running asyncio loop."""
        await asyncio.sleep(seconds)


@attrs.frozen(eq=False, repr=False)
class AsyncioScriptedHook(ScriptedHook):
    """trioexec's scripted hook, waiting with ``asyncio.sleep``."""

    async def wait(self) -> None:
        """Sleep ``sleep`` seconds on the running asyncio loop (a yield when 0)."""
        await asyncio.sleep(self.sleep)


class _CanUseTool:
    """The application's fixed answer to every "ask"."""

    def __init__(self, allow: bool) -> None:
        self._allow = allow

    async def __call__(
        self, tool_name: str, tool_input: Mapping[str, JSONValue], tool_use_id: str
    ) -> PermissionResult:
        await asyncio.sleep(0)
        return PermissionResult.allow() if self._allow else PermissionResult("deny")


def _guard_rails(scenario: Scenario) -> GuardRails | None:
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


def _scripted_hook(spec: HookSpec) -> AsyncioScriptedHook:
    return AsyncioScriptedHook(
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


async def run_scenario(scenario: Scenario, *, session_dir: Path | str) -> ScenarioRun:
    """Run one scenario on the running loop (a :class:`VirtualClockLoop`) and return its run."""
    folder = Path(session_dir)
    start = asyncio.get_running_loop().time()
    arrival = {call.id: index for index, call in enumerate(scenario.calls)}
    recorder = _Recorder(start, arrival)
    registry = ToolRegistry(
        [scripted_tool(spec, tool_type=AsyncioScriptedTool) for spec in scenario.tools]
    )
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
    results = _apply_budget(scenario, registry, [u.result for u in updates], folder)
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
    """Run a scenario on a fresh :class:`VirtualClockLoop` (trioexec's ``run_scenario_sync``)."""
    if session_dir is None:
        session_dir = tempfile.mkdtemp(prefix="trioexec-scenario-")
    folder = session_dir
    with asyncio.Runner(loop_factory=VirtualClockLoop) as runner:
        return runner.run(run_scenario(scenario, session_dir=folder))


Outcome = tuple[list[ResultUpdate], Mapping[str, object], str | None]


async def _settle_at(start: float, at: float) -> None:
    loop = asyncio.get_running_loop()
    delay = start + at - loop.time()
    if delay > 0:
        await asyncio.sleep(delay)
    await wait_all_tasks_blocked()


def _act(
    action: ActionSpec, turn: Turn, discard: Callable[[], None] | None, application: Scope
) -> None:
    if action.do == "interrupt":
        turn.interrupt()
    elif action.do == "abort":
        turn.abort()
    elif action.do == "deadline":
        application.cancel(reason=action.reason or "deadline")
    elif discard is not None:
        discard()


async def _run_batch(
    scenario: Scenario, registry: ToolRegistry, turn: Turn, start: float, options: dict[str, Any]
) -> Outcome:
    application = Scope()

    async def perform_actions() -> None:
        for action in sorted(scenario.actions, key=lambda action: action.at):
            await _settle_at(start, action.at)
            _act(action, turn, None, application)

    uses = [call.tool_use() for call in scenario.calls]
    queue: asyncio.Queue[Any] = asyncio.Queue()
    outcome = None
    with application:
        async with asyncio.TaskGroup() as group:
            actions = group.create_task(perform_actions())
            outcome = await run_tools(uses, registry, updates=queue, **options)
            actions.cancel()
    if outcome is not None:
        return list(outcome.updates), outcome.context, outcome.stop_reason
    released = []
    while not queue.empty():
        item = queue.get_nowait()
        if isinstance(item, ResultUpdate):
            released.append(item)
    return released, {}, None


async def _run_stream(
    scenario: Scenario, registry: ToolRegistry, turn: Turn, start: float, options: dict[str, Any]
) -> Outcome:
    released: list[ResultUpdate] = []

    def keep(items: Sequence[Update]) -> None:
        released.extend(item for item in items if isinstance(item, ResultUpdate))

    steps = _timeline(scenario.calls, scenario.actions)
    last_call = max((i for i, (_, call, _) in enumerate(steps) if call is not None), default=-1)
    application = Scope()
    context: Mapping[str, object] = {}
    stop_reason: str | None = None
    opened: list[StreamingExecutor] = []
    with application:
        try:
            async with open_streaming_executor(registry, **options) as executor:
                opened.append(executor)
                all_added = asyncio.Event()

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

                async with asyncio.TaskGroup() as group:
                    driver = group.create_task(drive())
                    await all_added.wait()
                    async for update in executor.remaining():
                        keep([update])
                    driver.cancel()
                context, stop_reason = executor.context, executor.stop_reason
        finally:
            if opened:
                keep(opened[0].drain_nowait())
    return released, context, stop_reason


def _apply_budget(
    scenario: Scenario, registry: ToolRegistry, results: list[ToolResult], session_dir: Path
) -> list[ToolResult]:
    """The per-message budget (SPEC §7): trioexec's decision, written with blocking calls."""
    names = {call.id: call.name for call in scenario.calls}
    limits: dict[str, float] = {}
    for result in results:
        found = registry.lookup(names.get(result.tool_use_id, ""))
        limits[result.tool_use_id] = math.inf if found is None else found.tool.max_result_size_chars
    state = ContentReplacementState()
    plan = choose_replacements(
        results, state=state, session_dir=session_dir, budget=scenario.message_budget, limits=limits
    )
    written: set[int] = set()
    for item in plan.persist:
        try:
            write_exclusive_sync(item.plan.path, item.plan.data)
        except OSError:  # FileExistsError included: the result stays inline, as in trioexec
            continue
        written.add(item.index)
    plan.commit(state, written)
    return plan.apply(results, written)
