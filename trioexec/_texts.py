"""Every exact string the model sees, in one place.

These strings are a public contract (models were trained against them): keep
them byte for byte.  Functions build the ones with placeholders.
"""

from __future__ import annotations

__all__ = [
    "CANCEL_MESSAGE",
    "REJECT_MESSAGE",
    "STOPPED_BY_HOOK",
    "STREAMING_FALLBACK_MESSAGE",
    "duplicate_tool_use_id",
    "hook_denied_message",
    "hook_error_message",
    "invalid_tool_use_id",
    "no_such_tool",
    "permission_denied_message",
    "permission_not_granted_message",
    "sensitive_file_message",
    "sibling_error_message",
    "stopped_by_pre_tool_use_hook",
    "tool_use_error",
]

REJECT_MESSAGE = (
    "The user doesn't want to proceed with this tool use. The tool use was rejected "
    "(eg. if it was a file edit, the new_string was NOT written to the file). "
    "STOP what you are doing and wait for the user to tell you how to proceed."
)
"""Answer for a call cancelled by an interrupt or abort (and, in the streaming
executor, for a call that never started)."""

CANCEL_MESSAGE = (
    "The user doesn't want to take this action right now. "
    "STOP what you are doing and wait for the user to tell you how to proceed."
)
"""Answer for a batch-path call whose lifecycle begins after an interrupt/abort."""

STREAMING_FALLBACK_MESSAGE = (
    "<tool_use_error>Error: Streaming fallback - tool execution discarded</tool_use_error>"
)


def tool_use_error(message: str) -> str:
    """Wrap ``message`` the way validation and lookup errors are wrapped."""
    return f"<tool_use_error>{message}</tool_use_error>"


def no_such_tool(name: str) -> str:
    """Answer for a tool_use naming no known tool."""
    return tool_use_error(f"Error: No such tool available: {name}")


def sibling_error_message(description: str) -> str:
    """Answer for a call cancelled because a cascading sibling errored."""
    return tool_use_error(f"Cancelled: parallel tool call {description} errored")


def permission_denied_message(tool_name: str) -> str:
    """Answer when a deny rule (or the tool's own check) denies without a message."""
    return f"Permission to use {tool_name} has been denied."


def permission_not_granted_message(tool_name: str) -> str:
    """Answer to an ask when the application gave no ``can_use_tool`` callback."""
    return f"Claude requested permissions to use {tool_name}, but you haven't granted it yet."


def sensitive_file_message(path: str) -> str:
    """Answer to a write to a protected path (``.git/``, ``~/.bashrc``) nobody approved."""
    return f"Claude requested permissions to edit {path} which is a sensitive file."


def hook_denied_message(tool_name: str) -> str:
    """Answer when a PreToolUse hook denies without a reason."""
    return f"Hook PreToolUse:{tool_name} denied this tool"


def hook_error_message(tool_name: str, error: str) -> str:
    """Answer when a PreToolUse hook reports a blocking error (exit 2, for a command)."""
    return f"PreToolUse:{tool_name} hook error: {error}"


STOPPED_BY_HOOK = "Execution stopped by hook"
"""The ``hook_stopped_continuation`` text when a hook gave no ``stopReason``."""


def stopped_by_pre_tool_use_hook(stop_reason: str | None) -> str:
    """Denial text when a PreToolUse hook stopped continuation and nobody gave a message."""
    if stop_reason:
        return f"Execution stopped by PreToolUse hook: {stop_reason}"
    return "Execution stopped by PreToolUse hook"


def invalid_tool_use_id(tool_use_id: str) -> str:
    """Answer for a tool_use whose id could escape a file name or break pairing."""
    return tool_use_error(
        f"Error: Invalid tool_use id {tool_use_id!r}: an id may only contain "
        "letters, digits, '_' and '-'"
    )


def duplicate_tool_use_id(tool_use_id: str) -> str:
    """Answer for a tool_use reusing the id of an earlier call of the same run."""
    return tool_use_error(
        f"Error: Duplicate tool_use id {tool_use_id!r}: every tool_use needs its own id"
    )
