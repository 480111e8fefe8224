"""``function_tool``: bare or with options, input from type hints, and definition-time errors."""

from __future__ import annotations

import dataclasses
from typing import Annotated, Any, Literal

import attrs
import pytest

from trioexec import (
    CallContext,
    ProgressSender,
    ProgressUpdate,
    Tool,
    ToolDefinitionError,
    ToolUse,
    function_tool,
    open_streaming_executor,
    run_tools,
)


@dataclasses.dataclass
class Point:
    lat: float
    lon: float = 0.0


@attrs.frozen
class Area:
    name: str
    corners: list[Point]


@function_tool
async def weather(city: str) -> str:
    """Today's weather in a city."""
    return f"sunny in {city}"


async def test_a_plain_async_function_with_a_typed_parameter_is_a_tool() -> None:
    outcome = await run_tools([ToolUse("t1", "weather", {"city": "Paris"})], [weather])
    assert outcome.results[0].text == "sunny in Paris"
    assert not outcome.results[0].is_error
    assert weather.to_api() == {
        "name": "weather",
        "description": "Today's weather in a city.",
        "input_schema": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "additionalProperties": False,
            "required": ["city"],
        },
    }


async def test_the_derived_schema_refuses_a_wrong_property_before_the_function_runs() -> None:
    outcome = await run_tools([ToolUse("t1", "weather", {"town": "Paris"})], [weather])
    assert outcome.results[0].is_error
    assert "An unexpected parameter `town` was provided" in outcome.results[0].text
    assert "The required parameter `city` is missing" in outcome.results[0].text


def test_hints_become_schema_scalars_literals_optionals_lists_dicts_and_nested_classes() -> None:
    @function_tool(name="plan", concurrency_safe=True)
    async def plan(
        title: Annotated[str, "What the plan is called"],
        mode: Literal["fast", "slow"] = "fast",
        budget: float | None = None,
        tags: list[str] = [],  # noqa: B006 - a JSON default, shown to the model
        limits: dict[str, int] | None = None,
        area: Area | None = None,
        start: Point | None = None,
        count: int = 3,
        strict: bool = False,
    ) -> str:
        """Make a plan.

        Longer text.
        """
        return "ok"

    schema = plan.to_api()["input_schema"]
    assert isinstance(schema, dict)
    props = schema["properties"]
    assert isinstance(props, dict)
    assert props["title"] == {"type": "string", "description": "What the plan is called"}
    assert props["mode"] == {"enum": ["fast", "slow"], "default": "fast"}
    assert props["budget"] == {"type": ["number", "null"], "default": None}
    assert props["tags"] == {"type": "array", "items": {"type": "string"}, "default": []}
    assert props["limits"] == {
        "anyOf": [
            {"type": "object", "additionalProperties": {"type": "integer"}},
            {"type": "null"},
        ],
        "default": None,
    }
    point = {
        "type": "object",
        "properties": {"lat": {"type": "number"}, "lon": {"type": "number", "default": 0.0}},
        "additionalProperties": False,
        "required": ["lat"],
    }
    assert props["start"] == {"anyOf": [point, {"type": "null"}], "default": None}
    area = props["area"]
    assert isinstance(area, dict)
    assert area["anyOf"][0]["properties"]["corners"] == {"type": "array", "items": point}  # type: ignore[index]
    assert props["count"] == {"type": "integer", "default": 3}
    assert props["strict"] == {"type": "boolean", "default": False}
    assert schema["required"] == ["title"]
    assert plan.to_api()["description"] == "Make a plan.\n\nLonger text."


async def test_nested_dataclasses_and_defaults_reach_the_function_structured() -> None:
    seen: list[object] = []

    @function_tool
    async def survey(area: Area, depth: int = 2) -> str:
        seen.append((area, depth))
        return "done"

    use = ToolUse("t1", "survey", {"area": {"name": "a", "corners": [{"lat": 1.5}]}})
    outcome = await run_tools([use], [survey])
    assert outcome.results[0].text == "done"
    assert seen == [(Area("a", [Point(1.5, 0.0)]), 2)]


async def test_a_single_dataclass_parameter_is_the_input_type() -> None:
    @function_tool(concurrency_safe=lambda p: p.lat > 0)
    async def locate(point: Point, ctx: CallContext, progress: ProgressSender) -> str:
        progress(f"at {point.lat}")
        return f"{point.lat},{point.lon} for {ctx.tool_use.id}"

    assert locate.input_type is Point
    async with open_streaming_executor([locate]) as executor:
        executor.add_tool(ToolUse("t1", "locate", {"lat": 1.0, "lon": 2.0}))
        updates = [u async for u in executor.remaining()]
    assert updates[0] == ProgressUpdate("t1", "at 1.0")
    assert updates[1].tool_use_id == "t1"
    assert updates[-1].result.text == "1.0,2.0 for t1"  # type: ignore[union-attr]


async def test_a_dataclass_input_type_is_accepted_and_structured() -> None:
    @function_tool(input_type=Point)
    async def show(p: Point) -> str:
        return repr(p)

    outcome = await run_tools([ToolUse("t1", "show", {"lat": 3})], [show])
    assert outcome.results[0].text == "Point(lat=3.0, lon=0.0)"


