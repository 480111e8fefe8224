"""The asyncio twin (``benchmarks/asyncio_twin``) gives trioexec's bytes, and its parts behave.

The twin runs trioexec's orchestration on asyncio.  The main test runs every
example scenario through both runtimes in-process, into the same session
folder, and compares the output byte for byte.  The rest pins what the twin
had to build because asyncio lacks it: a virtual clock that jumps when every
task waits, end-of-instant cancellation, and scopes that carry a reason.
"""

from __future__ import annotations

import asyncio
import contextvars
import gc
import shutil
import subprocess
import sys
import tempfile
import weakref
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from benchmarks.asyncio_twin import (
    AsyncioScriptedTool,
    Scope,
    Turn,
    VirtualClockLoop,
    open_streaming_executor,
    run_scenario_sync,
    run_tools,
    wait_all_tasks_blocked,
)
from trioexec import CallContext, Policy, ProgressSender, Tool, ToolResult, ToolUse
from trioexec._scenario._load import load_scenario, parse_scenario
from trioexec._scenario._runner import run_scenario_sync as trio_run_scenario_sync
from trioexec._texts import REJECT_MESSAGE

pytestmark = pytest.mark.twin  # the benchmark lane: python -m pytest -m twin

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = sorted((ROOT / "examples" / "scenarios").glob("*.json"))


def _run(coro_factory: object) -> object:
    with asyncio.Runner(loop_factory=VirtualClockLoop) as runner:
        return runner.run(coro_factory())  # type: ignore[operator]


@pytest.mark.parametrize("preset", [None, *Policy.preset_names()])
@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_every_example_scenario_gives_the_same_bytes_on_both_runtimes_under_every_preset(
    path: Path, preset: str | None, tmp_path: Path
) -> None:
    """``None``: the file's own policy; a name: ``--policy NAME`` (the preset replaces it)."""
    scenario = load_scenario(path)
    if preset is not None:
        scenario = attrs.evolve(scenario, policy=Policy.preset(preset))
    trio_output = trio_run_scenario_sync(scenario, session_dir=tmp_path).dumps()
    twin_output = run_scenario_sync(scenario, session_dir=tmp_path).dumps()
    assert twin_output == trio_output


def test_the_command_line_prints_what_trioexec_scenario_run_prints(tmp_path: Path) -> None:
    path = ROOT / "examples" / "scenarios" / "05_sibling_error.json"
    args = [str(path), "--session-dir", str(tmp_path), "--policy", "claude-code-2.1.88"]
    twin = subprocess.run(
        [sys.executable, "-m", "benchmarks.asyncio_twin", *args],
        cwd=ROOT, capture_output=True, check=True,
    )  # fmt: skip
    trio = subprocess.run(
        [sys.executable, "-m", "trioexec", "scenario", "run", *args],
        cwd=ROOT, capture_output=True, check=True,
    )  # fmt: skip
    assert twin.stdout == trio.stdout
    assert b'"sibling_error"' in twin.stdout


def test_the_command_line_reports_a_bad_file_like_trioexec(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"trioexec_scenario": 1, "calls": [{"id": "x"}]}', encoding="utf-8")
    twin = subprocess.run(
        [sys.executable, "-m", "benchmarks.asyncio_twin", str(bad)],
        cwd=ROOT, capture_output=True, text=True,
    )  # fmt: skip
    assert twin.returncode == 2
    assert twin.stdout == ""
    assert f"{bad}: calls[0]" in twin.stderr


def test_virtual_time_jumps_to_the_next_timer_when_every_task_waits() -> None:
    async def main() -> tuple[float, float]:
        loop = asyncio.get_running_loop()
        await asyncio.sleep(3600)
        first = loop.time()
        await asyncio.gather(asyncio.sleep(1.5), asyncio.sleep(0.5))
        return first, loop.time()

    assert _run(main) == (3600.0, 3601.5)


def test_a_run_where_every_task_waits_forever_is_reported_as_a_deadlock() -> None:
    async def main() -> None:
        await asyncio.Event().wait()

    with pytest.raises(RuntimeError, match="deadlock"):
        _run(main)


