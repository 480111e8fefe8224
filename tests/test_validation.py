"""Lookup and two-layer input validation (SPEC §1, §4 steps 1-4): the model-facing texts."""

from __future__ import annotations

from typing import Any

import attrs
import jsonschema
import jsonschema.validators
import pytest
import trio
from helpers import make_tool, use

from trioexec import (
    CallContext,
    GuardRails,
    ProgressSender,
    Tool,
    ToolRegistry,
    ToolResult,
    ToolUse,
    ToolUseAssembler,
    function_tool,
    open_streaming_executor,
    run_tools,
)
from trioexec._contract._validation import compile_tool, validate
from trioexec.hooks import HookInput, HookOutput, HookSet

TODO_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "todos": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "content": {"type": "string"},
                    "activeForm": {"type": "string"},
                    "status": {"enum": ["pending", "done"]},
                },
                "required": ["content", "activeForm"],
                "additionalProperties": False,
            },
        },
        "limit": {"type": "integer"},
        "flag": {"type": "boolean"},
    },
    "required": ["todos"],
    "additionalProperties": False,
}

HEADER = "<tool_use_error>InputValidationError: {tool} failed due to the following issue:\n"
"""The header of one issue (Zod's wording, as Claude Code sends it); several read ``issues``."""
HEADERS = HEADER.replace("issue:", "issues:")
DEFERRED_HINT = (
    "\n\nThis tool's schema was not sent to the API — it was not in the discovered-tool set "
    "derived from message history. Without the schema in your prompt, typed parameters "
    "(arrays, numbers, booleans) get emitted as strings and the client-side parser rejects "
    'them. Load the tool first: call ToolSearch with query "select:{tool}", then retry this call.'
)


class TodoWrite(Tool[dict[str, Any]]):
    name = "TodoWrite"
    input_schema = TODO_SCHEMA

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    async def call(
        self, payload: dict[str, Any], ctx: CallContext, progress: ProgressSender
    ) -> object:
        self.calls.append(payload)
        return "written"


class DeferredTodoWrite(TodoWrite):
    is_deferred = True


def expected(tool: str, *lines: str, deferred: bool = False) -> str:
    hint = DEFERRED_HINT.format(tool=tool) if deferred else ""
    header = HEADERS if len(lines) > 1 else HEADER
    return header.format(tool=tool) + "\n".join(lines) + hint + "</tool_use_error>"


async def answer(tool_use: ToolUse, tools: list[Tool[Any]]) -> ToolResult:
    outcome = await run_tools([tool_use], tools)
    (result,) = outcome.results
    assert result.tool_use_id == tool_use.id
    return result


# -- layer 1: JSON Schema -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("payload", "line"),
    [
        ({}, "The required parameter `todos` is missing"),
        ({"todos": [], "extra": 1}, "An unexpected parameter `extra` was provided"),
        (
            {"todos": "x"},
            "The parameter `todos` type is expected as `array` but provided as `string`",
        ),
        (
            {"todos": [], "limit": 1.5},
            "The parameter `limit` type is expected as `number` but provided as `number`",
        ),
        (
            {"todos": [], "flag": "true"},
            "The parameter `flag` type is expected as `boolean` but provided as `string`",
        ),
        (
            {"todos": [], "limit": None},
            "The parameter `limit` type is expected as `number` but provided as `null`",
        ),
        (
            {"todos": [{"content": "a"}]},
            "The required parameter `todos[0].activeForm` is missing",
        ),
        (
            {"todos": [{"content": "a", "activeForm": "b"}, {"content": 3, "activeForm": "c"}]},
            "The parameter `todos[1].content` type is expected as `string` "
            "but provided as `number`",
        ),
        (
            {"todos": [{"content": "a", "activeForm": "b", "why": True}]},
            "An unexpected parameter `todos[0].why` was provided",
        ),
        (
            {"todos": [{"content": "a", "activeForm": "b", "status": {}}]},
            "The parameter `todos[0].status` is invalid: {} is not one of ['pending', 'done']",
        ),
    ],
)
async def test_schema_issue_sentences_byte_for_byte(payload: dict[str, Any], line: str) -> None:
    tool = TodoWrite()
    result = await answer(ToolUse("t1", "TodoWrite", payload), [tool])
    assert result == ToolResult("t1", expected("TodoWrite", line), is_error=True)
    assert tool.calls == []


