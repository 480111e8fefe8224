"""Step 10 of a call (SPEC §4): PostToolUse or PostToolUseFailure hooks, and what they add."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
import trio

from .._contract._tool import CallContext, is_mcp_tool
from .._hooks._config import (
    HookEvent,
    run_hooks,
)
from .._hooks._output import aggregate
from .._models import Attachment, JSONValue, content_to_api
from .._texts import (
    STOPPED_BY_HOOK,
    STOPPED_BY_POST_TOOL_USE_HOOK,
)

if TYPE_CHECKING:
    from collections.abc import Mapping

    from .._contract._tool import Tool
    from .._hooks._background import BackgroundHooks
    from .._models import ToolResult, ToolUse
from ._hook_input import _attachments, _hook_input, _if_matcher, _observable, _revalidate

if TYPE_CHECKING:
    from ._rails import GuardRails

__all__ = ["PostToolUseVerdict", "after_call"]


@attrs.frozen
class PostToolUseVerdict:
    """The records PostToolUse / PostToolUseFailure hooks add after a call.

    ``attachments`` holds ``additional_context``, ``hook_blocking_error`` and
    ``hook_stopped_continuation`` records; the other fields are as in
    :class:`PreToolUseVerdict`.
    """

    attachments: tuple[Attachment, ...] = ()
    stop_reason: str | None = None
    system_messages: tuple[str, ...] = ()
    hook_errors: tuple[str, ...] = ()
    updated_mcp_tool_output: JSONValue = None
    """For an MCP tool (``Tool.is_mcp``): the output a PostToolUse hook gave in
    ``updatedMCPToolOutput``; the call's result is made from it instead."""


_NOTHING_AFTER = PostToolUseVerdict()


async def after_call(
    guard: GuardRails,
    tool: Tool[Any],
    tool_use: ToolUse,
    tool_input: Mapping[str, JSONValue],
    *,
    response: ToolResult | None,
    error: str | None = None,
    is_interrupt: bool = False,
    cwd: Path | None = None,
    tool_response: JSONValue = None,
    parsed_input: object = None,
    background: BackgroundHooks | None = None,
) -> PostToolUseVerdict:
    """Run PostToolUse hooks (``response`` given) or PostToolUseFailure hooks (``error`` given).

    Args:
        guard: the hooks in force.
        tool: the tool called.
        tool_use: the call.
        tool_input: the raw input the tool was called with.
        response: the call's result.
        error: the failure text when the call raised; selects PostToolUseFailure.
        is_interrupt: for PostToolUseFailure: the failure was a user interrupt.
        cwd: the hooks' working directory (default: the process's).
        tool_response: the tool's output object (``Tool.tool_response``), sent
            to hooks as ``tool_response``; None: ``response``'s content.
        parsed_input: the validated input, for hooks' ``if`` conditions (None:
            ``tool_input`` is validated again when a hook has one).
        background: where the run starts ``async: true`` hooks (None: they
            run in line, their answers ignored).

    Raises:
        ValueError: neither ``response`` nor ``error`` was given.

    On cancellation the hooks are cancelled, their process groups killed, and
    Cancelled propagates.
    """
    await trio.lowlevel.checkpoint()
    if error is None and response is None:
        raise ValueError("after_call needs a response or an error")
    event: HookEvent = "PostToolUseFailure" if error is not None else "PostToolUse"
    if not guard.hooks.entries:
        return _NOTHING_AFTER
    where = cwd if cwd is not None else Path.cwd()
    ctx = CallContext(tool_use, cwd=where, permissions=guard.permissions)

    def condition(text: str) -> bool:
        parsed = parsed_input
        if parsed is None:
            parsed, problem = _revalidate(tool, tool_input)
            if problem is not None:
                return True  # cannot tell: the hook runs
        return _if_matcher(tool, parsed, ctx)(text)

    entries = guard.hooks.matching(event, tool.name, condition=condition)
    if not entries:
        return _NOTHING_AFTER
    observed = _observable(tool, tool_input, where)
    hook_input = _hook_input(guard, event, tool, tool_use, observed, str(where))
    if error is not None:
        hook_input = attrs.evolve(hook_input, error=error, is_interrupt=is_interrupt)
    elif response is not None:
        sent = tool_response if tool_response is not None else content_to_api(response.content)
        hook_input = attrs.evolve(hook_input, tool_response=sent)
    results = await run_hooks(entries, hook_input, cwd=where, background=background)
    outcome = aggregate(results, event, tool.name)
    stop_default = STOPPED_BY_POST_TOOL_USE_HOOK if event == "PostToolUse" else STOPPED_BY_HOOK
    return PostToolUseVerdict(
        guard.async_hook_messages.take(tool_use.id)
        + _attachments(tool_use.id, outcome, f"{event}:{tool.name}", stop_default),
        (outcome.stop_reason or stop_default) if outcome.prevent_continuation else None,
        outcome.system_messages,
        outcome.errors,
        outcome.updated_mcp_tool_output if is_mcp_tool(tool) else None,
    )