def test_wait_all_tasks_blocked_returns_once_the_other_tasks_wait() -> None:
    seen: list[str] = []

    async def worker() -> None:
        for _ in range(3):
            await asyncio.sleep(0)
        seen.append("worker blocked next")
        await asyncio.sleep(10)

    async def main() -> list[str]:
        task = asyncio.get_running_loop().create_task(worker())
        await wait_all_tasks_blocked()
        seen.append("settled")
        task.cancel()
        return seen

    assert _run(main) == ["worker blocked next", "settled"]


def test_a_cancelled_scope_stops_its_tasks_at_the_end_of_the_instant_with_its_reason() -> None:
    async def main() -> tuple[bool, str | None, float, bool]:
        loop = asyncio.get_running_loop()
        scope = Scope()
        finished_in_the_same_instant = False

        async def finisher() -> None:
            nonlocal finished_in_the_same_instant
            with scope:
                await asyncio.sleep(1)
                finished_in_the_same_instant = True  # woken in the instant of the cancel
                await asyncio.sleep(1)

        async def canceller() -> None:
            await asyncio.sleep(1)
            scope.cancel(reason="stop now")

        reason: list[str | None] = []

        async def watcher() -> None:
            try:
                await asyncio.sleep(5)
            except asyncio.CancelledError as exc:
                reason.append(exc.args[0] if exc.args else None)
                raise

        async def in_scope_watcher() -> None:
            with scope:
                await watcher()

        async with asyncio.TaskGroup() as group:
            group.create_task(finisher())
            group.create_task(canceller())
            group.create_task(in_scope_watcher())
        return scope.cancelled_caught, reason[0], loop.time(), finished_in_the_same_instant

    caught, reason, now, finished = _run(main)  # type: ignore[misc]
    assert (caught, reason, now, finished) == (True, "stop now", 1.0, True)


def _tools() -> list[AsyncioScriptedTool]:
    return [
        AsyncioScriptedTool("Read", concurrency_safe=True, interrupt_behavior="cancel"),
        AsyncioScriptedTool("Bash", cancels_siblings_on_error=True, concurrency_safe=True),
    ]


def test_run_tools_answers_every_call_in_order_and_a_failing_bash_cancels_its_siblings() -> None:
    uses = [
        ToolUse("a", "Read", {"sleep": 2, "output": "A"}),
        ToolUse("b", "Bash", {"command": "make", "sleep": 1, "error": "Exit code 2"}),
        ToolUse("c", "Read", {"sleep": 0.5, "output": "C"}),
        ToolUse("d", "Nope", {}),
    ]

    async def main() -> object:
        return await run_tools(uses, _tools())

    outcome = _run(main)
    results = outcome.results  # type: ignore[attr-defined]
    assert [r.tool_use_id for r in results] == ["a", "b", "c", "d"]
    assert results[1].is_error
    assert "Exit code 2" in str(results[1].content)
    assert results[0].is_error
    assert "make" in str(results[0].content)
    assert results[2].content == "C"
    assert not results[2].is_error
    assert "No such tool available: Nope" in str(results[3].content)


@pytest.mark.usefixtures("claude_code_texts")  # the twin is pinned in CC's words
def test_the_streaming_executor_starts_calls_as_they_arrive_and_an_interrupt_stops_them() -> None:
    async def main() -> list[object]:
        turn = Turn()
        out: list[object] = []
        async with open_streaming_executor(_tools(), turn=turn) as executor:
            executor.add_tool(ToolUse("a", "Read", {"sleep": 5, "output": "A"}))
            executor.add_tool(ToolUse("b", "Read", {"sleep": 0.5, "output": "B"}))
            await asyncio.sleep(1)
            turn.interrupt()
            out.extend(u.result for u in executor.drain_nowait())  # type: ignore[attr-defined]
            out.extend([u.result async for u in executor.remaining()])  # type: ignore[attr-defined]
            out.append(asyncio.get_running_loop().time())
        return out

    a, b, now = _run(main)  # type: ignore[misc]
    assert (a.tool_use_id, a.content, a.is_error) == ("a", REJECT_MESSAGE, True)
    assert (b.tool_use_id, b.content) == ("b", "B")
    assert now == 1.0


class _Stubborn(AsyncioScriptedTool):
    """Ignores its first cancellation and finishes its sleep (a tool that shields itself)."""

    async def wait(self, seconds: float) -> None:
        loop = asyncio.get_running_loop()
        end = loop.time() + seconds
        while loop.time() < end:
            try:
                await asyncio.sleep(end - loop.time())
            except asyncio.CancelledError:
                asyncio.current_task().uncancel()  # type: ignore[union-attr]


