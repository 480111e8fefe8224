"""The tool phase of one assistant turn, per call, against a lean trio floor.

What is timed, for N calls, is everything between the model's message and the
next request: the assistant content arrives as JSON text; it is parsed, every
``tool_use`` block becomes a :class:`~trioexec.ToolUse`, each input ``{"x": str}``
is validated (JSON Schema, then structured into an attrs class), a no-op
concurrency-safe tool runs, the next user message is built (result handling and
the message budget included) and serialised back to JSON text.

Five ways, side by side in one process:

* ``run_tools``: the batch path (``max_concurrency = N``);
* ``streaming``: :func:`~trioexec.open_streaming_executor`, every block added as
  it is parsed, then ``remaining()`` drained;
* ``floor``: what trio itself costs for the same shape: ``json.loads``, a
  nursery starting one task per call, one result dict per call, ``json.dumps``;
* ``channel`` (column ``chan floor``): the floor of the streaming shape: the
  same, except that each task sends its dict through an unbounded memory
  channel and the caller receives them with ``async for`` (every receive is a
  checkpoint, a scheduler round trip per item, which the batch shape lacks);
* ``host`` (column ``host floor``): the floor of the streaming executor's shape,
  the floor's work done the way the executor must do it: the caller's block
  opens a nursery, a host task there owns a scope and the calls' nursery, and
  the results reach the caller a burst at a time (see ``docs/performance.md``,
  "What the streaming shape costs trio itself").

Each figure is the median of several repetitions, in µs per call; the ratio
columns divide by the floor of the same N, ``stream/batch`` divides streaming by
batch, ``stream/chan`` divides streaming by the channel floor, and
``host/floor`` is what the streaming shape costs trio beside the batch shape.  The ways
alternate, so drift hits all of them alike: run by run below N = 1,000, in
blocks from there on (three rounds).  Within a block one way runs back to back,
after one run that is not timed, so each way pays the cycle collector for its
own garbage and nobody else's, as a program running turn after turn does.  (A
``gc.collect()`` before each run would not: every run would start from a clean
collector, and a 10,000-call turn allocating past the collector's threshold
would pay a full collection every time, one staying just under it never.)::

    python benchmarks/bench_tool_phase.py            # N = 1 ... 10,000
    python benchmarks/bench_tool_phase.py --sizes 100 1000 --profile
    python benchmarks/bench_tool_phase.py --statistic min   # on a loaded machine
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import math
import pstats
import statistics
import sys
import time
from typing import Any

import attrs
import trio

from trioexec import (
    CallContext,
    ContentReplacementState,
    ProgressSender,
    ResultUpdate,
    Tool,
    ToolRegistry,
    ToolUse,
    build_user_message,
    open_streaming_executor,
    run_tools,
)

SIZES = (1, 10, 100, 1_000, 10_000)
"""How many calls one turn carries."""

BUDGET_SECONDS = 0.6
"""Roughly how long each way is timed at each size (small N repeats more)."""

COLLECTOR_SIZE = 1_000
"""From this N on, the ways take turns in blocks (the cycle collector's share matters)."""

ROUNDS = 3
"""How many times the ways take turns in blocks (each turn: a block of runs of one way)."""

MIN_REPEATS = 9
"""Timed runs per way at the largest sizes, where the budget allows fewer."""


@attrs.frozen
class EchoInput:
    """The input every call carries: one string."""

    x: str


class Echo(Tool[EchoInput]):
    """A concurrency-safe tool that returns its input at once."""

    name = "Echo"
    input_type = EchoInput

    def is_concurrency_safe(self, payload: EchoInput) -> bool:
        return True

    async def call(self, payload: EchoInput, ctx: CallContext, progress: ProgressSender) -> object:
        return payload.x


def assistant_content(count: int) -> str:
    """The assistant message's content as the API sends it: N tool_use blocks."""
    blocks = [
        {"type": "tool_use", "id": f"toolu_{i:06d}", "name": "Echo", "input": {"x": f"v{i}"}}
        for i in range(count)
    ]
    return json.dumps(blocks)


async def through_run_tools(text: str, registry: ToolRegistry) -> float:
    start = time.perf_counter()
    uses = [ToolUse.from_api(block) for block in json.loads(text)]
    outcome = await run_tools(uses, registry, max_concurrency=len(uses))
    message = await build_user_message(
        outcome.updates, state=ContentReplacementState(), session_dir=None
    )
    body = json.dumps(message.to_api())
    elapsed = time.perf_counter() - start
    assert body.count('"tool_result"') == len(uses)
    return elapsed


async def through_streaming(text: str, registry: ToolRegistry) -> float:
    start = time.perf_counter()
    async with open_streaming_executor(registry, max_concurrency=10**9) as executor:
        for block in json.loads(text):
            executor.add_tool(ToolUse.from_api(block))
        updates = [u async for u in executor.remaining() if isinstance(u, ResultUpdate)]
    message = await build_user_message(updates, state=ContentReplacementState(), session_dir=None)
    body = json.dumps(message.to_api())
    elapsed = time.perf_counter() - start
    assert body.count('"tool_result"') == len(updates)
    return elapsed


async def floor(text: str, registry: ToolRegistry) -> float:
    """trio's own cost for the same shape: parse, one task and one dict per call, dump."""

    async def one(block: dict[str, Any], out: list[dict[str, Any]]) -> None:
        out.append(
            {"type": "tool_result", "tool_use_id": block["id"], "content": block["input"]["x"]}
        )

    start = time.perf_counter()
    results: list[dict[str, Any]] = []
    async with trio.open_nursery() as nursery:
        for block in json.loads(text):
            nursery.start_soon(one, block, results)
    body = json.dumps({"role": "user", "content": results})
    elapsed = time.perf_counter() - start
    assert body.count('"tool_result"') == len(results)
    return elapsed


async def channel_floor(text: str, registry: ToolRegistry) -> float:
    """trio's own cost for the streaming shape: the floor, each dict through a memory channel."""

    async def one(block: dict[str, Any], send: trio.MemorySendChannel[dict[str, Any]]) -> None:
        send.send_nowait(
            {"type": "tool_result", "tool_use_id": block["id"], "content": block["input"]["x"]}
        )

    start = time.perf_counter()
    send, receive = trio.open_memory_channel[dict[str, Any]](math.inf)
    results: list[dict[str, Any]] = []
    async with trio.open_nursery() as nursery:
        blocks = json.loads(text)
        for block in blocks:
            nursery.start_soon(one, block, send)
        async for result in receive:
            results.append(result)
            if len(results) == len(blocks):
                break
    body = json.dumps({"role": "user", "content": results})
    elapsed = time.perf_counter() - start
    assert body.count('"tool_result"') == len(results)
    return elapsed


async def host_floor(text: str, registry: ToolRegistry) -> float:
    """trio's own cost for the streaming executor's shape, with nothing of trioexec's in it.

    The shape the executor must have: the caller's block opens a nursery; a
    host task started there owns the turn's scope and the calls' nursery (so
    a cascade, which cancels that nursery, never reaches the caller's body);
    the first call runs in the host's own body, one schedule point after the
    others were started, so that it runs beside them (a lone call runs there
    with no nursery at all); each result is put in a buffer that wakes the
    caller, who takes a burst at a time, a cancellation check per item.
    """
    results: list[dict[str, Any]] = []
    caller: list[trio.lowlevel.Task] = []  # the caller, while it waits for a burst

    def deliver(block: dict[str, Any]) -> None:
        results.append(
            {"type": "tool_result", "tool_use_id": block["id"], "content": block["input"]["x"]}
        )
        if caller:
            trio.lowlevel.reschedule(caller.pop())

    async def one(block: dict[str, Any]) -> None:
        deliver(block)

    async def host(blocks: list[dict[str, Any]]) -> None:
        with trio.CancelScope():  # the turn's scope
            if len(blocks) == 1:
                await one(blocks[0])
                return
            async with trio.open_nursery() as nursery:  # its scope: the siblings'
                for block in blocks[1:]:
                    nursery.start_soon(one, block)
                await trio.lowlevel.cancel_shielded_checkpoint()
                await one(blocks[0])

    def abort(_: object) -> trio.lowlevel.Abort:
        caller.clear()
        return trio.lowlevel.Abort.SUCCEEDED

    start = time.perf_counter()
    async with trio.open_nursery() as nursery:
        blocks = json.loads(text)
        nursery.start_soon(host, blocks)
        taken = 0
        while taken < len(blocks):
            if taken == len(results):  # nothing buffered: wait for the next burst
                caller.append(trio.lowlevel.current_task())
                await trio.lowlevel.wait_task_rescheduled(abort)
            while taken < len(results):
                await trio.lowlevel.checkpoint_if_cancelled()
                taken += 1
    body = json.dumps({"role": "user", "content": results})
    elapsed = time.perf_counter() - start
    assert body.count('"tool_result"') == len(results)
    return elapsed


WAYS = {
    "run_tools": through_run_tools,
    "streaming": through_streaming,
    "floor": floor,
    "channel": channel_floor,
    "host": host_floor,
}


async def measure(
    sizes: tuple[int, ...], statistic: str = "median"
) -> dict[int, dict[str, float]]:
    """N -> way -> µs per call (the median of the repetitions, or their minimum)."""
    summary = statistics.median if statistic == "median" else min
    registry = ToolRegistry([Echo()])
    figures: dict[int, dict[str, float]] = {}
    for count in sizes:
        text = assistant_content(count)
        for way in WAYS.values():  # warm-up
            await way(text, registry)
        first = await through_run_tools(text, registry)
        repeats = max(MIN_REPEATS, min(2_000, int(BUDGET_SECONDS / max(first, 1e-6))))
        samples: dict[str, list[float]] = {name: [] for name in WAYS}
        if count < COLLECTOR_SIZE:
            for _ in range(repeats):  # the ways alternate run by run
                for name, way in WAYS.items():
                    samples[name].append(await way(text, registry))
        else:
            block = -(-repeats // ROUNDS)
            for _ in range(ROUNDS):  # the ways alternate block by block
                for name, way in WAYS.items():
                    await way(text, registry)  # not timed: the block starts in this way's state
                    for _ in range(block):
                        samples[name].append(await way(text, registry))
        figures[count] = {
            name: summary(values) / count * 1e6 for name, values in samples.items()
        }
    return figures


def profile(count: int, way: str) -> str:
    """The top functions by own time for one turn of ``count`` calls."""
    registry = ToolRegistry([Echo()])
    text = assistant_content(count)
    profiler = cProfile.Profile()

    async def main() -> None:
        await WAYS[way](text, registry)
        profiler.enable()
        for _ in range(max(1, 1_000 // count)):
            await WAYS[way](text, registry)
        profiler.disable()

    trio.run(main)
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(25)
    return out.getvalue()


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--profile", choices=sorted(WAYS), help="also print the hot spots")
    parser.add_argument(
        "--statistic",
        choices=("median", "min"),
        default="median",
        help="summary of the repetitions (min: the least disturbed run, on a loaded machine)",
    )
    args = parser.parse_args()
    sizes = tuple(args.sizes)
    print(f"python {sys.version.split()[0]}, trio {trio.__version__}")
    figures = trio.run(measure, sizes, args.statistic)
    print(
        f"{'N':>6}  {'run_tools':>10}  {'streaming':>10}  {'floor':>8}  {'chan floor':>10}"
        f"  {'host floor':>10}  {'batch/floor':>11}  {'stream/floor':>12}  {'stream/batch':>12}"
        f"  {'stream/chan':>11}  {'host/floor':>10}"
    )
    for count, row in figures.items():
        batch, stream, base = row["run_tools"], row["streaming"], row["floor"]
        chan, hosted = row["channel"], row["host"]
        print(
            f"{count:>6}  {batch:>10.1f}  {stream:>10.1f}  {base:>8.1f}  {chan:>10.1f}"
            f"  {hosted:>10.1f}  {batch / base:>11.2f}  {stream / base:>12.2f}"
            f"  {stream / batch:>12.2f}  {stream / chan:>11.2f}  {hosted / base:>10.2f}"
        )
    print(f"(µs per call, {args.statistic} of the repetitions; ratios from the same run)")
    if args.profile:
        print(profile(sizes[-1], args.profile))


if __name__ == "__main__":
    main()
