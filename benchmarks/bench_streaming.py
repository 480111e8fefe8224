"""Latencies of the streaming executor, on the real clock (medians of many runs).

* ``add_tool`` -> the tool's body running (µs), with the executor idle;
* a progress send -> the consumer receiving it (µs), one item in flight;
* a cascading error -> every one of N executing siblings answered (ms), for
  N = 100 and 1,000, beside raw trio's time to cancel N tasks in a nursery.

::

    python benchmarks/bench_streaming.py
"""

from __future__ import annotations

import gc
import statistics
import sys
import time
from typing import Any

import trio

from trioexec import (
    CallContext,
    ProgressSender,
    ProgressUpdate,
    ResultUpdate,
    Tool,
    ToolRegistry,
    ToolUse,
    open_streaming_executor,
)

START_RUNS = 2_000
PROGRESS_ITEMS = 2_000
CASCADE_RUNS = {100: 40, 1_000: 10}


class Probe(Tool[dict[str, Any]]):
    """A safe tool whose behaviour each payload sets: return, stream progress, or wait."""

    name = "Probe"
    input_schema: dict[str, Any] = {"type": "object"}  # noqa: RUF012

    def __init__(self) -> None:
        self.entered: list[float] = []
        self.ack: trio.Event | None = None
        self.release = trio.Event()

    def is_concurrency_safe(self, payload: dict[str, Any]) -> bool:
        return True

    async def call(
        self, payload: dict[str, Any], ctx: CallContext, progress: ProgressSender
    ) -> object:
        self.entered.append(time.perf_counter())
        mode = payload.get("mode")
        if mode == "progress":
            for _ in range(int(payload["items"])):
                self.ack = trio.Event()
                progress(time.perf_counter())
                await self.ack.wait()
        elif mode == "forever":
            await trio.sleep_forever()
        elif mode == "wait":
            await self.release.wait()
        return "ok"


class Trigger(Tool[dict[str, Any]]):
    """Cascading tool: waits for the go signal, then fails."""

    name = "Bash"
    input_schema: dict[str, Any] = {"type": "object"}  # noqa: RUF012
    cancels_siblings_on_error = True

    def __init__(self) -> None:
        self.go = trio.Event()
        self.failed_at = 0.0

    def is_concurrency_safe(self, payload: dict[str, Any]) -> bool:
        return True

    async def call(
        self, payload: dict[str, Any], ctx: CallContext, progress: ProgressSender
    ) -> object:
        await self.go.wait()
        self.failed_at = time.perf_counter()
        raise RuntimeError("exit 1")


async def add_to_body(count: int = START_RUNS) -> list[float]:
    """µs from ``add_tool`` returning control to the loop until the body starts."""
    probe = Probe()
    samples: list[float] = []
    async with open_streaming_executor(ToolRegistry([probe])) as executor:
        for index in range(count):
            probe.entered.clear()
            start = time.perf_counter()
            executor.add_tool(ToolUse(f"s{index}", "Probe", {}))
            while not executor.drain_nowait():
                await trio.lowlevel.checkpoint()
            samples.append((probe.entered[0] - start) * 1e6)
    return samples


async def progress_latency(count: int = PROGRESS_ITEMS) -> list[float]:
    """µs from ``progress(...)`` in the tool to the consumer holding the item."""
    probe = Probe()
    samples: list[float] = []
    async with open_streaming_executor(ToolRegistry([probe])) as executor:
        executor.add_tool(ToolUse("p", "Probe", {"mode": "progress", "items": count}))
        async for update in executor.remaining():
            if isinstance(update, ProgressUpdate):
                received = time.perf_counter()
                assert isinstance(update.data, float)
                samples.append((received - update.data) * 1e6)
                assert probe.ack is not None
                probe.ack.set()
    return samples


async def cascade_once(count: int) -> float:
    """ms from the cascading tool raising to all ``count`` siblings' answers received."""
    probe, trigger = Probe(), Trigger()
    answered = 0
    finished = 0.0
    async with open_streaming_executor(
        ToolRegistry([probe, trigger]), max_concurrency=count + 1
    ) as executor:
        for index in range(count):
            executor.add_tool(ToolUse(f"c{index}", "Probe", {"mode": "forever"}))
        executor.add_tool(ToolUse("trigger", "Bash", {"command": "make"}))
        while len(probe.entered) < count:
            await trio.sleep(0)
        trigger.go.set()
        async for update in executor.remaining():
            if isinstance(update, ResultUpdate) and update.result.tool_use_id != "trigger":
                assert update.result.is_error
                answered += 1
                if answered == count:
                    finished = time.perf_counter()
    assert answered == count
    return (finished - trigger.failed_at) * 1e3


async def raw_cancel_once(count: int) -> float:
    """ms for raw trio to cancel ``count`` sleeping tasks in a nursery and join them."""
    started = 0

    async def sleeper() -> None:
        nonlocal started
        started += 1
        await trio.sleep_forever()

    async with trio.open_nursery() as nursery:
        for _ in range(count):
            nursery.start_soon(sleeper)
        while started < count:
            await trio.sleep(0)
        start = time.perf_counter()
        nursery.cancel_scope.cancel(reason="benchmark")
    return (time.perf_counter() - start) * 1e3


async def cascades() -> dict[int, tuple[float, float, float, float]]:
    figures: dict[int, tuple[float, float, float, float]] = {}
    for count, runs in CASCADE_RUNS.items():
        await cascade_once(count)
        await raw_cancel_once(count)
        ours: list[float] = []
        raw: list[float] = []
        for _ in range(runs):
            gc.collect()
            ours.append(await cascade_once(count))
            gc.collect()
            raw.append(await raw_cancel_once(count))
        figures[count] = (statistics.median(ours), statistics.median(raw), min(ours), min(raw))
    return figures


async def main() -> None:
    print(f"python {sys.version.split()[0]}, trio {trio.__version__}")
    starts = await add_to_body()
    print(
        f"add_tool -> body running: median {statistics.median(starts):.1f} µs "
        f"(p90 {statistics.quantiles(starts, n=10)[-1]:.1f} µs, {len(starts)} runs)"
    )
    progress = await progress_latency()
    print(
        f"progress -> consumer:      median {statistics.median(progress):.1f} µs "
        f"(p90 {statistics.quantiles(progress, n=10)[-1]:.1f} µs, {len(progress)} items)"
    )
    for count, (ours, raw, least, least_raw) in (await cascades()).items():
        print(
            f"cascade, {count:>5} executing siblings answered: median {ours:.2f} ms; "
            f"raw trio cancel of {count} tasks: {raw:.2f} ms ({ours / raw:.1f}x); "
            f"least disturbed runs: {least:.2f} ms against {least_raw:.2f} ms "
            f"({least / least_raw:.1f}x)"
        )


if __name__ == "__main__":
    trio.run(main)