@pytest.mark.usefixtures("claude_code_texts")  # the twin is pinned in CC's words
def test_a_call_that_ignores_its_cancellation_is_answered_after_the_grace_period() -> None:
    async def main() -> tuple[list[tuple[float, str]], float]:
        loop = asyncio.get_running_loop()
        turn = Turn()
        seen: list[tuple[float, str]] = []
        tool = _Stubborn("Slow", interrupt_behavior="cancel")
        async with open_streaming_executor([tool], turn=turn, grace_period=2.0) as executor:
            executor.add_tool(ToolUse("a", "Slow", {"sleep": 10, "output": "late"}))
            await asyncio.sleep(1)
            turn.interrupt()
            seen.extend(
                [(loop.time(), str(u.result.content)) async for u in executor.remaining()]  # type: ignore[attr-defined]
            )
        return seen, loop.time()

    seen, ended = _run(main)  # type: ignore[misc]
    assert seen == [(3.0, REJECT_MESSAGE)]  # answered on its behalf, 2 s after the interrupt
    assert ended == 10.0  # and its task was still awaited: nothing outlives the run


class _Held:
    """Something a tool's frame holds while the tool waits (weakly referenceable)."""


class _Holder(Tool[dict[str, Any]]):
    """Holds a :class:`_Held` in its frame and waits until it is cancelled."""

    name = "Holder"
    input_schema: dict[str, Any] = {"type": "object"}  # noqa: RUF012

    def __init__(self) -> None:
        self.held: list[weakref.ref[_Held]] = []

    def is_concurrency_safe(self, payload: dict[str, Any]) -> bool:
        return True

    async def call(
        self, payload: dict[str, Any], ctx: CallContext, progress: ProgressSender
    ) -> object:
        thing = _Held()
        self.held.append(weakref.ref(thing))
        await asyncio.Event().wait()
        return thing


def test_a_stopped_calls_frames_are_freed_when_its_task_ends_without_the_collector() -> None:
    """The CancelledError that stopped a call leaves its task without a traceback: the
    lifecycle's handler holds the exception in its frame, and a traceback would make a
    cycle keeping the stopped tool's frames (and what they hold) until a collection."""
    holder = _Holder()
    stubborn = _Stubborn("Stubborn", concurrency_safe=True)  # keeps the calls' group open
    bash = AsyncioScriptedTool("Bash", cancels_siblings_on_error=True, concurrency_safe=True)

    async def main() -> tuple[bool, dict[str, ToolResult]]:
        async with open_streaming_executor([holder, stubborn, bash], grace_period=None) as ex:
            ex.add_tool(ToolUse("h", "Holder", {}))
            ex.add_tool(ToolUse("s", "Stubborn", {"sleep": 5, "output": "done"}))
            ex.add_tool(ToolUse("b", "Bash", {"command": "make", "sleep": 1, "error": "exit 2"}))
            await asyncio.sleep(2)  # the cascade stopped h; s still runs, ignoring it
            await wait_all_tasks_blocked()
            alive = holder.held[0]() is not None
            results = {u.result.tool_use_id: u.result async for u in ex.remaining()}  # type: ignore[attr-defined]
        return alive, results

    enabled = gc.isenabled()
    gc.disable()
    try:
        alive, results = _run(main)  # type: ignore[misc]
    finally:
        if enabled:
            gc.enable()
    assert len(holder.held) == 1
    assert not alive
    assert results["h"].is_error
    assert "make" in str(results["h"].content)
    assert results["s"] == ToolResult("s", "done")


_SEEN: contextvars.ContextVar[str] = contextvars.ContextVar("twin_seen", default="application's")


class _FindsTheContext(AsyncioScriptedTool):
    """Answers with the value it found, after setting its own (unsafe: one at a time)."""

    async def call(self, payload: Any, ctx: Any, progress: Any) -> object:
        found = _SEEN.get()
        _SEEN.set(ctx.tool_use.id)
        await asyncio.sleep(1)
        return found


