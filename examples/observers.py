"""Observe a run: an Observer that prints every call event and each interruptible change.

A ``search`` ("cancel" on interrupt) starts at once, a ``build`` ("block") joins
at t=0.5 s, the user interrupts at t=0.75 s.  The observer sees each call go
queued -> started -> (call_began / progress / call_ended) -> completed or
cancelled (with its reason) -> released, and learns when "Esc to cancel" would
stop everything executing (``interruptible_changed``).  MockClock: instant.

Run: python examples/observers.py
"""

from __future__ import annotations

from typing import Literal

import attrs
import trio
import trio.testing

import trioexec
from trioexec import CallContext, CallEvent, ProgressSender, ToolResult, ToolUse


class Printer(trioexec.Observer):
    """Prints events; observers are synchronous and must not block."""

    def call_event(self, event: CallEvent) -> None:
        line = f"t={event.time:.2f}  {event.tool_use_id}  {event.kind}"
        if event.reason is not None:  # why a call was cancelled
            line += f" ({event.reason})"
        if isinstance(event.data, ToolResult):  # completed, cancelled, released
            line += f": {event.data.text[:40]}"
        elif event.data is not None:  # progress
            line += f": {event.data}"
        print(line)

    def interruptible_changed(self, interruptible: bool) -> None:
        print(f"t={trio.current_time():.2f}  -- interruptible: {interruptible}")


@attrs.frozen
class Job:
    seconds: float


def sleeper(name: str, behavior: Literal["cancel", "block"]) -> trioexec.Tool[Job]:
    @trioexec.function_tool(name=name, input_type=Job, concurrency_safe=True,
                            interrupt_behavior=behavior)  # fmt: skip
    async def tool(args: Job, ctx: CallContext, progress: ProgressSender) -> str:
        await trio.sleep(args.seconds / 2)
        progress("halfway")
        await trio.sleep(args.seconds / 2)
        return f"{name} finished"

    return tool


async def main() -> None:
    turn = trioexec.Turn()
    tools = [sleeper("search", "cancel"), sleeper("build", "block")]
    async with trioexec.open_streaming_executor(tools, turn=turn, observers=[Printer()]) as ex:
        ex.add_tool(ToolUse("toolu_1", "search", {"seconds": 3}))
        await trio.sleep(0.5)
        ex.add_tool(ToolUse("toolu_2", "build", {"seconds": 2}))
        await trio.sleep(0.25)
        print("t=0.75  -- the user interrupts")
        turn.interrupt()
        async for _update in ex.remaining():
            pass  # an application would render these; the observer already saw everything


if __name__ == "__main__":
    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
