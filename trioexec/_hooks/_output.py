"""What a hook answers, and how the answers of several hooks combine (SPEC §5).

Python hooks return a :class:`HookOutput`; command hooks print the same thing
as JSON, which :func:`parse_hook_json` turns into one.  Either way each hook
run ends as a :class:`HookResult`, and :func:`aggregate` folds the results of
one event, in hook order, into a :class:`HookOutcome`:

- deny beats ask beats allow (a blocking error counts as a deny);
- ``updatedInput`` from a hook that allowed, asked or gave no decision
  replaces the input, the last in hook order winning; from a denying hook it
  is ignored;
- every ``additionalContext`` is kept;
- a timed-out or failing hook gives no decision and blocks nothing.

Pure: no trio, no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal, TypeAlias, TypeVar, cast

import attrs

from .._models import JSONValue
from .._texts import hook_denied_message, hook_error_message

__all__ = [
    "HookBlockingError",
    "HookDecision",
    "HookOutcome",
    "HookOutput",
    "HookResult",
    "aggregate",
    "parse_hook_json",
    "result_from_output",
]

HookDecision: TypeAlias = Literal["allow", "deny", "ask"]
_T = TypeVar("_T")


class HookBlockingError(Exception):
    """Raised by a Python hook to block, like a command hook's exit code 2.

    For PreToolUse the call is denied with ``PreToolUse:{Tool} hook error:
    {message}``; after the call the message goes to the model as a
    ``hook_blocking_error`` record.
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@attrs.frozen
class HookOutput:
    """A hook's answer: the fields of Claude Code's hook JSON output.

    Attributes:
        continue_: False asks the agent loop to stop after this batch (``continue``).
        stop_reason: why (``stopReason``); the ``hook_stopped_continuation`` text.
        decision: the older ``"approve"`` / ``"block"`` form of a decision.
        reason: explanation for ``decision``.
        system_message: shown to the user, never to the model (``systemMessage``).
        suppress_output: accepted for compatibility; hook output never goes to the transcript.
        permission_decision: PreToolUse ``"allow"`` / ``"deny"`` / ``"ask"``.
        permission_decision_reason: for a deny, the message the model receives.
        updated_input: PreToolUse: the whole replacement tool input.
        additional_context: text added for the model with the results.
        updated_mcp_tool_output: PostToolUse: the output an MCP tool's result
            is made from instead of its own (``updatedMCPToolOutput``).
    """

    continue_: bool = True
    stop_reason: str | None = None
    decision: Literal["approve", "block"] | None = None
    reason: str | None = None
    system_message: str | None = None
    suppress_output: bool = False
    permission_decision: HookDecision | None = None
    permission_decision_reason: str | None = None
    updated_input: Mapping[str, JSONValue] | None = None
    additional_context: str | None = None
    updated_mcp_tool_output: JSONValue = None


@attrs.frozen
class HookResult:
    """How one hook run ended, normalised for aggregation."""

    label: str
    """The command, or the Python hook's qualified name."""
    decision: HookDecision | None = None
    reason: str | None = None
    updated_input: Mapping[str, JSONValue] | None = None
    additional_context: str | None = None
    prevent_continuation: bool = False
    stop_reason: str | None = None
    blocking_error: str | None = None
    system_message: str | None = None
    updated_mcp_tool_output: JSONValue = None
    error: str | None = None
    """A non-blocking failure (timeout, crash, bad output): reported, never decisive."""
    start_failed: bool = False
    """The hook's process could not be started (``error`` says why): a PreToolUse hook
    that did not run denies its call under a fail-closed policy (``Policy.hooks_fail_closed``)."""
    exception: BaseException | None = attrs.field(default=None, eq=False, repr=False)
    """What a Python hook raised, so the warning about it carries the traceback."""


@attrs.frozen
class HookOutcome:
    """The combined answer of all hooks of one event for one call."""

    decision: HookDecision | None = None
    deny_message: str | None = None
    ask_message: str | None = None
    """With an ``ask`` decision: the first asking hook's reason (what the model reads
    when nobody can answer)."""
    updated_input: Mapping[str, JSONValue] | None = None
    additional_contexts: tuple[str, ...] = ()
    blocking_errors: tuple[str, ...] = ()
    blocking_commands: tuple[str, ...] = ()
    """For each of ``blocking_errors``: the command (or Python hook) that reported it."""
    prevent_continuation: bool = False
    stop_reason: str | None = None
    system_messages: tuple[str, ...] = ()
    errors: tuple[str, ...] = ()
    updated_mcp_tool_output: JSONValue = None
    """PostToolUse: the last ``updatedMCPToolOutput`` in hook order (None: none)."""


def result_from_output(output: HookOutput, event: str, label: str) -> HookResult:
    """Normalise a :class:`HookOutput` given for ``event``.

    ``decision: "approve"`` / ``"block"`` map to allow / deny for PreToolUse
    (``permission_decision`` takes precedence); after the call ``block`` is a
    blocking error (text: the reason, or ``Blocked by hook``).
    """
    decision: HookDecision | None = None
    reason: str | None = None
    blocking: str | None = None
    updated: Mapping[str, JSONValue] | None = None
    if event == "PreToolUse":
        if output.decision == "approve":
            decision = "allow"
        elif output.decision == "block":
            decision, reason = "deny", output.reason
        if output.permission_decision is not None:
            decision, reason = output.permission_decision, output.permission_decision_reason
        updated = output.updated_input
    elif output.decision == "block":
        blocking = output.reason or "Blocked by hook"
    return HookResult(
        label=label,
        decision=decision,
        reason=reason,
        updated_input=updated,
        additional_context=output.additional_context,
        prevent_continuation=not output.continue_,
        stop_reason=output.stop_reason,
        blocking_error=blocking,
        system_message=output.system_message,
        updated_mcp_tool_output=(
            output.updated_mcp_tool_output if event == "PostToolUse" else None
        ),
    )


