"""The permission chain (SPEC §6): one call's rules, mode, hook and own check, in order.

:func:`check_permission_chain` walks the decision order over a
:class:`~trioexec.permissions.PermissionContext`:

1. a whole-tool deny rule -> deny; in ``plan`` mode, a call that is not
   read-only (``Tool.is_read_only``) -> deny
2. a whole-tool ask rule -> ask
3. a content deny rule, then the tool's own check (its deny -> deny; its
   safety-check ask, or a write to a protected path -> ask, which nothing
   below can skip)
4. a content ask rule -> ask
5. a PreToolUse hook's ``allow`` -> allow, its ``ask`` -> ask (only here,
   after every deny and ask rule: a hook never overrides them)
6. ``bypass`` mode -> allow
7. a whole-tool allow rule -> allow
8. a content allow rule, or the tool's own allow -> allow (in
   ``acceptEdits`` mode the file tools allow their own edits inside the
   working directory here)
9. otherwise (passthrough, the tool's ask) -> ask

Content rules are matched by the tool itself
(``Tool.match_rule_contents(contents, input, ctx, behavior=...)``, by default
``Tool.match_rule_content`` rule by rule), since only
the tool knows whether ``Bash(npm test:*)`` or ``Read(./src/**)`` applies to
its input; it is told the rule's behavior, so a shell command is caught by a
deny or ask rule when any part of it matches, while an allow rule must cover
every part.  Rules name a tool by its name or a deprecated alias.

A tool declaring :class:`~trioexec.PathAccess` is also governed by the rules
of its families (``Read`` for a reader, ``Edit`` for a writer: ``Edit(...)``
rules govern ``Write``), and its rule content is a path pattern matched
against the declared field (:mod:`trioexec._guard._file_access`).

A tool whose ``match_rule_content`` answers None (the base class; a function
tool without a ``rule_matcher``) cannot say whether ``Tool(content)``
applies, so such rules fail closed: a deny or ask rule with content applies to
every call of the tool, an allow rule with content never matches, and a
warning is logged (``trioexec.permissions``) once per tool and rule.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

import trio

from .._contract._rules import PermissionRule, RuleBehavior
from .._contract._tool import PermissionResult
from .._texts import (
    dont_ask_denied_message,
    permission_denied_message,
    permission_not_granted_message,
    plan_mode_denied_message,
)
from ._file_access import (
    Resolver,
    path_access_of,
    path_denial_message,
    paths_match,
    protected_write,
    rule_names,
)

if TYPE_CHECKING:
    from .._contract._path_access import PathAccess
    from .._contract._permission_context import PermissionContext, PermissionMode
    from .._contract._tool import CallContext, Tool

__all__ = ["check_permission_chain", "decide_permission", "unanswered_ask"]

HookDecision: TypeAlias = Literal["allow", "ask"]

logger = logging.getLogger("trioexec.permissions")


async def check_permission_chain(
    tool: Tool[Any],
    parsed_input: object,
    ctx: CallContext,
    permissions: PermissionContext,
    *,
    hook_decision: HookDecision | None = None,
    tool_check: PermissionResult | None = None,
) -> PermissionResult:
    """Decide one call: allow (maybe with a replaced input), deny (with a message), or ask.

    Args:
        tool: the tool called.
        parsed_input: the validated input (an ``input_type`` instance or a dict).
        ctx: the call's context, passed to the tool's check and rule matching.
        permissions: the rules and mode.
        hook_decision: the aggregated PreToolUse ``allow`` / ``ask``, if any (a
            hook ``deny`` never reaches the chain: it denies before).
        tool_check: the tool's own answer if already known (a speculative check);
            None: ``tool.check_permissions`` is awaited when the chain needs it.

    Returns:
        ``allow`` (``updated_input`` set when the tool's check replaced the
        input), ``deny`` with the model-facing message, or ``ask``.

    A checkpoint, as every public trio function.  On cancellation the tool's
    own check is cancelled and Cancelled propagates.
    """
    await trio.lowlevel.checkpoint()
    return await decide_permission(
        tool, parsed_input, ctx, permissions, hook_decision=hook_decision, tool_check=tool_check
    )


def unanswered_ask(result: PermissionResult, name: str, mode: PermissionMode) -> str:
    """The denial text for an "ask" that nobody will answer.

    ``dontAsk`` mode denies what would ask; with no ``can_use_tool`` callback
    (or no guard rails at all) the ask is refused with the ask's own reason
    when it has one (a safety check's, a file tool's ``Claude requested
    permissions to write to {path}, ...``), as Claude Code's ``-p`` mode does.
    """
    if mode == "dontAsk":
        return dont_ask_denied_message(name)
    if result.message:
        return result.message
    return permission_not_granted_message(name)


async def decide_permission(
    tool: Tool[Any],
    parsed_input: object,
    ctx: CallContext,
    permissions: PermissionContext,
    *,
    hook_decision: HookDecision | None = None,
    tool_check: PermissionResult | None = None,
) -> PermissionResult:
    """:func:`check_permission_chain` without its checkpoint, for callers that have one.

    The one decision order (this module's docstring): both ``authorize_call``
    and a run without guard rails decide through it.
    """
    name = tool.name
    access = path_access_of(tool)
    names = rule_names(tool, access, "deny")
    deny = permissions.rules_for(names, "deny")
    if deny.whole:
        return PermissionResult.deny(permission_denied_message(name))
    if permissions.mode == "plan" and not _reads_only(tool, parsed_input):
        return PermissionResult.deny(plan_mode_denied_message(name))
    ask = permissions.rules_for(names if access is None else rule_names(tool, access, "ask"), "ask")
    if ask.whole and not _sandbox_skips_ask(tool, parsed_input, permissions):
        return PermissionResult.ask()
    resolver = Resolver(ctx.cwd) if access is not None else None  # only paths resolve
    if _any_rule_matches(
        tool, access, deny.contents, parsed_input, ctx, "deny", permissions, resolver
    ):
        return PermissionResult.deny(path_denial_message(tool, parsed_input, ctx, deny.contents))
    own = tool_check if tool_check is not None else await tool.check_permissions(parsed_input, ctx)
    if own.behavior == "deny":
        return PermissionResult.deny(own.message or permission_denied_message(name))
    if own.behavior == "ask" and own.safety_check:
        return own
    if access is not None:
        protected = protected_write(tool, parsed_input, ctx, resolver)
        if protected is not None:
            return protected
    if _any_rule_matches(
        tool, access, ask.contents, parsed_input, ctx, "ask", permissions, resolver
    ):
        return PermissionResult.ask()
    allowed = own if own.behavior == "allow" else PermissionResult.allow()
    if hook_decision == "allow":
        return allowed
    if hook_decision == "ask":
        return PermissionResult.ask(own.message)
    if permissions.mode == "bypass" or own.behavior == "allow":
        return allowed  # the tool's own allow: an allow rule could only say the same
    allow = permissions.rules_for(
        names if access is None else rule_names(tool, access, "allow"), "allow"
    )
    if allow.whole or _any_rule_matches(
        tool, access, allow.contents, parsed_input, ctx, "allow", permissions, resolver
    ):
        return allowed
    return PermissionResult.ask(own.message)


def _sandbox_skips_ask(
    tool: Tool[Any], parsed_input: object, permissions: PermissionContext
) -> bool:
    """Whether the OS sandbox lets this call skip a whole-tool ask rule (``Bash`` only).

    Claude Code's ``autoAllowBashIfSandboxed``: a command that runs confined
    is auto-allowed by the tool's own check, so a bare ``Bash`` ask rule is
    skipped for it; content ask rules and every deny rule still apply.
    """
    sandbox = permissions.sandbox
    if sandbox is None:
        return False
    skips = getattr(type(tool), "sandbox_auto_allows", None)
    try:
        return bool(skips is not None and skips(tool, parsed_input, sandbox))
    except Exception:
        return False


def _reads_only(tool: Tool[Any], parsed_input: object) -> bool:
    """``tool.is_read_only``; a tool whose check raises changes things (fail closed)."""
    try:
        return bool(tool.is_read_only(parsed_input))
    except Exception:
        return False


def _any_rule_matches(
    tool: Tool[Any],
    access: PathAccess | None,
    contents: tuple[str, ...],
    parsed_input: object,
    ctx: CallContext,
    behavior: RuleBehavior,
    permissions: PermissionContext,
    resolver: Resolver | None,
) -> bool:
    """Whether one of the ``behavior`` rule ``contents`` applies to the call.

    A content the tool cannot interpret (None) counts as matching a deny or ask
    rule and as not matching an allow rule; every such content is warned about.
    """
    if not contents:
        return False
    if access is not None:  # a declared path: the content is a path pattern
        return paths_match(
            contents, access.paths(parsed_input), ctx.cwd, behavior, resolver or Resolver(ctx.cwd)
        )
    matched = tool.match_rule_contents(contents, parsed_input, ctx, behavior=behavior)
    if matched is None:  # unread: warn about each content the tool could not read
        for content in contents:
            if tool.match_rule_content(content, parsed_input, ctx, behavior=behavior) is None:
                _warn_unread_content(tool, content, behavior, permissions._warned)
        return behavior != "allow"
    return matched


def _warn_unread_content(
    tool: Tool[Any],
    content: str,
    behavior: RuleBehavior,
    warned: set[tuple[str, RuleBehavior, str]],
) -> None:
    key = (tool.name, behavior, content)
    if key in warned:
        return
    warned.add(key)
    rule = PermissionRule(tool.name, content)
    if behavior == "allow":
        logger.warning(
            "tool %s cannot interpret rule content (no match_rule_content), "
            "so the allow rule %s never matches",
            tool.name,
            rule,
        )
    else:
        logger.warning(
            "tool %s cannot interpret rule content (no match_rule_content), "
            "so the %s rule %s is applied to every call",
            tool.name,
            behavior,
            rule,
        )