async def test_the_classic_input_ctx_progress_shape_still_gets_the_whole_dict() -> None:
    @function_tool(name="Echo")
    async def echo(args: dict[str, Any], ctx: CallContext, progress: ProgressSender) -> str:
        return repr(sorted(args))

    @function_tool(name="Raw")
    async def raw(input, ctx, progress):  # type: ignore[no-untyped-def]  # noqa: A002, ANN001, ANN202
        return repr(sorted(input))

    uses = [ToolUse("t1", "Echo", {"b": 1, "a": 2}), ToolUse("t2", "Raw", {"z": 0})]
    outcome = await run_tools(uses, [echo, raw])
    assert [r.text for r in outcome.results] == ["['a', 'b']", "['z']"]
    assert echo.to_api()["input_schema"] == {"type": "object"}


async def test_keyword_only_context_and_positional_only_inputs_are_bound_by_kind() -> None:
    @function_tool
    async def mixed(first: str, /, second: int = 1, *, ctx: CallContext) -> str:
        return f"{first}{second}{ctx.tool_use.id}"

    outcome = await run_tools([ToolUse("t9", "mixed", {"first": "x"})], [mixed])
    assert outcome.results[0].text == "x1t9"


def test_a_function_without_input_parameters_takes_an_empty_object() -> None:
    @function_tool
    async def now() -> str:
        return "12:00"

    assert now.to_api()["input_schema"] == {
        "type": "object",
        "properties": {},
        "additionalProperties": False,
    }


def test_bare_and_called_forms_give_the_same_tool() -> None:
    async def greet(name: str) -> str:
        return name

    bare = function_tool(greet)
    called = function_tool()(greet)
    assert isinstance(bare, Tool)
    assert bare.to_api() == called.to_api()
    assert function_tool(name="hello")(greet).to_api()["name"] == "hello"


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda f: function_tool(name="")(f), r"has no name; give it one"),
        (lambda f: function_tool(name="read file")(f), r"'read file'.*not valid.*1-64 letters"),
        (lambda f: function_tool(name="x" * 65)(f), r"not valid for the Messages API"),
    ],
)
def test_an_invalid_name_is_refused_with_the_rule(make: Any, message: str) -> None:
    async def tool(city: str) -> str:
        return city

    with pytest.raises(ToolDefinitionError, match=message):
        make(tool)


def test_a_generator_function_is_refused_naming_it() -> None:
    def forecast(city: str) -> Any:
        yield city

    with pytest.raises(ToolDefinitionError, match=r"'forecast' is a generator.*progress"):
        function_tool(forecast)


def test_an_async_generator_is_refused() -> None:
    async def stream(city: str) -> Any:
        yield city

    with pytest.raises(ToolDefinitionError, match="'stream' is a generator"):
        function_tool(stream)


def test_a_parameter_without_annotation_is_refused_with_the_fix() -> None:
    async def forecast(city, days: int) -> str:  # type: ignore[no-untyped-def]  # noqa: ANN001
        return city  # type: ignore[no-any-return]

    with pytest.raises(
        ToolDefinitionError,
        match=r"tool 'forecast': parameter `city` has no type annotation.*`city: str`",
    ):
        function_tool(forecast)


def test_an_unsupported_parameter_type_is_refused_naming_tool_and_parameter() -> None:
    async def at(when: complex) -> str:
        return str(when)

    with pytest.raises(
        ToolDefinitionError, match=r"tool 'at': parameter `when`: type .*complex.*supported:"
    ):
        function_tool(at)


def test_an_input_type_with_two_input_parameters_is_refused() -> None:
    async def show(p: Point, extra: str) -> str:
        return extra

    with pytest.raises(
        ToolDefinitionError,
        match=r"tool 'show': with input_type= .* 2 other parameters: `p`, `extra`",
    ):
        function_tool(input_type=Point)(show)


def test_an_input_type_that_is_not_a_class_with_fields_is_refused() -> None:
    class Plain:
        x: int

    async def show(p: Plain) -> str:
        return "x"

    with pytest.raises(ToolDefinitionError, match=r"tool 'show': input_type .* not an attrs class"):
        function_tool(input_type=Plain)(show)


def test_an_input_type_with_an_unsupported_field_is_refused_at_definition() -> None:
    @attrs.frozen
    class Odd:
        value: complex

    async def show(odd: Odd) -> str:
        return "x"

    with pytest.raises(ToolDefinitionError, match=r"tool 'show'.*Odd.value: type .*complex"):
        function_tool(input_type=Odd)(show)


def test_a_tool_subclass_is_checked_when_the_class_is_created() -> None:
    with pytest.raises(ToolDefinitionError, match=r"tool 'Sync': .*call must be a coroutine"):

        class Sync(Tool[dict[str, Any]]):
            name = "Sync"

            def call(self, input, ctx, progress):  # type: ignore[no-untyped-def, override]  # noqa: A002, ANN001, ANN202
                return "x"

    with pytest.raises(ToolDefinitionError, match=r"'bad name'.*not valid"):

        class Named(Tool[dict[str, Any]]):
            name = "bad name"

    @attrs.frozen
    class Odd:
        value: complex

    with pytest.raises(ToolDefinitionError, match=r"tool 'Typed': input_type: Odd.value"):

        class Typed(Tool[Odd]):
            name = "Typed"
            input_type = Odd


def test_a_tool_subclass_with_a_dataclass_input_type_gives_its_definition() -> None:
    class Locate(Tool[Point]):
        name = "Locate"
        description = "Find a point."
        input_type = Point

    assert Locate().to_api() == {
        "name": "Locate",
        "description": "Find a point.",
        "input_schema": {
            "type": "object",
            "properties": {"lat": {"type": "number"}, "lon": {"type": "number", "default": 0.0}},
            "additionalProperties": False,
            "required": ["lat"],
        },
    }
