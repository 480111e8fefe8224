"""Calling a standard tool directly, the way the lifecycle does: validate, then call."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar

from trioexec import CallContext, ToolUse

if TYPE_CHECKING:
    from pathlib import Path

    from trioexec import Tool

InputT = TypeVar("InputT")


def tool_context(tool: Tool[InputT], cwd: Path) -> CallContext:
    """A context for one call of ``tool`` in ``cwd``."""
    return CallContext(tool_use=ToolUse("toolu_1", tool.name, {}), cwd=cwd)


async def validate_and_call(tool: Tool[InputT], data: InputT, cwd: Path) -> object:
    """The validation message if ``validate_input`` refuses, else what ``call`` returns."""
    ctx = tool_context(tool, cwd)
    problem = await tool.validate_input(data, ctx)
    if problem is not None:
        return problem
    return await tool.call(data, ctx, lambda _: None)
