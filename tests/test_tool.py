"""Mistakes in the tool list fail early with a message that says what to do."""

from __future__ import annotations

from typing import Any

import pytest

from trioexec import ToolDefinitionError, ToolRegistry, ToolUse, function_tool, run_tools
from trioexec.tools import ReadTool


def test_a_tool_class_instead_of_an_instance() -> None:
    with pytest.raises(ToolDefinitionError, match=r"ReadTool is a class; pass an instance"):
        ToolRegistry([ReadTool])  # type: ignore[list-item]


def test_a_name_instead_of_a_tool() -> None:
    with pytest.raises(ToolDefinitionError, match=r"expected a Tool instance.*got str 'Read'"):
        ToolRegistry(["Read"])  # type: ignore[list-item]


async def test_a_dict_of_tools_is_refused_before_any_call_runs() -> None:
    tools: Any = {"Read": ReadTool()}
    with pytest.raises(ToolDefinitionError, match="got str 'Read'"):
        await run_tools([ToolUse("t1", "Read", {"file_path": "x"})], tools)


def test_function_tool_refuses_a_rule_matcher_that_is_not_told_the_behavior() -> None:
    async def shell(input: object, ctx: object, progress: object) -> str:  # noqa: A002
        return "x"

    def two_arguments(content: str, input: object) -> bool:  # noqa: A002
        return True

    with pytest.raises(ToolDefinitionError, match=r"'two_arguments' must take \(content, input, "):
        function_tool(rule_matcher=two_arguments)(shell)  # type: ignore[arg-type]
    tool = function_tool(rule_matcher=lambda content, args, behavior: behavior == "deny")(shell)  # type: ignore[arg-type]
    assert tool.match_rule_content("x", {}, None, behavior="deny") is True  # type: ignore[arg-type]
    assert tool.match_rule_content("x", {}, None, behavior="allow") is False  # type: ignore[arg-type]
