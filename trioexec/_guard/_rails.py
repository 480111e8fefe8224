"""Guard rails around one call: GuardRails, PreToolUse hooks and the permission decision before it.

:func:`authorize_call` is SPEC §4 steps 5-7: the tool's speculative permission
check (if it has one) starts concurrently with the matching PreToolUse hooks;
their answers combine (SPEC §5); then the permission chain decides (SPEC §6),
asking the application's ``can_use_tool`` callback when the answer is "ask".
:func:`~trioexec._guard._after.after_call` is step 10: PostToolUse (or
PostToolUseFailure) hooks.

Both return verdicts with the records (:class:`~trioexec.Attachment`) that go
with the call's result to the model: ``additional_context``,
``hook_blocking_error`` and ``hook_stopped_continuation``.
"""

from __future__ import annotations

import logging
import math
import uuid
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, TypeAlias

import attrs
import trio

from .._contract._permission_context import (
    PermissionContext,
    PermissionModeName,
)
from .._contract._tool import CallContext, PermissionResult
from .._contract._validation import CompiledTool
from .._groups import as_one_await
from .._hooks._background import DEFAULT_ASYNC_HOOK_GRACE, AsyncHookMailbox, BackgroundHooks
from .._hooks._config import (
    DEFAULT_HOOK_TIMEOUT,
    CommandHook,
    HookEntry,
    HookEvent,
    HookInput,
    HookSet,
    PythonHook,
    run_hooks,
)
from .._hooks._http import HttpHook
from .._hooks._output import HookOutcome, HookResult, aggregate
from .._misuse import check_callback
from .._models import Attachment, JSONValue
from .._texts import (
    REJECT_MESSAGE,
    STOPPED_BY_HOOK,
    permission_denied_message,
    stopped_by_pre_tool_use_hook,
)
from ._chain import decide_permission, unanswered_ask
from ._hook_input import (
    _NO_OUTCOME,
    _attachments,
    _hook_input,
    _if_matcher,
    _observable,
    _revalidate,
)
from ._sandbox import Sandbox
from ._settings import SettingsSource, load_settings

if TYPE_CHECKING:
    from .._contract._rules import PermissionRule
    from .._contract._tool import Tool
    from .._models import ToolUse

__all__ = [
    "CanUseTool",
    "GuardRails",
    "PreToolUseVerdict",
    "authorize_call",
    "background_hooks",
]

logger = logging.getLogger("trioexec.guard")

CanUseTool: TypeAlias = Callable[[str, Mapping[str, JSONValue], str], Awaitable[PermissionResult]]
"""``async (tool_name, input, tool_use_id) -> PermissionResult``: the application's
answer to an "ask" (allow, maybe with a replaced input, or deny with an optional message)."""


