"""Permission rules checked against the tools they are meant for.

A rule naming no tool (``deplyo(prod)`` for a tool ``deploy``) applies to
nothing: a deny rule with a typo lets the tool run.  :func:`unknown_rule_names`
finds such rules and names the likely intended tool; :func:`warn_unknown_rules`
logs them once per rules-and-tools pair (a run that has guard rails calls it when
its guard rails meet its registry); ``trioexec settings check --tools
module:attr`` prints them for an application's own tools.

Names of Claude Code's own tools (``Bash``, ``Read``...) are not reported when
the application lacks them: settings files are shared with Claude Code.  An
``mcp__server`` (or ``mcp__server__*``) rule names every tool of that server.
"""

from __future__ import annotations

import logging
import weakref
from typing import TYPE_CHECKING, Any

from .._hooks._settings import suggestion
from ._permissions_section import CLAUDE_CODE_TOOLS

if TYPE_CHECKING:
    from collections.abc import Collection, Iterable

    from .._contract._permission_context import PermissionContext
    from .._contract._registry import ToolRegistry
    from .._contract._tool import Tool

__all__ = ["tool_names", "unknown_rule_names", "warn_unknown_rules"]

logger = logging.getLogger("trioexec.settings")

_warned: weakref.WeakKeyDictionary[PermissionContext, set[frozenset[str]]] = (
    weakref.WeakKeyDictionary()
)
"""Per rules: the tool sets already warned about (no run warns twice for one pair)."""


def tool_names(tools: Iterable[Tool[Any]]) -> frozenset[str]:
    """Every name a rule may use for ``tools``: their names and their aliases."""
    names: set[str] = set()
    for tool in tools:
        names.add(tool.name)
        names.update(tool.aliases)
    return frozenset(names)


def unknown_rule_names(permissions: PermissionContext, names: Collection[str]) -> list[str]:
    """One line per rule that names none of ``names``, with the likely intended name.

    Lines read ``permissions.deny: deplyo(prod): no tool is named 'deplyo' (did
    you mean 'deploy'?); the rule applies to nothing``.  Claude Code's tool
    names and ``mcp__`` rules of a server with a tool in ``names`` are not reported.
    """
    known = sorted(names)
    lines = []
    for behavior in ("allow", "ask", "deny"):
        for rule in getattr(permissions, behavior):
            name = rule.tool_name
            if _names_a_tool(name, names) or name in CLAUDE_CODE_TOOLS:
                continue
            lines.append(
                f"permissions.{behavior}: {rule}: no tool is named {name!r}"
                f"{suggestion(name, known)}; the rule applies to nothing"
            )
    return lines


def warn_unknown_rules(permissions: PermissionContext, registry: ToolRegistry) -> None:
    """Log :func:`unknown_rule_names` on ``trioexec.settings``, once per rules and tool set.

    Costs nothing without rules; with rules, one set of names per run.
    """
    if not (permissions.allow or permissions.ask or permissions.deny):
        return
    names = tool_names(registry)
    seen = _warned.setdefault(permissions, set())
    if names in seen:
        return
    seen.add(names)
    for line in unknown_rule_names(permissions, names):
        logger.warning("%s", line)


def _names_a_tool(name: str, names: Collection[str]) -> bool:
    if name in names:
        return True
    if name.startswith("mcp__"):
        server = name.removesuffix("*").removesuffix("__")
        return any(known.startswith(server + "__") for known in names)
    return False
