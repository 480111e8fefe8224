"""One call end to end: a call a hook made unsafe still runs, but alone (I3).

Claude Code partitions a batch on the model's input and runs the rewritten
call whatever a PreToolUse hook made of it (``git status`` -> ``rtk git
status``).  trioexec runs it too, re-partitioned as unsafe: its tool body
never overlaps another one, and every call is answered exactly once.
"""

from __future__ import annotations

from typing import Any

import attrs
import trio
import trio.testing
from hypothesis import given, settings
from hypothesis import strategies as st

from trioexec import (
    CallContext,
    GuardRails,
    ProgressSender,
    ToolResult,
    ToolUse,
    function_tool,
    run_tools,
)
from trioexec._core._solo import SoloLock
from trioexec.hooks import HookInput, HookOutput, HookSet


class Shell:
    """A tool whose ``ls`` commands are concurrency-safe; it records overlapping bodies."""

    def __init__(self) -> None:
        self.running: list[str] = []
        self.overlaps: list[tuple[str, str]] = []
        self.order: list[str] = []

        @function_tool(
            name="Shell",
            input_schema={"type": "object", "properties": {"command": {"type": "string"}}},
            concurrency_safe=lambda job: str(job.get("command", "")).startswith("ls"),
        )
        async def shell(job: dict[str, Any], ctx: CallContext, progress: ProgressSender) -> str:
            command = str(job["command"])
            self.overlaps.extend((command, other) for other in self.running)
            self.running.append(command)
            self.order.append(command)
            await trio.sleep(1.0)
            self.running.remove(command)
            return f"ran {command}"

        self.tool = shell

    def unsafe_overlaps(self) -> list[tuple[str, str]]:
        return [p for p in self.overlaps if not (p[0].startswith("ls") and p[1].startswith("ls"))]


def rewriting(rewrites: dict[str, str]) -> GuardRails:
    """Guard rails whose PreToolUse hook replaces the command of the calls named in ``rewrites``."""

    async def rewrite(event: HookInput) -> HookOutput | None:
        if event.tool_use_id in rewrites:
            return HookOutput(updated_input={"command": rewrites[event.tool_use_id]})
        return None

    hooks = HookSet().with_python_hook("PreToolUse", "Shell", rewrite)
    return attrs.evolve(GuardRails(), hooks=hooks)


async def test_a_call_a_hook_made_unsafe_runs_alone(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """``rtk git status`` from ``git status``: Claude Code runs the rewritten call
    (``processedInput = permissionDecision.updatedInput``, runToolUse); trioexec runs
    it re-partitioned as unsafe, so no other tool body runs beside it."""
    shell = Shell()
    guard = rewriting({"b": "rm -rf build", "c": "ls -la"})
    calls = [ToolUse(i, "Shell", {"command": "ls"}) for i in ("a", "b", "c", "d")]
    outcome = await run_tools(calls, [shell.tool], guard=guard)
    assert [r.content for r in outcome.results] == [
        "ran ls",
        "ran rm -rf build",
        "ran ls -la",
        "ran ls",
    ]
    assert not any(r.is_error for r in outcome.results)
    assert shell.unsafe_overlaps() == []
    assert outcome.results[1] == ToolResult("b", "ran rm -rf build")


async def test_two_calls_made_unsafe_run_one_after_the_other(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """Nothing is held while a call waits for its turn, so two re-partitioned calls
    never deadlock: each runs alone, in turn."""
    shell = Shell()
    guard = rewriting({"a": "rm one", "b": "rm two"})
    calls = [ToolUse(i, "Shell", {"command": "ls"}) for i in ("a", "b", "c")]
    with trio.fail_after(60):
        outcome = await run_tools(calls, [shell.tool], guard=guard)
    assert [r.content for r in outcome.results] == ["ran rm one", "ran rm two", "ran ls"]
    assert shell.unsafe_overlaps() == []


@settings(max_examples=40, deadline=None)
@given(
    commands=st.lists(st.sampled_from(["ls", "ls -l", "rm x", "make"]), min_size=1, max_size=6),
    rewritten=st.lists(st.sampled_from(["ls -a", "rm y", "git push"]), max_size=6),
)
def test_rewritten_calls_never_overlap_an_unsafe_body_and_each_is_answered_once(
    commands: list[str], rewritten: list[str]
) -> None:
    """Invariant I3 and exactly-once hold whatever hooks make of a batch's inputs."""
    ids = [f"t{n}" for n in range(len(commands))]
    rewrites = dict(zip(ids, rewritten, strict=False))
    shell = Shell()

    async def main() -> None:
        calls = [ToolUse(i, "Shell", {"command": c}) for i, c in zip(ids, commands, strict=True)]
        with trio.fail_after(600):
            outcome = await run_tools(calls, [shell.tool], guard=rewriting(rewrites))
        assert [r.tool_use_id for r in outcome.results] == ids
        expected = [f"ran {rewrites.get(i, c)}" for i, c in zip(ids, commands, strict=True)]
        assert [r.content for r in outcome.results] == expected
        assert shell.unsafe_overlaps() == []

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


async def test_a_solo_call_cancelled_while_waiting_lets_the_others_go() -> None:
    """A re-partitioned call stopped while it waits for the safe bodies to finish
    takes nothing with it: the safe calls held back behind it run."""
    gate = SoloLock()
    assert gate.try_enter_shared()
    order: list[str] = []
    waiting = trio.CancelScope()

    async def solo() -> None:
        with waiting:
            await gate.enter_solo()
            order.append("solo")  # never: it is cancelled first

    async def shared() -> None:
        await gate.enter_shared()
        order.append("shared")
        gate.leave_shared()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(solo)
        await trio.testing.wait_all_tasks_blocked()
        nursery.start_soon(shared)
        await trio.testing.wait_all_tasks_blocked()
        assert order == []  # held back behind the waiting solo call
        waiting.cancel()
    assert order == ["shared"]
    gate.leave_shared()
    assert gate.shared == 0
    assert not gate.solo
