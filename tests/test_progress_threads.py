"""progress() from a worker thread: delivered in order, in the run's thread, before the result.

A tool that does its work in a thread (``trio.to_thread.run_sync``, or a
thread of its own) may report progress from there.  The run hands each item
to its own thread and delivers it as if the tool had sent it itself: the
consumer waiting on the executor's updates wakes up, and the call's result
comes after its progress.  These runs use real threads, so they run on
trio's real clock (a mock clock would jump while the thread works); the
deadline only turns a lost wake-up into a failure instead of a hang.
"""

from __future__ import annotations

import threading
from typing import Any

import trio

from trioexec import (
    CallContext,
    ProgressSender,
    ProgressUpdate,
    ResultUpdate,
    Tool,
    ToolUse,
    Update,
    open_streaming_executor,
    run_tools,
)


class _ThreadReporter(Tool[dict[str, Any]]):
    """Reports three items from a worker thread, then returns."""

    name = "ThreadReporter"

    def __init__(self, *, own_thread: bool) -> None:
        self.input_schema = {"type": "object"}
        self.own_thread = own_thread

    def is_concurrency_safe(self, input: dict[str, Any]) -> bool:  # noqa: A002
        return True

    async def call(
        self, payload: dict[str, Any], ctx: CallContext, progress: ProgressSender
    ) -> object:
        def work() -> None:
            for item in ("one", "two", "three"):
                progress(f"{ctx.tool_use.id}:{item}")

        if self.own_thread:
            thread = threading.Thread(target=work)
            thread.start()
            await trio.to_thread.run_sync(thread.join)
        else:
            await trio.to_thread.run_sync(work)
        return "done"


def _expected(tool_id: str) -> list[object]:
    return [f"{tool_id}:one", f"{tool_id}:two", f"{tool_id}:three", "done"]


def _items(updates: list[Update], tool_id: str) -> list[object]:
    items: list[object] = []
    for update in updates:
        if isinstance(update, ProgressUpdate) and update.tool_use_id == tool_id:
            items.append(update.data)
        elif isinstance(update, ResultUpdate) and update.result.tool_use_id == tool_id:
            items.append(update.result.content)
    return items


async def test_progress_from_a_worker_thread_reaches_a_waiting_consumer_before_the_result() -> None:
    for own_thread in (False, True):
        tool = _ThreadReporter(own_thread=own_thread)
        got: list[Update] = []
        with trio.fail_after(10):  # a lost wake-up would wait forever
            async with open_streaming_executor([tool]) as executor:
                executor.add_tool(ToolUse("a", "ThreadReporter", {}))
                executor.add_tool(ToolUse("b", "ThreadReporter", {}))
                got.extend([update async for update in executor.remaining()])
        assert _items(got, "a") == _expected("a")
        assert _items(got, "b") == _expected("b")


async def test_progress_from_a_worker_thread_reaches_the_updates_channel_of_run_tools() -> None:
    send, receive = trio.open_memory_channel[Update](float("inf"))
    tool = _ThreadReporter(own_thread=False)
    with trio.fail_after(10):
        await run_tools([ToolUse("a", "ThreadReporter", {})], [tool], updates=send)
    got: list[Update] = []
    while True:
        try:
            got.append(receive.receive_nowait())
        except trio.WouldBlock:
            break
    assert _items(got, "a") == _expected("a")


async def test_progress_from_a_thread_after_its_call_ended_is_dropped() -> None:
    """As for progress sent from the run's thread after the call was answered."""
    senders: list[ProgressSender] = []

    class Keeper(_ThreadReporter):
        async def call(
        self, payload: dict[str, Any], ctx: CallContext, progress: ProgressSender
    ) -> object:
            senders.append(progress)
            return "done"

    tool = Keeper(own_thread=False)
    async with open_streaming_executor([tool]) as executor:
        executor.add_tool(ToolUse("a", "ThreadReporter", {}))
        got = [update async for update in executor.remaining()]
    await trio.to_thread.run_sync(senders[0], "late")
    await trio.testing.wait_all_tasks_blocked()
    assert _items(got, "a") == ["done"]
    assert executor.drain_nowait() == []
