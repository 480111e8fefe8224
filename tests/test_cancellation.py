"""Sibling cascade, interrupt, abort and discard (SPEC §3.2-§3.4), on both paths."""

from __future__ import annotations

import math
import weakref
from typing import Any

import pytest
import trio
import trio.lowlevel
import trio.testing
from helpers import (
    NOT_NOW,
    REJECT,
    Recorder,
    assert_no_new_tasks,
    live_tasks,
    make_tool,
    results_of,
    stubborn,
    use,
)

from trioexec import (
    CallContext,
    GuardRails,
    ProgressSender,
    ResultUpdate,
    Tool,
    ToolResult,
    ToolUse,
    Turn,
    Update,
    function_tool,
    open_streaming_executor,
    run_tools,
)
from trioexec.hooks import HookEvent, HookInput, HookSet
from trioexec.testing import SCRIPTED_INPUT_SCHEMA, ScriptedToolError

pytestmark = pytest.mark.usefixtures("claude_code_texts")  # mechanisms, in CC's words

FALLBACK = "<tool_use_error>Error: Streaming fallback - tool execution discarded</tool_use_error>"


def sibling(desc: str) -> str:
    return f"<tool_use_error>Cancelled: parallel tool call {desc} errored</tool_use_error>"


READ = make_tool("Read", interrupt="cancel")
GREP = make_tool("Grep")
EDIT = make_tool("Edit", safe=False)
FETCH = make_tool("Fetch")
BASH = make_tool("Bash", safe="input", cascades=True, aliases=("Shell",))
KILLABLE = make_tool("Killable", cascades=True, interrupt="cancel")


@function_tool(
    name="Late",
    input_schema=SCRIPTED_INPUT_SCHEMA,
    concurrency_safe=True,
    cancels_siblings_on_error=True,
)
async def late(job: dict[str, Any], ctx: CallContext, progress: ProgressSender) -> object:
    """Fails at t=1 after two scheduling points that cannot be cancelled.

    The failure happens in the same virtual instant as one of a call that
    sleeps 1.0 and fails at once, but always after it and after the
    cancellations that failure caused have been delivered.
    """
    await trio.sleep(1.0)
    await trio.lowlevel.cancel_shielded_checkpoint()
    await trio.lowlevel.cancel_shielded_checkpoint()
    raise ScriptedToolError("exit 1")


TOOLS: list[Tool[Any]] = [READ, GREP, EDIT, FETCH, BASH, KILLABLE, late]


def failing_bash(tool_id: str, sleep: float = 1.0, **job: Any) -> ToolUse:
    return use(tool_id, "Bash", sleep=sleep, error="exit 1", safe=True, **job)


async def stream(
    uses: list[tuple[float, ToolUse]],
    *,
    turn: Turn | None = None,
    recorder: Recorder | None = None,
    **kwargs: Any,
) -> dict[str, ToolResult]:
    """Add each tool_use at its time (relative to now); return the released results by id.

    Also checks that every call was released once, in arrival order unless
    ``result_order="completion"``.
    """
    observers = [recorder] if recorder is not None else []
    start = trio.current_time()
    async with open_streaming_executor(TOOLS, turn=turn, observers=observers, **kwargs) as executor:
        for at, tool_use in sorted(uses, key=lambda item: item[0]):
            await trio.sleep(max(0.0, start + at - trio.current_time()))
            executor.add_tool(tool_use)
        updates = executor.drain_nowait() + [u async for u in executor.remaining()]
    results = [u.result for u in results_of(updates)]
    if kwargs.get("result_order", "arrival") == "arrival":
        assert [r.tool_use_id for r in results] == [u.id for _, u in uses]
    assert sorted(r.tool_use_id for r in results) == sorted(u.id for _, u in uses)
    return {r.tool_use_id: r for r in results}


# -- sibling cascade ----------------------------------------------------------------------------


async def test_cascade_cancels_executing_and_later_siblings(
    autojump_clock: trio.testing.MockClock, recorder: Recorder
) -> None:
    turn = Turn()
    results = await stream(
        [
            (0.0, use("done", "Read", sleep=0.5)),
            (0.0, use("a", "Read", sleep=5.0)),
            (0.0, use("b", "Grep", sleep=5.0)),
            (0.0, failing_bash("c", command="npm test")),
            (0.0, use("q", "Edit")),
            (2.0, use("d", "Read")),
            (2.0, use("e", "Edit")),
        ],
        turn=turn,
        recorder=recorder,
    )
    text = sibling("Bash(npm test)")
    assert results["done"] == ToolResult("done", "ok")
    assert results["c"] == ToolResult("c", "exit 1", is_error=True)
    for key in "abqde":
        assert results[key] == ToolResult(key, text, is_error=True), key
    cancelled = {e.tool_use_id: (e.time, e.reason) for e in recorder.of_kind("cancelled")}
    assert cancelled == {
        "a": (1.0, "sibling_error"),
        "b": (1.0, "sibling_error"),
        "q": (1.0, "sibling_error"),
        "d": (2.0, "sibling_error"),
        "e": (2.0, "sibling_error"),
    }
    for key in "qde":
        assert recorder.kinds(key) == ["queued", "cancelled", "released"]
    # The turn goes on: a sibling error never cancels the turn.
    assert not turn.interrupted
    assert not turn.aborted
    again = await stream([(0.0, use("next", "Read", sleep=1.0))], turn=turn)
    assert again["next"] == ToolResult("next", "ok")


