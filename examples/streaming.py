"""Start tools while the model still streams: ToolUseAssembler feeding open_streaming_executor.

Fake stream events go through a ToolUseAssembler; each sealed tool_use is added
at once.  After every event ``drain_nowait()`` gives progress at once and results
through the ordered gate (the fast call's result waits for the slow one);
``remaining()`` gives the rest.  MockClock: instant.  Run: python examples/streaming.py
"""

from __future__ import annotations

import attrs
import trio
import trio.testing

import trioexec
from trioexec import CallContext, ProgressSender, ResultUpdate, Update


@attrs.frozen
class FetchInput:
    url: str
    seconds: float


@trioexec.function_tool(input_type=FetchInput, concurrency_safe=True)
async def fetch(args: FetchInput, ctx: CallContext, progress: ProgressSender) -> str:
    await trio.sleep(args.seconds / 2)
    progress(f"{args.url}: half done")  # delivered at once, never held back
    await trio.sleep(args.seconds / 2)
    print(f"  t={trio.current_time():.2f}s finished {ctx.tool_use.id}")
    return f"contents of {args.url}"


def tool_use_block(i: int, tool_id: str, *json_parts: str) -> list[object]:
    """One tool_use block as the Messages API streams it: start, JSON fragments, stop."""
    start = {"type": "tool_use", "id": tool_id, "name": "fetch", "input": {}}
    return [
        {"type": "content_block_start", "index": i, "content_block": start},
        *({"type": "content_block_delta", "index": i,
           "delta": {"type": "input_json_delta", "partial_json": p}} for p in json_parts),
        {"type": "content_block_stop", "index": i},
    ]  # fmt: skip


def show(update: Update) -> None:
    now = f"  t={trio.current_time():.2f}s"
    if isinstance(update, ResultUpdate):
        print(f"{now} result   {update.result.tool_use_id}: {update.result.text}")
    else:
        print(f"{now} progress {update.tool_use_id}: {update.data}")


async def main() -> None:
    events = [  # each input's JSON arrives in two fragments, cut mid-string
        *tool_use_block(0, "toolu_slow", '{"url": "https://a.ex', 'ample", "seconds": 4}'),
        *tool_use_block(1, "toolu_fast", '{"url": "https://b.ex', 'ample", "seconds": 1}'),
        *[{"type": "ping"}] * 5,  # the model goes on streaming (text, pings...)
    ]
    assembler = trioexec.ToolUseAssembler()
    async with trioexec.open_streaming_executor([fetch]) as executor:
        for event in events:
            await trio.sleep(0.3)  # one event every 0.3 s
            tool_use = assembler.feed(event)
            if tool_use is not None:  # sealed: its input JSON is complete
                print(f"  t={trio.current_time():.2f}s sealed   {tool_use.id}: {tool_use.input}")
                executor.add_tool(tool_use)  # synchronous, never blocks; may start at once
            for update in executor.drain_nowait():
                show(update)
        waiting = sorted(executor.in_progress_ids)
        print(f"  t={trio.current_time():.2f}s stream ended; not yet released: {waiting}")
        async for update in executor.remaining():
            show(update)


if __name__ == "__main__":
    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