async def test_several_issues_one_line_each() -> None:
    payload: dict[str, Any] = {"todos": [{"content": 1}], "extra": 1}
    result = await answer(ToolUse("t1", "TodoWrite", payload), [TodoWrite()])
    assert result.is_error
    assert isinstance(result.content, str)
    assert result.content.startswith(HEADERS.format(tool="TodoWrite"))
    assert result.content.endswith("</tool_use_error>")
    body = result.content.removeprefix(HEADERS.format(tool="TodoWrite"))
    lines = body.removesuffix("</tool_use_error>").split("\n")
    assert sorted(lines) == sorted(
        [
            "An unexpected parameter `extra` was provided",
            "The parameter `todos[0].content` type is expected as `string` "
            "but provided as `number`",
            "The required parameter `todos[0].activeForm` is missing",
        ]
    )


async def test_deferred_tool_gets_the_tool_search_hint() -> None:
    result = await answer(ToolUse("t1", "TodoWrite", {"todos": "[]"}), [DeferredTodoWrite()])
    line = "The parameter `todos` type is expected as `array` but provided as `string`"
    assert result == ToolResult("t1", expected("TodoWrite", line, deferred=True), is_error=True)


async def test_valid_input_reaches_the_tool_unchanged() -> None:
    tool = TodoWrite()
    payload: dict[str, Any] = {
        "todos": [{"content": "a", "activeForm": "doing a", "status": "done"}],
        "limit": 2,
    }
    result = await answer(ToolUse("t1", "TodoWrite", payload), [tool])
    assert result == ToolResult("t1", "written")
    assert tool.calls == [payload]


@attrs.frozen
class Step:
    sleep: float = 0.0
    progress: str | None = None


@attrs.frozen
class Job:
    """An attrs input type: its JSON Schema is derived, nested class included."""

    sleep: float = 0.0
    steps: list[Step] = attrs.field(factory=list)


async def test_schema_derived_from_attrs_input_type() -> None:
    @function_tool(name="Read", input_type=Job)
    async def read(job: Job, ctx: CallContext, progress: ProgressSender) -> object:
        return "ok"

    result = await answer(use("t1", "Read", sleep=[1]), [read])
    line = "The parameter `sleep` type is expected as `number` but provided as `array`"
    assert result == ToolResult("t1", expected("Read", line), is_error=True)
    nested = await answer(use("t2", "Read", steps=[{"progress": 1}]), [read])
    line = (
        "The parameter `steps[0].progress` type is expected as `string` "
        "but provided as `number`"
    )
    assert nested == ToolResult("t2", expected("Read", line), is_error=True)


# -- layer 2: cattrs structuring and validate_input ---------------------------------------------


@attrs.frozen
class Timed:
    """An attrs input whose one field layer 2a (cattrs) checks."""

    sleep: float = 0.0


async def test_structuring_failure_is_reported_like_layer_one() -> None:
    @function_tool(name="Loose", input_schema={"type": "object"}, input_type=Timed)
    async def loose(job: Timed, ctx: CallContext, progress: ProgressSender) -> object:
        raise AssertionError("never called")

    result = await answer(use("t1", "Loose", sleep="soon"), [loose])
    assert result.is_error
    assert result.content == expected(
        "Loose", "The parameter `sleep` is invalid: invalid value for type, expected float"
    )
    extra = await answer(use("t2", "Loose", nope=1), [loose])
    assert isinstance(extra.content, str)
    assert extra.content.startswith(HEADER.format(tool="Loose") + "The input is invalid: ")
    assert "nope" in extra.content


class Picky(Tool[dict[str, Any]]):
    name = "Picky"
    input_schema = {  # noqa: RUF012 - the Tool attribute, per class
        "type": "object",
        "properties": {"path": {"type": "string"}},
    }

    def __init__(self) -> None:
        self.called = False

    async def validate_input(self, payload: dict[str, Any], ctx: CallContext) -> str | None:
        if not str(payload.get("path", "")).startswith("/"):
            return "path must be absolute"
        return None

    async def call(
        self, payload: dict[str, Any], ctx: CallContext, progress: ProgressSender
    ) -> object:
        self.called = True
        return "fine"


