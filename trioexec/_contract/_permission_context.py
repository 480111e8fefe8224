"""The permission rules in force and the permission modes: data, no policy.

:class:`PermissionContext` holds the ``allow`` / ``ask`` / ``deny`` rules and
the mode, indexed by tool name; the permission chain (``_permissions``) reads
it, and tools see it as ``CallContext.permissions`` (Grep skips the files a
``Read`` deny rule covers).  It sits below ``_tool`` and never needs a
:class:`~trioexec.Tool`: :meth:`PermissionContext.rules_for` takes the names a
tool answers to.

The permission modes and their spellings live in one table,
:data:`MODE_SPELLINGS`: trioexec's name of each mode and the name Claude Code
gives it (in settings files, in hook input).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Literal, NamedTuple, TypeAlias

import attrs

from .._errors import ConfigurationError
from ._rules import PermissionRule, RuleBehavior

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

__all__ = [
    "MODE_SPELLINGS",
    "PermissionContext",
    "PermissionMode",
    "PermissionModeName",
    "claude_code_mode_name",
    "mode_from_name",
    "normalize_mode",
    "stripped_in_auto_mode",
]

logger = logging.getLogger("trioexec.permissions")

_CODE_RUNNERS = (
    "python", "python2", "python3", "node", "deno", "tsx", "ruby", "perl", "php", "lua",
    "npx", "bunx", "npm run", "yarn run", "pnpm run", "bun run",
    "bash", "sh", "zsh", "fish", "eval", "exec", "env", "xargs", "sudo", "ssh",
)  # fmt: skip
"""Commands whose broad allow rules Claude Code drops on entering auto mode
(``DANGEROUS_BASH_PATTERNS``): each runs whatever code it is given."""


def stripped_in_auto_mode(rule: PermissionRule) -> bool:
    """Whether Claude Code drops the allow ``rule`` on entering ``auto`` mode.

    As its ``isDangerousBashPermission``: a whole-tool ``Bash`` rule (or
    ``Bash(*)``), and ``Bash(p)``, ``Bash(p:*)``, ``Bash(p*)``, ``Bash(p *)``,
    ``Bash(p -...*)`` for an interpreter, shell or code runner ``p``
    (case-insensitive); and every ``Agent`` (``Task``) allow rule.  Such a
    rule would approve any code the model writes, without the classifier.
    """
    if rule.tool_name in ("Agent", "Task"):
        return True
    if rule.tool_name != "Bash":
        return False
    content = (rule.content or "").strip().lower()
    if content in ("", "*"):
        return True
    for runner in _CODE_RUNNERS:
        if content in (runner, f"{runner}:*", f"{runner}*", f"{runner} *"):
            return True
        if content.startswith(f"{runner} -") and content.endswith("*"):
            return True
    return False


PermissionMode: TypeAlias = Literal["default", "bypass", "acceptEdits", "plan", "dontAsk", "auto"]
"""``default``: rules, then ask; ``bypass``: allow what no deny or ask rule stops;
``acceptEdits``: file edits inside the working directory are allowed too;
``plan``: no tool that changes anything runs (only read-only calls);
``dontAsk``: whatever would ask is denied instead (only pre-approved calls run);
``auto``: Claude Code's classifier mode; trioexec has no classifier, so it acts
as ``acceptEdits`` and what would still ask goes to ``can_use_tool`` (the
application's classifier), denied without one; the broad allow rules Claude
Code drops in this mode (:func:`stripped_in_auto_mode`) are not applied."""
PermissionModeName: TypeAlias = PermissionMode | Literal["bypassPermissions"]
"""The spellings a mode is accepted in; ``"bypassPermissions"`` is normalised to ``"bypass"``."""

MODE_SPELLINGS: tuple[tuple[PermissionMode, str], ...] = (
    ("default", "default"),
    ("bypass", "bypassPermissions"),
    ("acceptEdits", "acceptEdits"),
    ("plan", "plan"),
    ("dontAsk", "dontAsk"),
    ("auto", "auto"),
)
"""Each mode as ``(trioexec's name, Claude Code's name)``; the only table of mode names."""

_BY_NAME: Mapping[str, PermissionMode] = {
    **{ours: ours for ours, _ in MODE_SPELLINGS},
    **{theirs: ours for ours, theirs in MODE_SPELLINGS},
}
_CLAUDE_CODE_NAME: Mapping[PermissionMode, str] = dict(MODE_SPELLINGS)


def _spellings() -> str:
    names = list(dict.fromkeys(n for ours, theirs in MODE_SPELLINGS for n in (ours, theirs)))
    return ", ".join(repr(n) for n in names[:-1]) + f" or {names[-1]!r}"


_UNKNOWN_MODE = f"permission mode must be {_spellings()}, not {{!r}}"


def mode_from_name(name: str) -> PermissionMode | None:
    """The mode ``name`` spells, in trioexec's or Claude Code's spelling (None: no such mode)."""
    return _BY_NAME.get(name)


def claude_code_mode_name(mode: PermissionMode) -> str:
    """Claude Code's name of ``mode`` (``"bypass"`` is ``"bypassPermissions"``), as hooks see it."""
    return _CLAUDE_CODE_NAME[mode]


def normalize_mode(mode: PermissionModeName) -> PermissionMode:
    """The mode ``mode`` spells (``"bypassPermissions"``, Claude Code's name, is ``"bypass"``).

    Raises:
        ConfigurationError: any other value.
    """
    found = _BY_NAME.get(mode) if isinstance(mode, str) else None
    if found is None:
        raise ConfigurationError(_UNKNOWN_MODE.format(mode))
    return found


def _server_rule(index: Mapping[tuple[str, str], ToolRules], behavior: str, name: str) -> bool:
    """Whether ``mcp__server`` or ``mcp__server__*`` (whole-tool) names the MCP tool ``name``.

    As Claude Code's ``toolMatchesRule``: a rule naming an MCP server covers
    every tool of that server.
    """
    if not name.startswith("mcp__"):
        return False
    server, sep, tool = name[5:].partition("__")
    if not server or not sep or not tool:
        return False
    for rule_name in (f"mcp__{server}", f"mcp__{server}__*"):
        rules = index.get((behavior, rule_name))
        if rules is not None and rules.whole:
            return True
    return False


def _to_rules(values: Iterable[str | PermissionRule]) -> tuple[PermissionRule, ...]:
    if isinstance(values, str):
        raise TypeError("rules must be a list of strings, not one string")
    return tuple(v if isinstance(v, PermissionRule) else PermissionRule.parse(v) for v in values)


class ToolRules(NamedTuple):
    """The rules of one behavior that name one tool: a whole-tool rule, and the contents."""

    whole: bool = False
    contents: tuple[str, ...] = ()


_NO_RULES = ToolRules()


@attrs.frozen
class PermissionContext:
    """The rules and mode the permission chain applies.

    Rules are given as strings (``"Bash(npm run test:*)"``) or
    :class:`PermissionRule` objects.  ``mode`` is ``"default"`` or
    ``"bypass"`` (allow what no deny or ask rule stops); Claude Code's
    ``"bypassPermissions"`` is accepted and stored as ``"bypass"``.

    ``sandbox`` is the OS sandbox in force for ``Bash`` (a
    ``trioexec._guard._sandbox.Sandbox``; None: none; typed ``object`` here,
    below the guard rails): the ``Bash`` tool confines its commands with it,
    and its ``autoAllowBashIfSandboxed`` lets a confined command run without
    an ask.

    Raises:
        ValueError: a rule string does not parse.
        ConfigurationError: an unknown mode (a ValueError too).
    """

    allow: tuple[PermissionRule, ...] = attrs.field(default=(), converter=_to_rules)
    ask: tuple[PermissionRule, ...] = attrs.field(default=(), converter=_to_rules)
    deny: tuple[PermissionRule, ...] = attrs.field(default=(), converter=_to_rules)
    mode: PermissionMode = attrs.field(default="default", converter=normalize_mode)
    sandbox: object = attrs.field(default=None, eq=False, kw_only=True)
    _index: dict[tuple[str, str], ToolRules] = attrs.field(
        init=False, repr=False, eq=False, factory=dict
    )
    _warned: set[tuple[str, RuleBehavior, str]] = attrs.field(
        init=False, repr=False, eq=False, factory=set
    )
    _found: dict[tuple[tuple[str, ...], str], ToolRules] = attrs.field(
        init=False, repr=False, eq=False, factory=dict
    )
    """:meth:`rules_for` answers, per (names, behavior): the rules never change."""

    def __attrs_post_init__(self) -> None:
        grouped: dict[tuple[str, str], tuple[bool, list[str]]] = {}
        for behavior, rules in (("allow", self.allow), ("ask", self.ask), ("deny", self.deny)):
            for rule in rules:
                if behavior == "allow" and self.mode == "auto" and stripped_in_auto_mode(rule):
                    logger.warning(
                        "auto mode: the allow rule %s would let any code run; it is not applied",
                        rule,
                    )
                    continue
                whole, contents = grouped.setdefault((behavior, rule.tool_name), (False, []))
                if rule.content is None:
                    grouped[behavior, rule.tool_name] = (True, contents)
                elif rule.content not in contents:
                    contents.append(rule.content)
        for key, (whole, contents) in grouped.items():
            self._index[key] = ToolRules(whole, tuple(contents))

    def rules_for(self, names: Iterable[str], behavior: RuleBehavior) -> ToolRules:
        """The ``behavior`` rules naming any of ``names`` (a tool's name, then its aliases).

        Returns:
            ``(whole, contents)``: whether a whole-tool rule names one of them,
            and the content rules in order, the name's before each alias's.
        """
        index = self._index
        if not index:
            return _NO_RULES
        if isinstance(names, tuple):
            key = (names, behavior)
            found = self._found.get(key)
            if found is None:
                found = self._rules_for(names, behavior)
                if len(self._found) < 1024:  # a tool's names: a handful per registry
                    self._found[key] = found
            return found
        return self._rules_for(tuple(names), behavior)

    def _rules_for(self, names: tuple[str, ...], behavior: RuleBehavior) -> ToolRules:
        index = self._index
        found = _NO_RULES
        for name in names:
            extra = index.get((behavior, name))
            if extra is None:
                continue
            if found is _NO_RULES:
                found = extra
            else:
                found = ToolRules(found.whole or extra.whole, found.contents + extra.contents)
        if not found.whole and any(_server_rule(index, behavior, name) for name in names):
            found = ToolRules(True, found.contents)
        return found

    def rule_contents(self, tool_name: str, behavior: RuleBehavior) -> tuple[str, ...]:
        """The contents of the ``tool_name(content)`` rules of ``behavior``, in order."""
        return self._index.get((behavior, tool_name), _NO_RULES).contents

    def with_mode(self, mode: PermissionModeName) -> PermissionContext:
        """The same rules under another mode (``"bypassPermissions"`` means ``"bypass"``).

        Raises:
            ConfigurationError: an unknown mode.
        """
        return attrs.evolve(self, mode=mode)