class _Held:
    """Something a tool's frame holds while the tool waits (weakly referenceable)."""


@pytest.mark.parametrize("stop", ["cascade", "abort"])
async def test_a_stopped_calls_frames_are_freed_when_its_task_ends_not_when_the_run_ends(
    autojump_clock: trio.testing.MockClock, stop: str
) -> None:
    """A call stopped by the sibling scope ends its task normally; one stopped by
    another scope (the turn's, on an abort) leaves its task with a Cancelled that
    has no traceback: the calls' nursery keeps every child's Cancelled until it
    exits, and a traceback would keep the stopped tool's frames (and what they
    hold) alive until then.  Either way nothing of the tool outlives its task."""
    turn = Turn()
    held: list[weakref.ref[_Held]] = []
    release = trio.Event()

    @function_tool(name="Holder", input_schema=SCRIPTED_INPUT_SCHEMA, concurrency_safe=True)
    async def holder(job: dict[str, Any], ctx: CallContext, progress: ProgressSender) -> object:
        thing = _Held()
        held.append(weakref.ref(thing))
        await trio.sleep_forever()
        return thing

    @function_tool(name="Stubborn", input_schema=SCRIPTED_INPUT_SCHEMA, concurrency_safe=True)
    async def shielded(job: dict[str, Any], ctx: CallContext, progress: ProgressSender) -> object:
        with trio.CancelScope(shield=True):  # keeps the calls' nursery open
            await release.wait()
        return "done"

    async with open_streaming_executor(
        [holder, shielded, BASH], grace_period=None, turn=turn
    ) as executor:
        executor.add_tool(use("h", "Holder"))
        executor.add_tool(use("s", "Stubborn"))
        if stop == "cascade":
            executor.add_tool(failing_bash("b"))
        try:
            await trio.sleep(1.0)
            if stop == "abort":
                turn.abort()
            await trio.sleep(1.0)  # the cascade or the abort stopped h; s runs on, shielded
            await trio.testing.wait_all_tasks_blocked()
            assert len(held) == 1
            assert held[0]() is None
        finally:
            release.set()
        results = {
            u.result.tool_use_id: u.result
            for u in results_of([u async for u in executor.remaining()])
        }
    answer = sibling("Bash") if stop == "cascade" else REJECT
    assert results["h"] == ToolResult("h", answer, is_error=True)
    assert results["s"].tool_use_id == "s"  # (its own answer, or the abort's: not the point here)


