"""The streaming executor's host task: which calls get a task of their own, and what still holds."""

from __future__ import annotations

import contextvars
from typing import Any

import pytest
import trio
import trio.testing
from helpers import make_tool, results_of, use

from trioexec import (
    CallContext,
    ProgressSender,
    ResultUpdate,
    Tool,
    ToolResult,
    Turn,
    open_streaming_executor,
)

READ = make_tool("Read")
STOPPABLE = make_tool("Stoppable", interrupt="cancel")
EDIT = make_tool("Edit", safe=False)


class Spawned(trio.abc.Instrument):
    """The names of the tasks spawned while it is installed."""

    def __init__(self) -> None:
        self.names: list[str] = []

    def task_spawned(self, task: trio.lowlevel.Task) -> None:
        self.names.append(task.name)


def call_tasks(spawned: Spawned) -> list[str]:
    return [name for name in spawned.names if "tool call" in name]


def host_tasks(spawned: Spawned) -> list[str]:
    return [name for name in spawned.names if "sibling scopes" in name]


async def test_a_response_that_ended_with_one_call_runs_it_in_the_host_task(
    autojump_clock: trio.testing.MockClock,
) -> None:
    spawned = Spawned()
    trio.lowlevel.add_instrument(spawned)
    try:
        async with open_streaming_executor([READ]) as executor:
            executor.add_tool(use("a", "Read", sleep=1.0))
            updates = [update async for update in executor.remaining()]
    finally:
        trio.lowlevel.remove_instrument(spawned)
    assert updates == [ResultUpdate(ToolResult("a", "ok"))]
    assert len(host_tasks(spawned)) == 1
    assert call_tasks(spawned) == []


async def test_calls_added_while_the_host_runs_get_a_task_each(
    autojump_clock: trio.testing.MockClock,
) -> None:
    spawned = Spawned()
    trio.lowlevel.add_instrument(spawned)
    try:
        async with open_streaming_executor([READ]) as executor:
            executor.add_tool(use("a", "Read", sleep=1.0))
            await trio.testing.wait_all_tasks_blocked()  # the host runs "a" in its body
            executor.add_tool(use("b", "Read", sleep=1.0))
            executor.add_tool(use("c", "Read", sleep=1.0))
            updates = [update async for update in executor.remaining()]
    finally:
        trio.lowlevel.remove_instrument(spawned)
    assert [u.result.tool_use_id for u in results_of(updates)] == ["a", "b", "c"]
    assert len(call_tasks(spawned)) == 2
    assert trio.current_time() == 1.0  # all three ran at once


async def test_a_call_queued_behind_the_lone_started_one_still_starts(
    autojump_clock: trio.testing.MockClock,
) -> None:
    # "b" (unsafe) waits for "a": the input ended, but a call is queued, so
    # the host opens the calls' nursery and "b" starts once "a" is done.
    async with open_streaming_executor([READ, EDIT]) as executor:
        executor.add_tool(use("a", "Read", sleep=1.0))
        executor.add_tool(use("b", "Edit", sleep=1.0))
        updates = [update async for update in executor.remaining()]
    assert [u.result.tool_use_id for u in results_of(updates)] == ["a", "b"]
    assert trio.current_time() == 2.0


@pytest.mark.parametrize("stop", ["interrupt", "abort"])
async def test_a_lone_call_run_by_the_host_is_still_interrupted_and_aborted(
    autojump_clock: trio.testing.MockClock, stop: str
) -> None:
    turn = Turn()
    async with (
        trio.open_nursery() as nursery,
        open_streaming_executor([STOPPABLE], turn=turn) as executor,
    ):
        executor.add_tool(use("a", "Stoppable", sleep=10.0))
        nursery.start_soon(_stop_later, turn, stop)
        updates = [update async for update in executor.remaining()]
    [answer] = results_of(updates)
    assert answer.result.tool_use_id == "a"
    assert answer.result.is_error
    assert trio.current_time() == 1.0


async def _stop_later(turn: Turn, how: str) -> None:
    await trio.sleep(1.0)
    if how == "interrupt":
        turn.interrupt()
    else:
        turn.abort()


SEEN: contextvars.ContextVar[str] = contextvars.ContextVar("seen", default="application's")


class SetsAContextVar(Tool[dict[str, Any]]):
    """Sets a context variable, then reads it back after a checkpoint."""

    name = "Sets"
    input_schema: dict[str, Any] = {"type": "object"}  # noqa: RUF012

    def is_concurrency_safe(self, payload: dict[str, Any]) -> bool:
        return True

    async def call(
        self, payload: dict[str, Any], ctx: CallContext, progress: ProgressSender
    ) -> object:
        SEEN.set(ctx.tool_use.id)
        await trio.sleep(1.0)
        return SEEN.get()


async def test_a_call_run_in_the_host_leaves_the_applications_context_unchanged(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with open_streaming_executor([SetsAContextVar()]) as executor:
        executor.add_tool(use("a", "Sets"))
        await trio.testing.wait_all_tasks_blocked()
        executor.add_tool(use("b", "Sets"))
        updates = [update async for update in executor.remaining()]
    assert [u.result.content for u in results_of(updates)] == ["a", "b"]
    assert SEEN.get() == "application's"


class RecordsTheContextItFinds(Tool[dict[str, Any]]):
    """An unsafe tool answering with the value it found, then setting its own."""

    name = "Finds"
    input_schema: dict[str, Any] = {"type": "object"}  # noqa: RUF012

    def is_concurrency_safe(self, payload: dict[str, Any]) -> bool:
        return False

    async def call(
        self, payload: dict[str, Any], ctx: CallContext, progress: ProgressSender
    ) -> object:
        found = SEEN.get()
        SEEN.set(ctx.tool_use.id)
        await trio.sleep(1.0)
        return found


@pytest.mark.parametrize("added_while_running", [False, True])
async def test_every_streaming_call_starts_from_the_context_the_executor_was_opened_in(
    autojump_clock: trio.testing.MockClock, added_while_running: bool
) -> None:
    # "a" runs in the host's body; "b" and "c" are started by the completion
    # of the call before them (unsafe calls run one at a time), "c" perhaps
    # added while "a" runs.  None sees another call's change, nor the one the
    # application made after opening the executor.
    async with open_streaming_executor([RecordsTheContextItFinds()]) as executor:
        SEEN.set("changed after opening")
        executor.add_tool(use("a", "Finds"))
        executor.add_tool(use("b", "Finds"))
        if added_while_running:
            await trio.testing.wait_all_tasks_blocked()
        executor.add_tool(use("c", "Finds"))
        updates = [update async for update in executor.remaining()]
        assert SEEN.get() == "changed after opening"
    assert [u.result.content for u in results_of(updates)] == ["application's"] * 3
