"""Every exact string the model sees, in one place.

These strings are a public contract (models were trained against them): keep
them byte for byte.  Functions build the ones with placeholders.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Literal, TypeAlias

if TYPE_CHECKING:
    from ._models import ToolUse

__all__ = [
    "CANCEL_MESSAGE",
    "DENIAL_WORKAROUND_GUIDANCE",
    "REJECT_MESSAGE",
    "STOPPED_BY_HOOK",
    "STOPPED_BY_POST_TOOL_USE_HOOK",
    "STREAMING_FALLBACK_MESSAGE",
    "SyntheticTexts",
    "application_stopped_message",
    "command_denied_message",
    "describe_tool_use",
    "dont_ask_denied_message",
    "duplicate_tool_use_id",
    "edit_denied_message",
    "escape_reminder",
    "hook_denied_message",
    "hook_error_message",
    "hook_record_text",
    "interrupted_message",
    "invalid_tool_use_id",
    "no_such_tool",
    "permission_denied_message",
    "permission_not_granted_message",
    "plan_mode_denied_message",
    "read_denied_message",
    "sensitive_file_message",
    "sibling_error_message",
    "sibling_stopped_message",
    "stopped_by_pre_tool_use_hook",
    "stream_cut_note",
    "system_reminder",
    "timeout_message",
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


SyntheticTexts: TypeAlias = Literal["claude-code", "trioexec"]
"""Which words a stopped call's answer uses: ``"claude-code"``, Claude Code's bytes
(what models were trained on), or ``"trioexec"``, texts that say whether the call
had started, what stopped it and what it had printed so far."""

_MAY_HAVE_RUN = "so it may have done part of its work (check before you retry)"
_WAIT = "STOP what you are doing and wait for the user to tell you how to proceed."


def _seconds(value: float) -> str:
    return f"{round(value, 1):g} s"


def _with_output(text: str, output: str) -> str:
    return f"{text}\n\nOutput so far:\n{output}" if output else text


def interrupted_message(tool_name: str, *, started: bool, output: str = "") -> str:
    """``trioexec`` text: the user interrupted or aborted the turn."""
    if not started:
        return (
            f"Not run: the user interrupted the turn before {tool_name} started, "
            f"so it did nothing. {_WAIT}"
        )
    return _with_output(
        f"Interrupted by the user while running: {tool_name} had started and was stopped "
        f"before it finished, {_MAY_HAVE_RUN}. {_WAIT}",
        output,
    )


def sibling_stopped_message(
    description: str, tool_name: str, *, started: bool, output: str = "", denied: bool = False
) -> str:
    """``trioexec`` text: a cascading sibling's error stopped the call (not the user).

    ``denied``: the sibling did not fail but was denied (it never ran), which
    the text says instead of "errored" (the calls need not have run in parallel).
    """
    if not started:
        what = f"{tool_name} was not started, so it did nothing"
    else:
        what = f"{tool_name} had started and was stopped before it finished, {_MAY_HAVE_RUN}"
    if denied:
        cause = f"Cancelled: tool call {description} was denied permission, so it did not run."
    else:
        cause = f"Cancelled: parallel tool call {description} errored."
    body = f"{cause} {what}; the user did not stop it."
    return tool_use_error(_with_output(body, output))


def application_stopped_message(
    tool_name: str, reason: str, *, started: bool, output: str = ""
) -> str:
    """``trioexec`` text: the application stopped the run (an enclosing scope or deadline)."""
    if not started:
        return (
            f"Not run: the application stopped the turn ({reason}) before {tool_name} "
            "started, so it did nothing; the user did not stop it."
        )
    return _with_output(
        f"Stopped by the application ({reason}) while running: {tool_name} had started and "
        f"was stopped before it finished, {_MAY_HAVE_RUN}; the user did not stop it.",
        output,
    )


def stream_cut_note(failure: str, calls: int) -> str:
    """The note after the answers of a message whose stream failed (``stream_failure="continue"``).

    ``failure`` says what went wrong (``the connection closed before the
    message ended``); ``calls`` is how many tool calls the message had sealed.
    """
    which = "The tool call" if calls == 1 else f"The {calls} tool calls"
    ran = "it ran once; its result is" if calls == 1 else "each ran once; their results are"
    return system_reminder(
        f"Your previous message was cut off: {failure}. {which} it held before the cut "
        f"{'was' if calls == 1 else 'were'} kept and {ran} above. Nothing was retried or will "
        "be run again on its own: continue from these results, and call a tool again only if "
        "you need it again."
    )


def timeout_message(
    tool_name: str, *, kind: str, limit: float, elapsed: float, output: str = ""
) -> str:
    """The answer of a call stopped by its own time limit (both text variants)."""
    if kind == "idle_timeout":
        which = f"idle timeout (no progress for {_seconds(limit)})"
    else:
        which = f"timeout of {_seconds(limit)}"
    body = (
        f"Timed out: {tool_name} ran for {_seconds(elapsed)} and was stopped by its {which}, "
        f"{_MAY_HAVE_RUN}."
    )
    return tool_use_error(_with_output(body, output))


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


def command_denied_message(tool_name: str, command: str) -> str:
    """Answer when a content deny rule of a shell tool matches its command."""
    return f"Permission to use {tool_name} with command {command} has been denied."


def read_denied_message(path: str) -> str:
    """Answer when a deny rule covers the path a reading tool (Read, Glob, Grep) names."""
    return f"Permission to read {path} has been denied."


def edit_denied_message(path: str) -> str:
    """Answer when a deny rule covers the path a writing tool (Edit, Write) names."""
    return f"Permission to edit {path} has been denied."


def plan_mode_denied_message(tool_name: str) -> str:
    """Answer when ``plan`` mode refuses a call that could change something."""
    return (
        f"Permission to use {tool_name} has been denied because trioexec is running in plan "
        "mode: only tools that change nothing may run. Plan first; the changes come after "
        "the plan is approved."
    )


DENIAL_WORKAROUND_GUIDANCE = (
    "IMPORTANT: You *may* attempt to accomplish this action using other tools that might "
    "naturally be used to accomplish this goal, e.g. using head instead of cat. But you "
    "*should not* attempt to work around this denial in malicious ways, e.g. do not use your "
    "ability to run tests to execute non-test actions. You should only try to work around "
    "this restriction in reasonable ways that do not attempt to bypass the intent behind this "
    "denial. If you believe this capability is essential to complete the user's request, STOP "
    "and explain to the user what you were trying to do and why you need this permission. "
    "Let the user decide how to proceed."
)
"""Claude Code's guidance appended to a denial nobody could be asked about."""


