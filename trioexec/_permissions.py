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
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, TypeAlias

import attrs

from ._rules import PermissionRule, RuleBehavior, matching_rules
from ._texts import permission_denied_message
from ._tool import PermissionResult

if TYPE_CHECKING:
    from collections.abc import Iterable

    from ._tool import CallContext, Tool

__all__ = [
    "PermissionContext",
    "PermissionMode",
    "RuleBehavior",
    "check_permission_chain",
]

PermissionMode: TypeAlias = Literal["default", "bypass"]
HookDecision: TypeAlias = Literal["allow", "ask"]


def _to_rules(values: Iterable[str | PermissionRule]) -> tuple[PermissionRule, ...]:
    if isinstance(values, str):
        raise TypeError("rules must be a list of strings, not one string")
    return tuple(v if isinstance(v, PermissionRule) else PermissionRule.parse(v) for v in values)


def _check_mode(_instance: object, _attribute: object, value: object) -> None:
    if value not in ("default", "bypass"):
        raise ValueError(f"permission mode must be 'default' or 'bypass', not {value!r}")


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
    ``"bypass"`` (allow what no deny or ask rule stops).

    Raises:
        ValueError: a rule string does not parse, or an unknown mode.
    """

    allow: tuple[PermissionRule, ...] = attrs.field(default=(), converter=_to_rules)
    ask: tuple[PermissionRule, ...] = attrs.field(default=(), converter=_to_rules)
    deny: tuple[PermissionRule, ...] = attrs.field(default=(), converter=_to_rules)
    mode: PermissionMode = attrs.field(default="default", validator=_check_mode)
    _index: dict[tuple[str, str], _ToolRules] = attrs.field(
        init=False, repr=False, eq=False, factory=dict
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

    def with_mode(self, mode: PermissionMode) -> PermissionContext:
        """The same rules under another mode."""
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
    if _any_rule_matches(tool, deny.contents, parsed_input, ctx, "deny"):
        return PermissionResult.deny(permission_denied_message(name))
    own = tool_check if tool_check is not None else await tool.check_permissions(parsed_input, ctx)
    if own.behavior == "deny":
        return PermissionResult.deny(own.message or permission_denied_message(name))
    if _any_rule_matches(tool, ask.contents, parsed_input, ctx, "ask"):
        return PermissionResult.ask()
    allowed = own if own.behavior == "allow" else PermissionResult.allow()
    if hook_decision == "allow":
        return allowed
    if hook_decision == "ask":
        return PermissionResult.ask(own.message)
    if permissions.mode == "bypass":
        return allowed
    allow = _rules_for(index, tool, "allow")
    if allow.whole or _any_rule_matches(tool, allow.contents, parsed_input, ctx, "allow"):
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
) -> bool:
    if not contents:
        return False
    with matching_rules(behavior):
        return any(tool.match_rule_content(c, parsed_input, ctx) for c in contents)
