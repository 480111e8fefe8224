"""The core's guarantees on paths that are easy to get wrong.

Every call is answered exactly once even when a tool raises a BaseException,
a context modifier raises, a tool errors while being cancelled, a schema is
broken, a call arrives after an abort or after the executor failed, an
observer discards mid-release, the body raises, a tool interrupts its own
turn, or an id repeats; and the ordered gate reads each call a bounded number
of times.
"""

from __future__ import annotations

import contextlib
import gc
import math
import weakref
from typing import Any, SupportsIndex, overload

import attrs
import pytest
import trio
import trio.testing
from helpers import REJECT, Recorder, results_of

from trioexec import (
    CallContext,
    CallEvent,
    Observer,
    ProgressSender,
    ResultUpdate,
    StreamingExecutor,
    Tool,
    ToolDefinitionError,
    ToolOutput,
    ToolRegistry,
    ToolResult,
    ToolUse,
    Turn,
    Update,
    function_tool,
    open_streaming_executor,
    run_tools,
)
from trioexec.testing import ScriptedTool

pytestmark = pytest.mark.usefixtures("claude_code_texts")  # mechanisms, in CC's words

NO_SUCH_GHOST = "<tool_use_error>Error: No such tool available: Ghost</tool_use_error>"

READ = ScriptedTool("Read", concurrency_safe=True, interrupt_behavior="cancel")


class Fatal(BaseException):
    """Not an Exception (like KeyboardInterrupt): it must propagate, every call still answered."""


def drain(receive: trio.MemoryReceiveChannel[Update]) -> dict[str, ToolResult]:
    """The results on ``receive`` so far, by tool_use id."""
    out: dict[str, ToolResult] = {}
    while True:
        try:
            update = receive.receive_nowait()
        except trio.WouldBlock:
            return out
        if isinstance(update, ResultUpdate):
            out[update.result.tool_use_id] = update.result


async def interrupt_at(turn: Turn, at: float) -> None:
    await trio.sleep(at)
    turn.interrupt()


# -- BaseException paths -----------------------------------------------------------------------


@function_tool(name="Bash", concurrency_safe=True, cancels_siblings_on_error=True)
async def fatal_bash(job: dict[str, Any], ctx: CallContext, progress: ProgressSender) -> object:
    await trio.sleep(1.0 if job.get("fatal") else 10.0)
    if job.get("fatal"):
        raise Fatal("ctrl-c landed in this task")
    return "done"


async def test_cascading_tool_raising_base_exception_answers_siblings_as_interrupted(
    autojump_clock: trio.testing.MockClock, recorder: Recorder
) -> None:
    send, receive = trio.open_memory_channel[Update](math.inf)
    uses = [ToolUse("a", "Bash", {"fatal": True}), ToolUse("b", "Bash", {"command": "make"})]
    with pytest.raises(Fatal):
        await run_tools(uses, [fatal_bash], updates=send, observers=[recorder])
    # Decisions beyond the contract: the running siblings get the rejection text
    # and the reason user_interrupted (not a sibling-error cascade).
    assert drain(receive)["b"] == ToolResult("b", REJECT, is_error=True)
    (cancelled,) = [e for e in recorder.of_kind("cancelled") if e.tool_use_id == "b"]
    assert cancelled.reason == "user_interrupted"


async def test_is_concurrency_safe_raising_base_exception_still_answers_every_call(
    autojump_clock: trio.testing.MockClock,
) -> None:
    def safe(job: dict[str, Any]) -> bool:
        if job.get("fatal"):
            raise Fatal("in is_concurrency_safe")
        return True

    @function_tool(name="T", concurrency_safe=safe)
    async def tool(job: dict[str, Any], ctx: CallContext, progress: ProgressSender) -> object:
        return "ok"

    send, receive = trio.open_memory_channel[Update](math.inf)
    uses = [ToolUse("a", "T", {}), ToolUse("b", "T", {"fatal": True}), ToolUse("c", "T", {})]
    with pytest.raises(Fatal):
        await run_tools(uses, [tool], updates=send)
    assert sorted(drain(receive)) == ["a", "b", "c"]  # I1, as for a tool raising in call()