@attrs.frozen
class GuardRails:
    """Everything that may stop or change a call: rules, mode, hooks, the ask callback.

    The default instance has no rules and no hooks: the tool's own check
    decides, and an "ask" with no callback is a denial.

    Attributes:
        permissions: the ``allow`` / ``ask`` / ``deny`` rules and the mode.
        hooks: Python and command hooks by event.
        can_use_tool: the application's answer to an "ask"; None: ask means deny.
        session_id: passed to hooks as ``session_id``; by default a new UUID
            (``uuid4``) for each ``GuardRails``, so hooks that key logs or state
            on it never see an empty id.  Keep one value for a whole session.
        transcript_path: passed to hooks (``""``: none; ``Agent(transcript=...)``
            sets it to its transcript file).
        async_hook_grace: seconds a run waits at its end for ``async: true``
            hooks still running before it stops them (their process groups
            are killed): no hook outlives its run.
        async_hook_messages: what finished ``async: true`` hooks said
            (``systemMessage``, ``additionalContext``), kept until the next
            call these guard rails decide, which carries it to the model as
            ``additional_context`` records (Claude Code: "on the next
            conversation turn").

    Raises:
        TypeError: ``can_use_tool`` is not ``async def (tool_name, input,
            tool_use_id)``, or a Python hook is not ``async def (hook_input)``
            (checked here, when the guard rails are built, not at the first call).
        ValueError: ``async_hook_grace`` is negative, infinite or not a number.
    """

    permissions: PermissionContext = attrs.field(factory=PermissionContext)
    hooks: HookSet = attrs.field(factory=HookSet, validator=lambda _s, _a, v: _check_hooks(v))
    can_use_tool: CanUseTool | None = attrs.field(
        default=None, validator=lambda _s, _a, v: _check_can_use_tool(v)
    )
    session_id: str = attrs.field(factory=lambda: str(uuid.uuid4()))
    transcript_path: str = ""
    async_hook_grace: float = attrs.field(
        default=DEFAULT_ASYNC_HOOK_GRACE, validator=lambda _s, _a, v: _check_grace(v)
    )
    async_hook_messages: AsyncHookMailbox = attrs.field(
        factory=AsyncHookMailbox, eq=False, repr=False
    )

    @property
    def sandbox(self) -> Sandbox | None:
        """The OS sandbox in force for ``Bash`` (``permissions.sandbox``; None: none)."""
        sandbox = self.permissions.sandbox
        return sandbox if isinstance(sandbox, Sandbox) else None

    @classmethod
    def from_settings(
        cls,
        *sources: SettingsSource,
        can_use_tool: CanUseTool | None = None,
        mode: PermissionModeName | None = None,
        session_id: str | None = None,
        transcript_path: str = "",
        async_hook_grace: float = DEFAULT_ASYNC_HOOK_GRACE,
        sandbox: bool | None = None,
    ) -> GuardRails:
        """Load and merge settings files / dicts (lowest precedence first).

        ``mode`` overrides ``permissions.defaultMode`` of the files:
        ``"default"``, ``"acceptEdits"``, ``"plan"``, ``"dontAsk"``, ``"auto"``,
        or ``"bypass"`` / ``"bypassPermissions"`` (the same mode).

        ``sandbox``: True turns the OS sandbox on as if the settings said
        ``"sandbox": {"enabled": true}`` (``trioexec agent --sandbox``), False
        turns it off whatever they say; None: as the settings say.  When it is
        on, ``Bash`` commands run confined (docs/sandbox.md), and bubblewrap
        is tried here, once.

        Raises:
            ConfigurationError: a source is unreadable or malformed (the message
                names the source and the field), ``mode`` is unknown, or the
                sandbox is enabled with ``failIfUnavailable`` and bubblewrap
                cannot run here.
        """
        settings = load_settings(*sources)
        permissions = settings.permissions
        if mode is not None:
            permissions = permissions.with_mode(mode)
        wanted = settings.sandbox.is_enabled if sandbox is None else sandbox
        if wanted:
            confined = Sandbox.from_settings(settings.sandbox, enable=True)
            permissions = attrs.evolve(permissions, sandbox=confined)
        if session_id is None:
            session_id = str(uuid.uuid4())
        return cls(
            permissions, settings.hooks, can_use_tool, session_id, transcript_path, async_hook_grace
        )

    # Immutable additions: each returns a copy (same session id, transcript path and
    # async-hook mailbox), so guard rails loaded from settings take a hook or a rule
    # without attrs.evolve.

    def with_python_hook(
        self,
        event: HookEvent,
        matcher: str | None,
        hook: PythonHook,
        *,
        timeout: float = DEFAULT_HOOK_TIMEOUT,
    ) -> GuardRails:
        """A copy with the Python ``hook`` added after the hooks in force.

        Args:
            event: ``"PreToolUse"``, ``"PostToolUse"`` or ``"PostToolUseFailure"``.
            matcher: which tools it applies to (``"Bash"``, ``"Edit|Write"``,
                a regular expression; None or ``""``: every tool).
            hook: ``async def (hook_input) -> HookOutput | None``.
            timeout: seconds before the hook is stopped (a non-blocking error).

        Raises:
            TypeError: ``hook`` is not an ``async def`` taking the hook input.
            ValueError: an unknown event or an unusable timeout.
        """
        return attrs.evolve(
            self, hooks=self.hooks.with_python_hook(event, matcher, hook, timeout=timeout)
        )

    def with_command_hook(
        self,
        event: HookEvent,
        matcher: str | None,
        command: str,
        *,
        timeout: float = DEFAULT_HOOK_TIMEOUT,
    ) -> GuardRails:
        """A copy with the shell ``command`` hook added after the hooks in force.

        Raises:
            ValueError: an unknown event or an unusable timeout.
        """
        return attrs.evolve(
            self, hooks=self.hooks.with_command_hook(event, matcher, command, timeout=timeout)
        )

    def with_rules(
        self,
        *,
        allow: Iterable[str | PermissionRule] = (),
        ask: Iterable[str | PermissionRule] = (),
        deny: Iterable[str | PermissionRule] = (),
    ) -> GuardRails:
        """A copy with rules added to those in force (``deny=["deploy(prod)"]``).

        Raises:
            ValueError: a rule string does not parse.
        """
        current = self.permissions
        permissions = attrs.evolve(
            current,
            allow=(*current.allow, *allow),
            ask=(*current.ask, *ask),
            deny=(*current.deny, *deny),
        )
        return attrs.evolve(self, permissions=permissions)

    def with_mode(self, mode: PermissionModeName) -> GuardRails:
        """A copy under another permission mode (``"plan"``, ``"acceptEdits"``, ...).

        Raises:
            ConfigurationError: an unknown mode.
        """
        return attrs.evolve(self, permissions=self.permissions.with_mode(mode))

    def with_can_use_tool(self, can_use_tool: CanUseTool | None) -> GuardRails:
        """A copy whose "ask" answers come from ``can_use_tool`` (None: ask means deny).

        Raises:
            TypeError: ``can_use_tool`` is not ``async def (tool_name, input, tool_use_id)``.
        """
        return attrs.evolve(self, can_use_tool=can_use_tool)


