"""The permission rules in force and the permission chain (SPEC §6).

:class:`PermissionContext` holds the ``allow`` / ``ask`` / ``deny`` rules and
the mode; :func:`check_permission_chain` walks the decision order:

1. a whole-tool deny rule -> deny
2. a whole-tool ask rule -> ask
3. a content deny rule, then the tool's own check (its deny -> deny)
4. a content ask rule -> ask
5. a PreToolUse hook's ``allow`` -> allow, its ``ask`` -> ask (only here,
   after every deny and ask rule: a hook never overrides them)
6. ``bypass`` mode -> allow
7. a whole-tool allow rule -> allow
8. a content allow rule, or the tool's own allow -> allow
9. otherwise (passthrough, the tool's ask) -> ask

Content rules are matched by the tool itself (``Tool.match_rule_content``),
since only the tool knows whether ``Bash(npm test:*)`` or ``Read(./src/**)``
applies to its input.  Deny and ask rules are matched inside
:func:`~trioexec._rules.matching_rules`, so a shell command is caught by them
when any part of it matches, while an allow rule must cover every part.
Rules name a tool by its name or a deprecated alias.

A tool that does not implement ``match_rule_content`` (a function tool
without a ``rule_matcher``) cannot say whether ``Tool(content)`` applies, so
such rules fail closed: a deny or ask rule with content applies to every call
of the tool, an allow rule with content never matches, and a warning is
logged (``trioexec.permissions``) once per tool and rule.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, cast

import attrs

from ._errors import ConfigurationError
from ._rules import PermissionRule, RuleBehavior, matching_rules
from ._texts import permission_denied_message
from ._tool import FunctionTool, PermissionResult, Tool

if TYPE_CHECKING:
    from collections.abc import Iterable

    from ._tool import CallContext

__all__ = [
    "PermissionContext",
    "PermissionMode",
    "PermissionModeName",
    "RuleBehavior",
    "check_permission_chain",
    "normalize_mode",
]

PermissionMode: TypeAlias = Literal["default", "bypass"]
PermissionModeName: TypeAlias = PermissionMode | Literal["bypassPermissions"]
"""The spellings a mode is accepted in; ``"bypassPermissions"`` is normalised to ``"bypass"``."""
HookDecision: TypeAlias = Literal["allow", "ask"]

logger = logging.getLogger("trioexec.permissions")


def _to_rules(values: Iterable[str | PermissionRule]) -> tuple[PermissionRule, ...]:
    if isinstance(values, str):
        raise TypeError("rules must be a list of strings, not one string")
    return tuple(v if isinstance(v, PermissionRule) else PermissionRule.parse(v) for v in values)


def normalize_mode(mode: PermissionModeName) -> PermissionMode:
    """``"default"`` or ``"bypass"`` (``"bypassPermissions"``, Claude Code's name, is ``"bypass"``).

    Raises:
        ConfigurationError: any other value.
    """
    if mode == "default" or mode == "bypass":
        return mode
    if mode == "bypassPermissions":
        return "bypass"
    raise ConfigurationError(
        f"permission mode must be 'default', 'bypass' or 'bypassPermissions', not {mode!r}"
    )


@attrs.frozen
class _ToolRules:
    whole: bool = False
    contents: tuple[str, ...] = ()


_NO_RULES = _ToolRules()


@attrs.frozen
class PermissionContext:
    """The rules and mode the permission chain applies.

    Rules are given as strings (``"Bash(npm run test:*)"``) or
    :class:`PermissionRule` objects.  ``mode`` is ``"default"`` or
    ``"bypass"`` (allow what no deny or ask rule stops); Claude Code's
    ``"bypassPermissions"`` is accepted and stored as ``"bypass"``.

    Raises:
        ValueError: a rule string does not parse.
        ConfigurationError: an unknown mode (a ValueError too).
    """

    allow: tuple[PermissionRule, ...] = attrs.field(default=(), converter=_to_rules)
    ask: tuple[PermissionRule, ...] = attrs.field(default=(), converter=_to_rules)
    deny: tuple[PermissionRule, ...] = attrs.field(default=(), converter=_to_rules)
    mode: PermissionMode = attrs.field(default="default", converter=normalize_mode)
    _index: dict[tuple[str, str], _ToolRules] = attrs.field(
        init=False, repr=False, eq=False, factory=dict
    )
    _warned: set[tuple[str, RuleBehavior, str]] = attrs.field(
        init=False, repr=False, eq=False, factory=set
    )

    def __attrs_post_init__(self) -> None:
        grouped: dict[tuple[str, str], tuple[bool, list[str]]] = {}
        for behavior, rules in (("allow", self.allow), ("ask", self.ask), ("deny", self.deny)):
            for rule in rules:
                whole, contents = grouped.setdefault((behavior, rule.tool_name), (False, []))
                if rule.content is None:
                    grouped[behavior, rule.tool_name] = (True, contents)
                elif rule.content not in contents:
                    contents.append(rule.content)
        for key, (whole, contents) in grouped.items():
            self._index[key] = _ToolRules(whole, tuple(contents))

    def rules_for(self, tool: Tool[Any], behavior: RuleBehavior) -> tuple[bool, tuple[str, ...]]:
        """Whether a whole-tool rule of ``behavior`` names ``tool``, and its content rules."""
        found = _rules_for(self._index, tool, behavior)
        return found.whole, found.contents

    def rule_contents(self, tool_name: str, behavior: RuleBehavior) -> tuple[str, ...]:
        """The contents of the ``tool_name(content)`` rules of ``behavior``, in order."""
        return self._index.get((behavior, tool_name), _NO_RULES).contents

    def with_mode(self, mode: PermissionModeName) -> PermissionContext:
        """The same rules under another mode (``"bypassPermissions"`` means ``"bypass"``).

        Raises:
            ConfigurationError: an unknown mode.
        """
        return attrs.evolve(self, mode=mode)


def _rules_for(
    index: dict[tuple[str, str], _ToolRules], tool: Tool[Any], behavior: str
) -> _ToolRules:
    if not index:
        return _NO_RULES
    found = index.get((behavior, tool.name), _NO_RULES)
    for alias in tool.aliases:
        extra = index.get((behavior, alias))
        if extra is not None:
            found = _ToolRules(found.whole or extra.whole, found.contents + extra.contents)
    return found


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

    On cancellation the tool's own check is cancelled and Cancelled propagates.
    """
    index = permissions._index
    name = tool.name
    deny = _rules_for(index, tool, "deny")
    if deny.whole:
        return PermissionResult.deny(permission_denied_message(name))
    ask = _rules_for(index, tool, "ask")
    if ask.whole:
        return PermissionResult.ask()
    if _any_rule_matches(tool, deny.contents, parsed_input, ctx, "deny", permissions):
        return PermissionResult.deny(
            tool.rule_denial_message(parsed_input, ctx) or permission_denied_message(name)
        )
    own = tool_check if tool_check is not None else await tool.check_permissions(parsed_input, ctx)
    if own.behavior == "deny":
        return PermissionResult.deny(own.message or permission_denied_message(name))
    if _any_rule_matches(tool, ask.contents, parsed_input, ctx, "ask", permissions):
        return PermissionResult.ask()
    allowed = own if own.behavior == "allow" else PermissionResult.allow()
    if hook_decision == "allow":
        return allowed
    if hook_decision == "ask":
        return PermissionResult.ask(own.message)
    if permissions.mode == "bypass":
        return allowed
    allow = _rules_for(index, tool, "allow")
    if allow.whole or _any_rule_matches(
        tool, allow.contents, parsed_input, ctx, "allow", permissions
    ):
        return allowed
    if own.behavior == "allow":
        return own
    return PermissionResult.ask(own.message)


def _any_rule_matches(
    tool: Tool[Any],
    contents: tuple[str, ...],
    parsed_input: object,
    ctx: CallContext,
    behavior: RuleBehavior,
    permissions: PermissionContext,
) -> bool:
    if not contents:
        return False
    if not _reads_rule_content(tool):
        _warn_unread_content(tool, contents, behavior, permissions._warned)
        return behavior != "allow"
    with matching_rules(behavior):
        return any(tool.match_rule_content(c, parsed_input, ctx) for c in contents)


def _reads_rule_content(tool: Tool[Any]) -> bool:
    """Whether ``tool`` implements ``match_rule_content`` (a function tool: has a matcher)."""
    method = getattr(tool.match_rule_content, "__func__", None)
    if method is Tool.match_rule_content:
        return False
    if method is FunctionTool.match_rule_content:
        return cast("FunctionTool[Any]", tool).rule_matcher is not None
    return True


def _warn_unread_content(
    tool: Tool[Any],
    contents: tuple[str, ...],
    behavior: RuleBehavior,
    warned: set[tuple[str, RuleBehavior, str]],
) -> None:
    for content in contents:
        key = (tool.name, behavior, content)
        if key in warned:
            continue
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