def dont_ask_denied_message(tool_name: str) -> str:
    """Answer in ``dontAsk`` mode to a call that would have asked (Claude Code's text)."""
    return (
        f"Permission to use {tool_name} has been denied because Claude Code is running in "
        f"don't ask mode. {DENIAL_WORKAROUND_GUIDANCE}"
    )


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
"""The ``hook_stopped_continuation`` text when a PreToolUse hook gave no ``stopReason``."""

STOPPED_BY_POST_TOOL_USE_HOOK = "Execution stopped by PostToolUse hook"
"""The ``hook_stopped_continuation`` text when a PostToolUse hook gave no ``stopReason``."""

_REMINDER_TAG = re.compile(r"<(?=\s*(?:/\s*)?system-reminder\b)", re.IGNORECASE)
_TRAILING_LT = re.compile(r"<(?=\s*(?:/\s*)?\Z)")


def escape_reminder(text: str) -> str:
    """``text`` with every ``<`` that could open or close a ``system-reminder`` tag as ``&lt;``.

    Hook output is written by others: a hook printing ``</system-reminder>``
    must not end the wrapper early and speak as the system.  A trailing bare
    ``<`` is escaped too (it would fuse with the wrapper's closing tag).
    """
    return _TRAILING_LT.sub("&lt;", _REMINDER_TAG.sub("&lt;", text))


def system_reminder(text: str) -> str:
    """``text`` wrapped in a ``<system-reminder>`` block, tags inside it escaped."""
    return f"<system-reminder>\n{escape_reminder(text)}\n</system-reminder>"


def hook_record_text(kind: str, hook_name: str, text: str, command: str = "") -> str:
    """The text block of a hook's record, byte for byte as Claude Code renders it.

    ``hook_name`` is ``{event}:{tool}``.  ``kind`` is ``additional_context``,
    ``hook_blocking_error`` or ``hook_stopped_continuation``.
    """
    if kind == "additional_context":
        body = f"{hook_name} hook additional context: {text}"
    elif kind == "hook_blocking_error":
        body = f'{hook_name} hook blocking error from command: "{command}": {text}'
    else:
        body = f"{hook_name} hook stopped continuation: {text}"
    return system_reminder(body)


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


_DESCRIPTION_KEYS = ("command", "file_path", "pattern")


def describe_tool_use(tool_use: ToolUse) -> str:
    """``Name(first 40 chars…)`` of the first non-empty command/file_path/pattern."""
    for key in _DESCRIPTION_KEYS:
        value = tool_use.input.get(key)
        if isinstance(value, str) and value:
            return f"{tool_use.name}({_first_40_units(value)})"
    return tool_use.name


def _first_40_units(text: str) -> str:
    """The first 40 UTF-16 code units (as JavaScript counts them), ``…`` if cut.

    A cut through a surrogate pair drops the lone half, so the text stays valid.
    """
    if len(text) <= 20:  # at most 40 units whatever the characters
        return text
    encoded = text.encode("utf-16-le", "surrogatepass")
    if len(encoded) <= 80:
        return text
    head = encoded[:80]
    if 0xD8 <= head[-1] <= 0xDB:  # the last unit opens a surrogate pair
        head = head[:-2]
    return head.decode("utf-16-le", "surrogatepass") + "…"
