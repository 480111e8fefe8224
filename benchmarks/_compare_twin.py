"""The asyncio twin's ways for ``compare.py`` (``benchmarks/asyncio_twin/``).

Each function has the shape of its trioexec counterpart in ``_compare_trio.py``
and runs the same tools (the no-op ``Echo`` is shared; the waiting tools wait
on asyncio's primitives instead of trio's).  The twin's front ends take the
same arguments as trioexec's; the next user message is built from the same
pure parts (``choose_replacements``, ``UserMessage``) with one checkpoint,
as ``build_user_message`` does on trio.

The twin is optional at run time: when ``benchmarks.asyncio_twin`` cannot be
imported, :data:`AVAILABLE` is false, every table here is empty and
``compare.py`` reports without its columns.
"""

from __future__ import annotations

import asyncio
import json
import time
import tracemalloc
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench_tool_phase import Echo

from trioexec import (
    CallContext,
    ContentReplacementState,
    ProgressSender,
    ProgressUpdate,
    ResultUpdate,
    Tool,
    ToolRegistry,
    ToolUse,
)
from trioexec._results._budget import choose_replacements
from trioexec._results._message import UserMessage

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Sequence

try:
    from benchmarks.asyncio_twin import open_streaming_executor, run_tools
except ImportError:  # the twin is not in this checkout
    AVAILABLE = False
else:
    AVAILABLE = True

_NOT_ORCHESTRATION = {"__init__.py", "__main__.py", "_loop.py", "_scenario.py"}
FILES = tuple(
    f"benchmarks/asyncio_twin/{path.name}"
    for path in sorted((Path(__file__).parent / "asyncio_twin").glob("*.py"))
    if path.name not in _NOT_ORCHESTRATION
)
"""The twin's own orchestrator files, relative to the repository root: every module of
``benchmarks/asyncio_twin/`` but its package files, its virtual-clock loop and its scenario
runner (which serve the scenario files on virtual time, not the orchestration: on a real
loop the twin's end of an instant is one ``call_soon``)."""

ECHO_REGISTRY = ToolRegistry([Echo()])


class Probe(Tool[dict[str, Any]]):
    """The twin's ``Probe``: returns, streams progress, or waits, on asyncio's primitives."""

    name = "Probe"
    input_schema: dict[str, Any] = {"type": "object"}  # noqa: RUF012

    def __init__(self) -> None:
        self.entered: list[float] = []
        self.ack: asyncio.Event | None = None
        self.release = asyncio.Event()

    def is_concurrency_safe(self, payload: dict[str, Any]) -> bool:
        return True

    async def call(
        self, payload: dict[str, Any], ctx: CallContext, progress: ProgressSender
    ) -> object:
        self.entered.append(time.perf_counter())
        mode = payload.get("mode")
        if mode == "progress":
            for _ in range(int(payload["items"])):
                self.ack = asyncio.Event()
                progress(time.perf_counter())
                await self.ack.wait()
        elif mode == "forever":
            await asyncio.Event().wait()
        elif mode == "wait":
            await self.release.wait()
        return "ok"


class Trigger(Tool[dict[str, Any]]):
    """The cascading tool (a failing ``Bash``): waits for the go signal, then fails."""

    name = "Bash"
    input_schema: dict[str, Any] = {"type": "object"}  # noqa: RUF012
    cancels_siblings_on_error = True

    def __init__(self) -> None:
        self.go = asyncio.Event()
        self.failed_at = 0.0

    def is_concurrency_safe(self, payload: dict[str, Any]) -> bool:
        return True

    async def call(
        self, payload: dict[str, Any], ctx: CallContext, progress: ProgressSender
    ) -> object:
        await self.go.wait()
        self.failed_at = time.perf_counter()
        raise RuntimeError("exit 1")


async def _message(updates: Sequence[ResultUpdate]) -> str:
    """``build_user_message`` without trio: the same budget decision, one checkpoint."""
    results = [update.result for update in updates]
    state = ContentReplacementState()
    plan = choose_replacements(results, state=state, session_dir=None)
    await asyncio.sleep(0)
    plan.commit(state, set())
    message = UserMessage(
        results=tuple(plan.apply(results, set())),
        attachments=tuple(a for update in updates for a in update.attachments),
    )
    return json.dumps(message.to_api())


