"""One tool call end to end (SPEC §4): lookup, validation, permission, call, mapping.

:func:`run_call` is a call's task body (``RunCore.run_call``).  Every failure
along the way becomes an error tool_result and ends the call; a tool's
``Exception`` is a value, never an exception to the caller.  Trio's
``Cancelled`` (and any other ``BaseException``) is answered through the run
(:class:`RunForCall`: the synthetic answer of why the run stopped the call) and
propagates to the scope that caused it.
"""

from __future__ import annotations

import logging
import math
import sys
from collections.abc import Mapping
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import attrs
import trio
from trio.lowlevel import disable_ki_protection

from .._contract._format_error import format_tool_error
from .._contract._permission_context import PermissionContext
from .._contract._tool import CallContext, ContextModifier, Tool, ToolOutput
from .._contract._validation import input_error_text, validate
from .._groups import is_cancellation, split_cancelled
from .._guard._after import PostToolUseVerdict, after_call
from .._guard._chain import decide_permission, unanswered_ask
from .._guard._file_access import denial_before_validation, path_access_of
from .._guard._rails import GuardRails, authorize_call
from .._hooks._background import BackgroundHooks
from .._models import Attachment, ResultUpdate, ToolResult, ToolUse
from .._results._persist import (
    content_size,
    empty_placeholder,
    finalize_result,
    is_content_empty,
    persistence_threshold,
)
from .._texts import (
    permission_denied_message,
    tool_use_error,
)
from ._call import (
    NOT_ADMITTED,
    Answer,
    Call,
    CallOutcome,
    denied_outcome,
    error_outcome,
    unknown_tool_outcome,
)
from ._events import CallEvent, ObserverSet
from ._solo import SoloLock
from ._timeouts import TimeoutWatch, ToolTimeouts, resolve_limits

if TYPE_CHECKING:
    from ._call import Expiry
    from ._cancel import Cancellation

__all__ = ["CallEnv", "RunForCall", "run_call"]

logger = logging.getLogger("trioexec")

_BASE_VALIDATE_INPUT = Tool.validate_input
_NO_RULES = PermissionContext()
"""What a run without guard rails decides with: ``GuardRails()``'s rules and mode."""
_BASE_CHECK_PERMISSIONS = Tool.check_permissions


@attrs.define(eq=False)
class CallEnv:
    """What every call of one run shares (built once per run; treated as immutable:
    hot path, docs/performance.md#unfrozen-values).

    ``timeout_watch`` enforces the tools' time limits (``tool_timeouts``
    overrides them by tool name for this run); ``background`` is where the
    run starts ``async: true`` hooks; ``solo`` lets a call whose input a hook
    made unsafe run alone (:mod:`trioexec._core._solo`).
    """

    observers: ObserverSet
    cwd: Path
    session_dir: Path | None = None
    guard: GuardRails | None = None
    timeout_watch: TimeoutWatch | None = None
    tool_timeouts: Mapping[str, ToolTimeouts] = attrs.field(factory=dict)
    background: BackgroundHooks | None = None
    solo: SoloLock | None = None
    hooks_fail_closed: bool = True
    """A PreToolUse command hook that cannot start denies its call (a Policy knob)."""
    observed: bool = attrs.field(init=False)
    """Whether anybody observes (decided once: no event is built for nobody)."""

    def __attrs_post_init__(self) -> None:
        self.observed = bool(self.observers)


class RunForCall(Protocol):
    """What a call's lifecycle needs from the run it belongs to (the run core is one).

    Every way a call can end is answered through it: :meth:`complete` with
    the call's answer, :meth:`finish_stopped` for a call the run stopped,
    :meth:`call_raised` for one whose code raised a ``BaseException``.
    """

    env: CallEnv
    cancellation: Cancellation

    def complete(self, call: Call, outcome: Answer, *, cascade: bool = True) -> None: ...
    def finish_stopped(self, call: Call) -> None: ...
    def call_raised(self, call: Call, exc: BaseException) -> BaseException | None: ...
    def timed_out(self, call: Call, expiry: Expiry) -> CallOutcome: ...
    def progress(self, call: Call, data: object) -> None: ...