async def test_validate_input_message_is_wrapped() -> None:
    tool = Picky()
    result = await answer(ToolUse("t1", "Picky", {"path": "rel"}), [tool])
    assert result == ToolResult(
        "t1", "<tool_use_error>path must be absolute</tool_use_error>", True
    )
    assert not tool.called
    ok = await answer(ToolUse("t2", "Picky", {"path": "/abs"}), [tool])
    assert ok == ToolResult("t2", "fine")
    assert tool.called


async def test_validators_are_compiled_once_not_per_call(monkeypatch: pytest.MonkeyPatch) -> None:
    registry = ToolRegistry([TodoWrite()])

    def refuse(*args: object, **kwargs: object) -> object:
        raise AssertionError("schema compiled or re-checked during a call")

    for validator_class in (
        jsonschema.Draft202012Validator,
        jsonschema.Draft201909Validator,
        jsonschema.Draft7Validator,
    ):
        monkeypatch.setattr(validator_class, "check_schema", classmethod(refuse))
    monkeypatch.setattr(jsonschema, "validate", refuse)
    for index in range(3):
        outcome = await run_tools(
            [
                ToolUse(f"t{index}", "TodoWrite", {"todos": []}),
                ToolUse(f"u{index}", "TodoWrite", {}),
            ],
            registry,
        )
        assert outcome.results[0] == ToolResult(f"t{index}", "written")
        assert outcome.results[1].is_error


# -- lookup -------------------------------------------------------------------------------------


async def test_unknown_tool() -> None:
    result = await answer(use("t1", "Nope"), [make_tool("Read")])
    assert result == ToolResult(
        "t1", "<tool_use_error>Error: No such tool available: Nope</tool_use_error>", is_error=True
    )


async def test_alias_finds_the_renamed_tool() -> None:
    log: list[tuple[str, str, float]] = []
    view = make_tool("View", aliases=("ReadFile",), log=log)
    result = await answer(use("t1", "ReadFile", output="via alias"), [view])
    assert result == ToolResult("t1", "via alias")
    assert [entry[:2] for entry in log] == [("begin", "t1"), ("end", "t1")]


async def test_alias_never_shadows_a_real_name() -> None:
    read = make_tool("Read")
    view = make_tool("View", aliases=("Read",))
    for tools in ([read, view], [view, read]):
        outcome = await run_tools(
            [use("t1", "Read", output="real"), use("t2", "View", output="view")], tools
        )
        assert outcome.results == (ToolResult("t1", "real"), ToolResult("t2", "view"))
        registry = ToolRegistry(tools)
        assert registry.lookup("Read") is not None
        assert registry.lookup("Read").tool is read  # type: ignore[union-attr]


async def test_alias_reaches_registered_tools_but_their_names_do_not() -> None:
    grep = make_tool("Grep")
    search = make_tool("Search", aliases=("OldSearch",))
    registry = ToolRegistry([grep], registered=[search])
    outcome = await run_tools(
        [use("t1", "OldSearch", output="found"), use("t2", "Search")], registry
    )
    assert outcome.results == (
        ToolResult("t1", "found"),
        ToolResult(
            "t2", "<tool_use_error>Error: No such tool available: Search</tool_use_error>", True
        ),
    )


async def test_validation_runs_without_waiting(autojump_clock: trio.testing.MockClock) -> None:
    await answer(ToolUse("t1", "TodoWrite", {}), [TodoWrite()])
    assert trio.current_time() == 0.0


# -- one validation path -------------------------------------------------------------------------


@attrs.define
class Positive:
    n: int = attrs.field(validator=attrs.validators.gt(0))


@attrs.define
class Wrapped:
    inner: Positive


async def test_an_attrs_validators_own_message_reaches_the_model() -> None:
    @function_tool(name="Count", input_schema={"type": "object"}, input_type=Positive)
    async def count(payload: Positive, ctx: CallContext, progress: ProgressSender) -> object:
        raise AssertionError("never called")

    result = await answer(use("t1", "Count", n=-1), [count])
    assert result == ToolResult(
        "t1", expected("Count", "The input is invalid: 'n' must be > 0: -1"), is_error=True
    )


