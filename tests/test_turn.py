"""The Turn: the in-progress id set across runs, and calls made before or after a run."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import trio
import trio.testing

from trioexec import (
    ContentReplacementState,
    ToolResult,
    ToolUse,
    Turn,
    build_user_message,
    run_tools,
)
from trioexec._texts import interrupted_message
from trioexec.testing import ScriptedTool

if TYPE_CHECKING:
    from pathlib import Path

READ = ScriptedTool("Read", concurrency_safe=True, interrupt_behavior="cancel")
EDIT = ScriptedTool("Edit")


async def test_in_progress_ids_follow_the_batch_path(
    autojump_clock: trio.testing.MockClock,
) -> None:
    turn = Turn()
    seen: list[tuple[float, frozenset[str]]] = []
    calls = [
        ToolUse("a", "Read", {"sleep": 1.0}),
        ToolUse("b", "Read", {"sleep": 2.0}),
        ToolUse("c", "Edit", {"sleep": 1.0}),
    ]

    async def watch() -> None:
        await trio.sleep(0.5)
        for _ in range(4):
            seen.append((trio.current_time(), turn.in_progress_ids))
            await trio.sleep(1.0)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(watch)
        outcome = await run_tools(calls, [READ, EDIT], turn=turn)
    assert [r.tool_use_id for r in outcome.results] == ["a", "b", "c"]
    assert seen == [
        (0.5, frozenset({"a", "b"})),
        (1.5, frozenset({"b"})),
        (2.5, frozenset({"c"})),
        (3.5, frozenset()),
    ]


async def test_a_turn_aborted_before_the_run_answers_everything(
    autojump_clock: trio.testing.MockClock,
) -> None:
    turn = Turn()
    turn.abort()
    outcome = await run_tools(
        [ToolUse("a", "Read", {}), ToolUse("b", "Edit", {})], [READ, EDIT], turn=turn
    )
    assert all(r.is_error for r in outcome.results)
    assert [r.tool_use_id for r in outcome.results] == ["a", "b"]
    assert trio.current_time() == 0.0


async def test_interrupting_an_idle_turn_is_harmless() -> None:
    turn = Turn()
    turn.interrupt()
    turn.interrupt()
    assert turn.interrupted
    assert not turn.aborted
    assert turn.in_progress_ids == frozenset()
    assert repr(turn) == "<Turn interrupted>"
    outcome = await run_tools([ToolUse("a", "Read", {"output": "x"})], [READ], turn=turn)
    assert outcome.results == (
        ToolResult("a", interrupted_message("Read", started=False), is_error=True),
    )


async def test_result_limits_let_the_budget_spare_self_managed_tools(tmp_path: Path) -> None:
    big_read = ScriptedTool("Read", concurrency_safe=True, max_result_size_chars=math.inf)
    big_dump = ScriptedTool("Dump", concurrency_safe=True)
    calls = [
        ToolUse("r", "Read", {"output_size": 160_000}),
        ToolUse("d", "Dump", {"output_size": 49_000}),  # under the per-call threshold
    ]
    outcome = await run_tools(calls, [big_read, big_dump])
    assert outcome.result_limits == {"r": math.inf, "d": 100_000}
    message = await build_user_message(
        outcome.updates,
        state=ContentReplacementState(),
        session_dir=tmp_path,
        limits=outcome.result_limits,
    )
    kept, persisted = message.results
    assert kept.content == outcome.results[0].content  # Read manages its own size
    assert isinstance(persisted.content, str)
    assert persisted.content.startswith("<persisted-output>")
