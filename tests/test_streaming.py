"""The streaming executor (SPEC §3): start rule, ordered gate, progress, reading, exit."""

from __future__ import annotations

from typing import Literal

import attrs
import pytest
import trio
import trio.testing
from helpers import Recorder, assert_no_new_tasks, make_tool, results_of, use

from trioexec import (
    CallContext,
    ConfigurationError,
    Policy,
    ProgressSender,
    ProgressUpdate,
    ResultUpdate,
    ToolResult,
    Turn,
    Update,
    function_tool,
    open_streaming_executor,
)

READ = make_tool("Read")
EDIT = make_tool("Edit", safe=False)
TOOLS = [READ, EDIT]
NO_SUCH = "<tool_use_error>Error: No such tool available: {}</tool_use_error>"


def result_ids(updates: list[Update]) -> list[str]:
    return [u.result.tool_use_id for u in results_of(updates)]


async def test_add_tool_starts_the_call_at_once(
    autojump_clock: trio.testing.MockClock, recorder: Recorder
) -> None:
    async with open_streaming_executor(TOOLS, observers=[recorder]) as executor:
        executor.add_tool(use("a", "Read", sleep=1.0))
        assert recorder.kinds("a") == ["queued", "started"]
        assert executor.in_progress_ids == {"a"}
        await trio.testing.wait_all_tasks_blocked()
        assert recorder.kinds("a") == ["queued", "started", "call_began"]
        updates = [u async for u in executor.remaining()]
    assert updates == [ResultUpdate(ToolResult("a", "ok"))]
    assert trio.current_time() == 1.0


async def test_gate_holds_a_fast_result_behind_a_slow_one_but_not_its_progress(
    autojump_clock: trio.testing.MockClock, recorder: Recorder
) -> None:
    async with open_streaming_executor(TOOLS, observers=[recorder]) as executor:
        executor.add_tool(use("slow", "Read", sleep=3.0, output="S"))
        executor.add_tool(
            use("fast", "Read", steps=[{"sleep": 0.5, "progress": "p1"}, {"sleep": 0.5}])
        )
        await trio.sleep(0.75)
        assert executor.drain_nowait() == [ProgressUpdate("fast", "p1")]
        await trio.sleep(1.0)
        assert recorder.times("completed") == {"fast": 1.0}
        assert executor.drain_nowait() == []
        assert executor.in_progress_ids == {"slow", "fast"}
        await trio.sleep(1.5)
        assert executor.drain_nowait() == [
            ResultUpdate(ToolResult("slow", "S")),
            ResultUpdate(ToolResult("fast", "ok")),
        ]
        assert executor.in_progress_ids == frozenset()
        assert [u async for u in executor.remaining()] == []
    released = recorder.times("released")
    assert released == {"slow": 3.0, "fast": 3.0}


async def test_sequencer_forced_completion_orders_release_in_arrival_order() -> None:
    @attrs.frozen
    class Turn:
        position: int

    seq = trio.testing.Sequencer()

    @function_tool(name="Seq", input_type=Turn, concurrency_safe=True)
    async def ordered(turn: Turn, ctx: CallContext, progress: ProgressSender) -> object:
        async with seq(turn.position):
            progress(f"at {turn.position}")
        return str(turn.position)

    async with open_streaming_executor([ordered]) as executor:
        executor.add_tool(use("c0", "Seq", position=2))
        executor.add_tool(use("c1", "Seq", position=4))
        executor.add_tool(use("c2", "Seq", position=0))
        async with seq(1):
            # c2 finished first: its progress is out, its result is held.
            assert executor.drain_nowait() == [ProgressUpdate("c2", "at 0")]
        async with seq(3):
            updates = executor.drain_nowait()
            assert updates == [
                ProgressUpdate("c0", "at 2"),
                ResultUpdate(ToolResult("c0", "2")),
            ]
        async with seq(5):
            assert executor.drain_nowait() == [
                ProgressUpdate("c1", "at 4"),
                ResultUpdate(ToolResult("c1", "4")),
                ResultUpdate(ToolResult("c2", "0")),
            ]


async def test_completion_order_mode(
    autojump_clock: trio.testing.MockClock, recorder: Recorder
) -> None:
    async with open_streaming_executor(
        TOOLS, result_order="completion", observers=[recorder]
    ) as executor:
        executor.add_tool(use("slow", "Read", sleep=3.0))
        executor.add_tool(use("fast", "Read", sleep=1.0))
        executor.add_tool(use("ghost", "Nope"))
        # A completed call is not held behind executing safe calls.
        assert result_ids(executor.drain_nowait()) == ["ghost"]
        await trio.sleep(1.5)
        assert result_ids(executor.drain_nowait()) == ["fast"]
        updates = [u async for u in executor.remaining()]
        assert result_ids(updates) == ["slow"]
    assert recorder.times("released") == {"ghost": 0.0, "fast": 1.0, "slow": 3.0}


