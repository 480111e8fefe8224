"""The streaming-event adapter hands over a tool_use only once it is sealed."""

from __future__ import annotations

import json
from typing import Any

import attrs
import pytest

from trioexec import (
    MalformedBlockError,
    ToolUse,
    ToolUseAssembler,
)


def _start(index: int, tool_id: str, name: str) -> dict[str, object]:
    block = {"type": "tool_use", "id": tool_id, "name": name, "input": {}}
    return {"type": "content_block_start", "index": index, "content_block": block}


def _delta(index: int, fragment: str) -> dict[str, object]:
    delta = {"type": "input_json_delta", "partial_json": fragment}
    return {"type": "content_block_delta", "index": index, "delta": delta}


def _stop(index: int) -> dict[str, object]:
    return {"type": "content_block_stop", "index": index}


def test_tool_use_is_sealed_only_at_block_stop() -> None:
    assembler = ToolUseAssembler()
    events = [_start(1, "toolu_1", "Read"), _delta(1, '{"file_'), _delta(1, 'path": "a.txt"}')]
    assert [assembler.feed(e) for e in events] == [None, None, None]
    assert assembler.feed(_stop(1)) == ToolUse("toolu_1", "Read", {"file_path": "a.txt"})
    assert assembler.sealed == [ToolUse("toolu_1", "Read", {"file_path": "a.txt"})]


def test_interleaved_blocks_and_text_blocks() -> None:
    assembler = ToolUseAssembler()
    text_start = {"type": "content_block_start", "index": 0, "content_block": {"type": "text"}}
    text_delta = {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta"}}
    events = [
        text_start,
        text_delta,
        _stop(0),
        _start(1, "a", "Read"),
        _start(2, "b", "Grep"),
        _delta(2, '{"pattern": "x"}'),
        _delta(1, '{"file_path": "f"}'),
        _stop(2),
        _stop(1),
    ]
    sealed = [tool_use for e in events if (tool_use := assembler.feed(e)) is not None]
    assert sealed == [
        ToolUse("b", "Grep", {"pattern": "x"}),
        ToolUse("a", "Read", {"file_path": "f"}),
    ]


def test_empty_input_and_unparseable_json() -> None:
    assembler = ToolUseAssembler()
    assembler.feed(_start(0, "a", "Glob"))
    assert assembler.feed(_stop(0)) == ToolUse("a", "Glob", {})
    assembler.feed(_start(1, "b", "Read"))
    assembler.feed(_delta(1, '{"file_path": '))
    sealed = assembler.feed(_stop(1))
    assert sealed == ToolUse("b", "Read", {"__unparsed_input__": '{"file_path": '})


def test_sdk_style_objects_are_accepted() -> None:
    @attrs.frozen
    class Block:
        type: str
        id: str
        name: str
        input: dict[str, object]

    @attrs.frozen
    class Start:
        type: str
        index: int
        content_block: Block

    assembler = ToolUseAssembler()
    assembler.feed(Start("content_block_start", 0, Block("tool_use", "a", "Read", {})))
    assert assembler.feed(_stop(0)) == ToolUse("a", "Read", {})


def test_tool_use_start_without_id_names_the_field() -> None:
    bad = {"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use"}}
    with pytest.raises(MalformedBlockError, match=r"content_block_start\.content_block"):
        ToolUseAssembler().feed(bad)


# -- hostile input text --------------------------------------------------------------------------


def _assemble(text: str) -> Any:
    assembler = ToolUseAssembler()
    assembler.feed(_start(0, "toolu_1", "Bash"))
    assembler.feed(_delta(0, text))
    return assembler.feed(_stop(0))


@pytest.mark.parametrize(
    "text", ['{"n": ' + "1" * 5_000 + "}", "[" * 100_000 + "]" * 100_000], ids=["digits", "deep"]
)
def test_unparseable_input_is_handed_over_not_raised(text: str) -> None:
    tool_use = _assemble(text)
    assert tool_use.input == {"__unparsed_input__": text}


def test_non_json_constants_are_not_accepted_as_input() -> None:
    tool_use = _assemble('{"n": NaN}')
    json.dumps(tool_use.to_api(), allow_nan=False)


def test_a_restarted_block_index_does_not_lose_a_tool_use() -> None:
    assembler = ToolUseAssembler()
    assembler.feed(_start(1, "toolu_1", "Bash"))
    assembler.feed(_delta(1, '{"command": "ls"}'))
    lost = False
    try:
        assembler.feed(_start(1, "toolu_2", "Bash"))
    except ValueError:  # MalformedBlockError is a ValueError: refusing is fine too
        lost = True
    assembler.feed(_delta(1, '{"command": "pwd"}'))
    assembler.feed(_stop(1))
    assert lost or [t.id for t in assembler.sealed] == ["toolu_1", "toolu_2"]
