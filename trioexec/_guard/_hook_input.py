"""What the guard rails tell hooks about a call, and the records they keep of the answers."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Protocol

from .._contract._permission_context import (
    claude_code_mode_name,
)
from .._contract._rules import PermissionRule
from .._contract._validation import CompiledTool, compile_tool, input_error_text, validate
from .._hooks._config import (
    HookEvent,
    HookInput,
)
from .._hooks._output import HookOutcome
from .._models import Attachment, JSONValue

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from pathlib import Path

    from .._contract._permission_context import PermissionContext
    from .._contract._tool import CallContext, Tool
    from .._models import ToolUse

__all__ = ["HookSession"]

logger = logging.getLogger("trioexec.guard")

_NO_OUTCOME = HookOutcome()
"""What no hook answered (no record to keep)."""


def _observable(
    tool: Tool[Any], raw: Mapping[str, JSONValue], cwd: Path
) -> Mapping[str, JSONValue]:
    """The input hooks see (``Tool.observable_input``); the raw input if that fails."""
    try:
        return tool.observable_input(raw, cwd)
    except Exception:
        logger.warning("observable_input of %s failed", tool.name, exc_info=True)
        return raw


def _if_matcher(tool: Tool[Any], parsed_input: object, ctx: CallContext) -> Callable[[str], bool]:
    """Whether a hook's ``if`` condition (permission-rule syntax) holds for this call.

    As Claude Code matches it: the rule must name this tool; ``Tool`` alone
    always holds; ``Tool(content)`` is matched like a deny rule (any part of
    a compound command is enough), so ``Bash(git push:*)`` also fires for
    ``ls && git push``.  A condition the tool cannot interpret (or that does
    not parse) holds: the hook runs, failing safe.
    """
    names = (tool.name, *tool.aliases)

    def holds(condition: str) -> bool:
        try:
            rule = PermissionRule.parse(condition)
        except ValueError:
            return True
        if rule.tool_name not in names:
            return False
        if rule.content is None:
            return True
        try:
            matched = tool.match_rule_content(rule.content, parsed_input, ctx, behavior="deny")
        except Exception:
            return True
        return True if matched is None else bool(matched)

    return holds


class HookSession(Protocol):
    """What a hook's input says of the session (the guard rails hold it)."""

    @property
    def session_id(self) -> str: ...
    @property
    def transcript_path(self) -> str: ...
    @property
    def permissions(self) -> PermissionContext: ...


def _hook_input(
    guard: HookSession,
    event: HookEvent,
    tool: Tool[Any],
    tool_use: ToolUse,
    tool_input: Mapping[str, JSONValue],
    cwd: str,
) -> HookInput:
    return HookInput(
        session_id=guard.session_id,
        transcript_path=guard.transcript_path,
        cwd=cwd,
        permission_mode=claude_code_mode_name(guard.permissions.mode),
        hook_event_name=event,
        tool_name=tool.name,
        tool_input=tool_input,
        tool_use_id=tool_use.id,
    )


def _attachments(
    tool_use_id: str, outcome: HookOutcome, hook_name: str, stop_default: str
) -> tuple[Attachment, ...]:
    """The records of one event's hooks; ``hook_name`` is ``{event}:{tool}``."""
    if outcome is _NO_OUTCOME:
        return ()
    records = [
        Attachment(tool_use_id, "additional_context", t, hook_name)
        for t in outcome.additional_contexts
    ]
    records += [
        Attachment(tool_use_id, "hook_blocking_error", t, hook_name, command)
        for t, command in zip(outcome.blocking_errors, outcome.blocking_commands, strict=True)
    ]
    if outcome.prevent_continuation:
        text = outcome.stop_reason or stop_default
        records.append(Attachment(tool_use_id, "hook_stopped_continuation", text, hook_name))
    return tuple(records)


def _revalidate(
    tool: CompiledTool | Tool[Any], raw: Mapping[str, JSONValue]
) -> tuple[object, str | None]:
    """Layers 1 and 2a for a replaced input: (parsed input, None) or (None, error text)."""
    compiled = tool if isinstance(tool, CompiledTool) else compile_tool(tool)
    parsed, issue = validate(compiled, raw)
    if issue is not None:
        return None, input_error_text(compiled.tool, issue)
    return parsed, None
