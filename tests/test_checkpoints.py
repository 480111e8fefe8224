"""Every public async entry point is a checkpoint, as trio's own are (``assert_checkpoints``).

A checkpoint is both a cancel point and a schedule point: an application that
calls ``run_tools([])`` in a loop still lets other tasks run, and a cancelled
caller still sees ``Cancelled`` at the call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import trio
from helpers import call_context, make_tool, use
from trio.testing import assert_checkpoints

from trioexec import (
    ContentReplacementState,
    GuardRails,
    ToolResult,
    build_user_message,
    open_streaming_executor,
    run_tools,
)
from trioexec.lowlevel import after_call, authorize_call, run_process_group
from trioexec.permissions import PermissionContext, check_permission_chain
from trioexec.results import apply_message_budget, finalize_result

if TYPE_CHECKING:
    from pathlib import Path

TOOLS = [make_tool("Read", safe=True)]


async def test_run_tools_with_no_call_is_a_checkpoint() -> None:
    with assert_checkpoints():
        outcome = await run_tools([], TOOLS)
    assert outcome.results == ()


async def test_run_tools_with_one_call_is_a_checkpoint() -> None:
    with assert_checkpoints():
        await run_tools([use("a", "Read")], TOOLS)


async def test_an_empty_streaming_executor_block_checkpoints_on_the_way_out() -> None:
    with assert_checkpoints():
        async with open_streaming_executor(TOOLS):
            pass


async def test_reading_the_remaining_updates_is_a_checkpoint() -> None:
    async with open_streaming_executor(TOOLS) as executor:
        executor.add_tool(use("a", "Read"))
        updates = executor.remaining()
        with assert_checkpoints():
            async for _ in updates:
                pass


async def test_the_result_functions_are_checkpoints(tmp_path: Path) -> None:
    tool = TOOLS[0]
    result = ToolResult("a", "ok")
    with assert_checkpoints():
        await finalize_result(tool, result, session_dir=tmp_path)
    with assert_checkpoints():
        await apply_message_budget([result], state=ContentReplacementState(), session_dir=None)
    with assert_checkpoints():
        await build_user_message([], state=ContentReplacementState(), session_dir=None)


async def test_the_guard_rails_entry_points_are_checkpoints(tmp_path: Path) -> None:
    tool = TOOLS[0]
    ctx = call_context("Read", tmp_path)
    with assert_checkpoints():
        await check_permission_chain(tool, {}, ctx, PermissionContext())
    guard = GuardRails()
    with assert_checkpoints():
        await authorize_call(guard, tool, use("a", "Read"), {}, ctx)
    with assert_checkpoints():
        await after_call(guard, tool, use("a", "Read"), {}, response=ToolResult("a", "ok"))


async def test_running_a_process_group_is_a_checkpoint(tmp_path: Path) -> None:
    with assert_checkpoints():
        await run_process_group(["true"], cwd=tmp_path)


async def test_a_cancelled_caller_sees_cancelled_at_run_tools_with_no_call() -> None:
    with trio.CancelScope() as scope:
        scope.cancel(reason="test")
        await run_tools([], TOOLS)
        raise AssertionError("run_tools([]) is a cancel point")  # pragma: no cover
    assert scope.cancelled_caught
