"""Layer 1's fast path accepts exactly what the reference validator accepts.

``CompiledTool.check`` asks a compiled fast validator first and the reference
(``jsonschema``) whenever the fast one does not accept.  These tests hold the
two to one answer: over the standard tools' schemas and a set of schemas that
use every keyword family, for random JSON instances, ``check`` says "conforms"
exactly when the reference does, and its issue lines are the reference's.
Layer 2a has the same arrangement (a cattrs converter without detailed
validation first, the detailed one for every refusal): the two structure the
same inputs into equal values.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import jsonschema
import jsonschema.validators
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trioexec import Tool
from trioexec._contract._validation import CompiledTool, _converter, _issue_lines, compile_tool
from trioexec.tools import default_tools


class _SchemaTool(Tool[dict[str, Any]]):
    """A tool that is nothing but its schema."""

    def __init__(self, schema: dict[str, Any]) -> None:
        self.name = "T"
        self.input_schema = schema

    async def call(self, payload: dict[str, Any], ctx: Any, progress: Any) -> object:
        return None


KEYWORD_SCHEMAS: list[dict[str, Any]] = [
    {
        "type": "object",
        "properties": {
            "n": {"type": "integer", "minimum": 0, "exclusiveMaximum": 100},
            "f": {"type": "number", "maximum": 1.5},
            "s": {"type": "string", "minLength": 1, "maxLength": 3},
            "b": {"type": "boolean"},
            "e": {"enum": ["a", 1, None, True]},
            "c": {"const": 0},
            "l": {
                "type": "array",
                "items": {"type": "integer"},
                "maxItems": 2,
                "uniqueItems": True,
            },
            "o": {
                "type": "object",
                "properties": {"k": {"type": ["string", "null"]}},
                "required": ["k"],
                "additionalProperties": False,
            },
        },
        "required": ["n"],
        "additionalProperties": False,
    },
    {
        "type": "object",
        "properties": {"v": {"anyOf": [{"type": "string"}, {"type": "integer", "minimum": 5}]}},
        "minProperties": 1,
        "maxProperties": 2,
    },
    {
        "type": "object",
        "properties": {"v": {"oneOf": [{"type": "number"}, {"type": "integer"}]}},
        "dependentRequired": {"v": ["w"]},
    },
    {
        "type": "object",
        "properties": {"t": {"not": {"type": "string"}}, "u": {"$ref": "#/$defs/pair"}},
        "if": {"required": ["t"]},
        "then": {"required": ["u"]},
        "$defs": {
            "pair": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}]}
        },
    },
    {
        "type": "object",
        "propertyNames": {"maxLength": 2},
        "additionalProperties": {"type": ["integer", "boolean"]},
    },
    {
        "type": "object",
        "properties": {"l": {"type": "array", "contains": {"const": 1}, "minContains": 1}},
        "unevaluatedProperties": False,
    },
]


def _compiled_schemas() -> list[CompiledTool]:
    standard = [compile_tool(tool) for tool in default_tools(Path("."))]
    return standard + [compile_tool(_SchemaTool(schema)) for schema in KEYWORD_SCHEMAS]


COMPILED = _compiled_schemas()

_keys = st.sampled_from(
    ["n", "f", "s", "b", "e", "c", "l", "o", "k", "v", "w", "t", "u", "x", "file_path", "command",
     "pattern", "path", "content", "old_string", "new_string", "replace_all", "offset", "limit",
     "timeout", "description", "glob", "output_mode", "-i", "-n", "head_limit"]
)  # fmt: skip
_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from([0, 1, 1.0, 1.5, 5, 99, 100, -1, "", "a", "ab", "abcd", "content"])
    | st.text(max_size=5)
)
_json = st.recursive(
    _scalars,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(_keys, children, max_size=3),
    max_leaves=8,
)
_instances = st.dictionaries(_keys, _json, max_size=5)


def _reference(compiled: CompiledTool) -> Any:
    """The plain jsonschema validator for the same schema: the source of truth."""
    return jsonschema.validators.validator_for(compiled.schema)(compiled.schema)


@pytest.mark.parametrize("compiled", COMPILED, ids=lambda c: c.tool.name + str(id(c))[-4:])
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instance=_instances)
def test_check_accepts_exactly_what_the_reference_accepts(
    compiled: CompiledTool, instance: dict[str, Any]
) -> None:
    reference = _reference(compiled)
    issue = compiled.check(instance)
    assert (issue is None) == reference.is_valid(instance)
    if issue is not None:
        expected = tuple(dict.fromkeys(_issue_lines(reference.iter_errors(instance))))
        assert issue.lines == expected


@pytest.mark.parametrize("compiled", COMPILED, ids=lambda c: c.tool.name + str(id(c))[-4:])
@settings(max_examples=100, deadline=None)
@given(instance=_instances)
def test_the_fast_validator_never_accepts_what_the_reference_refuses(
    compiled: CompiledTool, instance: dict[str, Any]
) -> None:
    if compiled.fast_accepts is None:
        return
    try:
        accepted = compiled.fast_accepts(instance)
    except Exception:
        return  # the reference decides such inputs
    if accepted:
        assert _reference(compiled).is_valid(instance)


def test_every_standard_tool_is_checked_by_the_fast_validator() -> None:
    # Grep has a *property* named "pattern": the keyword walk must not take it for the keyword.
    for tool in default_tools(Path(".")):
        assert compile_tool(tool).fast_accepts is not None, tool.name


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"p": {"type": "string", "pattern": "^\\d+$"}}},
        {"type": "object", "patternProperties": {"^x": {"type": "integer"}}},
        {"type": "object", "properties": {"when": {"type": "string", "format": "date"}}},
        {"type": "object", "properties": {"q": {"type": "number", "multipleOf": 0.1}}},
        {
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {"a": {"items": [{"pattern": "a"}]}},
        },
    ],
)
def test_keywords_read_differently_leave_the_check_to_the_reference(
    schema: dict[str, Any],
) -> None:
    assert compile_tool(_SchemaTool(schema)).fast_accepts is None


def test_a_regex_the_implementations_read_differently_is_judged_by_pythons_re() -> None:
    schema = {"type": "object", "properties": {"p": {"type": "string", "pattern": "^\\d+$"}}}
    compiled = compile_tool(_SchemaTool(schema))
    assert compiled.check({"p": "١٢"}) is None  # Arabic-Indic digits: \d in Python's re
    assert compiled.check({"p": "12\n"}) is None  # Python's $ matches before a final newline


def test_multiple_of_on_floats_keeps_the_reference_arithmetic() -> None:
    schema = {"type": "object", "properties": {"q": {"type": "number", "multipleOf": 0.1}}}
    issue = compile_tool(_SchemaTool(schema)).check({"q": 0.3})
    assert issue is not None
    assert issue.lines == ("The parameter `q` is invalid: 0.3 is not a multiple of 0.1",)


@pytest.mark.parametrize(
    ("schema", "instance"),
    [
        ({"type": "object", "properties": {"f": {"type": "number"}}}, {"f": math.nan}),
        ({"type": "object", "properties": {"f": {"type": "number"}}}, {"f": math.inf}),
        ({"type": "object", "properties": {"s": {"type": "string"}}}, {"s": "\ud800"}),
    ],
)
def test_values_the_fast_validator_cannot_read_are_judged_by_the_reference(
    schema: dict[str, Any], instance: dict[str, Any]
) -> None:
    compiled = compile_tool(_SchemaTool(schema))
    assert compiled.fast_accepts is not None
    assert compiled.check(instance) is None
    assert _reference(compiled).is_valid(instance)


def test_a_tuple_is_an_array_for_both_validators() -> None:
    schema = {
        "type": "object",
        "properties": {"l": {"type": "array", "items": {"type": "integer"}}},
    }
    compiled = compile_tool(_SchemaTool(schema))
    assert compiled.check({"l": (1, 2)}) is None
    issue = compiled.check({"l": (1, "x")})
    assert issue is not None
    assert issue.lines == (
        "The parameter `l[1]` type is expected as `number` but provided as `string`",
    )


TYPED = [compiled for compiled in COMPILED if compiled.tool.input_type is not None]


def _reference_structure(compiled: CompiledTool, instance: dict[str, Any]) -> tuple[bool, object]:
    try:
        return True, _converter.structure(dict(instance), compiled.tool.input_type)
    except Exception:
        return False, None


def test_every_standard_typed_tool_is_structured_by_the_fast_converter() -> None:
    assert TYPED
    for compiled in TYPED:
        assert compiled.fast_structure is not None, compiled.tool.name


@st.composite
def _typed_inputs(draw: st.DrawFn, compiled: CompiledTool) -> dict[str, Any]:
    """A dict that structures (built from a random instance), often then spoiled."""
    instance = draw(st.builds(compiled.tool.input_type))
    raw: dict[str, Any] = _converter.unstructure(instance)
    spoil = draw(st.sampled_from(["none", "value", "extra", "missing"]))
    if spoil == "value" and raw:
        raw[draw(st.sampled_from(sorted(raw)))] = draw(_json)
    elif spoil == "extra":
        raw[draw(_keys)] = draw(_json)
    elif spoil == "missing" and raw:
        del raw[draw(st.sampled_from(sorted(raw)))]
    return raw


@pytest.mark.parametrize("compiled", TYPED, ids=lambda c: c.tool.name)
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_structure_gives_what_the_reference_converter_gives(
    compiled: CompiledTool, data: st.DataObject
) -> None:
    instance = data.draw(_typed_inputs(compiled) | _instances)
    accepted, expected = _reference_structure(compiled, instance)
    try:
        structured = compiled.structure(instance)
    except Exception:
        assert not accepted
    else:
        assert accepted
        assert structured == expected
