"""The tool phase measured the same way in popular asyncio agent frameworks.

Each framework gets one assistant turn that carries N calls of a no-op tool
taking ``{"x": str}`` (validated by the framework's own machinery) and answers
with the tool's input.  What is timed is the framework's tool phase: from the
model's tool calls to the tool results the next request would carry.

* pydantic-ai: an ``Agent`` on a ``FunctionModel`` that asks for N calls, then
  ends; the same agent run with no call is subtracted, leaving the tool phase.
* openai-agents: a ``Runner`` on a scripted ``Model`` that asks for N function
  calls, then ends; the no-call run is subtracted likewise (tracing off).
* langgraph: a graph of one prebuilt ``ToolNode`` given one ``AIMessage`` with N
  tool calls.

Frameworks that are not installed are skipped (``pip install -e '.[bench]'``).
Run on its own it prints µs per call; ``compare.py`` uses :func:`measure`::

    python benchmarks/peers.py --sizes 1 10 100
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import time
from collections.abc import Awaitable, Callable
from typing import Any

Runner = Callable[[int], Awaitable[float]]
"""N -> seconds for one tool phase of N calls."""

BUDGET_SECONDS = 0.5


def _pydantic_ai() -> Runner | None:
    try:
        from pydantic_ai import Agent
        from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
        from pydantic_ai.models.function import AgentInfo, FunctionModel
    except ImportError:
        return None

    def agent_for(count: int) -> object:
        def respond(messages: list[Any], info: AgentInfo) -> ModelResponse:
            if len(messages) == 1 and count:
                return ModelResponse(
                    parts=[
                        ToolCallPart("echo", {"x": f"v{i}"}, tool_call_id=f"call_{i}")
                        for i in range(count)
                    ]
                )
            return ModelResponse(parts=[TextPart("done")])

        agent = Agent(FunctionModel(respond))

        @agent.tool_plain
        async def echo(x: str) -> str:
            return x

        return agent

    agents: dict[int, Any] = {}

    async def run(count: int) -> float:
        agent = agents.setdefault(count, agent_for(count))
        start = time.perf_counter()
        await agent.run("go")
        return time.perf_counter() - start

    return _minus_no_call_turn(run)


def _openai_agents() -> Runner | None:
    try:
        from agents import Agent, ModelResponse, Runner, Usage, function_tool, set_tracing_disabled
        from agents.models.interface import Model
        from openai.types.responses import (
            ResponseFunctionToolCall,
            ResponseOutputMessage,
            ResponseOutputText,
        )
    except ImportError:
        return None
    set_tracing_disabled(True)

    @function_tool
    async def echo(x: str) -> str:
        """Echo x."""
        return x

    class Scripted(Model):
        def __init__(self, count: int) -> None:
            self.count = count
            self.turn = 0

        async def get_response(self, *args: object, **kwargs: object) -> ModelResponse:
            self.turn += 1
            if self.turn == 1 and self.count:
                output: list[Any] = [
                    ResponseFunctionToolCall(
                        type="function_call",
                        call_id=f"call_{i}",
                        name="echo",
                        arguments=f'{{"x": "v{i}"}}',
                        id=f"fc_{i}",
                    )
                    for i in range(self.count)
                ]
            else:
                output = [
                    ResponseOutputMessage(
                        id="msg",
                        type="message",
                        role="assistant",
                        status="completed",
                        content=[
                            ResponseOutputText(type="output_text", text="done", annotations=[])
                        ],
                    )
                ]
            return ModelResponse(output=output, usage=Usage(), response_id=None)

        def stream_response(self, *args: object, **kwargs: object) -> object:  # pragma: no cover
            raise NotImplementedError

    async def run(count: int) -> float:
        agent = Agent(name="bench", model=Scripted(count), tools=[echo])
        start = time.perf_counter()
        await Runner.run(agent, "go")
        return time.perf_counter() - start

    return _minus_no_call_turn(run)


def _langgraph() -> Runner | None:
    try:
        from langchain_core.messages import AIMessage
        from langchain_core.tools import tool
        from langgraph.graph import END, START, MessagesState, StateGraph
        from langgraph.prebuilt import ToolNode
    except ImportError:
        return None

    @tool
    async def echo(x: str) -> str:
        """Echo x."""
        return x

    graph = StateGraph(MessagesState)
    graph.add_node("tools", ToolNode([echo]))
    graph.add_edge(START, "tools")
    graph.add_edge("tools", END)
    app = graph.compile()

    async def run(count: int) -> float:
        message = AIMessage(
            content="",
            tool_calls=[
                {"name": "echo", "args": {"x": f"v{i}"}, "id": f"call_{i}", "type": "tool_call"}
                for i in range(count)
            ],
        )
        start = time.perf_counter()
        out = await app.ainvoke({"messages": [message]})
        elapsed = time.perf_counter() - start
        assert len(out["messages"]) == count + 1
        return elapsed

    return run


def _minus_no_call_turn(run: Runner) -> Runner:
    """Time a turn of N calls less the same turn without calls (the agent loop's own cost)."""

    async def tool_phase(count: int) -> float:
        return await run(count) - await run(0)

    return tool_phase


PEERS: dict[str, Callable[[], Runner | None]] = {
    "pydantic-ai": _pydantic_ai,
    "openai-agents": _openai_agents,
    "langgraph": _langgraph,
}


async def _median_per_call(run: Runner, count: int) -> float:
    await run(count)  # warm-up
    first = await run(count)
    repeats = max(3, min(500, int(BUDGET_SECONDS / max(first, 1e-6))))
    samples = []
    for _ in range(repeats):
        if count >= 1_000:
            gc.collect()
        samples.append(await run(count))
    return max(statistics.median(samples), 0.0) / count * 1e6


def measure(sizes: tuple[int, ...]) -> dict[str, dict[int, float]]:
    """Framework -> N -> median µs per call, for every installed framework."""
    figures: dict[str, dict[int, float]] = {}
    for name, make in PEERS.items():
        run = make()
        if run is None:
            continue
        figures[name] = {count: asyncio.run(_median_per_call(run, count)) for count in sizes}
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 10, 100, 1_000])
    args = parser.parse_args()
    figures = measure(tuple(args.sizes))
    if not figures:
        print("no framework installed: pip install -e '.[bench]'")
    for name, row in figures.items():
        cells = "  ".join(f"N={count}: {value:.1f}" for count, value in row.items())
        print(f"{name:>14}  {cells}  (µs per call)")


if __name__ == "__main__":
    main()
