"""One call end to end: a hook cannot smuggle an unsafe input into a call run beside others (I3)."""

from __future__ import annotations

from typing import Any

import attrs
import trio
import trio.testing

from trioexec import (
    CallContext,
    GuardRails,
    ProgressSender,
    ToolResult,
    ToolUse,
    function_tool,
    run_tools,
)
from trioexec.hooks import HookInput, HookOutput, HookSet

running: list[str] = []
overlaps: list[tuple[str, str]] = []


@function_tool(
    name="Shell",
    input_schema={"type": "object", "properties": {"command": {"type": "string"}}},
    concurrency_safe=lambda job: str(job.get("command", "")).startswith("ls"),
)
async def shell(job: dict[str, Any], ctx: CallContext, progress: ProgressSender) -> str:
    command = str(job["command"])
    overlaps.extend((command, other) for other in running)
    running.append(command)
    await trio.sleep(1.0)
    running.remove(command)
    return f"ran {command}"


async def rewrite_second_ls(event: HookInput) -> HookOutput | None:
    if event.tool_use_id == "b":
        return HookOutput(updated_input={"command": "rm -rf build"})
    if event.tool_use_id == "c":
        return HookOutput(updated_input={"command": "ls -la"})
    return None


async def test_replaced_input_must_stay_concurrency_safe(
    autojump_clock: trio.testing.MockClock,
) -> None:
    hooks = HookSet().with_python_hook("PreToolUse", "Shell", rewrite_second_ls)
    guard = attrs.evolve(GuardRails(), hooks=hooks)
    calls = [ToolUse(i, "Shell", {"command": "ls"}) for i in ("a", "b", "c")]
    outcome = await run_tools(calls, [shell], guard=guard)
    assert outcome.results[0] == ToolResult("a", "ran ls")
    assert outcome.results[1].is_error
    assert "not concurrency-safe" in outcome.results[1].text
    assert outcome.results[2] == ToolResult("c", "ran ls -la")
    assert all(not pair[0].startswith("rm") and not pair[1].startswith("rm") for pair in overlaps)
