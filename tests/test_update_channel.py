"""The streaming executor's update channel: bursts, checkpoints, cancellation, closing."""

from __future__ import annotations

import pytest
import trio
import trio.testing
from helpers import make_tool, use

from trioexec import ProgressUpdate, ResultUpdate, ToolResult, open_streaming_executor
from trioexec._core._update_channel import open_update_channel
from trioexec.lowlevel import UpdateReceiveChannel

TOOLS = [make_tool("Read")]


def result(tool_use_id: str) -> ResultUpdate:
    return ResultUpdate(ToolResult(tool_use_id, "ok"))


async def test_iteration_hands_over_a_burst_without_a_schedule_point() -> None:
    queue, channel = open_update_channel()
    log: list[str] = []

    async def other_task() -> None:
        log.append("other ran")
        queue.send_nowait(result("d"))
        queue.close()

    for name in "abc":
        queue.send_nowait(result(name))
    async with trio.open_nursery() as nursery:
        nursery.start_soon(other_task)
        async for update in channel:
            assert isinstance(update, ResultUpdate)
            log.append(update.result.tool_use_id)
    # The burst a, b, c is handed over before any other task runs; then the
    # iteration waits (a schedule point) and gets what the other task sent.
    assert log == ["a", "b", "c", "other ran", "d"]


class StepCounter(trio.abc.Instrument):
    """Counts the scheduler steps one task takes (each schedule point ends a step)."""

    def __init__(self, task: trio.lowlevel.Task) -> None:
        self.task = task
        self.steps = 0

    def before_task_step(self, task: trio.lowlevel.Task) -> None:
        if task is self.task:
            self.steps += 1


async def steps_taken_to_receive(how: str) -> int:
    queue, channel = open_update_channel()
    for name in "abc":
        queue.send_nowait(result(name))
    queue.close()
    counter = StepCounter(trio.lowlevel.current_task())
    trio.lowlevel.add_instrument(counter)
    try:
        if how == "async for":
            received = [update async for update in channel]
        else:
            received = [await channel.receive() for _ in range(3)]
    finally:
        trio.lowlevel.remove_instrument(counter)
    assert received == [result(name) for name in "abc"]
    return counter.steps


async def test_receive_is_a_schedule_point_for_every_item_and_iteration_is_not() -> None:
    assert await steps_taken_to_receive("receive") == 3
    assert await steps_taken_to_receive("async for") == 0


async def test_iteration_is_a_cancellation_point_on_every_item_and_loses_nothing() -> None:
    queue, channel = open_update_channel()
    queue.send_nowait(result("a"))
    queue.send_nowait(result("b"))
    received = []
    with trio.CancelScope() as scope:
        async for update in channel:
            received.append(update)
            scope.cancel(reason="test")
    assert scope.cancelled_caught
    assert received == [result("a")]
    assert channel.receive_nowait() == result("b")


async def test_a_cancelled_receive_takes_nothing() -> None:
    queue, channel = open_update_channel()
    queue.send_nowait(result("a"))
    with trio.CancelScope() as scope:
        scope.cancel(reason="test")
        await channel.receive()
    assert scope.cancelled_caught
    assert channel.receive_all_nowait() == [result("a")]


async def test_a_waiting_receiver_is_cancelled_and_the_channel_still_works(
    autojump_clock: trio.testing.MockClock,
) -> None:
    queue, channel = open_update_channel()
    with trio.move_on_after(1.0):
        await channel.receive()
    queue.send_nowait(result("a"))
    assert await channel.receive() == result("a")


async def test_the_end_of_the_run_ends_the_iteration_after_the_buffer() -> None:
    queue, channel = open_update_channel()
    queue.send_nowait(result("a"))
    queue.close()
    assert [update async for update in channel] == [result("a")]
    with pytest.raises(trio.EndOfChannel):
        channel.receive_nowait()
    with pytest.raises(trio.EndOfChannel):
        await channel.receive()


async def test_receive_nowait_says_when_nothing_is_buffered() -> None:
    queue, channel = open_update_channel()
    with pytest.raises(trio.WouldBlock):
        channel.receive_nowait()
    assert channel.receive_all_nowait() == []
    queue.send_nowait(ProgressUpdate("a", 1))
    assert channel.receive_nowait() == ProgressUpdate("a", 1)


async def test_closing_wakes_the_waiting_receiver_and_drops_what_is_buffered() -> None:
    queue, channel = open_update_channel()
    async with trio.open_nursery() as nursery:

        async def close_later() -> None:
            await trio.testing.wait_all_tasks_blocked()
            await channel.aclose()

        nursery.start_soon(close_later)
        with pytest.raises(trio.ClosedResourceError):
            await channel.receive()
    with pytest.raises(trio.BrokenResourceError):
        queue.send_nowait(result("late"))
    with pytest.raises(trio.ClosedResourceError):
        channel.receive_nowait()
    assert channel.receive_all_nowait() == []
    channel.close()  # idempotent


async def test_async_with_closes_the_channel() -> None:
    queue, channel = open_update_channel()
    queue.send_nowait(result("a"))
    async with channel:
        pass
    with pytest.raises(trio.ClosedResourceError):
        await channel.receive()


async def test_sending_after_the_run_closed_its_side_is_refused() -> None:
    queue, _ = open_update_channel()
    queue.close()
    queue.close()  # idempotent
    with pytest.raises(trio.ClosedResourceError):
        queue.send_nowait(result("late"))


async def test_a_second_waiting_receiver_is_refused() -> None:
    queue, channel = open_update_channel()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(channel.receive)
        await trio.testing.wait_all_tasks_blocked()
        with pytest.raises(trio.BusyResourceError):
            await channel.receive()
        queue.send_nowait(result("a"))


async def test_remaining_returns_the_update_channel(autojump_clock: trio.testing.MockClock) -> None:
    async with open_streaming_executor(TOOLS) as executor:
        for name in "abc":
            executor.add_tool(use(name, "Read", sleep=1.0))
        updates = executor.remaining()
        assert isinstance(updates, UpdateReceiveChannel)
        assert isinstance(updates, trio.abc.ReceiveChannel)
        assert [update async for update in updates] == [result(name) for name in "abc"]
