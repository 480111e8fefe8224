"""A stopped run starts nothing: once a run is stopped, whatever stopped it, no call starts.

What stops a run: the turn's interrupt or abort, a cascading sibling error,
``discard()``, a tool (or its hook, modifier, observer) raising a
``BaseException``, and cancellation from an enclosing scope.  A call stopped
this way is answered on its behalf, and nothing later may run its tool, not
even a hook that ignored the cancellation and returned late.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
import trio
import trio.testing
from helpers import REJECT, Recorder, results_of

from trioexec import (
    CallContext,
    GuardRails,
    ProgressSender,
    ToolUse,
    Turn,
    Update,
    function_tool,
    open_streaming_executor,
    run_tools,
)
from trioexec.hooks import HookInput, HookSet

pytestmark = pytest.mark.usefixtures("claude_code_texts")  # mechanisms, in CC's words


def starts(recorder: Recorder, tool_use_id: str) -> list[str]:
    """The events that mean a call began running (its state or its tool's body)."""
    return [k for k in recorder.kinds(tool_use_id) if k in ("started", "call_began")]


@function_tool(name="Stuck", concurrency_safe=True)
async def stuck(job: dict[str, Any], ctx: CallContext, progress: ProgressSender) -> object:
    """Ignores cancellation for ``job["for"]`` seconds."""
    with trio.CancelScope(shield=True):
        await trio.sleep(job.get("for", 10.0))
    return "stuck done"


@function_tool(name="Interrupted", concurrency_safe=True)
async def interrupted(job: dict[str, Any], ctx: CallContext, progress: ProgressSender) -> object:
    await trio.sleep(1.0)
    raise KeyboardInterrupt


@function_tool(name="Edit")
async def edit(job: dict[str, Any], ctx: CallContext, progress: ProgressSender) -> object:
    """Unsafe, and does its work before any checkpoint (as a file write would)."""
    edits.append(ctx.tool_use.id)
    await trio.sleep(0.5)
    return "edited"


edits: list[str] = []


@pytest.fixture(autouse=True)
def _fresh_edits() -> None:
    edits.clear()


async def test_no_call_starts_after_a_tool_raised_keyboard_interrupt(
    autojump_clock: trio.testing.MockClock, recorder: Recorder
) -> None:
    async def stream() -> None:
        async with open_streaming_executor(
            [stuck, interrupted, edit], observers=[recorder]
        ) as executor:
            executor.add_tool(ToolUse("s", "Stuck", {}))
            executor.add_tool(ToolUse("k", "Interrupted", {}))
            with trio.CancelScope(shield=True):  # the model keeps streaming
                await trio.sleep(2.0)
            executor.add_tool(ToolUse("e", "Edit", {}))

    with pytest.raises(KeyboardInterrupt):
        await stream()
    assert edits == []
    assert starts(recorder, "e") == []
    (answer,) = [e for e in recorder.events if e.tool_use_id == "e" and e.kind == "cancelled"]
    assert answer.reason == "user_interrupted"


async def test_no_later_batch_starts_after_a_tool_raised_keyboard_interrupt(
    autojump_clock: trio.testing.MockClock, recorder: Recorder
) -> None:
    uses = [ToolUse("s", "Stuck", {}), ToolUse("k", "Interrupted", {}), ToolUse("e", "Edit", {})]
    with pytest.raises(KeyboardInterrupt):
        await run_tools(uses, [stuck, interrupted, edit], observers=[recorder])
    assert edits == []
    assert starts(recorder, "e") == []


async def _run_path(path: str, uses: list[ToolUse], recorder: Recorder, **options: Any) -> None:
    tools = [stuck, edit]
    if path == "batch":
        send, _ = trio.open_memory_channel[Update](math.inf)
        await run_tools(uses, tools, observers=[recorder], updates=send, **options)
        return
    async with open_streaming_executor(tools, observers=[recorder], **options) as executor:
        for tool_use in uses:
            executor.add_tool(tool_use)
        async for _ in executor.remaining():
            pass


@pytest.mark.parametrize("path", ["batch", "stream"])
async def test_no_call_starts_after_an_enclosing_scope_cancelled_the_run(
    autojump_clock: trio.testing.MockClock, recorder: Recorder, path: str
) -> None:
    uses = [ToolUse("a", "Stuck", {"for": 2.0}), ToolUse("b", "Edit", {})]
    with trio.move_on_after(1.0) as outer:
        await _run_path(path, uses, recorder)
    assert outer.cancelled_caught
    assert edits == []
    assert starts(recorder, "b") == []
    assert [e.kind for e in recorder.events if e.tool_use_id == "b"].count("cancelled") == 1


async def slow_pre_hook(hook_input: HookInput) -> None:
    """A PreToolUse hook that ignores cancellation for 10 s, then has no opinion."""
    with trio.CancelScope(shield=True):
        await trio.sleep(10.0)


@function_tool(name="Bash", concurrency_safe=True, cancels_siblings_on_error=True)
async def failing_bash(job: dict[str, Any], ctx: CallContext, progress: ProgressSender) -> object:
    await trio.sleep(1.0)
    raise RuntimeError("exit 1")


@function_tool(name="Write", concurrency_safe=True)
async def write(job: dict[str, Any], ctx: CallContext, progress: ProgressSender) -> object:
    edits.append(ctx.tool_use.id)
    return "written"


HOOKED = GuardRails(hooks=HookSet().with_python_hook("PreToolUse", "Write", slow_pre_hook))


@pytest.mark.parametrize("stop", ["abort", "sibling_error", "discard"])
async def test_a_call_answered_as_not_run_never_runs_its_tool(
    autojump_clock: trio.testing.MockClock, recorder: Recorder, stop: str
) -> None:
    turn = Turn()
    updates: list[Update] = []
    async with open_streaming_executor(
        [write, failing_bash], turn=turn, guard=HOOKED, observers=[recorder]
    ) as executor:
        executor.add_tool(ToolUse("w", "Write", {"file_path": "/tmp/x"}))
        if stop == "sibling_error":
            executor.add_tool(ToolUse("b", "Bash", {"command": "false"}))
        await trio.sleep(1.0)
        if stop == "abort":
            turn.abort()
        elif stop == "discard":
            executor.discard()
        updates.extend(executor.drain_nowait())
        updates.extend([u async for u in executor.remaining()])
        with trio.CancelScope(shield=True):
            await trio.sleep(20.0)  # long past the hook's return
    assert edits == []
    assert "call_began" not in recorder.kinds("w")
    if stop != "discard":
        (answer,) = [u.result for u in results_of(updates) if u.result.tool_use_id == "w"]
        assert answer.is_error
        if stop == "abort":
            assert answer.content == REJECT


async def test_a_batch_call_answered_as_not_run_never_runs_its_tool(
    autojump_clock: trio.testing.MockClock, recorder: Recorder
) -> None:
    turn = Turn()

    async def abort_at_one() -> None:
        await trio.sleep(1.0)
        turn.abort()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(abort_at_one)
        outcome = await run_tools(
            [ToolUse("w", "Write", {"file_path": "/tmp/x"})],
            [write],
            turn=turn,
            guard=HOOKED,
            observers=[recorder],
        )
    assert [r.content for r in outcome.results] == [REJECT]
    assert edits == []
    assert "call_began" not in recorder.kinds("w")
