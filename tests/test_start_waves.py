"""How a wide turn starts: in waves of ``START_WAVE`` call tasks, in tool_use order.

Between two waves the starting side (``run_tools``' task starting the batch, the
streaming executor's starter task) passes a schedule point, never a cancel
point, so the calls started so far take their first steps before more start.
Whatever stops the run while a batch is starting, every call is still answered
exactly once, and a call never started is answered as a started one would be.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
import trio
import trio.testing
from helpers import (
    Recorder,
    assert_no_new_tasks,
    drain,
    live_tasks,
    make_tool,
    results_of,
    use,
)

from trioexec import (
    CallContext,
    ProgressSender,
    ToolResult,
    Turn,
    Update,
    function_tool,
    open_streaming_executor,
    run_tools,
)
from trioexec._core._concurrency import START_WAVE
from trioexec.testing import SCRIPTED_INPUT_SCHEMA

pytestmark = pytest.mark.usefixtures("claude_code_texts")  # mechanisms, in CC's words

READ = make_tool("Read")
BASH = make_tool("Bash", safe="input", cascades=True)


def sibling(desc: str) -> str:
    return f"<tool_use_error>Cancelled: parallel tool call {desc} errored</tool_use_error>"


CANCELLED = (
    "The user doesn't want to take this action right now. "
    "STOP what you are doing and wait for the user to tell you how to proceed."
)


def reads(count: int, *, first: int = 1, **job: Any) -> list[Any]:
    return [use(f"r{i}", "Read", **job) for i in range(first, first + count)]


def in_progress_probe(turn: Turn, seen: list[int]) -> Any:
    """A safe tool that records how many calls of ``turn`` are in progress as it runs."""

    @function_tool(name="Probe", input_schema=SCRIPTED_INPUT_SCHEMA, concurrency_safe=True)
    async def probe(job: dict[str, Any], ctx: CallContext, progress: ProgressSender) -> object:
        seen.append(len(turn.in_progress_ids))
        return "ok"

    return probe


def test_a_wave_is_more_than_one_call_and_small_enough_to_matter() -> None:
    assert 1 < START_WAVE <= 256


async def test_a_batch_wider_than_a_wave_starts_in_tool_use_order_and_answers_in_order(
    autojump_clock: trio.testing.MockClock, recorder: Recorder
) -> None:
    uses = reads(3 * START_WAVE + 5, first=0, sleep=1.0)
    outcome = await run_tools(uses, [READ], max_concurrency=len(uses), observers=[recorder])
    order = [u.id for u in uses]
    assert [e.tool_use_id for e in recorder.of_kind("started")] == order
    assert [r.tool_use_id for r in outcome.results] == order
    assert all(r == ToolResult(r.tool_use_id, "ok") for r in outcome.results)
    assert trio.current_time() == 1.0  # all of them ran side by side: waves take no time


async def test_calls_of_a_wave_take_their_first_step_before_two_more_waves_have_started() -> None:
    turn = Turn()
    seen: list[int] = []

    probe = in_progress_probe(turn, seen)
    count = 4 * START_WAVE
    uses = [use(f"p{i}", "Probe") for i in range(count)]
    outcome = await run_tools(uses, [probe], turn=turn, max_concurrency=count)
    assert len(outcome.results) == count
    assert len(seen) == count
    # Started all at once, the first call would see every call in progress.  In
    # waves it sees its own wave and at most the next (trio may run the
    # starting task before the wave it has just started).
    assert max(seen) <= 2 * START_WAVE


async def test_the_limited_path_starts_in_waves_too(autojump_clock: trio.testing.MockClock) -> None:
    turn = Turn()
    seen: list[int] = []

    probe = in_progress_probe(turn, seen)
    count = 6 * START_WAVE
    uses = [use(f"p{i}", "Probe") for i in range(count)]
    outcome = await run_tools(uses, [probe], turn=turn, max_concurrency=4 * START_WAVE)
    assert [r.tool_use_id for r in outcome.results] == [u.id for u in uses]
    assert max(seen) <= 2 * START_WAVE


async def test_a_cascade_in_the_first_wave_answers_the_calls_never_started_like_the_started(
    autojump_clock: trio.testing.MockClock, recorder: Recorder
) -> None:
    failing = use("b", "Bash", error="exit 1", safe=True, command="npm test")
    uses = [failing, *reads(3 * START_WAVE, sleep=5.0)]
    with assert_no_new_tasks():
        outcome = await run_tools(
            uses, [READ, BASH], max_concurrency=len(uses), observers=[recorder]
        )
    assert trio.current_time() == 0.0  # no sibling waited out its 5 s
    assert [r.tool_use_id for r in outcome.results] == [u.id for u in uses]
    assert outcome.results[0] == ToolResult("b", "exit 1", is_error=True)
    text = sibling("Bash(npm test)")
    assert all(r == ToolResult(r.tool_use_id, text, is_error=True) for r in outcome.results[1:])
    started = [e.tool_use_id for e in recorder.of_kind("started")]
    assert started == [u.id for u in uses[: len(started)]]  # a prefix, in tool_use order
    assert len(started) < len(uses)  # the last waves never started
    never = uses[len(started)].id
    assert recorder.kinds(never) == ["queued", "cancelled", "released"]


async def test_an_interrupt_while_a_wide_batch_starts_leaves_the_rest_unstarted_and_answered(
    autojump_clock: trio.testing.MockClock, recorder: Recorder
) -> None:
    turn = Turn()

    @function_tool(name="Stop", input_schema=SCRIPTED_INPUT_SCHEMA, concurrency_safe=True)
    async def stop(job: dict[str, Any], ctx: CallContext, progress: ProgressSender) -> object:
        turn.interrupt()
        return "stopped it"

    uses = [use("s", "Stop"), *reads(3 * START_WAVE, sleep=1.0)]
    outcome = await run_tools(
        uses, [READ, stop], turn=turn, max_concurrency=len(uses), observers=[recorder]
    )
    assert [r.tool_use_id for r in outcome.results] == [u.id for u in uses]
    assert outcome.results[0] == ToolResult("s", "stopped it")
    started = {e.tool_use_id for e in recorder.of_kind("started")}
    unstarted = [r for r in outcome.results if r.tool_use_id not in started]
    assert unstarted  # the interrupt came before the last waves started
    for result in unstarted:
        assert result.is_error
        assert result.content == CANCELLED
    # A started Read is not interruptible ("block"): it runs to its answer.
    assert all(r.content == "ok" for r in outcome.results[1:] if r.tool_use_id in started)


class Fatal(BaseException):
    """Not an Exception: a tool raising it is a bug, and it must propagate."""


@function_tool(name="Fatal", input_schema=SCRIPTED_INPUT_SCHEMA, concurrency_safe=True)
async def fatal(job: dict[str, Any], ctx: CallContext, progress: ProgressSender) -> object:
    raise Fatal("boom")


async def test_a_tool_raising_a_base_exception_in_the_first_wave_propagates_and_all_are_answered(
    autojump_clock: trio.testing.MockClock,
) -> None:
    send, receive = trio.open_memory_channel[Update](math.inf)
    uses = [use("f", "Fatal"), *reads(3 * START_WAVE, sleep=5.0)]
    with (
        assert_no_new_tasks(),
        pytest.RaisesGroup(Fatal, allow_unwrapped=True, flatten_subgroups=True),
    ):
        await run_tools(uses, [READ, fatal], max_concurrency=len(uses), updates=send)
    assert trio.current_time() == 0.0
    answered = [u.result for u in results_of(drain(receive))]
    assert [r.tool_use_id for r in answered] == [u.id for u in uses]
    assert all(r.is_error for r in answered)


async def test_cancelled_from_outside_while_a_wide_batch_starts_every_call_is_answered(
    autojump_clock: trio.testing.MockClock,
) -> None:
    send, receive = trio.open_memory_channel[Update](math.inf)

    with trio.CancelScope() as outer:

        @function_tool(name="Cancel", input_schema=SCRIPTED_INPUT_SCHEMA, concurrency_safe=True)
        async def cancel(job: dict[str, Any], ctx: CallContext, progress: ProgressSender) -> object:
            outer.cancel()
            return "cancelled the application's scope"

        uses = [use("c", "Cancel"), *reads(3 * START_WAVE, sleep=5.0)]
        with assert_no_new_tasks():
            await run_tools(uses, [READ, cancel], max_concurrency=len(uses), updates=send)
    assert outer.cancelled_caught
    assert trio.current_time() == 0.0
    answered = [u.result.tool_use_id for u in results_of(drain(receive))]
    assert answered == [u.id for u in uses]


# -- the streaming executor ---------------------------------------------------------------------

CALL_TASK = "trioexec.StreamingExecutor: tool call"


def call_tasks() -> int:
    return sum(1 for task in live_tasks() if task.name == CALL_TASK)


async def test_a_wide_burst_added_at_once_is_answered_in_order_and_its_tasks_start_in_waves(
    autojump_clock: trio.testing.MockClock, recorder: Recorder
) -> None:
    tasks_seen: list[int] = []

    @function_tool(name="Probe", input_schema=SCRIPTED_INPUT_SCHEMA, concurrency_safe=True)
    async def probe(job: dict[str, Any], ctx: CallContext, progress: ProgressSender) -> object:
        tasks_seen.append(call_tasks())
        await trio.sleep(1.0)
        return "ok"

    count = 4 * START_WAVE + 5
    uses = [use(f"p{i}", "Probe") for i in range(count)]
    with assert_no_new_tasks():
        async with open_streaming_executor(
            [probe], max_concurrency=count, observers=[recorder]
        ) as executor:
            for tool_use in uses:
                executor.add_tool(tool_use)
            updates = [u async for u in executor.remaining()]
    order = [u.id for u in uses]
    assert [r.result.tool_use_id for r in results_of(updates)] == order
    assert all(r.result.content == "ok" for r in results_of(updates))
    assert [e.tool_use_id for e in recorder.of_kind("started")] == order
    assert trio.current_time() == 1.0  # every call ran side by side
    assert len(tasks_seen) == count
    # A first step sees the tasks of its wave and at most one wave more (the
    # first call runs in the executor's own task, not as a call task).
    assert min(tasks_seen) <= 2 * START_WAVE


async def test_calls_added_one_by_one_past_a_wave_still_start_in_order(
    autojump_clock: trio.testing.MockClock, recorder: Recorder
) -> None:
    count = 2 * START_WAVE + 3
    uses = reads(count, first=0, sleep=1.0)
    async with open_streaming_executor([READ], max_concurrency=count, observers=[recorder]) as ex:
        for tool_use in uses:
            ex.add_tool(tool_use)
            await trio.lowlevel.checkpoint()  # as blocks arrive from a stream
        updates = [u async for u in ex.remaining()]
    order = [u.id for u in uses]
    assert [r.result.tool_use_id for r in results_of(updates)] == order
    assert [e.tool_use_id for e in recorder.of_kind("started")] == order
    assert trio.current_time() == 1.0


async def test_a_cascade_while_a_burst_starts_answers_every_call_once_in_order(
    autojump_clock: trio.testing.MockClock,
) -> None:
    uses = [use("b", "Bash", error="exit 1", safe=True, command="npm test")]
    uses += reads(4 * START_WAVE, sleep=5.0)
    with assert_no_new_tasks():
        async with open_streaming_executor([READ, BASH], max_concurrency=len(uses)) as executor:
            for tool_use in uses:
                executor.add_tool(tool_use)
            updates = [u async for u in executor.remaining()]
    results = [u.result for u in results_of(updates)]
    assert [r.tool_use_id for r in results] == [u.id for u in uses]
    assert results[0] == ToolResult("b", "exit 1", is_error=True)
    text = sibling("Bash(npm test)")
    assert all(r == ToolResult(r.tool_use_id, text, is_error=True) for r in results[1:])
    assert trio.current_time() == 0.0


async def test_a_discard_while_a_burst_waits_for_its_tasks_leaves_no_task_and_releases_nothing(
    autojump_clock: trio.testing.MockClock, recorder: Recorder
) -> None:
    uses = reads(4 * START_WAVE, sleep=5.0)
    with assert_no_new_tasks():
        async with open_streaming_executor(
            [READ], max_concurrency=len(uses), observers=[recorder]
        ) as executor:
            for tool_use in uses:
                executor.add_tool(tool_use)
            await trio.lowlevel.checkpoint()  # the first waves start; the rest wait
            executor.discard()
            rest = [u async for u in executor.remaining()]
    assert rest == []
    assert trio.current_time() == 0.0
    cancelled = {e.tool_use_id: e.reason for e in recorder.of_kind("cancelled")}
    assert cancelled == {u.id: "streaming_fallback" for u in uses}
    assert recorder.of_kind("released") == []
