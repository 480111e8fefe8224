"""What propagates out of ``run_tools`` and the streaming executor block.

One rule for both front ends: a tool's ``Exception`` never propagates (it is
an error result); a lone ``BaseException`` propagates unwrapped, several as a
``BaseExceptionGroup``; cancellation from an enclosing scope propagates as a
plain ``trio.Cancelled``; a ``Cancelled`` that no enclosing scope caused (a
tool re-raising one from a scope of its own) is the tool's own
``BaseException``: it propagates, and never hangs or is absorbed into an answer.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
import trio
import trio.testing
from helpers import Recorder, make_tool, results_of, use

from trioexec import (
    CallContext,
    GuardRails,
    ProgressSender,
    ToolResult,
    ToolUse,
    Update,
    function_tool,
    open_streaming_executor,
    run_tools,
)
from trioexec._groups import leaves
from trioexec.hooks import HookInput, HookSet


@function_tool(name="Slow", concurrency_safe=True)
async def slow(job: dict[str, Any], ctx: CallContext, progress: ProgressSender) -> object:
    await trio.sleep(job.get("sleep", 5.0))
    return "slow"


@function_tool(name="Exit", concurrency_safe=True)
async def exit_tool(job: dict[str, Any], ctx: CallContext, progress: ProgressSender) -> object:
    await trio.sleep(1.0)
    raise SystemExit(3)


@function_tool(name="Stray")
async def stray(job: dict[str, Any], ctx: CallContext, progress: ProgressSender) -> object:
    """Re-raises a Cancelled caught from a scope of its own (a bug in the tool)."""
    caught: trio.Cancelled | None = None
    with trio.CancelScope() as own:
        own.cancel(reason="the tool's own scope")
        try:
            await trio.sleep(1.0)
        except trio.Cancelled as exc:
            caught = exc
    assert caught is not None
    raise caught


@function_tool(name="Edit")
async def edit(job: dict[str, Any], ctx: CallContext, progress: ProgressSender) -> object:
    await trio.sleep(0.5)
    return "edited"


TOOLS = [slow, exit_tool, stray, edit]


async def run_path(path: str, uses: list[ToolUse], recorder: Recorder) -> list[Update]:
    """Run ``uses`` on one path; the updates delivered before anything propagated."""
    updates: list[Update] = []
    if path == "batch":
        send, receive = trio.open_memory_channel[Update](math.inf)
        try:
            await run_tools(uses, TOOLS, updates=send, observers=[recorder])
        finally:
            while True:
                try:
                    updates.append(receive.receive_nowait())
                except trio.WouldBlock:
                    break
        return updates
    async with open_streaming_executor(TOOLS, observers=[recorder]) as executor:
        for tool_use in uses:
            executor.add_tool(tool_use)
        async for update in executor.remaining():
            updates.append(update)  # noqa: PERF401 - keep what arrived if cancelled
    return updates


@pytest.mark.parametrize("path", ["batch", "stream"])
async def test_outer_cancellation_propagates_as_a_plain_cancelled(
    autojump_clock: trio.testing.MockClock, recorder: Recorder, path: str
) -> None:
    seen: list[BaseException] = []
    with trio.move_on_after(1.0) as outer:
        try:
            await run_path(path, [ToolUse("a", "Slow", {}), ToolUse("b", "Slow", {})], recorder)
        except BaseException as exc:
            seen.append(exc)
            raise
    assert outer.cancelled_caught
    (exc,) = seen
    assert type(exc) is trio.Cancelled


async def test_a_lone_base_exception_propagates_unwrapped_while_the_body_awaits(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async def body_awaiting_the_model() -> None:
        async with open_streaming_executor(TOOLS) as executor:
            executor.add_tool(ToolUse("x", "Exit", {}))
            await trio.sleep(5.0)  # waiting for the model's next event

    with pytest.raises(SystemExit) as info:
        await body_awaiting_the_model()
    assert type(info.value) is SystemExit
    assert info.value.code == 3


async def test_a_lone_base_exception_propagates_unwrapped_from_run_tools(
    autojump_clock: trio.testing.MockClock,
) -> None:
    uses = [ToolUse("x", "Exit", {}), ToolUse("s", "Slow", {})]
    with pytest.raises(SystemExit) as info:
        await run_tools(uses, TOOLS)
    assert type(info.value) is SystemExit


@pytest.mark.parametrize("path", ["batch", "stream"])
async def test_a_stray_cancelled_from_a_tool_propagates_as_the_tools_own(
    autojump_clock: trio.testing.MockClock, recorder: Recorder, path: str
) -> None:
    seen: list[BaseException] = []
    try:
        await run_path(path, [ToolUse("s", "Stray", {})], recorder)
    except BaseException as exc:
        seen.append(exc)
    (exc,) = seen
    assert type(exc) is trio.Cancelled
    assert recorder.kinds("s").count("completed") + recorder.kinds("s").count("cancelled") == 1


async def test_a_stray_cancelled_never_leaves_a_later_call_unanswered(
    autojump_clock: trio.testing.MockClock, recorder: Recorder
) -> None:
    updates: list[Update] = []
    with trio.move_on_after(50.0) as hang:
        try:
            async with open_streaming_executor(TOOLS, observers=[recorder]) as executor:
                executor.add_tool(ToolUse("s", "Stray", {}))
                with trio.CancelScope(shield=True):  # the model keeps streaming
                    await trio.sleep(1.0)
                executor.add_tool(ToolUse("e", "Edit", {}))
                async for update in executor.remaining():
                    updates.append(update)  # noqa: PERF401 - keep what arrived if cancelled
        except trio.Cancelled:
            if hang.cancel_called:
                raise
            updates.extend(executor.drain_nowait())
    assert not hang.cancelled_caught, "the executor hung"
    assert "started" not in recorder.kinds("e")
    assert [u.result.tool_use_id for u in results_of(updates)] == ["s", "e"]


@function_tool(name="Interrupted", concurrency_safe=True)
async def interrupted(job: dict[str, Any], ctx: CallContext, progress: ProgressSender) -> object:
    await trio.sleep(1.0)
    raise KeyboardInterrupt(ctx.tool_use.id)


@pytest.mark.parametrize("path", ["batch", "stream"])
async def test_two_base_exceptions_in_one_instant_both_propagate(
    autojump_clock: trio.testing.MockClock, path: str
) -> None:
    tools = [interrupted]
    uses = [ToolUse("a", "Interrupted", {}), ToolUse("b", "Interrupted", {})]
    with pytest.raises(BaseExceptionGroup) as info:
        await (run_tools(uses, tools) if path == "batch" else _stream_all(uses, tools))
    assert sorted(str(exc) for exc in info.value.exceptions) == ["a", "b"]
    assert all(type(exc) is KeyboardInterrupt for exc in info.value.exceptions)


async def _stream_all(uses: list[ToolUse], tools: list[Any]) -> None:
    async with open_streaming_executor(tools) as executor:
        for tool_use in uses:
            executor.add_tool(tool_use)
        async for _ in executor.remaining():
            pass


@function_tool(name="Shielded", concurrency_safe=True)
async def shielded(job: dict[str, Any], ctx: CallContext, progress: ProgressSender) -> object:
    with trio.CancelScope(shield=True):
        await trio.sleep(2.0)
    return "finished anyway"


@pytest.mark.parametrize("path", ["batch", "stream"])
async def test_outer_cancellation_propagates_even_when_every_call_ignored_it(
    autojump_clock: trio.testing.MockClock, path: str
) -> None:
    seen: list[BaseException] = []
    with trio.move_on_after(1.0) as outer:
        try:
            if path == "batch":
                await run_tools([ToolUse("s", "Shielded", {})], [shielded], grace_period=None)
            else:
                await _stream_all([ToolUse("s", "Shielded", {})], [shielded])
        except BaseException as exc:
            seen.append(exc)
            raise
    assert outer.cancelled_caught
    assert [type(exc) for exc in seen] == [trio.Cancelled]


async def test_a_call_returning_as_the_body_raises_keeps_its_real_result(
    autojump_clock: trio.testing.MockClock, recorder: Recorder
) -> None:
    async def body_fails_at_one() -> None:
        async with open_streaming_executor([slow], observers=[recorder]) as executor:
            executor.add_tool(ToolUse("a", "Slow", {"sleep": 1.0}))
            await trio.sleep(1.0)  # the same instant the call returns
            raise ValueError("the model stream broke")

    with pytest.raises(ValueError, match="stream broke"):
        await body_fails_at_one()
    (answer,) = [e for e in recorder.events if e.kind in ("completed", "cancelled")]
    assert answer.kind == "completed"
    assert answer.data == ToolResult("a", "slow")


# Hooks of one event run side by side, in a nursery: what they raise follows the same
# rules as for tools, one BaseException unwrapped, several in one group.


def _raising(exc: BaseException) -> Any:
    async def hook(hook_input: HookInput) -> None:
        raise exc

    return hook


async def _quiet(hook_input: HookInput) -> None:
    await trio.sleep(1)


@pytest.mark.parametrize("event", ["PreToolUse", "PostToolUse"])
async def test_one_hook_of_several_raising_a_base_exception_propagates_it_unwrapped(
    autojump_clock: trio.testing.MockClock, event: str
) -> None:
    """As for a tool: one BaseException leaves the run as raised, never in a group."""
    fault = SystemExit(3)
    hooks = (
        HookSet()
        .with_python_hook(event, None, _quiet, timeout=5)
        .with_python_hook(event, None, _raising(fault), timeout=5)
    )
    tool = make_tool("T")
    with pytest.raises(SystemExit) as info:
        await run_tools([use("a", "T")], [tool], guard=GuardRails(hooks=hooks))
    assert info.value is fault


async def test_several_hooks_raising_base_exceptions_propagate_in_one_group(
    autojump_clock: trio.testing.MockClock,
) -> None:
    first, second = SystemExit(1), KeyboardInterrupt()
    hooks = (
        HookSet()
        .with_python_hook("PreToolUse", None, _raising(first), timeout=5)
        .with_python_hook("PreToolUse", None, _raising(second), timeout=5)
    )
    tool = make_tool("T")
    with pytest.raises(BaseExceptionGroup) as info:
        await run_tools([use("a", "T")], [tool], guard=GuardRails(hooks=hooks))
    assert sorted(map(id, leaves(info.value))) == sorted([id(first), id(second)])
