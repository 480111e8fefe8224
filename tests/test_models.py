"""ToolUse / ToolResult: Messages API round trips and malformed blocks naming the field."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trioexec import (
    ImageBlock,
    MalformedBlockError,
    ProgressUpdate,
    ResultUpdate,
    TextBlock,
    ToolResult,
    ToolUse,
)

IMAGE_SOURCE = {"type": "base64", "media_type": "image/png", "data": "AAAA"}


def test_tool_use_round_trip() -> None:
    block: dict[str, Any] = {
        "type": "tool_use",
        "id": "toolu_01",
        "name": "TodoWrite",
        "input": {"todos": [{"content": "x", "activeForm": "doing x"}], "n": 1.5, "ok": None},
    }
    use = ToolUse.from_api(block)
    assert use == ToolUse("toolu_01", "TodoWrite", block["input"])
    assert use.to_api() == block


def test_tool_use_without_input_gets_an_empty_object() -> None:
    use = ToolUse.from_api({"type": "tool_use", "id": "a", "name": "Read"})
    assert use.input == {}
    assert use.to_api() == {"type": "tool_use", "id": "a", "name": "Read", "input": {}}


@pytest.mark.parametrize(
    ("block", "field"),
    [
        ({"type": "text", "id": "a", "name": "Read", "input": {}}, "tool_use.type"),
        ({"id": "a", "name": "Read", "input": {}}, "tool_use.type"),
        ({"type": "tool_use", "name": "Read", "input": {}}, "tool_use.id"),
        ({"type": "tool_use", "id": 7, "name": "Read", "input": {}}, "tool_use.id"),
        ({"type": "tool_use", "id": "a", "input": {}}, "tool_use.name"),
        ({"type": "tool_use", "id": "a", "name": None, "input": {}}, "tool_use.name"),
        ({"type": "tool_use", "id": "a", "name": "Read", "input": []}, "tool_use.input"),
        ({"type": "tool_use", "id": "a", "name": "Read", "input": "{}"}, "tool_use.input"),
    ],
)
def test_malformed_tool_use_names_the_field(block: dict[str, Any], field: str) -> None:
    with pytest.raises(MalformedBlockError) as caught:
        ToolUse.from_api(block)
    assert caught.value.field == field
    assert str(caught.value).startswith(f"{field}: ")


def test_tool_use_from_a_non_mapping_is_malformed() -> None:
    with pytest.raises(MalformedBlockError) as caught:
        ToolUse.from_api(["tool_use"])  # type: ignore[arg-type]
    assert caught.value.field == "tool_use"


def test_tool_result_round_trip_with_string_content() -> None:
    block = {"type": "tool_result", "tool_use_id": "a", "content": "done"}
    result = ToolResult.from_api(block)
    assert result == ToolResult("a", "done")
    assert result.is_error is False
    assert result.to_api() == block


def test_tool_result_round_trip_with_error_and_blocks() -> None:
    block = {
        "type": "tool_result",
        "tool_use_id": "a",
        "content": [{"type": "text", "text": "one"}, {"type": "image", "source": IMAGE_SOURCE}],
        "is_error": True,
    }
    result = ToolResult.from_api(block)
    assert result.content == (TextBlock("one"), ImageBlock(IMAGE_SOURCE))
    assert result.is_error is True
    assert result.to_api() == block


def test_tool_result_is_error_false_is_omitted_from_the_api_block() -> None:
    assert "is_error" not in ToolResult("a", "x", is_error=False).to_api()
    assert ToolResult("a", "x", is_error=True).to_api()["is_error"] is True


def test_tool_result_content_list_becomes_a_tuple() -> None:
    result = ToolResult("a", [TextBlock("x")])
    assert result.content == (TextBlock("x"),)
    assert hash(result) == hash(ToolResult("a", (TextBlock("x"),)))


def test_tool_result_text_joins_text_blocks_and_skips_images() -> None:
    result = ToolResult("a", (TextBlock("ab"), ImageBlock(IMAGE_SOURCE), TextBlock("cd")))
    assert result.text == "abcd"
    assert ToolResult("a", "plain").text == "plain"


@pytest.mark.parametrize(
    ("block", "field"),
    [
        ({"type": "tool_use", "tool_use_id": "a", "content": ""}, "tool_result.type"),
        ({"type": "tool_result", "content": ""}, "tool_result.tool_use_id"),
        ({"type": "tool_result", "tool_use_id": 1, "content": ""}, "tool_result.tool_use_id"),
        ({"type": "tool_result", "tool_use_id": "a", "content": 3}, "tool_result.content"),
        ({"type": "tool_result", "tool_use_id": "a", "content": ["x"]}, "tool_result.content[0]"),
        (
            {"type": "tool_result", "tool_use_id": "a", "content": [{"type": "audio"}]},
            "tool_result.content[0].type",
        ),
        (
            {
                "type": "tool_result",
                "tool_use_id": "a",
                "content": [{"type": "text", "text": "ok"}, {"type": "text", "text": 5}],
            },
            "tool_result.content[1].text",
        ),
        (
            {
                "type": "tool_result",
                "tool_use_id": "a",
                "content": [{"type": "image", "source": "x"}],
            },
            "tool_result.content[0].source",
        ),
        (
            {"type": "tool_result", "tool_use_id": "a", "content": "", "is_error": "yes"},
            "tool_result.is_error",
        ),
    ],
)
def test_malformed_tool_result_names_the_field(block: dict[str, Any], field: str) -> None:
    with pytest.raises(MalformedBlockError) as caught:
        ToolResult.from_api(block)
    assert caught.value.field == field


def test_malformed_block_error_is_a_value_error() -> None:
    with pytest.raises(ValueError, match=r"^tool_use\.id: "):
        ToolUse.from_api({"type": "tool_use", "name": "Read"})


json_scalars = st.none() | st.booleans() | st.integers() | st.text(max_size=10)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=10,
)


@given(
    tool_id=st.text(min_size=1, max_size=20),
    name=st.text(min_size=1, max_size=20),
    payload=st.dictionaries(st.text(max_size=8), json_values, max_size=4),
)
def test_tool_use_round_trip_property(tool_id: str, name: str, payload: dict[str, Any]) -> None:
    use = ToolUse(tool_id, name, payload)
    assert ToolUse.from_api(use.to_api()) == use


@given(
    tool_id=st.text(min_size=1, max_size=20),
    content=st.text(max_size=30) | st.lists(st.builds(TextBlock, st.text(max_size=10)), max_size=3),
    is_error=st.booleans(),
)
def test_tool_result_round_trip_property(
    tool_id: str, content: str | list[Any], is_error: bool
) -> None:
    result = ToolResult(tool_id, content, is_error=is_error)
    assert ToolResult.from_api(result.to_api()) == result


def test_tool_use_from_an_anthropic_sdk_content_block() -> None:
    from anthropic.types import TextBlock as SDKTextBlock
    from anthropic.types import ToolUseBlock

    block = ToolUseBlock(type="tool_use", id="toolu_1", name="Read", input={"file_path": "a"})
    assert ToolUse.from_api(block) == ToolUse("toolu_1", "Read", {"file_path": "a"})
    with pytest.raises(MalformedBlockError, match=r"tool_use\.type"):
        ToolUse.from_api(SDKTextBlock(type="text", text="hi"))


def test_tool_use_from_an_object_with_a_non_object_input_names_the_field() -> None:
    class Block:
        type = "tool_use"
        id = "toolu_1"
        name = "Read"
        input = ("not", "an", "object")

    with pytest.raises(MalformedBlockError, match=r"tool_use\.input"):
        ToolUse.from_api(Block())


def test_a_result_update_names_its_tool_use_like_a_progress_update() -> None:
    update = ResultUpdate(ToolResult("toolu_7", "ok"))
    assert update.tool_use_id == "toolu_7" == ProgressUpdate("toolu_7", None).tool_use_id