@function_tool(name="Sub", concurrency_safe=True, interrupt_behavior="cancel")
async def subprocess_like(
    job: dict[str, Any], ctx: CallContext, progress: ProgressSender
) -> object:
    """A tool with its own nursery whose reader fails while being cancelled."""

    async def reader() -> None:
        try:
            await trio.sleep_forever()
        finally:
            raise RuntimeError("pipe closed under the reader")

    async with trio.open_nursery() as nursery:
        nursery.start_soon(reader)
        await trio.sleep_forever()


async def test_tool_error_raised_while_being_cancelled_does_not_crash_the_run(
    autojump_clock: trio.testing.MockClock,
) -> None:
    turn = Turn()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(interrupt_at, turn, 1.0)
        outcome = await run_tools([ToolUse("a", "Sub", {})], [subprocess_like], turn=turn)
    assert outcome.results == (ToolResult("a", REJECT, is_error=True),)


# -- tool-supplied code that raises an ordinary Exception ---------------------------------------


def broken_modifier(state: Any) -> Any:
    raise ZeroDivisionError("bad context modifier")


@function_tool(name="Mod", concurrency_safe=True)
async def modifying(job: dict[str, Any], ctx: CallContext, progress: ProgressSender) -> object:
    await trio.sleep(float(job.get("sleep", 0.0)))
    if job.get("broken"):
        return ToolOutput("x", broken_modifier)
    return ToolOutput("y", lambda state: {**state, "seen": True})


async def test_raising_context_modifier_leaves_no_call_unanswered_streaming(
    autojump_clock: trio.testing.MockClock,
) -> None:
    updates: list[Update] = []
    with contextlib.suppress(ZeroDivisionError):  # the crash itself is the next test's point
        async with open_streaming_executor([modifying]) as executor:
            executor.add_tool(ToolUse("a", "Mod", {"broken": True}))
            executor.add_tool(ToolUse("b", "Mod", {"sleep": 1.0}))
            updates.extend([u async for u in executor.remaining()])
    updates.extend(executor.drain_nowait())
    assert [u.result.tool_use_id for u in results_of(updates)] == ["a", "b"]  # I1


async def test_raising_context_modifier_does_not_crash_run_tools(
    autojump_clock: trio.testing.MockClock,
) -> None:
    uses = [ToolUse("a", "Mod", {"broken": True}), ToolUse("b", "Mod", {"sleep": 1.0})]
    outcome = await run_tools(uses, [modifying])
    assert [r.tool_use_id for r in outcome.results] == ["a", "b"]
    assert outcome.context == {"seen": True}


async def test_tool_error_from_its_own_nursery_names_the_real_error() -> None:
    @function_tool(name="N")
    async def nursery_tool(
        job: dict[str, Any], ctx: CallContext, progress: ProgressSender
    ) -> object:
        async def child() -> None:
            raise OSError("disk full")

        async with trio.open_nursery() as nursery:
            nursery.start_soon(child)
        return "unreachable"

    (result,) = (await run_tools([ToolUse("a", "N", {})], [nursery_tool])).results
    assert result.is_error
    assert isinstance(result.content, str)
    assert "disk full" in result.content


async def test_dangling_schema_ref_is_refused_or_answered() -> None:
    @function_tool(
        name="Ref",
        input_schema={"type": "object", "properties": {"x": {"$ref": "#/$defs/missing"}}},
    )
    async def ref_tool(job: dict[str, Any], ctx: CallContext, progress: ProgressSender) -> object:
        return "ok"

    try:
        registry = ToolRegistry([ref_tool])
    except ToolDefinitionError:
        return  # refused at registration: fine
    outcome = await run_tools([ToolUse("a", "Ref", {}), ToolUse("b", "Ref", {"x": 1})], registry)
    assert [r.tool_use_id for r in outcome.results] == ["a", "b"]


# -- texts --------------------------------------------------------------------------------------


async def test_unknown_tool_after_abort_is_still_no_such_tool_in_batch_path() -> None:
    turn = Turn()
    turn.abort()
    outcome = await run_tools([ToolUse("g", "Ghost", {})], [READ], turn=turn)
    assert outcome.results == (ToolResult("g", NO_SUCH_GHOST, is_error=True),)


