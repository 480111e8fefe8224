"""Turn Anthropic streaming events into sealed tool_use blocks.

The Messages API streams a tool_use as ``content_block_start`` (id, name),
then ``input_json_delta`` fragments, then ``content_block_stop``.  Only at the
stop is the input JSON complete; :class:`ToolUseAssembler` hands the call over
then, never on partial JSON.  Events may be plain dicts or SDK event objects
(attribute access); nothing here imports an SDK.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import cast

import attrs

from .._errors import MalformedBlockError
from .._models import JSONValue, ToolUse

__all__ = ["ToolUseAssembler"]


@attrs.define
class _Pending:
    tool_id: str
    name: str
    fragments: list[str] = attrs.Factory(list)
    initial_input: Mapping[str, object] | None = None


@attrs.define
class ToolUseAssembler:
    """Feed streaming events in order; :meth:`feed` returns a ToolUse when one is sealed.

    ::

        assembler = ToolUseAssembler()
        async for event in stream:
            tool_use = assembler.feed(event)
            if tool_use is not None:
                executor.add_tool(tool_use)

    A tool_use whose input JSON does not parse is still handed over, with the
    raw text under ``input["__unparsed_input__"]``: validation then answers it
    with an error result naming the JSON problem, whatever the tool's schema,
    instead of the call vanishing; the tool never sees it.
    """

    _pending: dict[int, _Pending] = attrs.field(factory=dict, init=False)
    sealed: list[ToolUse] = attrs.field(factory=list, init=False)
    """Every tool_use sealed so far, in order."""

    def feed(self, event: object) -> ToolUse | None:
        """Consume one event; return the tool_use it sealed, if any.

        Raises:
            MalformedBlockError: a tool_use start without a string id or name.
        """
        kind = _get(event, "type")
        if kind == "content_block_start":
            block = _get(event, "content_block")
            if _get(block, "type") != "tool_use":
                return None
            tool_id, name = _get(block, "id"), _get(block, "name")
            if not isinstance(tool_id, str) or not isinstance(name, str):
                raise MalformedBlockError(
                    "content_block_start.content_block", "tool_use needs id and name"
                )
            index = _index(event)
            if index in self._pending:
                open_id = self._pending[index].tool_id
                raise MalformedBlockError(
                    "content_block_start.index",
                    f"block {index} is still open (tool_use {open_id!r} was never stopped)",
                )
            initial = _get(block, "input")
            self._pending[index] = _Pending(
                tool_id,
                name,
                initial_input=initial if isinstance(initial, dict) and initial else None,
            )
        elif kind == "content_block_delta":
            delta = _get(event, "delta")
            pending = self._pending.get(_index(event))
            if pending is not None and _get(delta, "type") == "input_json_delta":
                fragment = _get(delta, "partial_json")
                if isinstance(fragment, str):
                    pending.fragments.append(fragment)
        elif kind == "content_block_stop":
            pending = self._pending.pop(_index(event), None)
            if pending is not None:
                tool_use = ToolUse(pending.tool_id, pending.name, _parse_input(pending))
                self.sealed.append(tool_use)
                return tool_use
        return None


def _parse_input(pending: _Pending) -> dict[str, JSONValue]:
    text = "".join(pending.fragments)
    if not text.strip():
        return cast("dict[str, JSONValue]", dict(pending.initial_input or {}))
    try:
        value = json.loads(text, parse_constant=_refuse_constant)
    except (ValueError, RecursionError):  # not JSON, NaN/Infinity, too deep, too many digits
        return {"__unparsed_input__": text}
    if isinstance(value, dict):
        return cast("dict[str, JSONValue]", value)
    return {"__unparsed_input__": text}


def _refuse_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def _get(obj: object, name: str) -> object:
    if isinstance(obj, dict):
        return obj.get(name)
    return getattr(obj, name, None)


def _index(event: object) -> int:
    index = _get(event, "index")
    return index if isinstance(index, int) else -1