async def twin_batch(text: str) -> float:
    """One turn through the twin's ``run_tools``."""
    start = time.perf_counter()
    uses = [ToolUse.from_api(block) for block in json.loads(text)]
    outcome = await run_tools(uses, ECHO_REGISTRY, max_concurrency=len(uses))
    body = await _message(outcome.updates)
    elapsed = time.perf_counter() - start
    assert body.count('"tool_result"') == len(uses)
    return elapsed


async def twin_streaming(text: str) -> float:
    """One turn through the twin's streaming executor."""
    start = time.perf_counter()
    async with open_streaming_executor(ECHO_REGISTRY, max_concurrency=10**9) as executor:
        for block in json.loads(text):
            executor.add_tool(ToolUse.from_api(block))
        updates = [u async for u in executor.remaining() if isinstance(u, ResultUpdate)]
    body = await _message(updates)
    elapsed = time.perf_counter() - start
    assert body.count('"tool_result"') == len(updates)
    return elapsed


async def twin_add_to_start(count: int) -> list[float]:
    """µs from ``add_tool`` until the tool's body runs, the executor otherwise idle."""
    probe = Probe()
    samples: list[float] = []
    async with open_streaming_executor(ToolRegistry([probe])) as executor:
        for index in range(count):
            probe.entered.clear()
            start = time.perf_counter()
            executor.add_tool(ToolUse(f"s{index}", "Probe", {}))
            while not executor.drain_nowait():
                await asyncio.sleep(0)
            samples.append((probe.entered[0] - start) * 1e6)
    return samples


async def twin_progress(count: int) -> list[float]:
    """µs from ``progress(...)`` in a tool until the consumer holds the update."""
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


async def twin_cascade(count: int) -> float:
    """ms from a cascading error until all ``count`` executing siblings are answered."""
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
            await asyncio.sleep(0)
        trigger.go.set()
        async for update in executor.remaining():
            if isinstance(update, ResultUpdate) and update.result.tool_use_id != "trigger":
                assert update.result.is_error
                answered += 1
                if answered == count:
                    finished = time.perf_counter()
    assert answered == count
    return (finished - trigger.failed_at) * 1e3


async def twin_memory_streaming(count: int) -> float:
    """Bytes traced per call while ``count`` calls wait inside the twin's streaming executor."""
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
                await asyncio.sleep(0)
            held = tracemalloc.get_traced_memory()[0] - base
            probe.release.set()
            async for _ in executor.remaining():
                pass
    finally:
        tracemalloc.stop()
    return held / count


async def twin_memory_batch(count: int) -> float:
    """Bytes traced per call while ``count`` calls of one safe batch wait in ``run_tools``."""
    probe = Probe()
    registry = ToolRegistry([probe])
    uses = [ToolUse(f"m{i}", "Probe", {"mode": "wait"}) for i in range(count)]
    held = 0

    async def measure() -> None:
        nonlocal held
        while len(probe.entered) < count:
            await asyncio.sleep(0)
        held = tracemalloc.get_traced_memory()[0] - base
        probe.release.set()

    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        async with asyncio.TaskGroup() as group:
            group.create_task(measure())
            outcome = await run_tools(uses, registry, max_concurrency=count)
    finally:
        tracemalloc.stop()
    assert len(outcome.results) == count
    return held / count


TOOL_PHASE: dict[str, Callable[[str], Awaitable[float]]] = {}
ADD_TO_START: dict[str, Callable[[int], Awaitable[list[float]]]] = {}
PROGRESS: dict[str, Callable[[int], Awaitable[list[float]]]] = {}
CASCADE: dict[str, Callable[[int], Awaitable[float]]] = {}
MEMORY: dict[str, Callable[[int], Awaitable[float]]] = {}
if AVAILABLE:
    TOOL_PHASE.update({"twin run_tools": twin_batch, "twin streaming": twin_streaming})
    ADD_TO_START["twin"] = twin_add_to_start
    PROGRESS["twin"] = twin_progress
    CASCADE["twin"] = twin_cascade
    MEMORY.update({"twin run_tools": twin_memory_batch, "twin streaming": twin_memory_streaming})
