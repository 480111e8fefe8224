"""Every exact string the model sees, in one place.

These strings are a public contract (models were trained against them): keep
them byte for byte.  Functions build the ones with placeholders.
"""

from __future__ import annotations

__all__ = [
    "CANCEL_MESSAGE",
    "REJECT_MESSAGE",
    "STREAMING_FALLBACK_MESSAGE",
    "no_such_tool",
    "sibling_error_message",
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
