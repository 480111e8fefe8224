"""One tool call end to end (SPEC §4): lookup, validation, permission, call, mapping.

Every failure along the way becomes an error tool_result and ends the call; a
tool's ``Exception`` is a value, never an exception to the caller.  Trio's
``Cancelled`` (and any other ``BaseException``) propagates: the scope that
caused it produces the synthetic answer.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
import trio

from ._call import NOT_ADMITTED, Admission, CallOutcome, error_outcome, unknown_tool_outcome
from ._events import CallEvent, ObserverSet
from ._file_access import denial_before_validation, path_access_of, protected_write
from ._format_error import format_tool_error
from ._groups import split_cancelled
from ._guard import GuardRails, PostToolUseVerdict, after_call, authorize_call
from ._hook_background import BackgroundHooks
from ._models import Attachment, ToolResult, ToolUse
from ._results import (
    content_size,
    empty_placeholder,
    finalize_result,
    is_content_empty,
    persistence_threshold,
)
from ._solo import SoloGate
from ._texts import (
    permission_denied_message,
    permission_not_granted_message,
    tool_use_error,
)
from ._timeouts import TimeoutWatch, ToolTimeouts, resolve_limits
from ._tool import CallContext, ContextModifier, ContextState, ProgressSender, Tool, ToolOutput
from ._validation import CompiledTool, input_error_text, validate

if TYPE_CHECKING:
    from collections.abc import Callable

    from ._call import Expiry

__all__ = ["CallEnv", "run_tool_use"]

logger = logging.getLogger("trioexec")

_BASE_VALIDATE_INPUT = Tool.validate_input
_BASE_CHECK_PERMISSIONS = Tool.check_permissions


@attrs.define(eq=False)
class CallEnv:
    """What every call of one run shares (built once per run; treated as immutable:
    not frozen, because a frozen attrs class costs twice as much to build).

    ``timeout_watch`` enforces the tools' time limits (``tool_timeouts``
    overrides them by tool name for this run); ``background`` is where the
    run starts ``async: true`` hooks; ``solo`` lets a call whose input a hook
    made unsafe run alone (:mod:`trioexec._solo`).
    """

    observers: ObserverSet
    cwd: Path
    session_dir: Path | None = None
    guard: GuardRails | None = None
    timeout_watch: TimeoutWatch | None = None
    tool_timeouts: Mapping[str, ToolTimeouts] = attrs.field(factory=dict)
    background: BackgroundHooks | None = None
    solo: SoloGate | None = None
    observed: bool = attrs.field(init=False)
    """Whether anybody observes (decided once: no event is built for nobody)."""

    def __attrs_post_init__(self) -> None:
        self.observed = bool(self.observers)


async def run_tool_use(
    tool_use: ToolUse,
    compiled: CompiledTool | None,
    *,
    env: CallEnv,
    state: ContextState,
    progress: ProgressSender,
    on_returned: Callable[[CallOutcome], None],
    on_timeout: Callable[[Expiry], CallOutcome] | None = None,
    admission: Admission | None = None,
    answered: Callable[[], bool] = lambda: False,
) -> CallOutcome | None:
    """Run one call through its whole lifecycle and return its answer.

    ``on_returned`` is told the real answer the moment the tool has returned,
    before any later step that can be cancelled: a call whose tool finished
    keeps its real result even if cancellation arrives during the post steps.
    ``on_timeout`` makes the answer of a call step stopped by its tool's time
    limit (``timeout`` / ``idle_timeout``, or the run's override).
    ``admission`` is what admission found (the partitioner validates the
    input to decide concurrency safety): its parsed input or its issue is
    used as is, never re-validated.  A call admitted as safe may be running
    beside others: if a hook replaces its input with one that is not
    concurrency-safe, its tool runs alone (``env.solo``), after the bodies
    already running and before any other.  Without it (or for a call
    admitted blind) the input is validated here.
    ``answered`` says whether the call was already answered on its behalf
    (it ignored its cancellation past the grace period, e.g. in a hook):
    then the tool is never called and None is returned.

    Raises:
        trio.Cancelled: the call's scope (or an enclosing one) was cancelled;
            checked once more right before the tool's body, so a call that was
            stopped while a hook ignored the cancellation never runs its tool.
    """
    tool_id = tool_use.id
    if compiled is None:
        return unknown_tool_outcome(tool_use)
    tool = compiled.tool
    # Step 2 (turn already aborted) is the run core's: a call never starts once
    # the turn is interrupted or aborted; it is answered without a lifecycle.

    if admission is None or admission is NOT_ADMITTED:
        parsed, issue = validate(compiled, tool_use.input)
    else:
        parsed, issue = admission.parsed, admission.issue
    if issue is not None:
        return error_outcome(tool_id, input_error_text(tool, issue))
    guard = env.guard
    ctx = CallContext(  # (tool_use, state, cwd, session_dir, permissions): positional is cheaper
        tool_use,
        state,
        env.cwd,
        env.session_dir,
        None if guard is None else guard.permissions,
    )
    if guard is not None:  # no guard: no permission rules, so no deny rule to match
        denial = denial_before_validation(tool, parsed, ctx)
        if denial is not None:  # before validation, which could reveal the denied file
            return error_outcome(tool_id, denial)
    tool_class = type(tool)
    if tool_class.validate_input is not _BASE_VALIDATE_INPUT:  # the base accepts everything
        try:
            semantic_error = await tool.validate_input(parsed, ctx)
        except Exception as exc:
            semantic_error = format_tool_error(exc)
        if semantic_error is not None:
            return error_outcome(tool_id, tool_use_error(semantic_error))

    raw_input = tool_use.input
    alone = False
    attachments: tuple[Attachment, ...] = ()
    stop_reason: str | None = None
    if guard is None:
        # The base check allows, and only a path-declaring tool can hit a protected path.
        if tool_class.check_permissions is not _BASE_CHECK_PERMISSIONS or path_access_of(tool):
            try:
                denial = await _tool_permission_only(tool, parsed, ctx)
            except Exception as exc:
                denial = format_tool_error(exc)
            if denial is not None:
                return error_outcome(tool_id, denial)
    else:
        try:
            verdict = await authorize_call(
                guard, compiled, tool_use, parsed, ctx, background=env.background
            )
        except Exception as exc:  # the tool's check or can_use_tool raised
            return error_outcome(tool_id, format_tool_error(exc))
        attachments, stop_reason = verdict.attachments, verdict.stop_reason
        if not verdict.allowed:
            text = verdict.message or permission_denied_message(tool.name)
            return CallOutcome(
                ToolResult(tool_id, text, is_error=True), attachments, stop_reason=stop_reason
            )
        if verdict.input != raw_input:  # a hook or the application replaced the input
            raw_input = verdict.input
            parsed = verdict.parsed_input  # validated once, by the guard
            # Started beside other calls, now not concurrency-safe: it runs,
            # but alone (re-partitioned as unsafe; invariant I3, _solo).
            alone = admission is not None and admission.safe and not _still_safe(tool, parsed)

    # The last gate before the tool does anything: a stopped call never runs it.
    await trio.lowlevel.checkpoint_if_cancelled()
    if answered():
        return None
    gate = env.solo
    if gate is not None and (admission is None or not admission.safe):
        gate = None  # only a call started as safe shares places with others
    if gate is not None:
        if alone:
            await gate.enter_solo()
        elif not gate.try_enter_shared():
            await gate.enter_shared()
        if answered():  # answered on its behalf while it waited its turn
            _leave(gate, alone)
            return None
    observers = env.observers if env.observed else None
    if observers is not None:
        observers.call_event(CallEvent(trio.current_time(), tool_id, "call_began"))
    limits = (
        resolve_limits(tool.name, tool.timeout, tool.idle_timeout, env.tool_timeouts)
        if env.tool_timeouts or tool.timeout is not None or tool.idle_timeout is not None
        else None
    )
    expiry: Expiry | None = None
    timed_out = False
    # No ``finally`` here: every handler a ``Cancelled`` passes costs trio's
    # exception class (its metaclass) a Python-level subclass check on 3.11,
    # paid by each call a cascade stops.  Each way out ends the step itself.
    try:
        if limits is None or env.timeout_watch is None:
            output = await tool.call(parsed, ctx, progress)
        else:
            with trio.CancelScope() as limit_scope:
                env.timeout_watch.arm(tool_id, limit_scope, limits)
                try:
                    output = await tool.call(parsed, ctx, progress)
                finally:
                    expiry = env.timeout_watch.disarm(tool_id)
            timed_out = limit_scope.cancelled_caught  # the limit ran out before it returned
    except trio.Cancelled:  # first, and with no ``as`` name: one cleanup handler less
        if gate is not None or observers is not None:  # (_end_call_step, without its call)
            _end_call_step(gate, alone, observers, tool_id)
        raise
    except Exception as exc:
        if gate is not None:  # its place is given back before the post hooks run
            _leave(gate, alone)
        try:
            failure = format_tool_error(exc)
            outcome = CallOutcome(
                ToolResult(tool_id, failure, is_error=True), attachments, stop_reason=stop_reason
            )
            on_returned(outcome)
            if guard is not None and guard.hooks.entries:
                after = await after_call(
                    guard,
                    tool,
                    tool_use,
                    raw_input,
                    response=None,
                    error=failure,
                    cwd=env.cwd,
                    parsed_input=parsed,
                    background=env.background,
                )
                outcome = _with_post(outcome, after)
            return outcome
        finally:
            if observers is not None:
                observers.call_event(CallEvent(trio.current_time(), tool_id, "call_ended"))
    except BaseException as exc:  # Cancelled, or what stops the run
        _end_call_step(gate, alone, observers, tool_id)
        if isinstance(exc, BaseExceptionGroup):
            cancelled, failures = split_cancelled(exc)
            if cancelled is not None and failures is not None:
                # The tool's own nursery failed while being cancelled: the
                # cancellation wins (its scope answers the call); failures are logged.
                logger.warning(
                    "tool call %s failed while being cancelled", tool_id, exc_info=failures
                )
                raise cancelled from None
        raise
    _end_call_step(gate, alone, observers, tool_id)
    if timed_out:
        assert expiry is not None
        assert on_timeout is not None
        return on_timeout(expiry)

    modifier: ContextModifier | None = None
    if isinstance(output, ToolOutput):
        modifier = output.context_modifier
        output = output.value
    try:
        result = ToolResult(tool_id, tool.map_result(output))
    except Exception as exc:
        result = ToolResult(tool_id, format_tool_error(exc), is_error=True)
    else:
        if env.session_dir is not None or is_content_empty(result.content):
            result = await _finalize(tool, result, env.session_dir)  # else nothing to do
    outcome = CallOutcome(result, attachments, modifier, stop_reason)
    on_returned(outcome)
    if guard is not None and guard.hooks.entries:
        try:
            response = tool.tool_response(parsed, output)
        except Exception:
            logger.warning("tool_response of %s failed", tool.name, exc_info=True)
            response = None
        after = await after_call(
            guard,
            tool,
            tool_use,
            raw_input,
            response=result,
            cwd=env.cwd,
            tool_response=response,
            parsed_input=parsed,
            background=env.background,
        )
        if after.updated_mcp_tool_output is not None:
            outcome = attrs.evolve(
                outcome, result=await _replaced_output(tool, result, after, env.session_dir)
            )
        outcome = _with_post(outcome, after)
    return outcome


async def _replaced_output(
    tool: Tool[Any], result: ToolResult, after: PostToolUseVerdict, session_dir: Path | None
) -> ToolResult:
    """An MCP tool's result made from a PostToolUse hook's ``updatedMCPToolOutput``."""
    try:
        replaced = ToolResult(result.tool_use_id, tool.map_result(after.updated_mcp_tool_output))
    except Exception as exc:
        return ToolResult(result.tool_use_id, format_tool_error(exc), is_error=True)
    return await _finalize(tool, replaced, session_dir)


def _end_call_step(
    gate: SoloGate | None, alone: bool, observers: ObserverSet | None, tool_id: str
) -> None:
    """The call step is over: give its place back and tell the observers (if any)."""
    if gate is not None:
        _leave(gate, alone)
    if observers is not None:
        observers.call_event(CallEvent(trio.current_time(), tool_id, "call_ended"))


def _leave(gate: SoloGate, alone: bool) -> None:
    if alone:
        gate.leave_solo()
    else:
        gate.leave_shared()


def _still_safe(tool: Tool[Any], parsed: object) -> bool:
    try:
        return bool(tool.is_concurrency_safe(parsed))
    except Exception:
        return False


def _with_post(outcome: CallOutcome, after: PostToolUseVerdict) -> CallOutcome:
    """Add what PostToolUse / PostToolUseFailure hooks said to a call's answer."""
    if not after.attachments and after.stop_reason is None:
        return outcome
    return attrs.evolve(
        outcome,
        attachments=outcome.attachments + after.attachments,
        stop_reason=outcome.stop_reason or after.stop_reason,
    )


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


async def _tool_permission_only(
    tool: Tool[Any],
    parsed: object,
    ctx: CallContext,
) -> str | None:
    """The permission chain with no rules, no hooks and no callback: the tool decides.

    Same answers as ``GuardRails()`` without its checkpoints: allow runs the
    call; deny, ask and passthrough (which asks, and nobody can answer) refuse.
    """
    decision = await tool.check_permissions(parsed, ctx)
    if decision.behavior == "deny":
        return decision.message or permission_denied_message(tool.name)
    decision = protected_write(tool, parsed, ctx) or decision
    if decision.behavior == "allow":
        return None
    if decision.safety_check and decision.message:
        return decision.message
    return permission_not_granted_message(tool.name)
