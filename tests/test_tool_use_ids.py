"""A tool_use id that could escape a file name, or that repeats, is refused with an answer."""

from __future__ import annotations

from typing import TYPE_CHECKING

import trio

from trioexec import ResultUpdate, ToolResult, ToolUse, open_streaming_executor, run_tools
from trioexec.testing import ScriptedTool

if TYPE_CHECKING:
    import trio.testing

READ = ScriptedTool("Read", concurrency_safe=True)
BASH = ScriptedTool("Bash", concurrency_safe=True, cancels_siblings_on_error=True)

BAD_IDS = ["../x", "a/b", "..", "", "toolu 1", "x\\y", "é"]


def _invalid(tool_id: str) -> str:
    return (
        f"<tool_use_error>Error: Invalid tool_use id {tool_id!r}: an id may only contain "
        "letters, digits, '_' and '-'</tool_use_error>"
    )


async def test_batch_path_refuses_bad_ids_and_runs_the_rest(
    autojump_clock: trio.testing.MockClock,
) -> None:
    calls = [ToolUse(bad, "Read", {"output": "no"}) for bad in BAD_IDS]
    calls.insert(3, ToolUse("good_1", "Read", {"output": "yes", "sleep": 1.0}))
    outcome = await run_tools(calls, [READ])
    assert [r.tool_use_id for r in outcome.results] == [c.id for c in calls]
    for result in outcome.results:
        if result.tool_use_id == "good_1":
            assert result == ToolResult("good_1", "yes")
        else:
            assert result == ToolResult(result.tool_use_id, _invalid(result.tool_use_id), True)


async def test_a_refused_id_never_cascades(autojump_clock: trio.testing.MockClock) -> None:
    calls = [
        ToolUse("ok_1", "Read", {"sleep": 2.0, "output": "A"}),
        ToolUse("../bash", "Bash", {"error": "boom"}),
    ]
    outcome = await run_tools(calls, [READ, BASH])
    assert outcome.results[0] == ToolResult("ok_1", "A")
    assert outcome.results[1].is_error


async def test_duplicate_ids_are_refused_in_the_streaming_executor(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with open_streaming_executor([READ]) as executor:
        executor.add_tool(ToolUse("t1", "Read", {"sleep": 1.0, "output": "first"}))
        executor.add_tool(ToolUse("t1", "Read", {"output": "second"}))
        updates = [u async for u in executor.remaining()]
    results = [u.result for u in updates if isinstance(u, ResultUpdate)]
    assert results == [
        ToolResult("t1", "first"),
        ToolResult(
            "t1",
            "<tool_use_error>Error: Duplicate tool_use id 't1': every tool_use needs its own "
            "id</tool_use_error>",
            is_error=True,
        ),
    ]