async def test_unknown_tool_after_abort_is_no_such_tool_in_streaming() -> None:
    turn = Turn()
    turn.abort()
    async with open_streaming_executor([READ], turn=turn) as executor:
        executor.add_tool(ToolUse("g", "Ghost", {}))
        updates = [u async for u in executor.remaining()]
    assert updates == [ResultUpdate(ToolResult("g", NO_SUCH_GHOST, is_error=True))]


# -- streaming executor: states after the block, re-entrancy, exceptions ------------------------


async def test_add_tool_after_the_executor_failed_is_refused(
    autojump_clock: trio.testing.MockClock,
) -> None:
    opened: list[StreamingExecutor] = []

    async def model_stream_breaks() -> None:
        async with open_streaming_executor([READ]) as executor:
            opened.append(executor)
            executor.add_tool(ToolUse("a", "Read", {"sleep": 1.0}))
            raise ValueError("model stream broke")

    with pytest.raises(ValueError, match="model stream broke"):
        await model_stream_breaks()
    with pytest.raises(RuntimeError):  # today: silently queued, never answered (I1)
        opened[0].add_tool(ToolUse("b", "Read", {}))


class DiscardOnRelease(Observer):
    """Discards the executor from inside the ``released`` event of ``trigger``."""

    def __init__(self, trigger: str) -> None:
        self.trigger = trigger
        self.events: list[CallEvent] = []
        self.discard: Any = None

    def call_event(self, event: CallEvent) -> None:
        self.events.append(event)
        if event.kind == "released" and event.tool_use_id == self.trigger:
            self.discard()


async def test_discard_from_an_observer_stops_the_release_loop(
    autojump_clock: trio.testing.MockClock,
) -> None:
    observer = DiscardOnRelease("a")
    async with open_streaming_executor([READ], observers=[observer]) as executor:
        observer.discard = executor.discard
        executor.add_tool(ToolUse("a", "Read", {"sleep": 2.0}))
        executor.add_tool(ToolUse("b", "Read", {"sleep": 1.0}))  # completes first, held
        updates = [u async for u in executor.remaining()]
    # a was delivered before its released event (which triggered the discard); b never is.
    assert [u.result.tool_use_id for u in updates if isinstance(u, ResultUpdate)] == ["a"]
    assert [e.kind for e in observer.events if e.tool_use_id == "b"][-1] != "released"


async def test_body_exception_group_is_reraised_unchanged() -> None:
    mine = ExceptionGroup("from the model client", [ValueError("x")])
    with pytest.raises(ExceptionGroup) as info:
        async with open_streaming_executor([READ]):
            raise mine
    assert info.value is mine


async def test_body_plain_exception_is_reraised_unchanged() -> None:
    mine = KeyError("k")
    with pytest.raises(KeyError) as info:
        async with open_streaming_executor([READ]):
            raise mine
    assert info.value is mine


