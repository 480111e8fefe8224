"""trioexec.testing.ScriptedTool: a tool whose behaviour is its input."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import trio
import trio.testing

from trioexec import CallContext, ToolOutput, ToolUse, run_tools
from trioexec._contract._registry import ToolRegistry
from trioexec.testing import (
    SCRIPTED_INPUT_SCHEMA,
    ScriptedTool,
    ScriptedToolError,
    generated_output,
)

if TYPE_CHECKING:
    from trioexec._models import JSONValue


def ctx(name: str = "T", **inp: JSONValue) -> CallContext:
    return CallContext(tool_use=ToolUse("toolu_1", name, dict(inp)), cwd=Path("/repo"))


def test_generated_output_has_exact_size_and_79_char_lines() -> None:
    for size in (0, 1, 79, 80, 81, 1000, 50_001):
        text = generated_output(size)
        assert len(text) == size
    lines = generated_output(800).split("\n")
    assert all(len(line) == 79 for line in lines[:-1])
    assert len(set(lines[:-1])) == 1
    with pytest.raises(ValueError, match="size"):
        generated_output(-1)


async def test_call_runs_sleep_then_steps_in_order(autojump_clock: trio.testing.MockClock) -> None:
    tool = ScriptedTool("T")
    sent: list[tuple[float, object]] = []
    start = trio.current_time()
    inp: dict[str, JSONValue] = {
        "sleep": 1.0,
        "steps": [
            {"progress": "a"},
            {"sleep": 2.0},
            {"context": {"x": 1}},
            {"progress": {"n": 2}},
            {"context": {"x": 2, "y": 3}},
        ],
        "output": "done",
    }
    out = await tool.call(inp, ctx(), lambda d: sent.append((trio.current_time() - start, d)))
    assert trio.current_time() - start == 3.0
    assert sent == [(1.0, "a"), (3.0, {"n": 2})]
    assert isinstance(out, ToolOutput)
    assert out.value == "done"
    assert out.context_modifier is not None
    assert out.context_modifier({"x": 0, "z": 9}) == {"x": 2, "y": 3, "z": 9}


async def test_plain_output_and_generated_output() -> None:
    tool = ScriptedTool("T")
    assert await tool.call({}, ctx(), print) == ""
    assert await tool.call({"output": "hi"}, ctx(), print) == "hi"
    assert await tool.call({"output_size": 100}, ctx(), print) == generated_output(100)


async def test_error_is_raised_after_the_steps(autojump_clock: trio.testing.MockClock) -> None:
    tool = ScriptedTool("T")
    sent: list[object] = []
    start = trio.current_time()
    with pytest.raises(ScriptedToolError, match=r"^disk full$"):
        await tool.call(
            {"steps": [{"sleep": 1}, {"progress": 1}], "error": "disk full"}, ctx(), sent.append
        )
    assert sent == [1]
    assert trio.current_time() - start == 1


async def test_sleep_is_cancellable(autojump_clock: trio.testing.MockClock) -> None:
    tool = ScriptedTool("T")
    with trio.move_on_after(1) as scope:
        await tool.call({"sleep": 10}, ctx(), print)
    assert scope.cancelled_caught


def test_concurrency_safety_fixed_or_by_input() -> None:
    assert ScriptedTool("T").is_concurrency_safe({"concurrency_safe": True}) is False
    assert ScriptedTool("T", concurrency_safe=True).is_concurrency_safe({}) is True
    by_input = ScriptedTool("T", concurrency_safe="input")
    assert by_input.is_concurrency_safe({"concurrency_safe": True}) is True
    assert by_input.is_concurrency_safe({"concurrency_safe": False}) is False
    assert by_input.is_concurrency_safe({}) is False


def test_configuration_is_checked() -> None:
    with pytest.raises(ValueError, match="concurrency_safe"):
        ScriptedTool("T", concurrency_safe="maybe")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="interrupt_behavior"):
        ScriptedTool("T", interrupt_behavior="ignore")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="permission"):
        ScriptedTool("T", permission="maybe")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_result_size_chars"):
        ScriptedTool("T", max_result_size_chars=-1)
    tool = ScriptedTool("T", max_result_size_chars=math.inf, aliases=("Old",))
    assert tool.aliases == ("Old",)
    assert tool.max_result_size_chars == math.inf


async def test_permission_answers() -> None:
    assert (await ScriptedTool("T").check_permissions({}, ctx())).behavior == "allow"
    assert (
        await ScriptedTool("T", permission="ask").check_permissions({}, ctx())
    ).behavior == "ask"
    denied = await ScriptedTool("W", permission="deny").check_permissions({}, ctx())
    assert denied.behavior == "deny"
    assert denied.message == "W denied this call (its own permission check)"


async def test_output_and_output_size_exclude_each_other() -> None:
    tool = ScriptedTool("T")
    assert await tool.validate_input({"output": "x"}, ctx()) is None
    message = await tool.validate_input({"output": "x", "output_size": 3}, ctx())
    assert message == "Give either output or output_size, not both"


def test_unknown_input_keys_are_a_layer_one_error() -> None:
    compiled = ToolRegistry([ScriptedTool("T")]).lookup("T")
    assert compiled is not None
    issue = compiled.check({"sleep": 1, "colour": "red", "steps": [{"wait": 1}]})
    assert issue is not None
    assert "An unexpected parameter `colour` was provided" in issue.lines
    assert "An unexpected parameter `steps[0].wait` was provided" in issue.lines
    assert compiled.check({"sleep": -1}) is not None
    assert compiled.check({"steps": [{"sleep": 1, "progress": 2}]}) is not None
    assert set(SCRIPTED_INPUT_SCHEMA["properties"]) == {  # type: ignore[arg-type]
        "sleep",
        "steps",
        "output",
        "output_size",
        "error",
        "concurrency_safe",
        "command",
        "file_path",
        "pattern",
    }


def test_rule_content_matching() -> None:
    tool = ScriptedTool("Bash")
    c = ctx()
    assert tool.match_rule_content(
        "npm run test:*", {"command": "npm run test -- -x"}, c, behavior="allow"
    )
    assert not tool.match_rule_content(
        "npm run test:*", {"command": "npm run test && rm x"}, c, behavior="allow"
    )
    assert tool.match_rule_content(
        "./secrets/**", {"file_path": "secrets/key.pem"}, c, behavior="allow"
    )
    assert not tool.match_rule_content(
        "./secrets/**", {"file_path": "src/key.pem"}, c, behavior="allow"
    )
    assert tool.match_rule_content("TODO*", {"pattern": "TODO:"}, c, behavior="allow")
    assert not tool.match_rule_content("x", {}, c, behavior="allow")
    # A deny rule catches a compound command by any part.
    assert tool.match_rule_content("rm:*", {"command": "npm run test && rm x"}, c, behavior="deny")


async def test_scripted_tools_in_run_tools(autojump_clock: trio.testing.MockClock) -> None:
    read = ScriptedTool("Read", concurrency_safe=True)
    start = trio.current_time()
    outcome = await run_tools(
        [
            ToolUse("a", "Read", {"sleep": 2, "output": "A", "steps": [{"context": {"k": "a"}}]}),
            ToolUse("b", "Read", {"sleep": 1, "output": "B", "steps": [{"context": {"k": "b"}}]}),
        ],
        [read],
    )
    assert trio.current_time() - start == 2
    assert [r.text for r in outcome.results] == ["A", "B"]
    assert outcome.context == {"k": "b"}
