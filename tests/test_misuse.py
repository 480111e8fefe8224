"""The application's own mistakes fail at once, clearly, and never reach the model unlogged."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

import pytest

from trioexec import (
    GuardRails,
    PermissionResult,
    ToolUse,
    open_streaming_executor,
    run_tools,
)
from trioexec.hooks import HookInput, HookSet
from trioexec.tools import BashTool

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path


LS = ToolUse("toolu_1", "Bash", {"command": "ls"})
TOUCH = ToolUse("toolu_2", "Bash", {"command": "touch made"})


@pytest.mark.parametrize(
    ("tool_uses", "message"),
    [
        (
            [{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {}}],
            "run_tools: tool_uses[0] is a dict, not a ToolUse (ToolUse.from_api(block) reads "
            "a Messages API dict)",
        ),
        ([LS, "ls"], "run_tools: tool_uses[1] is a str, not a ToolUse (build one with ToolUse("),
        (LS, "run_tools takes a sequence of ToolUse, not a single ToolUse: pass [tool_use]"),
        ("ls", "run_tools takes a sequence of ToolUse, not a str"),
        (None, "run_tools takes a sequence of ToolUse, not a NoneType"),
    ],
)
async def test_run_tools_names_what_is_not_a_tool_use(
    tmp_path: Path, tool_uses: Any, message: str
) -> None:
    with pytest.raises(TypeError) as caught:
        await run_tools(tool_uses, [BashTool()], cwd=tmp_path)
    assert str(caught.value).startswith(message)


async def test_run_tools_accepts_any_iterable_of_tool_uses(tmp_path: Path) -> None:
    outcome = await run_tools(iter([LS]), [BashTool()], cwd=tmp_path)
    assert [r.tool_use_id for r in outcome.results] == ["toolu_1"]


async def test_add_tool_names_the_item_and_loses_nothing(tmp_path: Path) -> None:
    async with open_streaming_executor([BashTool()], cwd=tmp_path) as executor:
        executor.add_tool(LS)
        with pytest.raises(TypeError, match=r"^add_tool: call #1 \(0-based\) is a dict"):
            executor.add_tool({"id": "toolu_x"})  # type: ignore[arg-type]
        results = [update async for update in executor.remaining()]
    assert [u.result.tool_use_id for u in results if hasattr(u, "result")] == ["toolu_1"]


async def sync_like(tool_name: str, data: Mapping[str, Any], tool_use_id: str) -> None:
    return None


def plain(tool_name: str, data: Mapping[str, Any], tool_use_id: str) -> PermissionResult:
    return PermissionResult.allow()


async def two_args(tool_name: str, data: Mapping[str, Any]) -> PermissionResult:
    return PermissionResult.allow()


class AsyncCallable:
    async def __call__(
        self, tool_name: str, data: Mapping[str, Any], tool_use_id: str
    ) -> PermissionResult:
        return PermissionResult.allow()


def test_a_sync_can_use_tool_is_refused_when_the_guard_rails_are_built() -> None:
    with pytest.raises(TypeError, match=r"must be an async function .*plain is a plain function"):
        GuardRails(can_use_tool=plain)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"must be an async function"):
        GuardRails.from_settings({}, can_use_tool=plain)  # type: ignore[arg-type]


def test_a_can_use_tool_of_the_wrong_arity_is_refused() -> None:
    with pytest.raises(TypeError, match=r"called with 3 arguments .*two_args\(tool_name, data\)"):
        GuardRails(can_use_tool=two_args)  # type: ignore[arg-type]


def test_good_callbacks_are_accepted() -> None:
    GuardRails(can_use_tool=AsyncCallable())
    GuardRails(can_use_tool=sync_like)  # type: ignore[arg-type]  # the shape is right


def test_a_python_hook_of_the_wrong_shape_is_refused() -> None:
    def sync_hook(hook_input: HookInput) -> None:
        return None

    async def no_args() -> None:
        return None

    for hook in (sync_hook, no_args):
        hooks = HookSet().with_python_hook("PreToolUse", None, hook)  # type: ignore[arg-type]
        with pytest.raises(TypeError, match=r"hooks.entries\[0\] \(PreToolUse\) hook"):
            GuardRails(hooks=hooks)


@pytest.mark.parametrize("answer", ["raise", True])
async def test_a_failing_can_use_tool_is_logged_with_its_traceback_and_answered(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, answer: object
) -> None:
    async def callback(tool_name: str, data: Mapping[str, Any], tool_use_id: str) -> Any:
        if answer == "raise":
            raise LookupError("no such user")
        return answer

    guard = GuardRails(can_use_tool=callback)
    with caplog.at_level(logging.WARNING):
        (result,) = (await run_tools([TOUCH], [BashTool()], cwd=tmp_path, guard=guard)).results
    assert result.is_error
    assert not (tmp_path / "made").exists()
    (record,) = [r for r in caplog.records if "can_use_tool" in r.getMessage()]
    assert record.levelno == logging.WARNING
    assert "Bash" in record.getMessage()
    assert record.exc_info is not None
    if answer is True:
        assert "can_use_tool returned bool (True), not a PermissionResult" in result.text


async def test_a_failing_python_hook_is_logged_with_the_tool_and_its_traceback(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async def hook(hook_input: HookInput) -> None:
        raise ValueError("hook bug")

    guard = GuardRails(hooks=HookSet().with_python_hook("PreToolUse", "Bash", hook))
    with caplog.at_level(logging.WARNING):
        (result,) = (await run_tools([LS], [BashTool()], cwd=tmp_path, guard=guard)).results
    assert not result.is_error  # a failed hook gives no decision; the call goes on
    (record,) = [r for r in caplog.records if "hook" in r.getMessage()]
    assert "for Bash failed: raised ValueError: hook bug" in record.getMessage()
    assert record.exc_info is not None


def test_called_from_asyncio_it_says_it_needs_trio(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match=r"^run_tools needs trio: call it from code run by"):
        asyncio.run(run_tools([LS], [BashTool()], cwd=tmp_path))

    async def streaming() -> None:
        async with open_streaming_executor([BashTool()], cwd=tmp_path):
            pass

    with pytest.raises(RuntimeError, match=r"^open_streaming_executor needs trio"):
        asyncio.run(streaming())
