"""Stop a turn: ``Turn.interrupt()`` (the user typed) and ``Turn.abort()`` (a hard stop).

The same three calls run twice: ``search`` (interrupt_behavior="cancel"),
``download`` ("block") and ``edit`` (unsafe, so it waits for both).  At t=1 s
an interrupt stops the search, lets the download finish with its real result,
and answers the never-started edit; an abort stops everything, block tools
included.  Every call still gets exactly one result.  MockClock: instant.

Run: python examples/interrupt_and_abort.py
"""

from __future__ import annotations

from typing import Literal

import attrs
import trio
import trio.testing

import trioexec
from trioexec import CallContext, ProgressSender, ToolUse


@attrs.frozen
class Job:
    seconds: int


def sleeper(name: str, safe: bool, behavior: Literal["cancel", "block"]) -> trioexec.Tool[Job]:
    @trioexec.function_tool(name=name, input_type=Job, concurrency_safe=safe,
                            interrupt_behavior=behavior)  # fmt: skip
    async def tool(args: Job, ctx: CallContext, progress: ProgressSender) -> str:
        await trio.sleep(args.seconds)
        return f"{name} done after {args.seconds} s"

    return tool


TOOLS = [sleeper("search", True, "cancel"), sleeper("download", True, "block"),
         sleeper("edit", False, "block")]  # fmt: skip
CALLS = [
    ToolUse("toolu_1", "search", {"seconds": 5}),
    ToolUse("toolu_2", "download", {"seconds": 2}),
    ToolUse("toolu_3", "edit", {"seconds": 1}),
]


async def run_and_stop(how: str) -> None:
    turn = trioexec.Turn()
    start = trio.current_time()

    async def user() -> None:  # in an application: a key-press handler
        await trio.sleep(1)
        if how == "interrupt":
            turn.interrupt()  # stop "cancel" tools, start nothing new
        else:
            turn.abort()  # stop everything

    async with trio.open_nursery() as nursery:
        nursery.start_soon(user)
        outcome = await trioexec.run_tools(CALLS, TOOLS, turn=turn)
    print(f"{how} at t=1 s; run_tools returned at t={trio.current_time() - start:g} s")
    for use, result in zip(CALLS, outcome.results, strict=True):
        print(f"  {use.id} {use.name:8} is_error={result.is_error!s:5}  {result.text[:56]}")


async def main() -> None:
    await run_and_stop("interrupt")
    await run_and_stop("abort")


if __name__ == "__main__":
    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
