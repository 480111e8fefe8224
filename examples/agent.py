"""Build an agent: the model streams, and trioexec runs each tool call the moment it arrives.

Needs ``pip install 'trioexec[anthropic]'`` and ``ANTHROPIC_API_KEY``; run it as
``python examples/agent.py "How many words are in the first line of README.md?"``.
"""

import os
import sys
from typing import Annotated

import anthropic
import trio

import trioexec
from trioexec.anthropic import Agent, FailedAttempt
from trioexec.tools import default_tools


@trioexec.function_tool(concurrency_safe=True)
async def word_count(text: Annotated[str, "The text whose words to count"]) -> str:
    """Count the words in a text."""
    return str(len(text.split()))


def stream_failed(failed: FailedAttempt) -> None:
    """A stream broke off: say what became of each call it had sent (none runs twice)."""
    for call, fate in failed.calls:  # "kept": it ran once and the model sees its result
        print(f"\n  [stream failed: {call.name} {fate}]", file=sys.stderr, flush=True)


async def main(prompt: str) -> None:
    agent = Agent(
        anthropic.AsyncAnthropic(),  # reads ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL)
        model=os.environ.get("ANTHROPIC_MODEL", "claude-sonnet-4-5"),
        tools=[*default_tools("."), word_count],  # Read, Write, Edit, Glob, Grep, Bash
        guard=trioexec.GuardRails.from_settings({"permissions": {"allow": ["Read", "Grep"]}}),
        max_turns=10,
        on_text=lambda delta: print(delta, end="", flush=True),
        on_tool_use=lambda call: print(f"\n  [{call.name}] {call.input}", flush=True),
        on_stream_failure=stream_failed,
    )
    result = await agent.run(prompt)  # turns until the model stops calling tools
    print(f"\n{result.stop_reason} after {result.turns} turns, {len(result.messages)} messages")


trio.run(main, " ".join(sys.argv[1:]) or "How many words are in the first line of README.md?")
