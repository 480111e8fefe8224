"""The trio side of ``compare.py``: trioexec's workloads and raw trio's floors.

Every workload here has a twin in ``_compare_asyncio.py`` (the asyncio twin
and raw asyncio) with the same shape, so ``compare.py`` can put the two side
by side.  A *way* is one async function; what it returns is one sample:

* tool phase: ``text -> seconds`` for one turn (the shape of
  ``bench_tool_phase.py``: parse, validate, run a no-op tool, build and dump
  the next user message);
* add -> start: ``count -> µs samples`` from handing a call over until its
  body runs;
* progress: ``count -> µs samples`` from a progress send until the consumer
  holds it;
* cascade: ``count -> ms`` from a cascading error until every one of
  ``count`` executing siblings is answered (raw floors: one child raises in a
  nursery of ``count`` sleeping children, until the nursery is joined);
* memory: ``count -> bytes`` traced by :mod:`tracemalloc` while ``count``
  calls are in flight, per call.
"""

from __future__ import annotations

import time
import tracemalloc

import trio
from bench_streaming import Probe, add_to_body, cascade_once, progress_latency
from bench_tool_phase import Echo, floor, through_run_tools, through_streaming

from trioexec import (
    ToolRegistry,
    ToolUse,
    open_streaming_executor,
    run_tools,
)

ECHO_REGISTRY = ToolRegistry([Echo()])


# -- tool phase ------------------------------------------------------------------


async def trioexec_batch(text: str) -> float:
    """One turn through ``run_tools`` (see ``bench_tool_phase.py``)."""
    return await through_run_tools(text, ECHO_REGISTRY)


async def trioexec_streaming(text: str) -> float:
    """One turn through the streaming executor (see ``bench_tool_phase.py``)."""
    return await through_streaming(text, ECHO_REGISTRY)


async def raw_trio_phase(text: str) -> float:
    """trio's own cost for the shape: parse, a nursery with one task per call, dump."""
    return await floor(text, ECHO_REGISTRY)


TOOL_PHASE = {
    "trioexec run_tools": trioexec_batch,
    "trioexec streaming": trioexec_streaming,
    "raw trio": raw_trio_phase,
}


# -- add -> start and progress -----------------------------------------------------


async def raw_trio_add_to_start(count: int) -> list[float]:
    """µs from ``nursery.start_soon`` until the task's body runs."""
    entered: list[float] = []

    async def body() -> None:
        entered.append(time.perf_counter())

    samples: list[float] = []
    async with trio.open_nursery() as nursery:
        for _ in range(count):
            entered.clear()
            start = time.perf_counter()
            nursery.start_soon(body)
            while not entered:
                await trio.lowlevel.checkpoint()
            samples.append((entered[0] - start) * 1e6)
    return samples


async def raw_trio_progress(count: int) -> list[float]:
    """µs from ``send_nowait`` on an unbounded memory channel until the receiver holds it."""
    send, receive = trio.open_memory_channel[float](float("inf"))
    ack = trio.Event()
    samples: list[float] = []

    async def producer() -> None:
        nonlocal ack
        async with send:
            for _ in range(count):
                ack = trio.Event()
                send.send_nowait(time.perf_counter())
                await ack.wait()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(producer)
        async for sent in receive:
            samples.append((time.perf_counter() - sent) * 1e6)
            ack.set()
    return samples


ADD_TO_START = {"trioexec": add_to_body, "raw trio": raw_trio_add_to_start}
PROGRESS = {"trioexec": progress_latency, "raw trio": raw_trio_progress}


# -- cascade ---------------------------------------------------------------------------


class _Failed(Exception):
    pass


async def raw_trio_cascade(count: int) -> float:
    """ms from one child raising until its ``count`` sleeping siblings are cancelled and joined."""
    started = 0
    go = trio.Event()
    failed_at = 0.0

    async def sleeper() -> None:
        nonlocal started
        started += 1
        await trio.sleep_forever()

    async def failer() -> None:
        nonlocal failed_at
        await go.wait()
        failed_at = time.perf_counter()
        raise _Failed

    try:
        async with trio.open_nursery() as nursery:
            for _ in range(count):
                nursery.start_soon(sleeper)
            nursery.start_soon(failer)
            while started < count:
                await trio.sleep(0)
            go.set()
    except* _Failed:
        pass
    return (time.perf_counter() - failed_at) * 1e3


CASCADE = {"trioexec": cascade_once, "raw trio": raw_trio_cascade}


# -- memory per in-flight call ------------------------------------------------------------


async def trioexec_memory_streaming(count: int) -> float:
    """Bytes traced per call while ``count`` calls wait inside the streaming executor."""
    probe = Probe()
    registry = ToolRegistry([probe])
    uses = [ToolUse(f"m{i}", "Probe", {"mode": "wait"}) for i in range(count)]
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        async with open_streaming_executor(registry, max_concurrency=count) as executor:
            for use in uses:
                executor.add_tool(use)
            while len(probe.entered) < count:
                await trio.sleep(0)
            held = tracemalloc.get_traced_memory()[0] - base
            probe.release.set()
            async for _ in executor.remaining():
                pass
    finally:
        tracemalloc.stop()
    return held / count


async def trioexec_memory_batch(count: int) -> float:
    """Bytes traced per call while ``count`` calls of one safe batch wait in ``run_tools``."""
    probe = Probe()
    registry = ToolRegistry([probe])
    uses = [ToolUse(f"m{i}", "Probe", {"mode": "wait"}) for i in range(count)]
    held = 0
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        async with trio.open_nursery() as nursery:

            async def measure() -> None:
                nonlocal held
                while len(probe.entered) < count:
                    await trio.sleep(0)
                held = tracemalloc.get_traced_memory()[0] - base
                probe.release.set()

            nursery.start_soon(measure)
            outcome = await run_tools(uses, registry, max_concurrency=count)
    finally:
        tracemalloc.stop()
    assert len(outcome.results) == count
    return held / count


async def raw_trio_memory(count: int) -> float:
    """Bytes traced per task while ``count`` tasks wait on one event in a nursery."""
    release = trio.Event()
    started = 0

    async def waiter() -> None:
        nonlocal started
        started += 1
        await release.wait()

    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        async with trio.open_nursery() as nursery:
            for _ in range(count):
                nursery.start_soon(waiter)
            while started < count:
                await trio.sleep(0)
            held = tracemalloc.get_traced_memory()[0] - base
            release.set()
    finally:
        tracemalloc.stop()
    return held / count


MEMORY = {
    "trioexec run_tools": trioexec_memory_batch,
    "trioexec streaming": trioexec_memory_streaming,
    "raw trio": raw_trio_memory,
}


def versions() -> dict[str, str]:
    """The trio side's library versions."""
    import trioexec

    return {"trio": trio.__version__, "trioexec": getattr(trioexec, "__version__", "?")}
