"""The sibling scope is the calls' nursery's own scope, and a run needs no nursery of its own.

What must hold however the scopes are laid out: a stop asked before the calls'
nursery opens reaches the calls started meanwhile; the application's own
cancellation is told apart from the run's own stops whoever sees it first;
the grace watchdog still answers a call that ignores its cancellation
when the run has no nursery but its batch's.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
import trio
import trio.testing
from helpers import REJECT, Recorder, assert_no_new_tasks, make_tool, results_of, stubborn, use

from trioexec import (
    CallContext,
    ProgressSender,
    Turn,
    Update,
    function_tool,
    open_streaming_executor,
    run_tools,
)
from trioexec.testing import SCRIPTED_INPUT_SCHEMA

pytestmark = pytest.mark.usefixtures("claude_code_texts")  # mechanisms, in CC's words

GREP = make_tool("Grep")


@function_tool(name="Sleeper", input_schema=SCRIPTED_INPUT_SCHEMA, concurrency_safe=True)
async def sleeper(job: dict[str, Any], ctx: CallContext, progress: ProgressSender) -> object:
    """Sleeps ``sleep`` seconds; records how its body ended."""
    try:
        await trio.sleep(job.get("sleep", 0.0))
    except trio.Cancelled:
        ENDINGS.append((ctx.tool_use.id, "cancelled", trio.current_time()))
        raise
    ENDINGS.append((ctx.tool_use.id, "finished", trio.current_time()))
    return "slept"


ENDINGS: list[tuple[str, str, float]] = []


async def test_a_discard_before_the_host_ran_stops_the_calls_it_had_started(
    autojump_clock: trio.testing.MockClock,
) -> None:
    # Both calls start at add_tool; the discard comes in the same step, before
    # the executor's host has opened the calls' nursery: the stop carries over
    # to that nursery's scope, so neither call runs its 100 s.
    ENDINGS.clear()
    with assert_no_new_tasks():
        async with open_streaming_executor([sleeper]) as executor:
            executor.add_tool(use("a", "Sleeper", sleep=100.0))
            executor.add_tool(use("b", "Sleeper", sleep=100.0))
            assert executor.in_progress_ids == {"a", "b"}
            executor.discard()
            assert [u async for u in executor.remaining()] == []
    # (Stopped before their tool's body: the last step before it is a cancellation check.)
    assert not [ending for ending in ENDINGS if ending[1] == "finished"]
    assert trio.current_time() == 0.0


async def test_the_applications_cancellation_reads_as_the_applications_on_every_call(
    autojump_clock: trio.testing.MockClock,
) -> None:
    # trio also cancels a nursery's scope (now the sibling scope) when its body
    # or a child raises: whoever sees the enclosing scope's cancellation first
    # (a call, the host waiting for more input, the block), every call reads it
    # as the application's.  Repeated: trio varies the order of woken tasks.
    for attempt in range(24):
        recorder = Recorder()
        with trio.move_on_after(1.0) as scope:
            async with open_streaming_executor(
                [GREP], observers=[recorder], synthetic_texts="trioexec"
            ) as executor:
                for index in range(3):
                    executor.add_tool(use(f"s{index}", "Grep", sleep=50.0))
                # The response is still streaming: the host waits for more input,
                # in the calls' nursery, when the enclosing scope is cancelled.
                await trio.sleep(10.0)
        assert scope.cancelled_caught, attempt
        cancelled = recorder.of_kind("cancelled")
        assert [event.reason for event in cancelled] == ["cancelled"] * 3, attempt
        assert {event.detail for event in cancelled} == {"deadline cancellation"}, attempt

        recorder = Recorder()
        with trio.move_on_after(1.0) as scope:
            outcome = await run_tools(
                [use(f"b{index}", "Grep", sleep=50.0) for index in range(3)],
                [GREP],
                observers=[recorder],
                synthetic_texts="trioexec",
            )
            raise AssertionError(f"run_tools returned {outcome!r}")  # pragma: no cover
        assert scope.cancelled_caught, attempt
        cancelled = recorder.of_kind("cancelled")
        assert [event.reason for event in cancelled] == ["cancelled"] * 3, attempt


async def test_a_lone_batch_call_ignoring_an_abort_is_answered_after_its_grace(
    autojump_clock: trio.testing.MockClock, recorder: Recorder
) -> None:
    # A one-call run_tools turn has no nursery of its own: the batch's nursery,
    # whose body runs the call, hosts the grace watchdog.  The answer goes out
    # at 1 + 2 s while the call still runs; the run waits for it to end.
    turn = Turn()
    send, receive = trio.open_memory_channel[Update](math.inf)

    async def abort_at_one() -> None:
        await trio.sleep(1.0)
        turn.abort()

    with assert_no_new_tasks():
        async with trio.open_nursery() as nursery:
            nursery.start_soon(abort_at_one)
            outcome = await run_tools(
                [use("s", "Stubborn", sleep=100.0)],
                [stubborn],
                turn=turn,
                observers=[recorder],
                grace_period=2.0,
                updates=send,
            )
        assert trio.current_time() == 100.0
    released = results_of([receive.receive_nowait()])
    assert released == list(outcome.updates)
    assert released[0].result.content == REJECT
    assert recorder.times("cancelled") == {"s": 3.0}
    assert recorder.times("call_ended")["s"] == 100.0
