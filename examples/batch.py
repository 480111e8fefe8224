"""Run one turn's calls with ``run_tools``: two tools, a validation error, context modifiers.

Shows how the calls are partitioned into batches (consecutive concurrency-safe
calls run together, an unsafe call runs alone), the error text a model gets
for input that fails validation, and context modifiers of a safe batch being
applied in call order although the calls finish in another order.  The tools
only sleep, on trio's MockClock, so the example finishes at once.

Run: python examples/batch.py
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

import attrs
import trio
import trio.testing

import trioexec
from trioexec import CallContext, ProgressSender, ToolOutput, ToolUse

if TYPE_CHECKING:
    from collections.abc import Mapping


@attrs.frozen
class CityInput:
    city: str


@trioexec.function_tool(input_type=CityInput, concurrency_safe=True)
async def weather(args: CityInput, ctx: CallContext, progress: ProgressSender) -> ToolOutput:
    """Look up the weather in a city (pretend: a longer name takes longer)."""
    await trio.sleep(len(args.city) / 10)
    print(f"  t={trio.current_time():.1f}s weather({args.city}) finished")

    def add_city(state: Mapping[str, object]) -> Mapping[str, object]:  # a context modifier
        return {**state, "cities": [*cast("list[str]", state["cities"]), args.city]}

    return ToolOutput(f"{args.city}: mild", add_city)


@attrs.frozen
class NoteInput:
    text: str


@trioexec.function_tool(input_type=NoteInput)  # not concurrency-safe: runs alone
async def note(args: NoteInput, ctx: CallContext, progress: ProgressSender) -> str:
    """Write a note; it sees the context the earlier batch produced."""
    return f"noted {args.text!r}; cities so far: {ctx.state['cities']}"


async def main() -> None:
    tools = trioexec.ToolRegistry([weather, note])  # or pass the list itself
    calls = [
        ToolUse("toolu_1", "weather", {"city": "Copenhagen"}),  # slow: finishes last
        ToolUse("toolu_2", "weather", {"city": "Oslo"}),
        ToolUse("toolu_3", "note", {"text": "both looked up"}),
        ToolUse("toolu_4", "weather", {"town": "Lima"}),  # wrong field: a validation error
    ]
    for batch in trioexec.lowlevel.partition_tool_calls(calls, tools):
        kind = "safe batch " if batch.is_concurrency_safe else "unsafe call"
        print(f"{kind}: {[use.id for use in batch.tool_uses]}")
    outcome = await trioexec.run_tools(calls, tools, context={"cities": []})
    print("results, in call order:")
    for result in outcome.results:
        print(f"  {result.tool_use_id} is_error={result.is_error}: {result.text}")
    print(f"final context: {dict(outcome.context)}")


if __name__ == "__main__":
    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
