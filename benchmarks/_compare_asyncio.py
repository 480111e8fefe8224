"""The asyncio side of ``compare.py``: raw asyncio's floors (the twin's ways live in
``_compare_twin.py``).

Each function has the shape of its trio counterpart in ``_compare_trio.py``:
a ``TaskGroup`` where trio has a nursery, ``create_task`` where trio has
``start_soon``, an ``asyncio.Queue`` where trio has a memory channel.
"""

from __future__ import annotations

import asyncio
import json
import time
import tracemalloc
from typing import Any


async def raw_asyncio_phase(text: str) -> float:
    """asyncio's own cost for the tool-phase shape: parse, a TaskGroup with one task per
    call, one result dict per call, dump."""

    async def one(block: dict[str, Any], out: list[dict[str, Any]]) -> None:
        out.append(
            {"type": "tool_result", "tool_use_id": block["id"], "content": block["input"]["x"]}
        )

    start = time.perf_counter()
    results: list[dict[str, Any]] = []
    async with asyncio.TaskGroup() as group:
        for block in json.loads(text):
            group.create_task(one(block, results))
    body = json.dumps({"role": "user", "content": results})
    elapsed = time.perf_counter() - start
    assert body.count('"tool_result"') == len(results)
    return elapsed


async def raw_asyncio_add_to_start(count: int) -> list[float]:
    """µs from ``create_task`` until the task's body runs."""
    entered: list[float] = []

    async def body() -> None:
        entered.append(time.perf_counter())

    samples: list[float] = []
    async with asyncio.TaskGroup() as group:
        for _ in range(count):
            entered.clear()
            start = time.perf_counter()
            group.create_task(body())
            while not entered:
                await asyncio.sleep(0)
            samples.append((entered[0] - start) * 1e6)
    return samples


async def raw_asyncio_progress(count: int) -> list[float]:
    """µs from ``put_nowait`` on an unbounded ``asyncio.Queue`` until the getter holds it."""
    queue: asyncio.Queue[float | None] = asyncio.Queue()
    ack = asyncio.Event()
    samples: list[float] = []

    async def producer() -> None:
        nonlocal ack
        for _ in range(count):
            ack = asyncio.Event()
            queue.put_nowait(time.perf_counter())
            await ack.wait()
        queue.put_nowait(None)

    async with asyncio.TaskGroup() as group:
        group.create_task(producer())
        while (sent := await queue.get()) is not None:
            samples.append((time.perf_counter() - sent) * 1e6)
            ack.set()
    return samples


class _Failed(Exception):
    pass


async def raw_asyncio_cascade(count: int) -> float:
    """ms from one task raising until its ``count`` sleeping siblings are cancelled and the
    TaskGroup is joined."""
    started = 0
    go = asyncio.Event()
    failed_at = 0.0

    async def sleeper() -> None:
        nonlocal started
        started += 1
        await asyncio.Event().wait()

    async def failer() -> None:
        nonlocal failed_at
        await go.wait()
        failed_at = time.perf_counter()
        raise _Failed

    try:
        async with asyncio.TaskGroup() as group:
            for _ in range(count):
                group.create_task(sleeper())
            group.create_task(failer())
            while started < count:
                await asyncio.sleep(0)
            go.set()
    except* _Failed:
        pass
    return (time.perf_counter() - failed_at) * 1e3


async def raw_asyncio_memory(count: int) -> float:
    """Bytes traced per task while ``count`` tasks wait on one event in a TaskGroup."""
    release = asyncio.Event()
    started = 0

    async def waiter() -> None:
        nonlocal started
        started += 1
        await release.wait()

    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        async with asyncio.TaskGroup() as group:
            for _ in range(count):
                group.create_task(waiter())
            while started < count:
                await asyncio.sleep(0)
            held = tracemalloc.get_traced_memory()[0] - base
            release.set()
    finally:
        tracemalloc.stop()
    return held / count


TOOL_PHASE = {"raw asyncio": raw_asyncio_phase}
ADD_TO_START = {"raw asyncio": raw_asyncio_add_to_start}
PROGRESS = {"raw asyncio": raw_asyncio_progress}
CASCADE = {"raw asyncio": raw_asyncio_cascade}
MEMORY = {"raw asyncio": raw_asyncio_memory}