@disable_ki_protection
async def run_call(run: RunForCall, call: Call, _in_own_scope: bool = False) -> None:
    """Task body of one call: its whole lifecycle, answered through ``run``.

    This is :meth:`RunCore.run_call <trioexec._core._run.RunCore.run_call>`:
    one function, the call's task body (hot path: docs/performance.md#one-frame).

    Every failure along the way is an error answer and ends the call.  The
    tool is never called for a call that was answered on its behalf (it
    ignored its cancellation past the grace period, in a hook say), nor once
    its scope is cancelled: the last check before the tool's body is a
    cancellation check.  A call admitted as safe may be running beside
    others: if a hook replaces its input with one that is not
    concurrency-safe, its tool runs alone (``env.solo``), after the bodies
    already running and before any other.  The tool's real answer is
    recorded (``call.returned``) the moment its tool returned, before any
    later step that can be cancelled, so it survives a cancellation during
    the post steps.  An interruptible call runs in its own scope
    (``call.scope``).

    Cancellation: a ``Cancelled`` a scope delivered answers the call (its
    synthetic answer).  When the sibling scope is cancelled (a cascade, a
    discard, or trio itself after a call raised), the call's task then ends
    normally: between this frame and that scope, the cancel scope of the
    calls' nursery, lies nothing of the call's.  trio's cancellation is
    level-triggered: any enclosing scope that is cancelled too (the turn's,
    the application's) is delivered again at the next cancel point of the
    task that owns the nursery, the code after its ``async with``.  A call
    that runs in that task's own body returns to it the same way; its next
    cancel point raises.  Any other scope's ``Cancelled`` propagates to that
    scope, its traceback dropped first (no one reads a traceback the scope
    absorbs, and it would keep every frame of the call alive until the
    calls' nursery exits).  Any other ``BaseException`` is answered and
    recorded by ``run.call_raised``.
    """
    scope = call.scope
    if scope is not None and not _in_own_scope:
        with scope:  # absorbs its own cancellation, already answered inside
            await run_call(run, call, True)
        return
    in_step = False  # in the call step: the tool's own body is running
    try:
        tool_use = call.tool_use
        tool_id = tool_use.id
        compiled = call.compiled
        if compiled is None:
            run.complete(call, unknown_tool_outcome(tool_use))
            return
        tool = compiled.tool
        env = run.env
        # Step 2 (turn already aborted) is the run core's: a call never starts once
        # the turn is interrupted or aborted; it is answered without a lifecycle.
        admission = call.admission
        if admission is NOT_ADMITTED:
            parsed, issue = validate(compiled, tool_use.input)
        else:
            parsed, issue = call.parsed, admission.issue
            call.parsed = None  # held here while the call runs: freed when it ends
        if issue is not None:
            run.complete(call, error_outcome(tool_id, input_error_text(tool, issue)))
            return
        guard = env.guard
        state = call.context_at_start
        ctx = CallContext(  # hot path: docs/performance.md#positional
            tool_use,
            {} if state is None else state,
            env.cwd,
            env.session_dir,
            None if guard is None else guard.permissions,
        )
        if guard is not None:  # no guard: no permission rules, so no deny rule to match
            denial = denial_before_validation(tool, parsed, ctx)
            if denial is not None:  # before validation, which could reveal the denied file
                run.complete(call, denied_outcome(tool_id, denial))
                return
        tool_class = type(tool)
        if tool_class.validate_input is not _BASE_VALIDATE_INPUT:  # the base accepts everything
            try:
                semantic_error = await tool.validate_input(parsed, ctx)
            except Exception as exc:
                semantic_error = format_tool_error(exc)
            if semantic_error is not None:
                run.complete(call, error_outcome(tool_id, tool_use_error(semantic_error)))
                return

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
                    run.complete(call, error_outcome(tool_id, format_tool_error(exc)))
                    return
                if denial is not None:
                    run.complete(call, denied_outcome(tool_id, denial))
                    return
        else:
            try:
                verdict = await authorize_call(
                    guard,
                    compiled,
                    tool_use,
                    parsed,
                    ctx,
                    background=env.background,
                    hooks_fail_closed=env.hooks_fail_closed,
                )
            except Exception as exc:  # the tool's check or can_use_tool raised
                run.complete(call, error_outcome(tool_id, format_tool_error(exc)))
                return
            attachments, stop_reason = verdict.attachments, verdict.stop_reason
            if not verdict.allowed:
                text = verdict.message or permission_denied_message(tool.name)
                run.complete(call, denied_outcome(tool_id, text, attachments, stop_reason))
                return
            if verdict.input != raw_input:  # a hook or the application replaced the input
                raw_input = verdict.input
                parsed = verdict.parsed_input  # validated once, by the guard
                # Started beside other calls, now not concurrency-safe: it runs,
                # but alone (re-partitioned as unsafe; invariant I3, _solo).
                alone = admission.safe and not _still_safe(tool, parsed)

        # The last check before the tool does anything: a stopped call never runs it.
        await trio.lowlevel.checkpoint_if_cancelled()
        if call.outcome is not None:  # answered on its behalf (it ignored its cancellation)
            run.finish_stopped(call)
            return
        solo = env.solo if admission.safe else None  # only a call started as safe shares
        if solo is not None:
            if alone:
                await solo.enter_solo()
            elif not solo.try_enter_shared():
                await solo.enter_shared()
            if _answered(call):  # answered on its behalf while it waited its turn
                _leave(solo, alone)
                run.finish_stopped(call)
                return
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
        progress = partial(run.progress, call)
        # The call step has no ``try`` of its own: the handlers below know it by
        # ``in_step`` (hot path: docs/performance.md#no-try).
        in_step = True
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
        in_step = False
        if solo is not None or observers is not None:
            _end_call_step(solo, alone, observers, tool_id)
        if timed_out:
            assert expiry is not None
            run.complete(call, run.timed_out(call, expiry))
            return

        modifier: ContextModifier | None = None
        if isinstance(output, ToolOutput):
            modifier = output.context_modifier
            output = output.value
        try:
            result = ToolResult(tool_id, tool.map_result(output))
        except Exception as exc:
            result = ToolResult(tool_id, format_tool_error(exc), True)
        else:
            content = result.content
            if (
                env.session_dir is not None
                or is_content_empty(content)
                or content_size(content) > persistence_threshold(tool.max_result_size_chars)
            ):  # else nothing to do (without a session folder an oversized result is cut)
                result = await _finalize(tool, result, env.session_dir)
        answer: Answer
        if guard is not None and guard.hooks.entries:
            outcome = CallOutcome(result, attachments, modifier, stop_reason)
            call.returned = outcome
            answer = await _post_tool_use(
                guard, tool, tool_use, raw_input, parsed, output, env, outcome
            )
        elif modifier is None and stop_reason is None:
            # A plain answer is its own update: the object the gate releases.
            answer = call.returned = ResultUpdate(result, attachments)
        else:
            answer = call.returned = CallOutcome(result, attachments, modifier, stop_reason)
    except trio.Cancelled:
        # No ``as`` name here (hot path: docs/performance.md#no-try).
        if in_step and (solo is not None or observers is not None):
            _end_call_step(solo, alone, observers, tool_id)
        cancellation = run.cancellation
        if (
            cancellation.cause is not None
            and (
                # A scope delivered it: the sibling scope (no shield lies
                # between it and here), or any other (asked of trio).
                cancellation.sibling_scope.cancel_called
                or trio.current_effective_deadline() == -math.inf
            )
        ) or (scope is not None and scope.cancel_called):
            # The common case (a cascade, an abort, a discard, an interrupt
            # of this call...): the run already knows why it is stopped.
            run.finish_stopped(call)
            if cancellation.sibling_scope.cancel_called:
                # Stopped by the sibling scope, the calls' nursery's own: its
                # task ends here, answered (see the docstring).
                return
            stopped = sys.exception()
            assert stopped is not None
            stopped.__traceback__ = None  # (see the docstring)
            raise
        stopped = sys.exception()
        assert stopped is not None
        if _answer_raised(run, call, stopped) is stopped:
            raise
        return
    except BaseException as exc:
        if not in_step:  # a step of the lifecycle itself raised: the run stops
            propagated = _answer_raised(run, call, exc)
        elif isinstance(exc, Exception):  # the tool failed: its error is the answer
            if solo is not None:  # its place is given back before the post hooks run
                _leave(solo, alone)
            try:
                outcome = await _tool_failed(
                    call, exc, guard, raw_input, parsed, attachments, stop_reason, env, observers
                )
            except BaseException as late:  # stopped while its PostToolUseFailure hooks ran
                propagated = _answer_raised(run, call, late)
                if propagated is late:
                    raise
                if propagated is not None:
                    raise propagated from None
                return
            run.complete(call, outcome)
            return
        else:  # what stops the run, from the tool's body
            _end_call_step(solo, alone, observers, tool_id)
            cancelled, failures = split_cancelled(exc)
            if cancelled is not None and failures is not None:
                # The tool's own nursery failed while being cancelled: the
                # cancellation wins (its scope answers the call); failures are logged.
                logger.warning(
                    "tool call %s failed while being cancelled", tool_id, exc_info=failures
                )
                propagated = _answer_raised(run, call, cancelled)
                if propagated is not None:
                    raise propagated from None
                return
            propagated = _answer_raised(run, call, exc)
        if propagated is exc:
            raise
        if propagated is not None:
            raise propagated from None
        return
    run.complete(call, answer)