def test_every_streaming_call_starts_from_the_context_the_executor_was_opened_in() -> None:
    async def main() -> list[object]:
        tool = _FindsTheContext("Finds", concurrency_safe=False)
        async with open_streaming_executor([tool]) as executor:
            for name in "abc":
                executor.add_tool(ToolUse(name, "Finds", {}))
            updates = [u async for u in executor.remaining()]
        return [u.result.content for u in updates]  # type: ignore[attr-defined]

    assert _run(main) == ["application's"] * 3


def test_cancelling_the_task_from_outside_answers_every_call_and_propagates() -> None:
    uses = [
        ToolUse("a", "Read", {"sleep": 5}),
        ToolUse("b", "Bash", {"command": "make", "sleep": 3}),
    ]

    async def main() -> list[object]:
        queue: asyncio.Queue[object] = asyncio.Queue()
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(1):
                await run_tools(uses, _tools(), updates=queue, synthetic_texts="trioexec")
        return [queue.get_nowait() for _ in range(queue.qsize())]

    updates = _run(main)
    answered = [u.result for u in updates]  # type: ignore[attr-defined]
    assert [r.tool_use_id for r in answered] == ["a", "b"]
    assert all(r.is_error for r in answered)
    assert all("Stopped by the application (task cancellation)" in str(r.content) for r in answered)


class _Exits(AsyncioScriptedTool):
    async def wait(self, seconds: float) -> None:
        await asyncio.sleep(seconds)
        raise SystemExit(3)


@pytest.mark.usefixtures("claude_code_texts")  # the twin is pinned in CC's words
def test_a_tool_raising_systemexit_stops_the_run_answers_every_call_and_it_propagates() -> None:
    tools = [_Exits("Quit", concurrency_safe=True), *_tools()]
    uses = [
        ToolUse("a", "Read", {"sleep": 5, "output": "A"}),
        ToolUse("q", "Quit", {"sleep": 1}),
        ToolUse("c", "Bash", {"command": "ls", "output": "done at once"}),
    ]

    async def main() -> list[object]:
        queue: asyncio.Queue[object] = asyncio.Queue()
        with pytest.raises(SystemExit):
            await run_tools(uses, tools, updates=queue)
        return [queue.get_nowait() for _ in range(queue.qsize())]

    a, q, c = (u.result for u in _run(main))  # type: ignore[attr-defined]
    assert (a.tool_use_id, a.content) == ("a", REJECT_MESSAGE)  # stopped with the run
    assert (q.tool_use_id, q.is_error) == ("q", True)
    assert "the tool raised SystemExit; the run was stopped" in str(q.content)
    assert (c.tool_use_id, c.content) == ("c", "done at once")  # it had finished already


SOLO = {
    "trioexec_scenario": 1,
    "name": "a hook makes a safe call unsafe",
    "mode": "stream",
    "hooks": [
        {
            "event": "PreToolUse",
            "matcher": "Bash",
            "sleep": 0.1,
            "updated_input": {"command": "rtk git status", "sleep": 1.0, "output": "clean"},
        }
    ],
    "tools": [
        {"name": "Read", "concurrency_safe": True, "interrupt_behavior": "cancel"},
        {"name": "Bash", "concurrency_safe": "input"},
    ],
    "calls": [
        {"id": "toolu_1", "name": "Read", "input": {"file_path": "a", "sleep": 0.5}},
        {
            "id": "toolu_2",
            "name": "Bash",
            "input": {"command": "git status", "concurrency_safe": True},
        },
        {"id": "toolu_3", "name": "Read", "at": 0.2, "input": {"file_path": "b", "sleep": 0.5}},
    ],
}


@pytest.mark.parametrize("preset", Policy.preset_names())
def test_a_call_a_hook_made_unsafe_runs_alone_on_both_runtimes_alike(
    preset: str, tmp_path: Path
) -> None:
    scenario = attrs.evolve(parse_scenario(SOLO), policy=Policy.preset(preset))
    trio_run = trio_run_scenario_sync(scenario, session_dir=tmp_path)
    twin_run = run_scenario_sync(scenario, session_dir=tmp_path)
    assert twin_run.dumps() == trio_run.dumps()
    began = {e.tool_use_id: e.t for e in trio_run.events if e.kind == "started"}
    done = {e.tool_use_id: e.t for e in trio_run.events if e.kind == "completed"}
    assert done["toolu_2"] >= done["toolu_1"] + 1.0  # its body waited for the first Read
    assert began["toolu_3"] == 0.2  # started beside it, but its body waited too