def aggregate(results: Sequence[HookResult], event: str, tool_name: str) -> HookOutcome:
    """Combine the results of one event's hooks, given in hook (configuration) order."""
    decision: HookDecision | None = None
    deny_message: str | None = None
    ask_message: str | None = None
    updated: Mapping[str, JSONValue] | None = None
    contexts: list[str] = []
    blocking: list[str] = []
    blocking_commands: list[str] = []
    stop = False
    stop_reason: str | None = None
    system_messages: list[str] = []
    errors: list[str] = []
    mcp_output: JSONValue = None
    for result in results:
        if result.updated_mcp_tool_output:  # Claude Code: a truthy value replaces
            mcp_output = result.updated_mcp_tool_output
        this = result.decision
        if result.blocking_error is not None:
            if event == "PreToolUse":
                this = "deny"
                message = hook_error_message(tool_name, result.blocking_error)
                deny_message = deny_message or message
            else:
                blocking.append(result.blocking_error)
                blocking_commands.append(result.label)
        elif event == "PreToolUse" and this == "deny":
            # A JSON deny is also a blocking error the model reads in a reminder, as in
            # Claude Code (an exit-2 deny is not).
            blocking.append(result.reason or "Blocked by hook")
            blocking_commands.append(result.label)
        if this == "deny":
            decision = "deny"
            deny_message = deny_message or result.reason or hook_denied_message(tool_name)
        else:
            if this == "ask" and decision != "deny":
                decision = "ask"
                ask_message = ask_message or result.reason
            elif this == "allow" and decision is None:
                decision = "allow"
            if result.updated_input is not None:
                updated = result.updated_input
        if result.additional_context:
            contexts.append(result.additional_context)
        if result.prevent_continuation:
            stop = True
            stop_reason = stop_reason or result.stop_reason
        if result.system_message:
            system_messages.append(result.system_message)
        if result.error is not None:
            errors.append(f"{event}:{tool_name} hook [{result.label}] failed: {result.error}")
    return HookOutcome(
        decision=decision,
        deny_message=deny_message if decision == "deny" else None,
        ask_message=ask_message if decision == "ask" else None,
        updated_input=updated,
        additional_contexts=tuple(contexts),
        blocking_errors=tuple(blocking),
        blocking_commands=tuple(blocking_commands),
        prevent_continuation=stop,
        stop_reason=stop_reason,
        system_messages=tuple(system_messages),
        errors=tuple(errors),
        updated_mcp_tool_output=mcp_output,
    )


# --- JSON -----------------------------------------------------------------------------


def parse_hook_json(data: object, event: str) -> HookOutput:
    """Read a command hook's JSON output for ``event``.

    Unknown keys are ignored (Claude Code accepts more than trioexec acts on);
    ``null`` counts as absent.

    Raises:
        ValueError: a known field has the wrong type or value, or
            ``hookSpecificOutput.hookEventName`` is not ``event``; the message
            names the field.
    """
    if not isinstance(data, dict):
        raise ValueError("expected a JSON object")
    continue_ = _get(data, "continue", bool, "continue")
    decision = _get(data, "decision", str, "decision")
    if decision is not None and decision not in ("approve", "block"):
        raise ValueError(f"decision: expected 'approve' or 'block', got {decision!r}")
    permission_decision: str | None = None
    permission_reason: str | None = None
    updated: dict[str, JSONValue] | None = None
    context: str | None = None
    mcp_output: JSONValue = None
    specific = _get(data, "hookSpecificOutput", dict, "hookSpecificOutput")
    if specific is not None:
        name = _get(specific, "hookEventName", str, "hookSpecificOutput.hookEventName")
        if name != event:
            raise ValueError(f"hookSpecificOutput.hookEventName: expected {event!r}, got {name!r}")
        context = _get(specific, "additionalContext", str, "hookSpecificOutput.additionalContext")
        if event == "PreToolUse":
            permission_decision = _get(
                specific, "permissionDecision", str, "hookSpecificOutput.permissionDecision"
            )
            if permission_decision is not None and permission_decision not in (
                "allow",
                "deny",
                "ask",
            ):
                raise ValueError(
                    "hookSpecificOutput.permissionDecision: expected 'allow', 'deny' or 'ask', "
                    f"got {permission_decision!r}"
                )
            permission_reason = _get(
                specific,
                "permissionDecisionReason",
                str,
                "hookSpecificOutput.permissionDecisionReason",
            )
            updated = _get(specific, "updatedInput", dict, "hookSpecificOutput.updatedInput")
        elif event == "PostToolUse":
            mcp_output = specific.get("updatedMCPToolOutput")
    return HookOutput(
        continue_=True if continue_ is None else continue_,
        stop_reason=_get(data, "stopReason", str, "stopReason"),
        decision=cast('Literal["approve", "block"] | None', decision),
        reason=_get(data, "reason", str, "reason"),
        system_message=_get(data, "systemMessage", str, "systemMessage"),
        suppress_output=bool(_get(data, "suppressOutput", bool, "suppressOutput")),
        permission_decision=cast("HookDecision | None", permission_decision),
        permission_decision_reason=permission_reason,
        updated_input=updated,
        additional_context=context,
        updated_mcp_tool_output=mcp_output,
    )


_JSON_TYPE = {bool: "a boolean", str: "a string", dict: "an object"}


def _get(data: Mapping[str, object], key: str, kind: type[_T], where: str) -> _T | None:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, kind):
        raise ValueError(f"{where}: expected {_JSON_TYPE[kind]}, got {type(value).__name__}")
    return value
