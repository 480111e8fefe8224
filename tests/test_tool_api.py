"""Tool definitions for the model: ``Tool.to_api()`` and ``ToolRegistry.to_api()``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs
import jsonschema
import pytest

from trioexec import Tool, ToolDefinitionError, ToolRegistry, function_tool
from trioexec.tools import default_tools

if TYPE_CHECKING:
    from pathlib import Path


@attrs.frozen
class Job:
    path: str = attrs.field(metadata={"description": "Where"})


@function_tool(input_type=Job, aliases=("OldJob",))
async def job(input: Job) -> str:  # noqa: A002
    """Do a job."""
    return input.path


class Schemaless(Tool[dict[str, Any]]):
    name = "Schemaless"
    description = "Anything goes."


class Given(Tool[dict[str, Any]]):
    name = "Given"
    input_schema = {  # noqa: RUF012
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {"n": {"type": "integer"}},
    }


def test_every_standard_tool_gives_a_definition_with_a_valid_schema(tmp_path: Path) -> None:
    definitions = ToolRegistry(default_tools(tmp_path)).to_api()
    assert [d["name"] for d in definitions] == ["Read", "Write", "Edit", "Glob", "Grep", "Bash"]
    for definition in definitions:
        assert set(definition) == {"name", "description", "input_schema"}
        assert isinstance(definition["description"], str)
        assert definition["description"]
        schema = definition["input_schema"]
        assert isinstance(schema, dict)
        assert schema["type"] == "object"
        assert "$schema" not in schema
        jsonschema.Draft202012Validator.check_schema(schema)
    by_name = {d["name"]: d for d in definitions}
    bash = by_name["Bash"]["input_schema"]
    assert isinstance(bash, dict)
    assert bash["required"] == ["command"]


def test_registry_definitions_equal_each_tools_own(tmp_path: Path) -> None:
    tools = [*default_tools(tmp_path), job, Schemaless(), Given()]
    assert ToolRegistry(tools).to_api() == [tool.to_api() for tool in tools]


def test_definitions_come_from_the_input_type_the_given_schema_or_any_object() -> None:
    assert job.to_api() == {
        "name": "job",
        "description": "Do a job.",
        "input_schema": {
            "type": "object",
            "properties": {"path": {"type": "string", "description": "Where"}},
            "additionalProperties": False,
            "required": ["path"],
        },
    }
    assert Given().to_api()["input_schema"] == {
        "type": "object",
        "properties": {"n": {"type": "integer"}},
    }
    assert Schemaless().to_api() == {
        "name": "Schemaless",
        "description": "Anything goes.",
        "input_schema": {"type": "object"},
    }


def test_tools_reachable_only_by_alias_are_not_offered() -> None:
    registry = ToolRegistry([Schemaless()], registered=[job])
    assert "OldJob" in registry
    assert [d["name"] for d in registry.to_api()] == ["Schemaless"]


def test_a_tool_instance_without_a_name_says_how_to_give_one() -> None:
    class Nameless(Tool[dict[str, Any]]):
        pass

    with pytest.raises(ToolDefinitionError, match="has no name; give it one"):
        Nameless().to_api()
    with pytest.raises(ToolDefinitionError, match="has no name; give it one"):
        ToolRegistry([Nameless()])