def test_a_discard_in_the_instant_a_call_starts_ends_the_run_on_both_runtimes(
    tmp_path: Path,
) -> None:
    doc = {
        "trioexec_scenario": 1,
        "tools": [{"name": "Read", "concurrency_safe": True, "interrupt_behavior": "cancel"}],
        "calls": [{"id": "t0", "name": "Read", "input": {"sleep": 1}}],
        "actions": [{"at": 0, "do": "discard"}],
    }
    scenario = parse_scenario(doc)
    twin_output = run_scenario_sync(scenario, session_dir=tmp_path).dumps()
    assert twin_output == trio_run_scenario_sync(scenario, session_dir=tmp_path).dumps()
    assert '"reason": "streaming_fallback"' in twin_output


_TOOLS = [
    {"name": "Read", "concurrency_safe": True, "interrupt_behavior": "cancel"},
    {"name": "Bash", "concurrency_safe": "input", "cancels_siblings_on_error": True},
    {"name": "Edit"},
    {"name": "Fetch", "concurrency_safe": True, "interrupt_behavior": "cancel", "timeout": 1.5},
    # 1.25 s never ties with the sleeps below: see benchmarks/asyncio_twin/README.md
    {"name": "Watch", "concurrency_safe": True, "idle_timeout": 1.25},
]
_AT = st.sampled_from([0, 0.5, 1, 1.5, 2, 3])
_SLEEP = st.sampled_from(
    [0.5, 1, 1.5, 2, 3]
)  # no zero sleep: see benchmarks/asyncio_twin/README.md
_INPUT = st.fixed_dictionaries(
    {"sleep": _SLEEP},
    optional={
        "steps": st.lists(
            st.one_of(
                _SLEEP.map(lambda t: {"sleep": t}),
                st.sampled_from(["p1", "p2"]).map(lambda p: {"progress": p}),
            ),
            max_size=3,
        ),
        "error": st.just("boom"),
        "output": st.sampled_from(["x", ""]),
        "concurrency_safe": st.booleans(),
        "command": st.just("make"),
    },
)


@st.composite
def _scenario_docs(draw: st.DrawFn) -> dict[str, object]:
    mode = draw(st.sampled_from(["stream", "batch"]))
    count = draw(st.integers(1, 5))
    arrivals = sorted(draw(st.lists(_AT, min_size=count, max_size=count)))
    names = [tool["name"] for tool in _TOOLS] + ["Nope"]
    calls = []
    for index in range(count):
        call = {"id": f"t{index}", "name": draw(st.sampled_from(names)), "input": draw(_INPUT)}
        if mode == "stream":
            call["at"] = arrivals[index]
        calls.append(call)
    kinds = ["interrupt", "abort", "deadline"] + (["discard"] if mode == "stream" else [])
    action = st.fixed_dictionaries({"at": _AT, "do": st.sampled_from(kinds)})
    return {
        "trioexec_scenario": 1,
        "mode": mode,
        "max_concurrency": draw(st.sampled_from([1, 2, 10])),
        "tools": _TOOLS,
        "calls": calls,
        "actions": draw(st.lists(action, max_size=2)),
    }


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=_scenario_docs(), preset=st.sampled_from(Policy.preset_names()))
@example(  # a discard that lets an executing call run on (the twin's host waited forever)
    doc={
        "trioexec_scenario": 1,
        "mode": "stream",
        "max_concurrency": 1,
        "tools": _TOOLS,
        "calls": [
            {"id": "t0", "name": "Read", "input": {"sleep": 0.5}, "at": 0},
            {"id": "t1", "name": "Read", "input": {"sleep": 0.5}, "at": 1.5},
        ],
        "actions": [{"at": 1.5, "do": "discard"}],
    },
    preset="claude-code-2.1.88",
)
def test_any_scripted_turn_gives_the_same_bytes_on_both_runtimes(
    doc: dict[str, object], preset: str
) -> None:
    scenario = attrs.evolve(parse_scenario(doc), policy=Policy.preset(preset))
    folder = tempfile.mkdtemp(prefix="twin-")
    try:
        trio_output = trio_run_scenario_sync(scenario, session_dir=folder).dumps()
        assert run_scenario_sync(scenario, session_dir=folder).dumps() == trio_output
    finally:
        shutil.rmtree(folder, ignore_errors=True)
