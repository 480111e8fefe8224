"""One tool call end to end on asyncio (trioexec's ``_lifecycle`` and ``_guard``, SPEC §4-6).

The steps and every decision are trioexec's: validation (``validate``,
``input_error_text``), the file-access denial, the permission chain
(``decide_permission``), the hooks' aggregation (``aggregate``,
``result_from_output``) and records (``_guard``'s helpers), result mapping and
the size rules (``_results``).  Rewritten: the awaiting.  Hooks run in an
``asyncio.TaskGroup``, each under ``asyncio.timeout``; a call step with a time
limit runs inside ``asyncio.timeout`` driven by the twin's
:class:`~benchmarks.asyncio_twin._core.TimeoutWatch`; a persisted result is
written with blocking calls (no shield is needed: nothing awaits).

:func:`run_call` is the twin's ``TwinRunCore.run_call``, in trioexec's shape:
the whole lifecycle in the call task's one coroutine.

Only Python hooks run here: command and HTTP hooks are answered with a
non-blocking error (the twin has no subprocess layer).
"""

from __future__ import annotations

import asyncio
import logging
import sys
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from trioexec._contract._format_error import exception_text, format_tool_error
from trioexec._contract._tool import CallContext, ContextModifier, ToolOutput
from trioexec._contract._validation import CompiledTool, input_error_text, validate
from trioexec._core._call import (
    NOT_ADMITTED,
    Answer,
    CallOutcome,
    denied_outcome,
    error_outcome,
    unknown_tool_outcome,
)
from trioexec._core._events import CallEvent
from trioexec._core._lifecycle import _answered, _still_safe, _tool_permission_only, _with_post
from trioexec._core._solo import SoloLock
from trioexec._core._timeouts import resolve_limits
from trioexec._guard._after import _NOTHING_AFTER, PostToolUseVerdict
from trioexec._guard._chain import decide_permission, unanswered_ask
from trioexec._guard._file_access import denial_before_validation
from trioexec._guard._hook_input import (
    _NO_OUTCOME,
    _attachments,
    _hook_input,
    _if_matcher,
    _observable,
    _revalidate,
)
from trioexec._guard._rails import PreToolUseVerdict, _ask_application, _stopped
from trioexec._hooks._config import CommandHook, HookEntry, HookEvent, HookInput
from trioexec._hooks._output import HookBlockingError, HookOutput, HookResult, aggregate
from trioexec._hooks._output import result_from_output as _result_from_output
from trioexec._models import Attachment, ResultUpdate, ToolResult, ToolUse, content_to_api
from trioexec._results._persist import (
    _write_new_file_sync,
    content_size,
    empty_placeholder,
    has_image,
    is_content_empty,
    is_persisted,
    persistence_threshold,
    plan_persistence,
)
from trioexec._texts import (
    REJECT_MESSAGE,
    STOPPED_BY_HOOK,
    STOPPED_BY_POST_TOOL_USE_HOOK,
    permission_denied_message,
    tool_use_error,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from trioexec._contract._tool import Tool
    from trioexec._core._call import Call, Expiry
    from trioexec._core._events import ObserverSet
    from trioexec._core._lifecycle import CallEnv, RunForCall
    from trioexec._guard._rails import GuardRails

__all__ = [
    "AsyncioSoloLock",
    "after_call",
    "authorize_call",
    "run_call",
    "run_hooks",
    "write_exclusive_sync",
]

logger = logging.getLogger("trioexec")


def _raise_if_cancel_requested() -> None:
    """trio's ``checkpoint_if_cancelled`` for one case: a cancel the code swallowed."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError


async def run_call(run: RunForCall, call: Call, _in_own_scope: bool = False) -> None:
    """trioexec's ``run_call`` on asyncio: a call's task body, its whole lifecycle.

    Same steps, same answers, same shape: one coroutine between the task and
    the tool, early exits answered through ``run.complete``, a call step
    without a ``try`` of its own (``in_step`` tells the handlers whether the
    tool's body was running).  An interruptible call runs in its own scope
    (``call.scope``).  What asyncio needs otherwise: the last gate before the
    tool checks ``Task.cancelling()`` (a cancel the code swallowed), a limited
    call step runs in ``asyncio.timeout``, and whether a ``CancelledError``
    came from one of the run's scopes is the run's to say
    (:meth:`TwinRunCore.call_raised <benchmarks.asyncio_twin._core.TwinRunCore.call_raised>`):
    such a cancellation answers the call and propagates to that scope;
    anything else stops the run.

    The traceback of a cancellation a scope delivered is dropped first, as
    trioexec drops it.  asyncio's task group keeps no cancelled child's
    exception, but the handler holds the exception in this frame, and the
    traceback holds the frame: a cycle that would keep every frame of the
    call (and what its tool holds) alive until the garbage collector runs,
    not until its task ends.  Nothing reads that traceback: a scope and the
    task group look at the exception's type only.
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
        ctx = CallContext(
            tool_use=tool_use,
            state={} if state is None else state,
            cwd=env.cwd,
            session_dir=env.session_dir,
            permissions=guard.permissions if guard is not None else None,
        )
        denial = denial_before_validation(tool, parsed, ctx)
        if denial is not None:
            run.complete(call, denied_outcome(tool_id, denial))
            return
        try:
            semantic_error = await tool.validate_input(parsed, ctx)
        except Exception as exc:
            semantic_error = format_tool_error(exc)
        if semantic_error is not None:
            run.complete(call, error_outcome(tool_id, tool_use_error(semantic_error)))
            return

        raw_input = tool_use.input
        attachments: tuple[Attachment, ...] = ()
        stop_reason: str | None = None
        alone = False
        if guard is None:
            try:
                denial = await _tool_permission_only(tool, parsed, ctx)
            except Exception as exc:
                denial = format_tool_error(exc)
            if denial is not None:
                run.complete(call, denied_outcome(tool_id, denial))
                return
        else:
            try:
                verdict = await authorize_call(guard, compiled, tool_use, parsed, ctx)
            except Exception as exc:
                run.complete(call, error_outcome(tool_id, format_tool_error(exc)))
                return
            attachments, stop_reason = verdict.attachments, verdict.stop_reason
            if not verdict.allowed:
                text = verdict.message or permission_denied_message(tool.name)
                run.complete(call, denied_outcome(tool_id, text, attachments, stop_reason))
                return
            if verdict.input != raw_input:
                raw_input = verdict.input
                parsed = verdict.parsed_input
                # Started beside other calls, now not concurrency-safe: it runs alone.
                alone = admission.safe and not _still_safe(tool, parsed)

        _raise_if_cancel_requested()  # the last gate before the tool does anything
        if call.outcome is not None:  # answered on its behalf (it ignored its cancellation)
            run.finish_stopped(call)
            return
        gate = env.solo if admission.safe else None
        if gate is not None:
            if alone:
                await gate.enter_solo()
            elif not gate.try_enter_shared():
                await gate.enter_shared()
            if _answered(call):  # answered on its behalf while it waited its turn
                _leave(gate, alone)
                run.finish_stopped(call)
                return
        observers = env.observers if env.observed else None
        if observers is not None:
            observers.call_event(CallEvent(_now(), tool_id, "call_began"))
        limits = resolve_limits(tool.name, tool.timeout, tool.idle_timeout, env.tool_timeouts)
        watch: Any = env.timeout_watch
        expiry: Expiry | None = None
        timed_out = False
        progress = partial(run.progress, call)
        # The call step has no ``try`` of its own (as in trioexec): the
        # handlers below know the step by ``in_step``.
        in_step = True
        if limits is None or watch is None:
            output = await tool.call(parsed, ctx, progress)
        else:
            try:
                async with asyncio.timeout(None) as timer:
                    watch.arm(tool_id, timer, limits)
                    try:
                        output = await tool.call(parsed, ctx, progress)
                    finally:
                        expiry = watch.disarm(tool_id)
            except TimeoutError:
                if expiry is None:  # the tool's own TimeoutError: a failure like any other
                    raise
                timed_out = True  # the limit ran out before it returned
        in_step = False
        if gate is not None or observers is not None:
            _end_call_step(gate, alone, observers, tool_id)
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
            result = ToolResult(tool_id, format_tool_error(exc), is_error=True)
        else:
            result = finalize_sync(tool, result, env.session_dir)
        answer: Answer
        if guard is not None and guard.hooks.entries:
            outcome = CallOutcome(result, attachments, modifier, stop_reason)
            call.returned = outcome
            answer = await _post_tool_use(
                guard, tool, tool_use, raw_input, parsed, output, env, outcome
            )
        elif modifier is None and stop_reason is None:
            answer = call.returned = ResultUpdate(result, attachments)  # a plain answer
        else:
            answer = call.returned = CallOutcome(result, attachments, modifier, stop_reason)
    except asyncio.CancelledError:
        if in_step and (gate is not None or observers is not None):
            _end_call_step(gate, alone, observers, tool_id)
        stopped = sys.exception()
        assert stopped is not None
        if run.call_raised(call, stopped) is stopped:  # a scope delivered it
            stopped.__traceback__ = None  # (see the docstring)
            raise
        return
    except BaseException as exc:
        if in_step and isinstance(exc, Exception):  # the tool failed: its error is the answer
            if gate is not None:  # its place is given back before the post hooks run
                _leave(gate, alone)
            try:
                outcome = await _tool_failed(
                    call, exc, guard, raw_input, parsed, attachments, stop_reason, env, observers
                )
            except BaseException as late:  # stopped while its PostToolUseFailure hooks ran
                if run.call_raised(call, late) is late:
                    raise
                return
            run.complete(call, outcome)
            return
        if in_step:  # what stops the run, from the tool's body
            _end_call_step(gate, alone, observers, tool_id)
        # (else a step of the lifecycle itself raised: the run stops)
        if run.call_raised(call, exc) is exc:
            raise
        return
    run.complete(call, answer)


def _now() -> float:
    return asyncio.get_running_loop().time()


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
            ToolResult(tool_use.id, failure, is_error=True), attachments, stop_reason=stop_reason
        )
        call.returned = outcome
        if guard is not None and guard.hooks.entries:
            assert call.compiled is not None
            after = await after_call(
                guard, call.compiled.tool, tool_use, raw_input, response=None, error=failure,
                cwd=env.cwd, parsed_input=parsed,
            )  # fmt: skip
            outcome = _with_post(outcome, after)
    finally:
        if observers is not None:
            observers.call_event(CallEvent(_now(), tool_use.id, "call_ended"))
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
    tool_id = result.tool_use_id
    try:
        response = tool.tool_response(parsed, output)
    except Exception:
        logger.warning("tool_response of %s failed", tool.name, exc_info=True)
        response = None
    after = await after_call(
        guard, tool, tool_use, raw_input, response=result, cwd=env.cwd,
        tool_response=response, parsed_input=parsed,
    )  # fmt: skip
    if after.updated_mcp_tool_output is not None:
        try:
            replaced = ToolResult(tool_id, tool.map_result(after.updated_mcp_tool_output))
        except Exception as exc:
            replaced = ToolResult(tool_id, format_tool_error(exc), is_error=True)
        else:
            replaced = finalize_sync(tool, replaced, env.session_dir)
        outcome = attrs.evolve(outcome, result=replaced)
    return _with_post(outcome, after)


def _end_call_step(
    gate: SoloLock | None, alone: bool, observers: ObserverSet | None, tool_id: str
) -> None:
    """The call step is over: give its place back and tell the observers (if any)."""
    if gate is not None:
        _leave(gate, alone)
    if observers is not None:
        observers.call_event(CallEvent(_now(), tool_id, "call_ended"))


def _leave(gate: SoloLock, alone: bool) -> None:
    if alone:
        gate.leave_solo()
    else:
        gate.leave_shared()


class _ParkingLot:
    """The part of ``trio.lowlevel.ParkingLot`` trioexec's ``SoloLock`` uses, on asyncio."""

    def __init__(self) -> None:
        self._parked: list[asyncio.Future[None]] = []

    async def park(self) -> None:
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._parked.append(future)
        try:
            await future
        finally:
            if future in self._parked:
                self._parked.remove(future)

    def unpark_all(self) -> None:
        parked, self._parked = self._parked, []
        for future in parked:
            if not future.done():
                future.set_result(None)


class AsyncioSoloLock(SoloLock):
    """trioexec's ``SoloLock`` (a re-partitioned call runs alone), parking on asyncio."""

    def __init__(self) -> None:
        super().__init__()
        self._lot = _ParkingLot()  # type: ignore[assignment]


def write_exclusive_sync(path: Path, data: str) -> bool:
    """trioexec's ``write_exclusive`` with blocking calls (as trioexec does under a MockClock)."""
    return _write_new_file_sync(path, data, data.encode("utf-8", "backslashreplace"))


def finalize_sync(tool: Tool[Any], result: ToolResult, session_dir: Path | None) -> ToolResult:
    """Step 9 (SPEC §7): the empty placeholder and per-call persistence, without awaiting."""
    content = result.content
    if is_content_empty(content):
        return attrs.evolve(result, content=empty_placeholder(tool.name))
    if (
        result.is_error
        or session_dir is None
        or has_image(content)
        or is_persisted(content)
        or content_size(content) <= persistence_threshold(tool.max_result_size_chars)
    ):
        return result
    plan = plan_persistence(content, result.tool_use_id, session_dir)
    try:
        write_exclusive_sync(plan.path, plan.data)
    except FileExistsError:
        logger.warning(
            "kept the result of %r inline: %s already holds other contents",
            result.tool_use_id,
            plan.path,
        )
        return result
    except OSError:
        logger.warning("could not persist the result of %r to %s", result.tool_use_id, plan.path)
        return result
    return attrs.evolve(result, content=plan.replacement)


# ---------------------------------------------------------------- guard rails


async def authorize_call(
    guard: GuardRails,
    compiled: CompiledTool,
    tool_use: ToolUse,
    parsed_input: object,
    ctx: CallContext,
) -> PreToolUseVerdict:
    """trioexec's ``authorize_call``: PreToolUse hooks, then the permission chain."""
    await asyncio.sleep(0)
    tool = compiled.tool
    permissions = guard.permissions
    if ctx.permissions is not permissions:
        ctx = attrs.evolve(ctx, permissions=permissions)
    raw: Mapping[str, Any] = tool_use.input
    observed = _observable(tool, raw, ctx.cwd)
    speculative = getattr(tool, "speculative_permission_check", None)
    entries = (
        guard.hooks.matching(
            "PreToolUse", tool.name, condition=_if_matcher(tool, parsed_input, ctx)
        )
        if guard.hooks.entries
        else ()
    )
    tool_check = None
    if entries:
        hook_input = _hook_input(guard, "PreToolUse", tool, tool_use, observed, str(ctx.cwd))
        if speculative is None:
            outcome = aggregate(await run_hooks(entries, hook_input), "PreToolUse", tool.name)
        else:
            async with asyncio.TaskGroup() as group:
                check = group.create_task(_speculate(speculative, tool.name, parsed_input, ctx))
                outcome = aggregate(await run_hooks(entries, hook_input), "PreToolUse", tool.name)
                if outcome.decision == "deny" or outcome.updated_input is not None:
                    check.cancel()
            tool_check = None if check.cancelled() else check.result()
    else:
        outcome = _NO_OUTCOME
        if speculative is not None:
            tool_check = await _speculate(speculative, tool.name, parsed_input, ctx)

    attachments = _attachments(tool_use.id, outcome, f"PreToolUse:{tool.name}", STOPPED_BY_HOOK)
    stop_reason = (outcome.stop_reason or STOPPED_BY_HOOK) if outcome.prevent_continuation else None

    def verdict(allowed: bool, final: Mapping[str, Any], message: str | None) -> PreToolUseVerdict:
        delivered = guard.async_hook_messages.take(tool_use.id)
        return PreToolUseVerdict(
            allowed, final, message, delivered + attachments if delivered else attachments,
            stop_reason, outcome.system_messages, outcome.errors,
            parsed_input if allowed else None,
        )  # fmt: skip

    decision = outcome.decision
    if decision == "deny":
        return verdict(False, raw, outcome.deny_message)
    if outcome.updated_input is not None:
        raw = dict(outcome.updated_input)
        parsed_input, error = _revalidate(compiled, raw)
        if error is not None:
            return verdict(False, raw, error)
        tool_check = None
    result = await decide_permission(
        tool, parsed_input, ctx, permissions, hook_decision=decision, tool_check=tool_check
    )
    if result.behavior == "ask":
        if permissions.mode == "dontAsk" or guard.can_use_tool is None:  # nobody to ask
            return verdict(False, raw, unanswered_ask(result, tool.name, permissions.mode))
        result = await _ask_application(guard.can_use_tool, tool.name, raw, tool_use.id)
        if result.behavior != "allow":
            return verdict(False, raw, result.message or _stopped(outcome) or REJECT_MESSAGE)
    if result.behavior == "allow":
        if result.updated_input is not None and result.updated_input != raw:
            raw = result.updated_input
            parsed_input, error = _revalidate(compiled, raw)
            if error is not None:
                return verdict(False, raw, error)
        return verdict(True, raw, None)
    return verdict(False, raw, result.message or permission_denied_message(tool.name))


async def _speculate(
    check: Callable[..., Any], tool_name: str, parsed_input: object, ctx: CallContext
) -> Any:  # noqa: ANN401 - a PermissionResult or None
    try:
        return await check(parsed_input, ctx)
    except Exception:
        logger.warning("speculative permission check of %s failed", tool_name, exc_info=True)
        return None


async def after_call(
    guard: GuardRails,
    tool: Tool[Any],
    tool_use: ToolUse,
    tool_input: Mapping[str, Any],
    *,
    response: ToolResult | None,
    error: str | None = None,
    cwd: Path | None = None,
    tool_response: object = None,
    parsed_input: object = None,
) -> PostToolUseVerdict:
    """trioexec's ``after_call``: PostToolUse (or PostToolUseFailure) hooks."""
    await asyncio.sleep(0)
    event: HookEvent = "PostToolUseFailure" if error is not None else "PostToolUse"
    where = cwd if cwd is not None else Path.cwd()
    ctx = CallContext(tool_use, cwd=where, permissions=guard.permissions)

    def condition(text: str) -> bool:
        return _if_matcher(tool, parsed_input, ctx)(text)

    entries = guard.hooks.matching(event, tool.name, condition=condition)
    if not entries:
        return _NOTHING_AFTER
    observed = _observable(tool, tool_input, where)
    hook_input = _hook_input(guard, event, tool, tool_use, observed, str(where))
    if error is not None:
        hook_input = attrs.evolve(hook_input, error=error)
    elif response is not None:
        sent = tool_response if tool_response is not None else content_to_api(response.content)
        hook_input = attrs.evolve(hook_input, tool_response=sent)
    outcome = aggregate(await run_hooks(entries, hook_input), event, tool.name)
    stop_default = STOPPED_BY_POST_TOOL_USE_HOOK if event == "PostToolUse" else STOPPED_BY_HOOK
    return PostToolUseVerdict(
        guard.async_hook_messages.take(tool_use.id)
        + _attachments(tool_use.id, outcome, f"{event}:{tool.name}", stop_default),
        (outcome.stop_reason or stop_default) if outcome.prevent_continuation else None,
        outcome.system_messages,
        outcome.errors,
        None,
    )


async def run_hooks(entries: Sequence[HookEntry], hook_input: HookInput) -> tuple[HookResult, ...]:
    """Run Python hooks concurrently in a TaskGroup; their results in entry order."""
    if len(entries) == 1:
        results = [await _run_entry(entries[0], hook_input)]
    else:
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(_run_entry(entry, hook_input)) for entry in entries]
        results = [task.result() for task in tasks]
    done = tuple(
        HookResult(label=r.label, error=r.error) if entry.run_async else r
        for entry, r in zip(entries, results, strict=True)
    )
    for result in done:
        if result.error is not None:
            logger.warning(
                "%s hook %r for %s failed: %s",
                hook_input.hook_event_name,
                result.label,
                hook_input.tool_name,
                result.error,
                exc_info=result.exception,
            )
    return done


async def _run_entry(entry: HookEntry, hook_input: HookInput) -> HookResult:
    label = entry.label
    hook = entry.hook
    if isinstance(hook, CommandHook) or not callable(hook):
        return HookResult(label=label, error="command and HTTP hooks do not run in the twin")
    try:
        async with asyncio.timeout(entry.timeout):
            try:
                output: object = await hook(hook_input)
            except HookBlockingError as exc:
                return HookResult(label=label, blocking_error=exc.message)
            except Exception as exc:
                return HookResult(
                    label=label,
                    error=f"raised {type(exc).__name__}: {exception_text(exc)}",
                    exception=exc,
                )
    except TimeoutError:
        return HookResult(label=label, error=f"timed out after {entry.timeout:g} s")
    if output is None:
        return HookResult(label=label)
    if not isinstance(output, HookOutput):
        return HookResult(label=label, error=f"returned {type(output).__name__}, not HookOutput")
    return _result_from_output(output, hook_input.hook_event_name, label)