def _answer_raised(run: RunForCall, call: Call, exc: BaseException) -> BaseException | None:
    """Answer ``call``, stopped by ``exc``; return what propagates (None: nothing).

    A cancellation of the call's own scope (an interrupt) is answered here
    and propagates to that scope, which absorbs it; the rest is the run's
    :meth:`~RunForCall.call_raised`.
    """
    scope = call.scope
    if scope is not None and scope.cancel_called and is_cancellation(exc):
        run.finish_stopped(call)
        return exc
    return run.call_raised(call, exc)


async def _tool_failed(
    call: Call,
    exc: Exception,
    guard: GuardRails | None,
    raw_input: Mapping[str, Any],
    parsed: object,
    attachments: tuple[Attachment, ...],
    stop_reason: str | None,
    env: CallEnv,
    observers: ObserverSet | None,
) -> CallOutcome:
    """The answer of a call whose tool raised ``exc``, after its PostToolUseFailure hooks.

    The error is recorded as the call's real answer first: a cancellation
    while the hooks run keeps it.
    """
    tool_use = call.tool_use
    try:
        failure = format_tool_error(exc)
        outcome = CallOutcome(
            ToolResult(tool_use.id, failure, True), attachments, None, stop_reason
        )
        call.returned = outcome
        if guard is not None and guard.hooks.entries:
            assert call.compiled is not None
            after = await after_call(
                guard,
                call.compiled.tool,
                tool_use,
                raw_input,
                response=None,
                error=failure,
                cwd=env.cwd,
                parsed_input=parsed,
                background=env.background,
            )
            outcome = _with_post(outcome, after)
    finally:
        if observers is not None:
            observers.call_event(CallEvent(trio.current_time(), tool_use.id, "call_ended"))
    return outcome