async def test_a_cascades_stopped_siblings_end_their_tasks_with_nothing_for_the_nursery_to_catch(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """Each sibling a cascade stops is answered and its task ends there: no
    ``Cancelled`` per stopped call reaches the calls' nursery (which would only
    gather them all into a group and discard it), so the nursery's own scope,
    the sibling scope, is cancelled but catches nothing."""
    scopes: list[trio.CancelScope] = []

    @function_tool(name="Waiter", input_schema=SCRIPTED_INPUT_SCHEMA, concurrency_safe=True)
    async def waiter(job: dict[str, Any], ctx: CallContext, progress: ProgressSender) -> object:
        nursery = trio.lowlevel.current_task().parent_nursery
        assert nursery is not None
        scopes.append(nursery.cancel_scope)
        await trio.sleep_forever()
        return "never"

    uses = [use(f"w{index}", "Waiter") for index in range(3)] + [failing_bash("b")]
    outcome = await run_tools(uses, [waiter, BASH])
    results = {u.result.tool_use_id: u.result for u in outcome.updates}
    for index in range(3):
        key = f"w{index}"
        assert results[key] == ToolResult(key, sibling("Bash"), is_error=True)
    assert len({id(scope) for scope in scopes}) == 1  # the calls' nursery of the one batch
    assert scopes[0].cancel_called
    assert not scopes[0].cancelled_caught


@pytest.mark.parametrize("path", ["batch", "stream"])
async def test_an_enclosing_cancellation_in_the_instant_of_a_cascade_still_propagates(
    autojump_clock: trio.testing.MockClock, recorder: Recorder, path: str
) -> None:
    """The application's scope is cancelled in the same instant as a cascade:
    every sibling is answered once, and the run still ends the way a cancelled
    trio call does (its siblings' tasks end normally, the application's
    cancellation is delivered again to the task that owns their nursery)."""
    outer = trio.CancelScope()

    @function_tool(name="Bash", concurrency_safe=True, cancels_siblings_on_error=True)
    async def bash(job: dict[str, Any], ctx: CallContext, progress: ProgressSender) -> object:
        await trio.sleep(1.0)
        outer.cancel()
        raise RuntimeError("exit 1")

    tools: list[Tool[Any]] = [GREP, bash]
    uses = [use("a", "Grep", sleep=5.0), use("b", "Grep", sleep=5.0), ToolUse("c", "Bash", {})]
    reached_the_end = False
    with outer:
        if path == "batch":
            await run_tools(uses, tools, observers=[recorder])
        else:
            async with open_streaming_executor(tools, observers=[recorder]) as executor:
                for tool_use in uses:
                    executor.add_tool(tool_use)
                async for _ in executor.remaining():
                    pass
        reached_the_end = True
    assert outer.cancelled_caught
    assert not reached_the_end
    assert trio.current_time() == 1.0
    for key in "abc":
        kinds = recorder.kinds(key)
        assert kinds.count("completed") + kinds.count("cancelled") == 1, (key, kinds)
    assert recorder.kinds("c")[-2:] == ["completed", "released"]


@function_tool(name="Fails", input_schema=SCRIPTED_INPUT_SCHEMA, concurrency_safe=True)
async def fails(job: dict[str, Any], ctx: CallContext, progress: ProgressSender) -> object:
    raise RuntimeError("exit 2")


@function_tool(name="Works", input_schema=SCRIPTED_INPUT_SCHEMA, concurrency_safe=True)
async def works(job: dict[str, Any], ctx: CallContext, progress: ProgressSender) -> object:
    return "built"


@pytest.mark.parametrize(
    ("tool", "event", "answer"),
    [
        (fails, "PostToolUseFailure", ToolResult("a", "exit 2", is_error=True)),
        (works, "PostToolUse", ToolResult("a", "built")),
    ],
)
async def test_a_call_aborted_while_its_post_hooks_run_keeps_its_tools_answer(
    autojump_clock: trio.testing.MockClock, tool: Tool[Any], event: HookEvent, answer: ToolResult
) -> None:
    async def slow(data: HookInput) -> None:
        await trio.sleep(100)

    guard = GuardRails(hooks=HookSet().with_python_hook(event, None, slow))
    turn = Turn()

    async def abort_later() -> None:
        await trio.sleep(1.0)
        turn.abort()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(abort_later)
        outcome = await run_tools([ToolUse("a", tool.name, {})], [tool], guard=guard, turn=turn)
    assert outcome.results == (answer,)
    assert trio.current_time() == 1.0  # the hooks were stopped, not waited for


@pytest.mark.parametrize(
    ("job", "desc"),
    [
        ({"command": "x" * 41}, "Bash(" + "x" * 40 + "…)"),
        ({"command": "y" * 40}, "Bash(" + "y" * 40 + ")"),
        ({"command": "é" * 45}, "Bash(" + "é" * 40 + "…)"),
        ({}, "Bash"),
        ({"command": "", "file_path": "", "pattern": ""}, "Bash"),
        ({"command": "", "file_path": "/tmp/f"}, "Bash(/tmp/f)"),
        ({"file_path": "a.py", "command": "make"}, "Bash(make)"),
        ({"pattern": "TODO", "file_path": "b.py"}, "Bash(b.py)"),
        ({"pattern": "TODO"}, "Bash(TODO)"),
        ({"output": "not a description key"}, "Bash"),
    ],
)
async def test_cascade_description_rule(
    autojump_clock: trio.testing.MockClock, job: dict[str, Any], desc: str
) -> None:
    results = await stream([(0.0, use("r", "Read", sleep=5.0)), (0.0, failing_bash("b", **job))])
    assert results["r"] == ToolResult("r", sibling(desc), is_error=True)


async def test_cascade_description_uses_the_name_the_model_sent(
    autojump_clock: trio.testing.MockClock,
) -> None:
    shell = use("s", "Shell", sleep=1.0, error="bad", safe=True, command="ls")
    results = await stream([(0.0, use("r", "Read", sleep=5.0)), (0.0, shell)])
    assert results["r"].content == sibling("Shell(ls)")


async def test_non_cascading_error_cancels_nothing(
    autojump_clock: trio.testing.MockClock,
) -> None:
    results = await stream(
        [
            (0.0, use("r", "Read", sleep=3.0)),
            (0.0, use("f", "Fetch", sleep=1.0, error="404")),
            (0.0, use("e", "Edit")),
            (2.0, use("later", "Read")),
        ]
    )
    assert results == {
        "r": ToolResult("r", "ok"),
        "f": ToolResult("f", "404", is_error=True),
        "e": ToolResult("e", "ok"),
        "later": ToolResult("later", "ok"),
    }


async def test_sibling_finishing_in_the_same_instant_keeps_its_real_result(
    autojump_clock: trio.testing.MockClock,
) -> None:
    # Several runs, so both scheduler orders of the two wake-ups are covered.
    for _ in range(8):
        results = await stream(
            [
                (0.0, use("before", "Read", sleep=1.0, output="B")),
                (0.0, failing_bash("b")),
                (0.0, use("after", "Grep", sleep=1.0, output="A")),
                (0.0, use("slow", "Read", sleep=1.5)),
            ]
        )
        assert results["before"] == ToolResult("before", "B")
        assert results["after"] == ToolResult("after", "A")
        assert results["slow"].content == sibling("Bash")


async def test_two_cascading_failures_in_one_instant_earlier_arrival_names_it(
    autojump_clock: trio.testing.MockClock,
) -> None:
    for first, second in (("one", "two"), ("two", "one")):
        for _ in range(4):
            results = await stream(
                [
                    (0.0, use("r", "Read", sleep=5.0)),
                    (0.0, failing_bash(first, command=first)),
                    (0.0, failing_bash(second, command=second)),
                    (1.5, use("late", "Grep")),
                ]
            )
            # Both failing calls keep their own results.
            assert results[first] == ToolResult(first, "exit 1", is_error=True)
            assert results[second] == ToolResult(second, "exit 1", is_error=True)
            assert results["r"].content == sibling(f"Bash({first})")
            assert results["late"].content == sibling(f"Bash({first})")


async def test_the_first_failure_in_time_names_the_description(
    autojump_clock: trio.testing.MockClock,
) -> None:
    results = await stream(
        [
            (0.0, use("r", "Read", sleep=5.0)),
            (0.0, failing_bash("early-arrival", sleep=2.0, command="slow")),
            (0.0, failing_bash("late-arrival", sleep=1.0, command="quick")),
        ]
    )
    assert results["r"].content == sibling("Bash(quick)")
    assert results["early-arrival"].content == sibling("Bash(quick)")
    assert results["late-arrival"].content == "exit 1"


async def test_same_instant_description_for_an_executing_sibling(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """A fails at t=1 after two shielded scheduling points, B fails at t=1 at once.

    Between the two, D (executing) handles its cancellation: its text must still
    name A, the earlier-arrived of the two failures of that instant.
    """
    results = await stream(
        [
            (0.0, use("A", "Late", command="one")),
            (0.0, failing_bash("B", command="two")),
            (0.0, use("D", "Read", sleep=5.0)),
        ]
    )
    assert results["A"] == ToolResult("A", "exit 1", is_error=True)
    assert results["B"] == ToolResult("B", "exit 1", is_error=True)
    assert results["D"].content == sibling("Late(one)")


async def test_same_instant_description_in_completion_order(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """Completion order releases a queued call's answer as soon as B's failure is seen."""
    results = await stream(
        [
            (0.0, use("A", "Late", command="one")),
            (0.0, failing_bash("B", command="two")),
            (0.0, use("C", "Edit")),
        ],
        result_order="completion",
    )
    assert results["A"] == ToolResult("A", "exit 1", is_error=True)
    assert results["C"].content == sibling("Late(one)")


async def test_sibling_error_text_is_settled_at_release(
    autojump_clock: trio.testing.MockClock, recorder: Recorder
) -> None:
    """The description may still change within the instant, so the cancelled event
    carries no text; the released event carries the final answer."""
    results = await stream(
        [
            (0.0, use("A", "Late", command="one")),
            (0.0, failing_bash("B", command="two")),
            (0.0, use("D", "Read", sleep=5.0)),
        ],
        recorder=recorder,
    )
    (cancelled,) = [e for e in recorder.of_kind("cancelled") if e.tool_use_id == "D"]
    assert cancelled.data is None
    (released,) = [e for e in recorder.of_kind("released") if e.tool_use_id == "D"]
    assert released.data == results["D"]


async def test_unknown_tool_cannot_cascade(autojump_clock: trio.testing.MockClock) -> None:
    results = await stream(
        [
            (0.0, use("r", "Read", sleep=2.0)),
            (1.0, use("x", "Bash2", command="ls")),
            (1.5, use("g", "Grep")),
        ]
    )
    assert results["r"] == ToolResult("r", "ok")
    assert results["g"] == ToolResult("g", "ok")
    assert results["x"].content == (
        "<tool_use_error>Error: No such tool available: Bash2</tool_use_error>"
    )


async def test_validation_error_of_a_cascading_tool_cascades(
    autojump_clock: trio.testing.MockClock,
) -> None:
    results = await stream(
        [(0.0, use("b", "Bash", command="ls", bogus=True)), (0.0, use("r", "Read"))]
    )
    assert isinstance(results["b"].content, str)
    assert results["b"].content.startswith("<tool_use_error>InputValidationError: Bash failed")
    assert results["r"] == ToolResult("r", sibling("Bash(ls)"), is_error=True)


async def test_a_synthetic_result_never_cascades(
    autojump_clock: trio.testing.MockClock,
) -> None:
    turn = Turn()
    async with open_streaming_executor(TOOLS, turn=turn) as executor:
        executor.add_tool(use("k", "Killable", sleep=5.0, command="watch"))
        executor.add_tool(use("g", "Grep", sleep=3.0))
        executor.add_tool(use("e", "Edit"))
        await trio.sleep(1.0)
        turn.interrupt()
        updates = [u async for u in executor.remaining()]
    results = {u.result.tool_use_id: u.result for u in results_of(updates)}
    assert results["k"] == ToolResult("k", REJECT, is_error=True)
    assert results["g"] == ToolResult("g", "ok")
    assert results["e"] == ToolResult("e", REJECT, is_error=True)


async def test_batch_sibling_error_reaches_later_batches(
    autojump_clock: trio.testing.MockClock, recorder: Recorder
) -> None:
    turn = Turn()
    uses = [
        use("a", "Read", sleep=5.0),
        failing_bash("b", command="cargo build"),
        use("c", "Grep", sleep=1.0),
        use("d", "Edit"),
        use("e", "Read"),
    ]
    outcome = await run_tools(uses, TOOLS, turn=turn, observers=[recorder])
    text = sibling("Bash(cargo build)")
    assert outcome.results == (
        ToolResult("a", text, is_error=True),
        ToolResult("b", "exit 1", is_error=True),
        ToolResult("c", "ok"),
        ToolResult("d", text, is_error=True),
        ToolResult("e", text, is_error=True),
    )
    assert trio.current_time() == 1.0
    assert recorder.kinds("d") == ["queued", "cancelled", "released"]
    # Never beyond that run: the next run_tools on the same turn is unaffected.
    again = await run_tools([use("x", "Edit")], TOOLS, turn=turn)
    assert again.results == (ToolResult("x", "ok"),)


async def test_batch_serial_cascading_failure_cancels_later_batches() -> None:
    uses = [use("b", "Bash", error="boom", command="rm -rf build"), use("r", "Read")]
    outcome = await run_tools(uses, TOOLS)
    assert outcome.results == (
        ToolResult("b", "boom", is_error=True),
        ToolResult("r", sibling("Bash(rm -rf build)"), is_error=True),
    )


async def test_cascade_in_one_run_spares_a_concurrent_run_of_the_same_turn(
    autojump_clock: trio.testing.MockClock,
) -> None:
    turn = Turn()
    other: list[ToolResult] = []

    async def second_run() -> None:
        outcome = await run_tools([use("y", "Read", sleep=3.0)], TOOLS, turn=turn)
        other.extend(outcome.results)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(second_run)
        results = await stream(
            [(0.0, use("x", "Read", sleep=3.0)), (0.0, failing_bash("b"))], turn=turn
        )
    assert results["x"].content == sibling("Bash")
    assert other == [ToolResult("y", "ok")]


# -- interrupt ----------------------------------------------------------------------------------


async def test_interrupt_streaming(
    autojump_clock: trio.testing.MockClock, recorder: Recorder
) -> None:
    turn = Turn()
    async with open_streaming_executor(TOOLS, turn=turn, observers=[recorder]) as executor:
        executor.add_tool(use("a", "Read", sleep=5.0))
        executor.add_tool(use("b", "Grep", sleep=3.0, output="B"))
        executor.add_tool(use("c", "Edit"))
        await trio.sleep(1.0)
        turn.interrupt()
        await trio.sleep(1.0)
        executor.add_tool(use("d", "Read"))
        updates = [u async for u in executor.remaining()]
    assert [u.result for u in results_of(updates)] == [
        ToolResult("a", REJECT, is_error=True),
        ToolResult("b", "B"),
        ToolResult("c", REJECT, is_error=True),
        ToolResult("d", REJECT, is_error=True),
    ]
    cancelled = {e.tool_use_id: (e.time, e.reason) for e in recorder.of_kind("cancelled")}
    # Calls that can no longer start are answered at once: c at the interrupt,
    # d when it arrives; their answers are released in arrival order after b.
    assert cancelled == {
        "a": (1.0, "user_interrupted"),
        "c": (1.0, "user_interrupted"),
        "d": (2.0, "user_interrupted"),
    }
    assert recorder.times("released") == {"a": 1.0, "b": 3.0, "c": 3.0, "d": 3.0}
    assert recorder.times("completed") == {"b": 3.0}
    assert "started" not in recorder.kinds("c")
    assert trio.current_time() == 3.0


async def test_block_call_started_in_the_interrupt_instant_keeps_its_result(
    autojump_clock: trio.testing.MockClock, recorder: Recorder
) -> None:
    turn = Turn()
    async with open_streaming_executor(TOOLS, turn=turn, observers=[recorder]) as executor:
        executor.add_tool(use("g", "Grep", sleep=1.0, output="G"))
        executor.add_tool(use("r", "Read", sleep=1.0))
        assert executor.in_progress_ids == {"g", "r"}
        turn.interrupt()  # before either call's task has run
        updates = [u async for u in executor.remaining()]
    assert [u.result for u in results_of(updates)] == [
        ToolResult("g", "G"),
        ToolResult("r", REJECT, is_error=True),
    ]
    assert recorder.times("cancelled") == {"r": 0.0}


async def test_interrupt_before_any_call_starts_nothing(
    autojump_clock: trio.testing.MockClock,
) -> None:
    turn = Turn()
    turn.interrupt()
    results = await stream([(0.0, use("a", "Grep")), (0.0, use("b", "Edit"))], turn=turn)
    assert results == {
        "a": ToolResult("a", REJECT, is_error=True),
        "b": ToolResult("b", REJECT, is_error=True),
    }
    outcome = await run_tools([use("x", "Grep")], TOOLS, turn=turn)
    assert outcome.results == (ToolResult("x", NOT_NOW, is_error=True),)


async def test_interrupt_batch(autojump_clock: trio.testing.MockClock, recorder: Recorder) -> None:
    turn = Turn()
    uses = [
        use("a", "Read", sleep=5.0),
        use("b", "Grep", sleep=3.0, output="B"),
        use("c", "Edit"),
        use("d", "Read"),
    ]
    async with trio.open_nursery() as nursery:
        nursery.start_soon(_interrupt_at, turn, 1.0)
        outcome = await run_tools(uses, TOOLS, turn=turn, observers=[recorder])
    assert outcome.results == (
        ToolResult("a", REJECT, is_error=True),
        ToolResult("b", "B"),
        ToolResult("c", NOT_NOW, is_error=True),
        ToolResult("d", NOT_NOW, is_error=True),
    )
    assert trio.current_time() == 3.0
    assert {e.reason for e in recorder.of_kind("cancelled")} == {"user_interrupted"}


async def test_interrupt_batch_with_calls_waiting_for_a_slot(
    autojump_clock: trio.testing.MockClock,
) -> None:
    turn = Turn()
    uses = [use(f"g{i}", "Grep", sleep=2.0) for i in range(4)]
    async with trio.open_nursery() as nursery:
        nursery.start_soon(_interrupt_at, turn, 1.0)
        outcome = await run_tools(uses, TOOLS, turn=turn, max_concurrency=2)
    assert outcome.results == (
        ToolResult("g0", "ok"),
        ToolResult("g1", "ok"),
        ToolResult("g2", NOT_NOW, is_error=True),
        ToolResult("g3", NOT_NOW, is_error=True),
    )


async def _interrupt_at(turn: Turn, at: float, *, abort: bool = False) -> None:
    await trio.sleep(at - trio.current_time())
    if abort:
        turn.abort()
    else:
        turn.interrupt()


async def test_interruptible_state_is_reported(
    autojump_clock: trio.testing.MockClock, recorder: Recorder
) -> None:
    seen: list[bool] = []
    async with open_streaming_executor(TOOLS, observers=[recorder]) as executor:
        seen.append(executor.interruptible)
        executor.add_tool(use("c1", "Read", sleep=2.0))
        seen.append(executor.interruptible)
        await trio.sleep(1.0)
        executor.add_tool(use("b1", "Grep", sleep=2.0))
        seen.append(executor.interruptible)
        await trio.sleep(2.5)
        seen.append(executor.interruptible)
        executor.add_tool(use("c2", "Read", sleep=1.0))
        seen.append(executor.interruptible)
    seen.append(executor.interruptible)
    assert seen == [False, True, False, False, True, False]
    assert recorder.interruptible == [
        (0.0, True),
        (1.0, False),
        (3.5, True),
        (4.5, False),
    ]


# -- abort --------------------------------------------------------------------------------------


async def test_abort_streaming_cancels_block_tools_too(
    autojump_clock: trio.testing.MockClock, recorder: Recorder
) -> None:
    turn = Turn()
    with assert_no_new_tasks():
        async with open_streaming_executor(TOOLS, turn=turn, observers=[recorder]) as executor:
            executor.add_tool(use("a", "Read", sleep=5.0))
            executor.add_tool(use("b", "Grep", sleep=5.0))
            executor.add_tool(use("c", "Edit"))
            await trio.sleep(1.0)
            turn.abort()
            executor.add_tool(use("d", "Read"))
            updates = [u async for u in executor.remaining()]
    assert [u.result for u in results_of(updates)] == [
        ToolResult(key, REJECT, is_error=True) for key in "abcd"
    ]
    assert trio.current_time() == 1.0
    assert {e.reason for e in recorder.of_kind("cancelled")} == {"user_interrupted"}
    assert turn.aborted
    assert turn.interrupted


async def test_abort_batch(autojump_clock: trio.testing.MockClock) -> None:
    turn = Turn()
    uses = [use("a", "Read", sleep=5.0), use("b", "Grep", sleep=5.0), use("c", "Edit")]
    with assert_no_new_tasks():
        async with trio.open_nursery() as nursery:
            nursery.start_soon(lambda: _interrupt_at(turn, 1.0, abort=True))
            outcome = await run_tools(uses, TOOLS, turn=turn)
    assert outcome.results == (
        ToolResult("a", REJECT, is_error=True),
        ToolResult("b", REJECT, is_error=True),
        ToolResult("c", NOT_NOW, is_error=True),
    )
    assert trio.current_time() == 1.0


async def test_already_aborted_turn_runs_nothing(recorder: Recorder) -> None:
    turn = Turn()
    turn.abort()
    outcome = await run_tools([use("a", "Grep"), use("b", "Edit")], TOOLS, turn=turn)
    assert outcome.results == (
        ToolResult("a", NOT_NOW, is_error=True),
        ToolResult("b", NOT_NOW, is_error=True),
    )
    results = await stream([(0.0, use("s", "Grep"))], turn=turn, recorder=recorder)
    assert results == {"s": ToolResult("s", REJECT, is_error=True)}
    assert "call_began" not in recorder.kinds("s")


async def test_abort_of_one_turn_spares_another(autojump_clock: trio.testing.MockClock) -> None:
    doomed, spared = Turn(), Turn()
    other: list[ToolResult] = []

    async def spared_run() -> None:
        outcome = await run_tools([use("y", "Grep", sleep=3.0)], TOOLS, turn=spared)
        other.extend(outcome.results)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(spared_run)
        nursery.start_soon(lambda: _interrupt_at(doomed, 1.0, abort=True))
        results = await stream([(0.0, use("x", "Grep", sleep=3.0))], turn=doomed)
    assert results["x"].content == REJECT
    assert other == [ToolResult("y", "ok")]


# -- discard ------------------------------------------------------------------------------------


async def test_discard_mid_flight_releases_nothing_more(
    autojump_clock: trio.testing.MockClock, recorder: Recorder
) -> None:
    with assert_no_new_tasks():
        async with open_streaming_executor(TOOLS, observers=[recorder]) as executor:
            executor.add_tool(use("first", "Grep", sleep=0.25))
            executor.add_tool(use("slow", "Grep", steps=[{"sleep": 2.0, "progress": "late"}]))
            executor.add_tool(use("fast", "Read", steps=[{"sleep": 0.5, "progress": "early"}]))
            await trio.sleep(1.0)
            before = executor.drain_nowait()
            executor.discard()
            await trio.testing.wait_all_tasks_blocked()
            executor.add_tool(use("after", "Read", sleep=1.0))
            rest: list[Update] = [u async for u in executor.remaining()]
            assert executor.drain_nowait() == []
            assert trio.current_time() == 1.0
    assert trio.current_time() == 1.0
    assert [r.result.tool_use_id for r in results_of(before)] == ["first"]
    assert rest == []
    cancelled = {e.tool_use_id: (e.time, e.reason) for e in recorder.of_kind("cancelled")}
    assert cancelled == {
        "slow": (1.0, "streaming_fallback"),
        "after": (1.0, "streaming_fallback"),
    }
    # "fast" completed before the discard and keeps its state, but is never released.
    assert recorder.kinds("fast")[-1] == "completed"
    assert [e.tool_use_id for e in recorder.of_kind("released")] == ["first"]
    assert recorder.kinds("after") == ["queued", "cancelled"]
    assert not any(e.kind == "progress" and e.data == "late" for e in recorder.events)


async def test_discard_cancels_executing_calls_promptly(
    autojump_clock: trio.testing.MockClock,
) -> None:
    before_tasks = set[trio.lowlevel.Task]()
    async with open_streaming_executor(TOOLS) as executor:
        for index in range(5):
            executor.add_tool(use(f"g{index}", "Grep", sleep=100.0))
        await trio.sleep(1.0)
        before_tasks = live_tasks()
        executor.discard()
        await trio.lowlevel.checkpoint()
        await trio.testing.wait_all_tasks_blocked()
        assert trio.current_time() == 1.0
        assert executor.drain_nowait() == []
        # Only the executor's own host task may remain; the five calls are gone.
        assert len(before_tasks - live_tasks()) >= 5
    assert trio.current_time() == 1.0


async def test_discard_then_a_fresh_executor_retries_cleanly(
    autojump_clock: trio.testing.MockClock,
) -> None:
    turn = Turn()
    async with open_streaming_executor(TOOLS, turn=turn) as executor:
        executor.add_tool(use("t1", "Read", sleep=5.0))
        await trio.sleep(1.0)
        executor.discard()
    retry = await stream([(0.0, use("t1", "Read", sleep=1.0, output="retried"))], turn=turn)
    assert retry == {"t1": ToolResult("t1", "retried")}


async def test_discard_forgets_a_finished_call_the_gate_was_holding(
    autojump_clock: trio.testing.MockClock,
) -> None:
    turn = Turn()
    async with open_streaming_executor(TOOLS, turn=turn) as executor:
        executor.add_tool(use("slow", "Grep", sleep=100.0))
        executor.add_tool(use("held", "Read", sleep=0.5))  # finished, held behind "slow"
        await trio.sleep(1.0)
        assert executor.in_progress_ids == {"slow", "held"}
        executor.discard()
        # Nothing of the abandoned attempt is ever released: "held" is not in progress.
        assert "held" not in executor.in_progress_ids
        assert "held" not in turn.in_progress_ids
        async with open_streaming_executor(TOOLS, turn=turn) as retry:
            retry.add_tool(use("held", "Read", sleep=1.0))
            await trio.sleep(0.5)
            # While the retry runs, its id is the retry's, once.
            assert turn.in_progress_ids == {"held"}
            assert retry.in_progress_ids == {"held"}
        assert executor.in_progress_ids == frozenset()
    assert turn.in_progress_ids == frozenset()


async def test_discard_with_nothing_executing(recorder: Recorder) -> None:
    async with open_streaming_executor(TOOLS, observers=[recorder]) as executor:
        executor.discard()
        executor.add_tool(use("x", "Read"))
        executor.add_tool(use("y", "Nope"))
        assert [u async for u in executor.remaining()] == []
    assert recorder.kinds("x") == ["queued", "cancelled"]
    assert recorder.kinds("y") == ["queued", "cancelled"]
    assert all(isinstance(u, ResultUpdate) for u in executor.drain_nowait())


async def test_discard_cancels_queued_calls_in_events(
    autojump_clock: trio.testing.MockClock, recorder: Recorder
) -> None:
    async with open_streaming_executor(TOOLS, observers=[recorder]) as executor:
        executor.add_tool(use("e1", "Edit", sleep=2.0))
        executor.add_tool(use("e2", "Edit", sleep=2.0))
        executor.add_tool(use("r3", "Read", sleep=2.0))
        await trio.sleep(1.0)
        executor.discard()
        assert [u async for u in executor.remaining()] == []
    for key in ("e2", "r3"):
        assert recorder.kinds(key) == ["queued", "cancelled"], key
    cancelled = {e.tool_use_id: (e.time, e.reason) for e in recorder.of_kind("cancelled")}
    assert cancelled == {
        "e1": (1.0, "streaming_fallback"),
        "e2": (1.0, "streaming_fallback"),
        "r3": (1.0, "streaming_fallback"),
    }


# -- a tool that ignores cancellation -----------------------------------------------------------


async def test_call_ignoring_cancellation_is_answered_after_the_grace_period(
    autojump_clock: trio.testing.MockClock,
    recorder: Recorder,
    caplog: pytest.LogCaptureFixture,
) -> None:
    turn = Turn()
    seen: list[tuple[float, str]] = []
    with assert_no_new_tasks():
        async with open_streaming_executor(
            [*TOOLS, stubborn], turn=turn, observers=[recorder], grace_period=2.0
        ) as executor:
            executor.add_tool(use("s", "Stubborn", sleep=100.0))
            executor.add_tool(use("g", "Grep", sleep=50.0))
            await trio.sleep(1.0)
            turn.abort()
            async for update in executor.remaining():
                assert isinstance(update, ResultUpdate)
                seen.append((trio.current_time(), update.result.content))  # type: ignore[arg-type]
        # The stubborn task is still awaited: nothing outlives the block.
        assert trio.current_time() == 100.0
    assert seen == [(3.0, REJECT), (3.0, REJECT)]
    assert recorder.times("cancelled") == {"g": 1.0, "s": 3.0}
    assert recorder.times("call_ended")["s"] == 100.0
    assert any("ignored cancellation" in r.getMessage() for r in caplog.records)


async def test_a_call_ignoring_the_applications_cancellation_is_answered_after_the_grace(
    autojump_clock: trio.testing.MockClock, recorder: Recorder
) -> None:
    # The application's own scope stops the run at t = 1: the watch that
    # answers the stubborn call at 1 + 2 is not stopped by that cancellation,
    # and the run still waits for the stubborn task (it ends at t = 100).
    with assert_no_new_tasks():
        with trio.move_on_after(1.0) as scope:
            async with open_streaming_executor(
                [*TOOLS, stubborn], observers=[recorder], grace_period=2.0
            ) as executor:
                executor.add_tool(use("s", "Stubborn", sleep=100.0))
                async for _ in executor.remaining():
                    pass
        assert scope.cancelled_caught
        assert trio.current_time() == 100.0
    assert recorder.times("cancelled") == {"s": 3.0}
    assert recorder.of_kind("cancelled")[0].reason == "cancelled"
    assert recorder.times("call_ended")["s"] == 100.0


async def test_a_batch_call_ignoring_the_applications_cancellation_is_answered_after_the_grace(
    autojump_clock: trio.testing.MockClock, recorder: Recorder
) -> None:
    # The cooperative sibling sees the enclosing scope's cancellation (t = 1)
    # and stops at once; the stubborn call is answered 2 s later.
    with trio.move_on_after(1.0) as scope:
        await run_tools(
            [use("s", "Stubborn", sleep=100.0), use("g", "Grep", sleep=50.0)],
            [*TOOLS, stubborn],
            observers=[recorder],
            grace_period=2.0,
        )
    assert scope.cancelled_caught
    assert recorder.times("cancelled") == {"g": 1.0, "s": 3.0}
    assert recorder.times("call_ended")["s"] == 100.0


async def test_batch_call_ignoring_cancellation_is_answered_on_updates(
    autojump_clock: trio.testing.MockClock,
) -> None:
    turn = Turn()
    send, receive = trio.open_memory_channel[Update](math.inf)
    released: list[tuple[float, str]] = []

    async def watch() -> None:
        released.extend(
            [
                (trio.current_time(), update.result.tool_use_id)
                async for update in receive
                if isinstance(update, ResultUpdate)
            ]
        )

    async with trio.open_nursery() as nursery:
        nursery.start_soon(watch)
        nursery.start_soon(_interrupt_at, turn, 1.0)
        outcome = await run_tools(
            [use("s", "Stubborn", sleep=100.0), use("g", "Grep"), use("e", "Edit")],
            [*TOOLS, stubborn],
            turn=turn,
            updates=send,
            grace_period=2.0,
        )
        send.close()
    assert outcome.results == (
        ToolResult("s", REJECT, is_error=True),
        ToolResult("g", "ok"),
        ToolResult("e", NOT_NOW, is_error=True),
    )
    # Released at the end of the grace period, long before the stubborn task ends.
    assert released == [(3.0, "s"), (3.0, "g"), (3.0, "e")]
    assert trio.current_time() == 100.0