async def test_tool_interrupting_its_own_turn_keeps_its_result_when_it_returns_at_once(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """The interrupt takes effect at the end of the instant; the caller's own return wins."""
    turn = Turn()

    @function_tool(name="Stop", concurrency_safe=True, interrupt_behavior="cancel")
    async def stop(job: dict[str, Any], ctx: CallContext, progress: ProgressSender) -> object:
        await trio.sleep(1.0)
        turn.interrupt()
        return "stopped the turn"

    async with open_streaming_executor([stop, READ], turn=turn) as executor:
        executor.add_tool(ToolUse("s", "Stop", {}))
        executor.add_tool(ToolUse("r", "Read", {"sleep": 5.0}))
        results = {
            u.result.tool_use_id: u.result
            for u in results_of([u async for u in executor.remaining()])
        }
    assert results["s"] == ToolResult("s", "stopped the turn")
    assert results["r"] == ToolResult("r", REJECT, is_error=True)
    assert trio.current_time() == 1.0


async def test_duplicate_id_answer_does_not_hide_the_running_original(
    autojump_clock: trio.testing.MockClock,
) -> None:
    turn = Turn()
    async with open_streaming_executor([READ], turn=turn, result_order="completion") as executor:
        executor.add_tool(ToolUse("x", "Read", {"sleep": 5.0}))
        executor.add_tool(ToolUse("x", "Read", {}))  # answered at once: duplicate id
        await trio.sleep(1.0)
        assert len(results_of(executor.drain_nowait())) == 1
        assert executor.in_progress_ids == {"x"}  # the original is still running
        assert turn.in_progress_ids == {"x"}
        assert len(results_of([u async for u in executor.remaining()])) == 1


# -- performance: the release scan -------------------------------------------------------------


class CountingList(list[Any]):
    """A list that counts element reads (the core's scans read calls by index)."""

    reads = 0

    @overload
    def __getitem__(self, index: SupportsIndex) -> Any: ...
    @overload
    def __getitem__(self, index: slice) -> list[Any]: ...
    def __getitem__(self, index: SupportsIndex | slice) -> Any:
        CountingList.reads += 1 if not isinstance(index, slice) else 0
        return super().__getitem__(index)


async def count_scan_reads(order: str, calls: int) -> int:
    CountingList.reads = 0
    async with open_streaming_executor([READ], result_order=order) as executor:  # type: ignore[arg-type]
        executor._core.calls = CountingList()
        executor.add_tool(ToolUse("slow", "Read", {"sleep": 1000.0}))
        for index in range(calls):
            executor.add_tool(ToolUse(f"c{index}", "Read", {"sleep": 1.0}))
        assert len([u async for u in executor.remaining()]) == calls + 1
    return CountingList.reads


async def test_arrival_order_gate_reads_each_call_a_bounded_number_of_times(
    autojump_clock: trio.testing.MockClock,
) -> None:
    calls = 400
    assert await count_scan_reads("arrival", calls) < 20 * calls


async def test_completion_order_gate_reads_each_call_a_bounded_number_of_times(
    autojump_clock: trio.testing.MockClock,
) -> None:
    calls = 400
    assert await count_scan_reads("completion", calls) < 20 * calls


@attrs.frozen
class _KeptInput:
    to: str


class _Keeper(Tool[_KeptInput]):
    """Remembers a weak reference to every input it was called with."""

    name = "Keeper"
    input_type = _KeptInput

    def __init__(self) -> None:
        self.inputs: list[weakref.ref[_KeptInput]] = []

    def is_concurrency_safe(self, payload: _KeptInput) -> bool:
        return payload.to == "safe"

    async def call(
        self, payload: _KeptInput, ctx: CallContext, progress: ProgressSender
    ) -> object:
        self.inputs.append(weakref.ref(payload))
        await trio.lowlevel.checkpoint()
        return payload.to


@pytest.mark.parametrize("inputs", [["unsafe"], ["safe", "safe"], ["safe", "unsafe"]])
async def test_a_finished_run_is_freed_without_the_cycle_collector(inputs: list[str]) -> None:
    # Every record of the run (calls, inputs, answers) is freed by reference
    # counting once the caller lets go of the outcome: no cycle keeps it.
    keeper = _Keeper()
    uses = [ToolUse(f"k{i}", "Keeper", {"to": to}) for i, to in enumerate(inputs)]
    gc.collect()
    gc.disable()
    try:
        outcome = await run_tools(uses, [keeper])
        assert [r.content for r in outcome.results] == inputs
        del outcome
        assert len(keeper.inputs) == len(inputs)
        assert [ref() for ref in keeper.inputs] == [None] * len(inputs)
    finally:
        gc.enable()


@pytest.mark.parametrize("inputs", [["unsafe"], ["safe", "safe"], ["safe", "unsafe"]])
async def test_a_finished_streaming_run_is_freed_without_the_cycle_collector(
    inputs: list[str],
) -> None:
    # The executor and its core point at each other while the run is open;
    # closing the executor lets go, so reference counting frees the run.
    keeper = _Keeper()
    gc.collect()
    gc.disable()
    try:
        async with open_streaming_executor([keeper]) as executor:
            for i, to in enumerate(inputs):
                executor.add_tool(ToolUse(f"k{i}", "Keeper", {"to": to}))
            updates = [update async for update in executor.remaining()]
        assert [u.result.content for u in results_of(updates)] == inputs
        del executor, updates
        assert len(keeper.inputs) == len(inputs)
        assert [ref() for ref in keeper.inputs] == [None] * len(inputs)
    finally:
        gc.enable()