async def _post_tool_use(
    guard: GuardRails,
    tool: Tool[Any],
    tool_use: ToolUse,
    raw_input: Mapping[str, Any],
    parsed: object,
    output: object,
    env: CallEnv,
    outcome: CallOutcome,
) -> CallOutcome:
    """Step 10: the PostToolUse hooks on a tool's real answer (what they add, or replace)."""
    result = outcome.result
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
    return _with_post(outcome, after)


async def _replaced_output(
    tool: Tool[Any], result: ToolResult, after: PostToolUseVerdict, session_dir: Path | None
) -> ToolResult:
    """An MCP tool's result made from a PostToolUse hook's ``updatedMCPToolOutput``."""
    try:
        replaced = ToolResult(result.tool_use_id, tool.map_result(after.updated_mcp_tool_output))
    except Exception as exc:
        return ToolResult(result.tool_use_id, format_tool_error(exc), is_error=True)
    return await _finalize(tool, replaced, session_dir)


def _answered(call: Call) -> bool:
    """Whether ``call`` has its answer (checked again after an await: it may have changed)."""
    return call.outcome is not None


def _end_call_step(
    solo: SoloLock | None, alone: bool, observers: ObserverSet | None, tool_id: str
) -> None:
    """The call step is over: give its place back and tell the observers (if any)."""
    if solo is not None:
        _leave(solo, alone)
    if observers is not None:
        observers.call_event(CallEvent(trio.current_time(), tool_id, "call_ended"))


def _leave(solo: SoloLock, alone: bool) -> None:
    if alone:
        solo.leave_solo()
    else:
        solo.leave_shared()


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
    result whose tool already returned must reach the solo in its final form.
    """
    if is_content_empty(result.content):
        return attrs.evolve(result, content=empty_placeholder(tool.name))
    if content_size(result.content) <= persistence_threshold(tool.max_result_size_chars):
        return result
    with trio.CancelScope(shield=True):
        result = await finalize_result(tool, result, session_dir=session_dir)
    return result


async def _tool_permission_only(
    tool: Tool[Any],
    parsed: object,
    ctx: CallContext,
) -> str | None:
    """A run without guard rails: the permission chain with no rules, no hook, nobody to ask.

    The same decision as ``GuardRails()`` (its empty rules, its mode), without
    its hooks and checkpoints: allow runs the call (None); deny, and an ask
    nobody can answer, refuse (the text).
    """
    result = await decide_permission(tool, parsed, ctx, _NO_RULES)
    if result.behavior == "allow":
        return None
    if result.behavior == "ask":
        return unanswered_ask(result, tool.name, _NO_RULES.mode)
    return result.message or permission_denied_message(tool.name)
