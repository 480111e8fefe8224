"""Per-call overhead of ``run_tools`` against raw trio tasks, on the real clock.

For N = 1,000 and 10,000, one safe batch of N no-op calls runs through
``run_tools`` (``max_concurrency = N``), and N raw trio tasks are started in a
nursery, each sending one item on a memory channel.  Both are timed as the
median of several repetitions, in microseconds per call.  The last line is the
ratio at N = 10,000::

    python benchmarks/bench_overhead.py            # prints the table and the ratio
    python benchmarks/bench_overhead.py --profile  # also prints the top hot spots

The validators are compiled once (a ``ToolRegistry`` built up front), as an
agent loop would: only the per-call path is measured.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import math
import pstats
import statistics
import sys
import time
from typing import Any

import trio

from trioexec import CallContext, ProgressSender, Tool, ToolRegistry, ToolUse, run_tools

SIZES = (1_000, 10_000)
REPEATS = {1_000: 15, 10_000: 7}


class NoOp(Tool[dict[str, Any]]):
    """A concurrency-safe tool that returns at once."""

    name = "NoOp"
    input_schema: dict[str, Any] = {"type": "object"}  # noqa: RUF012

    def is_concurrency_safe(self, payload: dict[str, Any]) -> bool:
        return True

    async def call(
        self, payload: dict[str, Any], ctx: CallContext, progress: ProgressSender
    ) -> object:
        return "ok"


async def through_run_tools(uses: list[ToolUse], registry: ToolRegistry) -> float:
    start = time.perf_counter()
    outcome = await run_tools(uses, registry, max_concurrency=len(uses))
    elapsed = time.perf_counter() - start
    assert len(outcome.updates) == len(uses)
    assert all(not r.is_error for r in outcome.results)
    return elapsed


async def raw_tasks(count: int) -> float:
    """N bare tasks, each sending one item on a shared unbounded channel.

    One shared send side (no ``clone()`` per task) keeps the baseline as cheap
    as trio allows, so the ratio is an upper bound on our overhead.
    """

    async def one(send: trio.MemorySendChannel[int], index: int) -> None:
        await send.send(index)

    start = time.perf_counter()
    send, receive = trio.open_memory_channel[int](math.inf)
    async with trio.open_nursery() as nursery:
        for index in range(count):
            nursery.start_soon(one, send, index)
    send.close()
    received = [item async for item in receive]
    elapsed = time.perf_counter() - start
    assert len(received) == count
    return elapsed


async def measure() -> dict[int, tuple[float, float]]:
    """N -> (run_tools µs per call, raw trio µs per call), medians."""
    registry = ToolRegistry([NoOp()])
    figures: dict[int, tuple[float, float]] = {}
    for count in SIZES:
        uses = [ToolUse(f"toolu_{i:06d}", "NoOp", {}) for i in range(count)]
        # One warm-up round each, then alternate so drift hits both sides alike.
        await through_run_tools(uses, registry)
        await raw_tasks(count)
        ours: list[float] = []
        raw: list[float] = []
        for _ in range(REPEATS[count]):
            gc.collect()
            ours.append(await through_run_tools(uses, registry))
            gc.collect()
            raw.append(await raw_tasks(count))
        figures[count] = (
            statistics.median(ours) / count * 1e6,
            statistics.median(raw) / count * 1e6,
        )
    return figures


def profile(count: int = 10_000) -> str:
    """The top functions by own time for one run_tools call of ``count`` no-ops."""
    registry = ToolRegistry([NoOp()])
    uses = [ToolUse(f"toolu_{i:06d}", "NoOp", {}) for i in range(count)]
    profiler = cProfile.Profile()

    async def main() -> None:
        await through_run_tools(uses, registry)
        profiler.enable()
        await through_run_tools(uses, registry)
        profiler.disable()

    trio.run(main)
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(20)
    return out.getvalue()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", action="store_true", help="print the top hot spots")
    args = parser.parse_args()
    print(f"python {sys.version.split()[0]}, trio {trio.__version__}")
    figures = trio.run(measure)
    print(f"{'N':>7}  {'run_tools µs/call':>18}  {'raw trio µs/call':>17}  {'ratio':>6}")
    for count, (ours, raw) in figures.items():
        print(f"{count:>7}  {ours:>18.2f}  {raw:>17.2f}  {ours / raw:>6.2f}")
    if args.profile:
        print(profile())
    ours, raw = figures[10_000]
    print(f"overhead ratio: {ours / raw:.2f}")


if __name__ == "__main__":
    main()