@attrs.frozen
class PreToolUseVerdict:
    """What the guard rails decided before a call.

    Attributes:
        allowed: whether the call may run.
        input: the raw input to call the tool with: the model's, or one a hook,
            the tool's check or ``can_use_tool`` replaced (already validated).
        message: when not allowed, the exact is_error tool_result text.
        attachments: records for the model, in hook order: ``additional_context``,
            then ``hook_stopped_continuation``.
        stop_reason: set when a hook asked to stop continuation; the agent loop
            ends the turn after this batch (the call itself may still run).
        system_messages: hook ``systemMessage`` texts, for the user only.
        hook_errors: non-blocking hook failures (timeouts, crashes, bad output).
        parsed_input: when allowed, ``input`` after validation: call the tool with it.
    """

    allowed: bool
    input: Mapping[str, JSONValue]
    message: str | None
    attachments: tuple[Attachment, ...] = ()
    stop_reason: str | None = None
    system_messages: tuple[str, ...] = ()
    hook_errors: tuple[str, ...] = ()
    parsed_input: object = attrs.field(default=None, eq=False)  # derived from ``input``


SpeculativeCheck: TypeAlias = Callable[[Any, "CallContext"], Awaitable[PermissionResult | None]]


async def authorize_call(
    guard: GuardRails,
    tool: CompiledTool | Tool[Any],
    tool_use: ToolUse,
    parsed_input: object,
    ctx: CallContext,
    *,
    background: BackgroundHooks | None = None,
    hooks_fail_closed: bool = True,
) -> PreToolUseVerdict:
    """Run PreToolUse hooks and the permission chain for one validated call.

    Args:
        guard: the rules, hooks and callback in force.
        tool: the tool called, as the registry compiled it (a plain
            :class:`Tool` is compiled here if a replaced input needs checking).
        tool_use: the call as the model sent it (``input`` is the raw input).
        parsed_input: the input after validation (an ``input_type`` instance or a dict).
        ctx: the call's context; the chain gives tools a copy whose
            ``permissions`` is ``guard.permissions``.
        background: where the run starts ``async: true`` hooks (None: they
            run in line, their answers ignored).
        hooks_fail_closed: a PreToolUse command hook whose process could not
            be started (EAGAIN, ENOMEM, a missing interpreter) denies the call
            (trioexec's rule, :attr:`Policy.hooks_fail_closed`); False gives
            it no decision, as Claude Code does.

    Returns:
        The verdict.  An input a hook, the tool's check or ``can_use_tool``
        replaced is validated (schema and ``input_type``) once, here: the
        verdict carries its parsed form, and if it does not validate the
        verdict is a denial with the usual InputValidationError text.  The
        verdict's records start with what finished async hooks said since
        the last call (``guard.async_hook_messages``).

    Raises:
        Whatever the tool's ``check_permissions`` or ``can_use_tool`` raise.

    On cancellation (the turn aborted) the hooks and the speculative check are
    cancelled, every hook process group is killed, and Cancelled propagates.
    """
    await trio.lowlevel.checkpoint()
    compiled = tool if isinstance(tool, CompiledTool) else None
    tool = tool.tool if isinstance(tool, CompiledTool) else tool
    permissions = guard.permissions
    if ctx.permissions is not permissions:
        ctx = attrs.evolve(ctx, permissions=permissions)
    raw: Mapping[str, JSONValue] = tool_use.input
    speculative: SpeculativeCheck | None = getattr(tool, "speculative_permission_check", None)
    entries = (
        guard.hooks.matching(
            "PreToolUse", tool.name, condition=_if_matcher(tool, parsed_input, ctx)
        )
        if guard.hooks.entries
        else ()
    )
    tool_check: PermissionResult | None = None
    if entries:
        # Hooks see the observable input (declared paths made absolute); the tool
        # (and can_use_tool) get the model's input unless a hook replaces it.
        observed = _observable(tool, raw, ctx.cwd)
        hook_input = _hook_input(guard, "PreToolUse", tool, tool_use, observed, str(ctx.cwd))
        outcome, tool_check = await _pre_hooks(
            entries, hook_input, speculative, parsed_input, ctx, background, hooks_fail_closed
        )
    else:
        outcome = _NO_OUTCOME
        if speculative is not None:
            tool_check = await _speculate(speculative, tool.name, parsed_input, ctx)

    if outcome is _NO_OUTCOME:  # no hook ran: nothing to attach, nothing stops
        attachments: tuple[Attachment, ...] = ()
        stop_reason = None
    else:
        attachments = _attachments(tool_use.id, outcome, f"PreToolUse:{tool.name}", STOPPED_BY_HOOK)
        stop_reason = (
            (outcome.stop_reason or STOPPED_BY_HOOK) if outcome.prevent_continuation else None
        )

    def verdict(
        allowed: bool, final: Mapping[str, JSONValue], message: str | None
    ) -> PreToolUseVerdict:
        delivered = guard.async_hook_messages.take(tool_use.id)
        return PreToolUseVerdict(
            allowed,
            final,
            message,
            delivered + attachments if delivered else attachments,
            stop_reason,
            outcome.system_messages,
            outcome.errors,
            parsed_input if allowed else None,
        )

    decision = outcome.decision
    if decision == "deny":
        return verdict(False, raw, outcome.deny_message)
    if outcome.updated_input is not None:
        raw = dict(outcome.updated_input)
        parsed_input, error = _revalidate(compiled or tool, raw)
        if error is not None:
            return verdict(False, raw, error)
        tool_check = None  # the speculative answer was about the old input
    result = await decide_permission(
        tool, parsed_input, ctx, permissions, hook_decision=decision, tool_check=tool_check
    )
    if result.behavior == "ask":
        if permissions.mode == "dontAsk" or guard.can_use_tool is None:  # nobody to ask
            if permissions.mode != "dontAsk" and decision == "ask" and outcome.ask_message:
                # The asking hook's own reason, as in Claude Code.
                return verdict(False, raw, outcome.ask_message)
            return verdict(False, raw, unanswered_ask(result, tool.name, permissions.mode))
        result = await _ask_application(guard.can_use_tool, tool.name, raw, tool_use.id)
        if result.behavior != "allow":
            return verdict(False, raw, result.message or _stopped(outcome) or REJECT_MESSAGE)
    if result.behavior == "allow":
        if result.updated_input is not None and result.updated_input != raw:
            raw = result.updated_input  # the tool's check or the application replaced it
            parsed_input, error = _revalidate(compiled or tool, raw)
            if error is not None:
                return verdict(False, raw, error)
        return verdict(True, raw, None)
    return verdict(False, raw, result.message or permission_denied_message(tool.name))