async def test_completion_order_mode_executing_unsafe_call_holds_later_results(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with open_streaming_executor(TOOLS, result_order="completion") as executor:
        executor.add_tool(use("r", "Read", sleep=0.5))
        await trio.sleep(1.0)
        executor.add_tool(use("e", "Edit", sleep=2.0))
        executor.add_tool(use("ghost", "Nope"))
        assert result_ids(executor.drain_nowait()) == ["r"]
        await trio.sleep(1.0)
        assert executor.drain_nowait() == []
        updates = [u async for u in executor.remaining()]
    assert result_ids(updates) == ["e", "ghost"]


async def test_arrival_order_holds_unknown_tool_behind_executing_call(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with open_streaming_executor(TOOLS) as executor:
        executor.add_tool(use("slow", "Read", sleep=2.0))
        executor.add_tool(use("ghost", "Nope"))
        assert executor.drain_nowait() == []
        updates = [u async for u in executor.remaining()]
    assert [u.result for u in results_of(updates)] == [
        ToolResult("slow", "ok"),
        ToolResult("ghost", NO_SUCH.format("Nope"), is_error=True),
    ]


async def test_unknown_tool_answered_at_once(
    autojump_clock: trio.testing.MockClock, recorder: Recorder
) -> None:
    async with open_streaming_executor(TOOLS, observers=[recorder]) as executor:
        executor.add_tool(use("ghost", "Nope"))
        assert executor.drain_nowait() == [
            ResultUpdate(ToolResult("ghost", NO_SUCH.format("Nope"), is_error=True))
        ]
        assert recorder.kinds("ghost") == ["queued", "completed", "released"]
        assert executor.in_progress_ids == frozenset()


async def test_queued_unsafe_call_is_never_overtaken(
    autojump_clock: trio.testing.MockClock, recorder: Recorder
) -> None:
    async with open_streaming_executor(TOOLS, observers=[recorder]) as executor:
        executor.add_tool(use("A", "Read", sleep=2.0))
        executor.add_tool(use("B", "Edit", sleep=1.0))
        executor.add_tool(use("C", "Read", sleep=1.0))
        await trio.sleep(0.5)
        executor.add_tool(use("D", "Read", sleep=1.0))
        updates = [u async for u in executor.remaining()]
    assert result_ids(updates) == ["A", "B", "C", "D"]
    assert recorder.times("started") == {"A": 0.0, "B": 2.0, "C": 3.0, "D": 3.0}
    assert trio.current_time() == 4.0


async def test_safe_call_waits_for_an_executing_unsafe_one(
    autojump_clock: trio.testing.MockClock, recorder: Recorder
) -> None:
    async with open_streaming_executor(TOOLS, observers=[recorder]) as executor:
        executor.add_tool(use("E", "Edit", sleep=1.0))
        executor.add_tool(use("R", "Read", sleep=1.0))
        executor.add_tool(use("E2", "Edit", sleep=1.0))
        assert executor.in_progress_ids == {"E"}
    assert recorder.times("started") == {"E": 0.0, "R": 1.0, "E2": 2.0}


async def test_max_concurrency_applies_to_streaming(
    autojump_clock: trio.testing.MockClock, recorder: Recorder
) -> None:
    async with open_streaming_executor(TOOLS, max_concurrency=2, observers=[recorder]) as executor:
        for index in range(5):
            executor.add_tool(use(f"r{index}", "Read", sleep=1.0))
        updates = [u async for u in executor.remaining()]
    assert result_ids(updates) == [f"r{i}" for i in range(5)]
    started = recorder.times("started")
    assert [started[f"r{i}"] for i in range(5)] == [0.0, 0.0, 1.0, 1.0, 2.0]


async def test_in_progress_ids_added_at_start_removed_at_release(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with open_streaming_executor(TOOLS) as executor:
        executor.add_tool(use("A", "Read", sleep=2.0))
        executor.add_tool(use("B", "Read", sleep=1.0))
        executor.add_tool(use("C", "Edit", sleep=1.0))
        assert executor.in_progress_ids == {"A", "B"}
        await trio.sleep(1.5)
        assert executor.in_progress_ids == {"A", "B"}
        await trio.sleep(1.0)
        assert executor.in_progress_ids == {"C"}
        await trio.sleep(1.0)
        assert executor.in_progress_ids == frozenset()


async def test_context_modifiers_apply_in_release_order(
    autojump_clock: trio.testing.MockClock,
) -> None:
    cases: list[tuple[Literal["arrival", "completion"], tuple[str, ...]]] = [
        ("arrival", ("a", "b")),
        ("completion", ("b", "a")),
    ]
    for order, trail in cases:
        async with open_streaming_executor(
            TOOLS, result_order=order, context={"trail": ()}
        ) as executor:
            executor.add_tool(use("a", "Read", sleep=2.0, append="a"))
            executor.add_tool(use("b", "Read", sleep=1.0, append="b", echo_trail=True))
            executor.add_tool(use("c", "Edit", echo_trail=True))
            updates = [u async for u in executor.remaining()]
        assert executor.context == {"trail": trail}
        by_id = {u.result.tool_use_id: u.result.content for u in results_of(updates)}
        assert by_id == {"a": "ok", "b": "trail:", "c": "trail:" + ",".join(trail)}


async def test_normal_exit_waits_for_every_call(
    autojump_clock: trio.testing.MockClock, recorder: Recorder
) -> None:
    with assert_no_new_tasks():
        async with open_streaming_executor(TOOLS, observers=[recorder]) as executor:
            executor.add_tool(use("a", "Read", sleep=2.0))
            executor.add_tool(use("b", "Edit", sleep=1.0))
    assert trio.current_time() == 3.0
    assert recorder.times("released") == {"a": 2.0, "b": 3.0}
    assert result_ids(executor.drain_nowait()) == ["a", "b"]


async def test_exit_with_an_exception_cancels_everything_and_leaves_no_task(
    autojump_clock: trio.testing.MockClock, recorder: Recorder
) -> None:
    with (
        assert_no_new_tasks(),
        pytest.RaisesGroup(KeyError, allow_unwrapped=True, flatten_subgroups=True),
    ):
        async with open_streaming_executor(TOOLS, observers=[recorder]) as executor:
            executor.add_tool(use("a", "Read", sleep=10.0))
            executor.add_tool(use("b", "Read", sleep=10.0))
            executor.add_tool(use("c", "Edit", sleep=1.0))
            await trio.sleep(1.0)
            raise KeyError("model stream broke")
    assert trio.current_time() == 1.0
    assert recorder.times("cancelled") == {"a": 1.0, "b": 1.0, "c": 1.0}


async def test_exit_with_an_exception_reraises_it_unwrapped(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async def body() -> None:
        async with open_streaming_executor(TOOLS) as executor:
            executor.add_tool(use("a", "Read", sleep=10.0))
            await trio.sleep(1.0)
            raise KeyError("model stream broke")

    with pytest.raises(KeyError):
        await body()


async def test_cancelled_from_outside_leaves_no_task(
    autojump_clock: trio.testing.MockClock,
) -> None:
    with assert_no_new_tasks(), trio.move_on_after(1.0) as scope:
        async with open_streaming_executor(TOOLS) as executor:
            executor.add_tool(use("a", "Read", sleep=10.0))
            async for _ in executor.remaining():
                pass
    assert scope.cancelled_caught
    assert trio.current_time() == 1.0


async def test_add_tool_after_remaining_is_refused(autojump_clock: trio.testing.MockClock) -> None:
    async with open_streaming_executor(TOOLS) as executor:
        executor.add_tool(use("a", "Read", sleep=1.0))
        stream = executor.remaining()
        with pytest.raises(RuntimeError):
            executor.add_tool(use("b", "Read"))
        assert result_ids([u async for u in stream]) == ["a"]


async def test_add_tool_after_the_block_is_refused() -> None:
    async with open_streaming_executor(TOOLS) as executor:
        executor.add_tool(use("a", "Read"))
    with pytest.raises(RuntimeError):
        executor.add_tool(use("b", "Read"))
    assert result_ids(executor.drain_nowait()) == ["a"]


async def test_remaining_on_an_empty_executor_ends_at_once() -> None:
    async with open_streaming_executor(TOOLS) as executor:
        assert [u async for u in executor.remaining()] == []


async def test_remaining_delivers_progress_and_results_in_order(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with open_streaming_executor(TOOLS) as executor:
        executor.add_tool(use("a", "Read", steps=[{"sleep": 1.0, "progress": "a1"}, {"sleep": 2}]))
        executor.add_tool(use("b", "Read", steps=[{"sleep": 2.0, "progress": "b1"}]))
        seen = [(trio.current_time(), u) async for u in executor.remaining()]
    assert seen == [
        (1.0, ProgressUpdate("a", "a1")),
        (2.0, ProgressUpdate("b", "b1")),
        (3.0, ResultUpdate(ToolResult("a", "ok"))),
        (3.0, ResultUpdate(ToolResult("b", "ok"))),
    ]


@pytest.mark.parametrize("order", ["fifo", "", "Arrival"])
async def test_invalid_result_order_is_refused(order: str) -> None:
    with pytest.raises(ConfigurationError):
        async with open_streaming_executor(TOOLS, result_order=order):  # type: ignore[arg-type]
            pass


async def test_invalid_max_concurrency_is_refused() -> None:
    with pytest.raises(ConfigurationError):
        async with open_streaming_executor(TOOLS, max_concurrency=0):
            pass


async def test_an_executor_block_is_built_when_entered_and_can_be_entered_only_once() -> None:
    # Nothing runs before the block is entered: a bad option is reported there.
    bad = open_streaming_executor(TOOLS, max_concurrency=0, policy=Policy(cap_streaming=True))
    with pytest.raises(ConfigurationError, match="max_concurrency"):
        async with bad:
            pass  # pragma: no cover
    turn = Turn()
    block = open_streaming_executor(TOOLS, turn=turn)
    async with block as executor:
        executor.add_tool(use("a", "Read"))
        assert turn.in_progress_ids == {"a"}
    assert turn.in_progress_ids == frozenset()
    # Single use, as every generator-based context manager (contextlib's own error).
    with pytest.raises(AttributeError):
        async with block:
            pass  # pragma: no cover
