"""One tool call end to end (SPEC §4): lookup, validation, permission, call, mapping.

Every failure along the way becomes an error tool_result and ends the call; a
tool's ``Exception`` is a value, never an exception to the caller.  Trio's
``Cancelled`` (and any other ``BaseException``) propagates: the scope that
caused it produces the synthetic answer.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
import cattrs
import trio

from ._events import CallEvent, CancelReason, ObserverSet
from ._format_error import format_tool_error
from ._models import Attachment, JSONValue, ToolResult, ToolUse
from ._results import (
    content_size,
    empty_placeholder,
    finalize_result,
    is_content_empty,
    persistence_threshold,
)
from ._texts import CANCEL_MESSAGE, REJECT_MESSAGE, no_such_tool, tool_use_error
from ._tool import CallContext, ContextModifier, ContextState, ProgressSender, Tool, ToolOutput
from ._turn import Turn
from ._validation import CompiledTool, input_error_text, structuring_error

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

__all__ = ["CallEnv", "CallOutcome", "run_tool_use"]


@attrs.frozen(eq=False)
class CallEnv:
    """What every call of one run shares."""

    turn: Turn
    observers: ObserverSet
    cwd: Path
    session_dir: Path | None = None


@attrs.frozen
class CallOutcome:
    """A call's answer plus what travels with it.

    ``cancel_reason`` is set when the answer is synthetic (the call was
    stopped rather than answered by its tool).
    """

    result: ToolResult
    attachments: tuple[Attachment, ...] = ()
    context_modifier: ContextModifier | None = None
    stop_reason: str | None = None
    cancel_reason: CancelReason | None = None


def error_outcome(tool_use_id: str, text: str) -> CallOutcome:
    """An error answer produced by the lifecycle itself."""
    return CallOutcome(ToolResult(tool_use_id, text, is_error=True))


async def run_tool_use(
    tool_use: ToolUse,
    compiled: CompiledTool | None,
    *,
    env: CallEnv,
    state: ContextState,
    progress: ProgressSender,
    on_returned: Callable[[CallOutcome], None],
    prevalidated: object = None,
) -> CallOutcome:
    """Run one call through its whole lifecycle and return its answer.

    ``on_returned`` is told the real answer the moment the tool has returned,
    before any later step that can be cancelled: a call whose tool finished
    keeps its real result even if cancellation arrives during the post steps.
    ``prevalidated`` is the structured input when the caller already ran
    layers 1 and 2a (the partitioner does, to decide concurrency safety).

    Raises:
        trio.Cancelled: the call's scope (or an enclosing one) was cancelled.
    """
    tool_id = tool_use.id
    if compiled is None:
        return error_outcome(tool_id, no_such_tool(tool_use.name))
    tool = compiled.tool
    if env.turn.aborted or env.turn.interrupted:
        return CallOutcome(
            ToolResult(tool_id, CANCEL_MESSAGE, is_error=True), cancel_reason="user_interrupted"
        )

    if prevalidated is not None:
        parsed = prevalidated
    else:
        parsed, input_error = _validate_schema(compiled, tool_use.input)
        if input_error is not None:
            return error_outcome(tool_id, input_error)
    ctx = CallContext(tool_use=tool_use, state=state, cwd=env.cwd, session_dir=env.session_dir)
    try:
        semantic_error = await tool.validate_input(parsed, ctx)
    except Exception as exc:
        semantic_error = format_tool_error(exc)
    if semantic_error is not None:
        return error_outcome(tool_id, tool_use_error(semantic_error))

    denial = await _check_permission(tool, parsed, ctx)
    if denial is not None:
        return error_outcome(tool_id, denial)

    observers = env.observers
    if observers:
        observers.call_event(CallEvent(trio.current_time(), tool_id, "call_began"))
    try:
        output = await tool.call(parsed, ctx, progress)
    except Exception as exc:
        outcome = error_outcome(tool_id, format_tool_error(exc))
        on_returned(outcome)
        return outcome
    finally:
        if observers:
            observers.call_event(CallEvent(trio.current_time(), tool_id, "call_ended"))

    modifier: ContextModifier | None = None
    if isinstance(output, ToolOutput):
        modifier = output.context_modifier
        output = output.value
    try:
        result = ToolResult(tool_id, tool.map_result(output))
    except Exception as exc:
        outcome = error_outcome(tool_id, format_tool_error(exc))
    else:
        result = await _finalize(tool, result, env.session_dir)
        outcome = CallOutcome(result, context_modifier=modifier)
    on_returned(outcome)
    return outcome


async def _finalize(tool: Tool[Any], result: ToolResult, session_dir: Path | None) -> ToolResult:
    """Step 9: the empty-output placeholder and per-call persistence (SPEC §7).

    The common case (non-empty, under the threshold) is decided without a
    checkpoint.  Persistence is shielded: it is a short local write, and a
    result whose tool already returned must reach the gate in its final form.
    """
    if is_content_empty(result.content):
        return attrs.evolve(result, content=empty_placeholder(tool.name))
    if session_dir is None or content_size(result.content) <= persistence_threshold(
        tool.max_result_size_chars
    ):
        return result
    with trio.CancelScope(shield=True):
        result = await finalize_result(tool, result, session_dir=session_dir)
    return result


def _validate_schema(
    compiled: CompiledTool, raw: Mapping[str, JSONValue]
) -> tuple[object, str | None]:
    """Layers 1 and 2a: the structured input, or the model-facing error text."""
    issue = compiled.check(raw)
    if issue is not None:
        return None, input_error_text(compiled.tool, issue)
    try:
        return compiled.structure(raw), None
    except (cattrs.BaseValidationError, ValueError, TypeError) as exc:
        return None, input_error_text(compiled.tool, structuring_error(exc))


async def _check_permission(tool: Any, parsed: object, ctx: CallContext) -> str | None:  # noqa: ANN401
    """The tool's own permission answer: None when allowed, else the denial text."""
    try:
        decision = await tool.check_permissions(parsed, ctx)
    except Exception as exc:
        return format_tool_error(exc)
    if decision.behavior == "allow":
        return None
    if decision.behavior == "deny":
        return decision.message or REJECT_MESSAGE
    return f"Claude requested permissions to use {tool.name}, but you haven't granted it yet."