async def test_a_nested_attrs_validators_message_names_where_it_failed() -> None:
    @function_tool(name="Nest", input_schema={"type": "object"}, input_type=Wrapped)
    async def nest(payload: Wrapped, ctx: CallContext, progress: ProgressSender) -> object:
        raise AssertionError("never called")

    result = await answer(use("t1", "Nest", inner={"n": 0}), [nest])
    assert result.content == expected(
        "Nest", "The parameter `inner` is invalid: 'n' must be > 0: 0"
    )


def test_validate_gives_the_structured_input_or_the_issue() -> None:
    @function_tool(name="Count", input_type=Positive)
    async def count(payload: Positive, ctx: CallContext, progress: ProgressSender) -> object:
        raise AssertionError("never called")

    compiled = compile_tool(count)
    assert validate(compiled, {"n": 3}) == (Positive(3), None)
    parsed, issue = validate(compiled, {"n": "three"})
    assert parsed is None
    assert issue is not None
    assert issue.lines == (
        "The parameter `n` type is expected as `number` but provided as `string`",
    )
    parsed, issue = validate(compiled, {"n": 0})  # layer 2a: the attrs validator
    assert parsed is None
    assert issue is not None
    assert issue.lines == ("The input is invalid: 'n' must be > 0: 0",)


async def test_a_hooks_replaced_input_is_validated_once() -> None:
    structured: list[int] = []

    def counted(instance: object, attribute: object, value: int) -> None:
        structured.append(value)

    @attrs.define
    class Counted:
        n: int = attrs.field(validator=counted)

    @function_tool(name="Counted", input_type=Counted, concurrency_safe=True)
    async def tool(payload: Counted, ctx: CallContext, progress: ProgressSender) -> object:
        return f"n={payload.n}"

    async def replace(data: HookInput) -> HookOutput:
        return HookOutput(permission_decision="allow", updated_input={"n": 2})

    rails = GuardRails(hooks=HookSet().with_python_hook("PreToolUse", "Counted", replace))
    outcome = await run_tools([use("t1", "Counted", n=1)], [tool], guard=rails)
    assert outcome.results == (ToolResult("t1", "n=2"),)
    assert structured == [1, 2]  # the model's input at admission, the hook's once


# -- input JSON that did not parse ---------------------------------------------------------------


class _Permissive(Tool[dict[str, Any]]):
    """Accepts any object (as many MCP tools' schemas do); records every run."""

    name = "Permissive"

    def __init__(self) -> None:
        self.input_schema = {"type": "object"}
        self.ran: list[object] = []

    async def call(
        self, payload: dict[str, Any], ctx: CallContext, progress: ProgressSender
    ) -> object:
        self.ran.append(payload)
        return "ran"


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('{"command": "ls', "Unterminated string"),  # a stream cut at max_tokens
        ('{"n": 1,}', "Expecting property name"),
        ("[1, 2]", "expected an object, got array"),
        ('{"n": NaN}', "NaN is not JSON"),
    ],
)
async def test_unparseable_input_never_reaches_a_tool_whatever_its_schema(
    text: str, problem: str
) -> None:
    assembler = ToolUseAssembler()
    block = {"type": "tool_use", "id": "a", "name": "Permissive"}
    assembler.feed({"type": "content_block_start", "index": 0, "content_block": block})
    assembler.feed({"type": "content_block_delta", "index": 0,
                    "delta": {"type": "input_json_delta", "partial_json": text}})  # fmt: skip
    tool_use = assembler.feed({"type": "content_block_stop", "index": 0})
    assert tool_use is not None
    tool = _Permissive()
    outcome = await run_tools([tool_use], [tool])
    async with open_streaming_executor([tool]) as executor:
        executor.add_tool(tool_use)
        streamed = [u async for u in executor.remaining()]
    assert tool.ran == []
    for result in (outcome.results[0], streamed[-1].result):  # type: ignore[union-attr]
        assert result.is_error
        assert "InputValidationError" in str(result.content)
        assert "not valid JSON" in str(result.content)
        assert problem in str(result.content)
