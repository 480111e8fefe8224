"""What a scenario run produced, and its JSON form (SPEC §8 output).

The output is one JSON object whose keys are always in the same order
(``results, events, attachments, context, stopped_continuation,
session_dir``), written one key per line (indent 2) with every result, event
and attachment on a line of its own (``json.dumps`` with ``ensure_ascii=False``
and its default separators); it is UTF-8 and ends with a newline.  The same
run gives the same bytes on any machine, and a golden file diffs line by line.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, TypeAlias

import attrs

from .._core._events import CallEventKind
from .._models import Attachment, ToolResult, content_to_api
from ._model import Scenario

if TYPE_CHECKING:
    from .._models import JSONObject, JSONValue

__all__ = [
    "OUTPUT_KINDS",
    "EventKind",
    "RunEvent",
    "ScenarioRun",
    "dumps_output",
]

EventKind: TypeAlias = CallEventKind
OUTPUT_KINDS: frozenset[str] = frozenset(
    {"queued", "started", "progress", "completed", "cancelled", "released"}
)
"""The kinds the JSON output keeps; ``call_began`` / ``call_ended`` only feed the trace."""


@attrs.frozen
class RunEvent:
    """One state change of one call, at a virtual time relative to the run's start."""

    t: float
    tool_use_id: str
    kind: EventKind
    data: object = None
    reason: str | None = None
    detail: str | None = None

    def to_json(self) -> JSONObject:
        """``{"t", "id", "kind"}`` plus ``data`` (progress) or ``reason`` (cancelled).

        A cancellation whose reason needs more words (a ``timeout``'s limit, trio's
        reason for ``cancelled``) also has ``detail``.
        """
        out: JSONObject = {"t": self.t, "id": self.tool_use_id, "kind": self.kind}
        if self.kind == "progress":
            out["data"] = _jsonable(self.data)
        if self.kind == "cancelled":
            out["reason"] = self.reason
            if self.detail is not None:
                out["detail"] = self.detail
        return out


@attrs.frozen
class ScenarioRun:
    """Everything one run of a scenario produced.

    Attributes:
        scenario: what was run.
        results: released tool_results in release order, after result-size
            handling and the message budget.
        events: every recorded event in canonical order (by time, then by the
            call's arrival; one call's events keep their own order).
        attachments: the records released with the results, in release order.
        context: the final context.
        stop_reason: set when a hook asked to stop continuation.
        session_dir: where oversized results were persisted, as given.
    """

    scenario: Scenario
    results: tuple[ToolResult, ...]
    events: tuple[RunEvent, ...]
    attachments: tuple[Attachment, ...]
    context: Mapping[str, object]
    stop_reason: str | None
    session_dir: str

    def to_json(self) -> JSONObject:
        """The SPEC §8 output object."""
        return {
            "results": [
                {
                    "tool_use_id": result.tool_use_id,
                    "is_error": result.is_error,
                    "content": content_to_api(result.content),
                }
                for result in self.results
            ],
            "events": [event.to_json() for event in self.events if event.kind in OUTPUT_KINDS],
            "attachments": [
                {"tool_use_id": item.tool_use_id, "kind": item.kind, "text": item.text}
                for item in self.attachments
            ],
            "context": {str(key): _jsonable(value) for key, value in self.context.items()},
            "stopped_continuation": self.stop_reason is not None,
            "session_dir": self.session_dir,
        }

    def dumps(self) -> str:
        """The output text (see the module docstring), ending with a newline."""
        return dumps_output(self.to_json())


def dumps_output(output: Mapping[str, JSONValue]) -> str:
    """Top-level keys one per line; list items one per line; everything else compact."""
    lines = ["{"]
    keys = list(output)
    for position, key in enumerate(keys):
        comma = "," if position < len(keys) - 1 else ""
        value = output[key]
        head = f"  {_dump(key)}: "
        if isinstance(value, list) and value:
            items = [f"    {_dump(item)}" for item in value]
            lines.append(head + "[")
            lines.append(",\n".join(items))
            lines.append(f"  ]{comma}")
        else:
            lines.append(f"{head}{_dump(value)}{comma}")
    lines.append("}")
    return "\n".join(lines) + "\n"


_dump = json.JSONEncoder(ensure_ascii=False).encode
"""``json.dumps(value, ensure_ascii=False)`` without building an encoder per call."""


def _jsonable(value: object) -> JSONValue:
    """JSON values pass through; anything else (from Python-made runs) becomes its repr."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [_jsonable(item) for item in value]
    if isinstance(value, Mapping):
        return {str(key): _jsonable(item) for key, item in value.items()}
    return repr(value)
