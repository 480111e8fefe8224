"""Value types for tool calls and their answers, in Anthropic Messages API shape.

Everything here is a frozen attrs class: a tool call, its answer, the updates a
run emits, and the batches the partitioner produces.  ``to_api`` / ``from_api``
convert to and from the plain dicts of the Messages API; a malformed dict
raises :class:`~trioexec.MalformedBlockError` naming the field at fault.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, TypeAlias

import attrs

from ._errors import MalformedBlockError

__all__ = [
    "Attachment",
    "AttachmentKind",
    "Batch",
    "Content",
    "ContentBlock",
    "ImageBlock",
    "JSONObject",
    "JSONValue",
    "ProgressUpdate",
    "ResultUpdate",
    "TextBlock",
    "ToolResult",
    "ToolUse",
    "Update",
]

JSONValue: TypeAlias = "bool | int | float | str | list[JSONValue] | dict[str, JSONValue] | None"
JSONObject: TypeAlias = "dict[str, JSONValue]"


@attrs.frozen
class ToolUse:
    """One tool call as the model sent it: ``{type: "tool_use", id, name, input}``."""

    id: str
    name: str
    input: Mapping[str, JSONValue] = attrs.field(factory=dict)

    def to_api(self) -> JSONObject:
        """Return the Messages API ``tool_use`` block."""
        return {"type": "tool_use", "id": self.id, "name": self.name, "input": dict(self.input)}

    @classmethod
    def from_api(cls, block: Mapping[str, object] | object) -> ToolUse:
        """Build from a Messages API ``tool_use`` block: a dict, or an SDK content block object.

        An object (such as the ``anthropic`` SDK's ``ToolUseBlock``) is read
        through its ``type``, ``id``, ``name`` and ``input`` attributes.

        Raises:
            MalformedBlockError: a field is missing or of the wrong type.
        """
        if type(block) is not dict and not isinstance(block, Mapping):  # dict: json's, at once
            if isinstance(block, (str, bytes, list, tuple)) or not hasattr(block, "type"):
                raise MalformedBlockError("tool_use", "expected an object or a content block")
            block = {
                key: getattr(block, key)
                for key in ("type", "id", "name", "input")
                if hasattr(block, key)
            }
        _expect_type(block, "tool_use")
        tool_id = _expect_str(block, "id", "tool_use")
        name = _expect_str(block, "name", "tool_use")
        raw_input = block.get("input")
        if raw_input is None and "input" not in block:
            raw_input = {}
        if not isinstance(raw_input, dict):
            raise MalformedBlockError("tool_use.input", "expected an object")
        for key in raw_input:  # a loop, not all(<generator>): this runs once per call
            if not isinstance(key, str):
                raise MalformedBlockError("tool_use.input", "expected an object")
        return cls(tool_id, name, raw_input)


@attrs.frozen
class TextBlock:
    """A text content block: ``{type: "text", text}``."""

    text: str

    def to_api(self) -> JSONObject:
        """Return the Messages API ``text`` block."""
        return {"type": "text", "text": self.text}


@attrs.frozen
class ImageBlock:
    """An image content block; ``source`` is kept exactly as given."""

    source: Mapping[str, JSONValue]

    def to_api(self) -> JSONObject:
        """Return the Messages API ``image`` block."""
        return {"type": "image", "source": dict(self.source)}


ContentBlock: TypeAlias = TextBlock | ImageBlock
Content: TypeAlias = "str | tuple[ContentBlock, ...]"


def content_to_api(content: Content) -> str | list[JSONValue]:
    """Convert tool_result content to its Messages API form."""
    if isinstance(content, str):
        return content
    return [block.to_api() for block in content]


def content_from_api(raw: object, where: str) -> Content:
    """Parse tool_result content: a string or a list of text/image blocks."""
    if isinstance(raw, str):
        return raw
    if not isinstance(raw, list):
        raise MalformedBlockError(where, "expected a string or a list of content blocks")
    blocks: list[ContentBlock] = []
    for index, item in enumerate(raw):
        at = f"{where}[{index}]"
        if not isinstance(item, dict):
            raise MalformedBlockError(at, "expected a content block object")
        kind = item.get("type")
        if kind == "text":
            text = item.get("text")
            if not isinstance(text, str):
                raise MalformedBlockError(f"{at}.text", "expected a string")
            blocks.append(TextBlock(text))
        elif kind == "image":
            source = item.get("source")
            if not isinstance(source, dict):
                raise MalformedBlockError(f"{at}.source", "expected an object")
            blocks.append(ImageBlock(source))
        else:
            raise MalformedBlockError(f"{at}.type", f"expected 'text' or 'image', got {kind!r}")
    return tuple(blocks)


def _to_content(value: Content | list[ContentBlock]) -> Content:
    return value if isinstance(value, str) else tuple(value)


@attrs.frozen
class ToolResult:
    """The answer to one tool call: ``{type: "tool_result", tool_use_id, content, is_error}``."""

    tool_use_id: str
    content: Content = attrs.field(converter=_to_content)
    is_error: bool = False

    def to_api(self) -> JSONObject:
        """Return the Messages API ``tool_result`` block."""
        block: JSONObject = {
            "type": "tool_result",
            "tool_use_id": self.tool_use_id,
            "content": content_to_api(self.content),
        }
        if self.is_error:
            block["is_error"] = True
        return block

    @classmethod
    def from_api(cls, block: Mapping[str, object]) -> ToolResult:
        """Build from a Messages API ``tool_result`` block.

        Raises:
            MalformedBlockError: a field is missing or of the wrong type.
        """
        _expect_type(block, "tool_result")
        tool_use_id = _expect_str(block, "tool_use_id", "tool_result")
        content = content_from_api(block.get("content", ""), "tool_result.content")
        is_error = block.get("is_error", False)
        if not isinstance(is_error, bool):
            raise MalformedBlockError("tool_result.is_error", "expected a boolean")
        return cls(tool_use_id=tool_use_id, content=content, is_error=is_error)

    @property
    def text(self) -> str:
        """The content as one string (text blocks joined; images skipped)."""
        if isinstance(self.content, str):
            return self.content
        return "".join(b.text for b in self.content if isinstance(b, TextBlock))


AttachmentKind: TypeAlias = Literal[
    "additional_context", "hook_stopped_continuation", "hook_blocking_error"
]


@attrs.frozen
class Attachment:
    """A record that travels with a call's result to the next user message.

    Attributes:
        tool_use_id: the call the record belongs to.
        kind: what the record says.
        text: the record's text (a context, a blocking error, a stop reason).
        hook_name: ``{event}:{tool}`` (``PostToolUse:Bash``) of the hook that
            made it; the model reads it (``PostToolUse:Bash hook additional
            context: ...``).  Empty: a record the application made.
        command: for ``hook_blocking_error``: the hook's command (a Python
            hook's qualified name).
    """

    tool_use_id: str
    kind: AttachmentKind
    text: str
    hook_name: str = ""
    command: str = ""


@attrs.frozen
class ProgressUpdate:
    """Progress reported by a running tool; delivered at once, never held back."""

    tool_use_id: str
    data: object


@attrs.frozen
class ResultUpdate:
    """A released tool_result, with the records that go with it."""

    result: ToolResult
    attachments: tuple[Attachment, ...] = ()

    @property
    def tool_use_id(self) -> str:
        """The id of the tool_use this result answers (as :attr:`ProgressUpdate.tool_use_id`)."""
        return self.result.tool_use_id


Update: TypeAlias = ProgressUpdate | ResultUpdate


@attrs.frozen
class Batch:
    """One unsafe call, or a maximal run of consecutive concurrency-safe calls."""

    is_concurrency_safe: bool
    tool_uses: tuple[ToolUse, ...]


def _expect_type(block: Mapping[str, object], expected: str) -> None:
    if type(block) is not dict and not isinstance(block, Mapping):
        raise MalformedBlockError(expected, "expected an object")
    if block.get("type") != expected:
        raise MalformedBlockError(f"{expected}.type", f"expected {expected!r}")


def _expect_str(block: Mapping[str, object], field: str, kind: str) -> str:
    value = block.get(field)
    if not isinstance(value, str):
        raise MalformedBlockError(f"{kind}.{field}", "expected a string")
    return value
