"""Result sizes: a large result persisted to the session folder, then the message budget.

A result over 50,000 characters is written to ``{session_dir}/tool-results/`` by
the call itself and replaced by a ``<persisted-output>`` preview.
``build_user_message`` then keeps the whole message within a budget (80,000
characters here) by persisting the largest fresh results, and a
``ContentReplacementState`` makes the decision permanent: the same message is
rebuilt byte for byte.  Run: python examples/results_budget.py
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import attrs
import trio

import trioexec
from trioexec import CallContext, ProgressSender, ToolUse


@attrs.frozen
class DumpInput:
    chars: int


@trioexec.function_tool(input_type=DumpInput, concurrency_safe=True)
async def dump(args: DumpInput, ctx: CallContext, progress: ProgressSender) -> str:
    """Return ``chars`` characters of log lines."""
    return (("x" * 79 + "\n") * (args.chars // 80 + 1))[: args.chars]


async def main() -> None:
    sizes = {"toolu_big": 60_000, "toolu_a": 40_000, "toolu_b": 35_000, "toolu_c": 30_000}
    calls = [ToolUse(tool_id, "dump", {"chars": n}) for tool_id, n in sizes.items()]
    with tempfile.TemporaryDirectory() as folder:
        session = Path(folder)
        outcome = await trioexec.run_tools(calls, [dump], session_dir=session)
        wrapper = outcome.results[0].text.replace(folder, "{session}")
        print("toolu_big after the call:", *wrapper.splitlines()[:2], sep="\n  ")

        state = trioexec.ContentReplacementState()  # one per conversation
        limits = {call.id: dump.max_result_size_chars for call in calls}
        message = await trioexec.build_user_message(
            outcome.updates, state=state, session_dir=session, budget=80_000, limits=limits
        )
        print("the next user message (budget 80,000 characters):")
        for result in message.results:
            kind = "persisted" if result.text.startswith("<persisted-output>") else "inline"
            print(f"  {result.tool_use_id:9} {len(result.text):6,} chars  {kind}")
        print(f"  total {sum(len(r.text) for r in message.results):,} characters")
        print("files:", sorted(p.name for p in (session / "tool-results").iterdir()))

        again = await trioexec.build_user_message(
            outcome.updates, state=state, session_dir=session, budget=80_000, limits=limits
        )
        print("rebuilt with the same state, same bytes:", again.to_api() == message.to_api())
        saved = state.to_json()  # json.dumps it to resume a session later
        print("state:", json.dumps({"seen_ids": saved["seen_ids"],
                                    "replaced": sorted(saved["replacements"])}))  # fmt: skip


if __name__ == "__main__":
    trio.run(main)
