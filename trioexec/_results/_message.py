"""Turning a turn's released results into the next user message (SPEC §7, §4).

Both the batch path and the streaming executor hand their released
:class:`~trioexec.ResultUpdate` objects to :func:`build_user_message`, which
applies the per-message budget and returns a :class:`UserMessage` whose
:meth:`~UserMessage.to_api` is the Messages API ``user`` message.

Records become text blocks after every tool_result block (the API wants the
tool_results first), one block per record, in release order, each wrapped in
a ``<system-reminder>`` as Claude Code does for hook output::

    <system-reminder>
    PostToolUse:Edit hook additional context: {text}
    </system-reminder>

(``{hook} hook blocking error from command: "{command}": {text}`` and
``{hook} hook stopped continuation: {text}`` for the other kinds; a blank
context adds no block).  A record without ``hook_name`` (one the application
made) reads ``Hook additional context: {text}``, ``Hook blocking error:
{text}`` or ``Hook stopped continuation: {text}``.  A
``hook_stopped_continuation`` record also sets
:attr:`UserMessage.stopped_continuation`, so the agent loop ends the turn.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import TYPE_CHECKING

import attrs

from .._models import Attachment, AttachmentKind, JSONObject, JSONValue, ResultUpdate, ToolResult
from .._texts import hook_record_text, system_reminder
from ._budget import DEFAULT_MESSAGE_BUDGET, ContentReplacementState, apply_message_budget

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from pathlib import Path

__all__ = ["RECORD_LABELS", "UserMessage", "build_user_message", "record_text"]

_NO_LIMITS: Mapping[str, float] = MappingProxyType({})

RECORD_LABELS: Mapping[AttachmentKind, str] = MappingProxyType(
    {
        "additional_context": "Hook additional context",
        "hook_blocking_error": "Hook blocking error",
        "hook_stopped_continuation": "Hook stopped continuation",
    }
)
"""The label each kind of record is introduced with in its text block."""


def record_text(attachment: Attachment) -> str | None:
    """The text block a record becomes, or None when it adds nothing (blank context).

    A record a hook made reads as in Claude Code (:func:`~trioexec._texts.hook_record_text`);
    one without ``hook_name`` is introduced by its :data:`RECORD_LABELS` label.
    """
    if attachment.kind == "additional_context" and not attachment.text.strip():
        return None
    if attachment.hook_name:
        return hook_record_text(
            attachment.kind, attachment.hook_name, attachment.text, attachment.command
        )
    label = RECORD_LABELS[attachment.kind]
    return system_reminder(f"{label}: {attachment.text}")


@attrs.frozen
class UserMessage:
    """The user message that answers one turn's tool calls.

    Attributes:
        results: the tool_results in release order, after the message budget.
        attachments: every record that came with them, in release order.
        stopped_continuation: a hook asked to stop; the agent loop ends the turn.
        stop_reason: the text of the first ``hook_stopped_continuation`` record.
        notes: texts the front end adds after the records, one text block
            each (a note that the model's stream failed, say).
    """

    results: tuple[ToolResult, ...]
    attachments: tuple[Attachment, ...] = ()
    stopped_continuation: bool = False
    stop_reason: str | None = None
    notes: tuple[str, ...] = ()

    def to_api(self) -> JSONObject:
        """``{"role": "user", "content": [tool_result blocks..., then text blocks]}``."""
        content: list[JSONValue] = [result.to_api() for result in self.results]
        for attachment in self.attachments:
            text = record_text(attachment)
            if text is not None:
                content.append({"type": "text", "text": text})
        content.extend({"type": "text", "text": note} for note in self.notes)
        return {"role": "user", "content": content}


async def build_user_message(
    updates: Sequence[ResultUpdate],
    *,
    state: ContentReplacementState,
    session_dir: Path | None,
    budget: int = DEFAULT_MESSAGE_BUDGET,
    limits: Mapping[str, float] = _NO_LIMITS,
) -> UserMessage:
    """Build the next user message from a turn's released results and their records.

    The results keep the order of ``updates`` and go through
    :func:`~trioexec._results._budget.apply_message_budget` (``state``,
    ``session_dir``, ``budget`` and ``limits`` are passed on; ``state`` is
    updated).  Records are kept in the same order.

    On cancellation no message is built and ``state`` is unchanged.
    """
    results = await apply_message_budget(
        [update.result for update in updates],
        state=state,
        session_dir=session_dir,
        budget=budget,
        limits=limits,
    )
    groups = [update.attachments for update in updates if update.attachments]
    if not groups:  # the common message: tool_results only
        return UserMessage(tuple(results))
    attachments = tuple(a for group in groups for a in group)
    stops = [a for a in attachments if a.kind == "hook_stopped_continuation"]
    return UserMessage(
        results=tuple(results),
        attachments=attachments,
        stopped_continuation=bool(stops),
        stop_reason=stops[0].text if stops else None,
    )