def background_hooks(guard: GuardRails | None) -> BackgroundHooks | None:
    """A run's :class:`BackgroundHooks` for ``guard``; None when it has no async hook."""
    if guard is None or not any(entry.run_async for entry in guard.hooks.entries):
        return None
    return BackgroundHooks(guard.async_hook_messages, guard.async_hook_grace)


def _check_grace(value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < math.inf:
        raise ValueError(f"async_hook_grace must be a finite number of seconds >= 0, not {value!r}")


def _check_can_use_tool(callback: object) -> None:
    if callback is not None:
        check_callback(
            callback, what="GuardRails: can_use_tool", params=("tool_name", "input", "tool_use_id")
        )


def _check_hooks(hooks: HookSet) -> None:
    for index, entry in enumerate(hooks.entries):
        if not isinstance(entry.hook, (CommandHook, HttpHook)):
            check_callback(
                entry.hook,
                what=f"GuardRails: hooks.entries[{index}] ({entry.event}) hook",
                params=("hook_input",),
            )


async def _ask_application(
    callback: CanUseTool, tool_name: str, raw: Mapping[str, JSONValue], tool_use_id: str
) -> PermissionResult:
    """The application's answer; a failure (or a wrong type) is logged with its traceback.

    Raises:
        Exception: what the callback raised, or TypeError for an answer that is
            not a PermissionResult; the lifecycle answers the call with it.
    """
    try:
        result: object = await callback(tool_name, raw, tool_use_id)
        if not isinstance(result, PermissionResult):
            raise TypeError(
                f"can_use_tool returned {type(result).__name__} ({result!r:.60}), not a "
                "PermissionResult (PermissionResult.allow() or .deny(message))"
            )
    except Exception:
        logger.warning(
            "the application's can_use_tool callback failed for %s (%s)",
            tool_name,
            tool_use_id,
            exc_info=True,
        )
        raise
    return result


def _stopped(outcome: HookOutcome) -> str | None:
    """The denial text when a hook stopped continuation and nobody gave a message."""
    if not outcome.prevent_continuation:
        return None
    return stopped_by_pre_tool_use_hook(outcome.stop_reason)


async def _pre_hooks(
    entries: tuple[HookEntry, ...],
    hook_input: HookInput,
    speculative: SpeculativeCheck | None,
    parsed_input: object,
    ctx: CallContext,
    background: BackgroundHooks | None,
    fail_closed: bool,
) -> tuple[HookOutcome, PermissionResult | None]:
    tool_name = hook_input.tool_name
    if speculative is None:
        results = await run_hooks(entries, hook_input, cwd=ctx.cwd, background=background)
        if fail_closed:
            results = _not_started_block(results)
        return aggregate(results, "PreToolUse", tool_name), None
    answer: list[PermissionResult | None] = [None]

    async def speculate() -> None:
        answer[0] = await _speculate(speculative, tool_name, parsed_input, ctx)

    with as_one_await():
        async with trio.open_nursery() as nursery:
            nursery.start_soon(speculate)
            results = await run_hooks(entries, hook_input, cwd=ctx.cwd, background=background)
            if fail_closed:
                results = _not_started_block(results)
            outcome = aggregate(results, "PreToolUse", tool_name)
            if outcome.decision == "deny" or outcome.updated_input is not None:
                nursery.cancel_scope.cancel(reason="speculative permission answer not needed")
    return outcome, answer[0]


def _not_started_block(results: tuple[HookResult, ...]) -> tuple[HookResult, ...]:
    """Fail closed: a hook whose process could not start blocks its call.

    Under process or memory exhaustion every policy hook would otherwise be
    bypassed (a hook that never ran gives no decision).
    """
    if not any(result.start_failed for result in results):
        return results
    return tuple(
        attrs.evolve(
            result,
            blocking_error=(
                f"the hook [{result.label}] {result.error}; "
                "the call is denied because the hook could not check it"
            ),
        )
        if result.start_failed
        else result
        for result in results
    )


async def _speculate(
    check: SpeculativeCheck, tool_name: str, parsed_input: object, ctx: CallContext
) -> PermissionResult | None:
    """The speculative answer, or None (then ``check_permissions`` decides) if it failed."""
    try:
        result = await check(parsed_input, ctx)
    except Exception:
        logger.warning("speculative permission check of %s failed", tool_name, exc_info=True)
        return None
    return result if isinstance(result, PermissionResult) else None
