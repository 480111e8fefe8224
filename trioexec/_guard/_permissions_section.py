"""The ``permissions`` section of a settings file: its rules and its default mode.

Each rule is parsed (:class:`~.._contract._rules.PermissionRule`), a near miss
of a Claude Code tool's name is reported, and a user-settings path rule is
rooted at ``~/.claude`` as Claude Code roots it; a mode trioexec does not have
is reported and read as ``default``.  A field of the wrong type raises
:class:`~trioexec.ConfigurationError` naming the source and the field.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, TypeAlias

from .._contract._permission_context import PermissionMode, mode_from_name
from .._contract._rules import PermissionRule
from .._errors import ConfigurationError
from .._hooks._settings import suggestion

if TYPE_CHECKING:
    from pathlib import Path

__all__ = [
    "AUTO_MODE_NOTE",
    "CLAUDE_CODE_TOOLS",
    "PATH_TOOLS",
    "PERMISSION_KEYS",
    "Report",
    "read_mode",
    "read_rules",
]

Report: TypeAlias = Callable[[str, str], None]
"""Reports a problem: ``report(field, problem)``."""

CLAUDE_CODE_TOOLS = (
    "Agent",
    "AskUserQuestion",
    "Bash",
    "BashOutput",
    "Edit",
    "ExitPlanMode",
    "Glob",
    "Grep",
    "KillBash",
    "KillShell",
    "LS",
    "MultiEdit",
    "NotebookEdit",
    "NotebookRead",
    "Read",
    "Skill",
    "SlashCommand",
    "Task",
    "TodoWrite",
    "WebFetch",
    "WebSearch",
    "Write",
)
"""Claude Code's tool names: a rule naming a near miss of one gets a warning."""

PATH_TOOLS = frozenset({"Read", "Edit", "Write", "MultiEdit", "NotebookEdit", "Glob", "Grep"})
PERMISSION_KEYS = (
    "allow",
    "ask",
    "deny",
    "defaultMode",
    "additionalDirectories",
    "disableBypassPermissionsMode",
    "disableAutoMode",
)
_CLAUDE_CODE_MODES = ("default", "acceptEdits", "plan", "bypassPermissions", "dontAsk", "auto")


def read_rules(
    section: Mapping[str, object],
    behavior: str,
    name: str,
    report: Report,
    user_root: Path | None,
) -> list[PermissionRule]:
    raw = section.get(behavior)
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise ConfigurationError(f"{name}: permissions.{behavior}: expected a list of rules")
    rules = []
    for index, text in enumerate(raw):
        field = f"permissions.{behavior}[{index}]"
        if not isinstance(text, str):
            raise ConfigurationError(
                f"{name}: {field}: expected a string, got {type(text).__name__}"
            )
        try:
            rule = PermissionRule.parse(text)
        except ValueError as exc:
            raise ConfigurationError(f"{name}: {field}: {exc}") from None
        _check_tool_name(rule, text, field, report)
        rules.append(_rooted(rule, user_root))
    return rules


def _check_tool_name(rule: PermissionRule, text: str, field: str, report: Report) -> None:
    """Warn when a rule names a near miss of a Claude Code tool (``bash``, ``Bsah``).

    A name far from every Claude Code tool is taken as one of the
    application's own tools (trioexec cannot know them when reading a file).
    """
    tool = rule.tool_name
    if tool in CLAUDE_CODE_TOOLS or tool.startswith("mcp__"):
        return
    hint = suggestion(tool, CLAUDE_CODE_TOOLS)
    if hint:
        report(field, f"rule {text!r} names no Claude Code tool{hint}; it matches no call of one")


def _rooted(rule: PermissionRule, user_root: Path | None) -> PermissionRule:
    """A user-settings path rule ``Read(/x/**)`` as ``Read(//home/me/.claude/x/**)``.

    Claude Code roots a leading ``/`` at the settings file's root: the
    working directory for project, local and managed settings, ``~/.claude``
    for user settings.  ``//`` (the file system root) and ``~/`` keep their meaning.
    """
    content = rule.content
    if (
        user_root is None
        or content is None
        or rule.tool_name not in PATH_TOOLS
        or not content.startswith("/")
        or content.startswith("//")
    ):
        return rule
    return PermissionRule(rule.tool_name, "/" + os.path.join(os.fspath(user_root), content[1:]))


AUTO_MODE_NOTE = (
    "'auto' needs Claude Code's classifier, which trioexec does not have: it acts as "
    "'acceptEdits', and a call that would ask goes to can_use_tool (denied without one)"
)
"""The problem reported for ``defaultMode: "auto"``: the mode loads, and says what it does."""


def read_mode(section: Mapping[str, object], name: str, report: Report) -> PermissionMode | None:
    """The source's mode; a Claude Code mode trioexec does not have falls back to ``default``.

    Refusing such a mode would break settings files that work in Claude
    Code; ``default`` is the mode that grants nothing by itself.
    """
    raw = section.get("defaultMode")
    if raw is None:
        return None
    if not isinstance(raw, str):
        raise ConfigurationError(
            f"{name}: permissions.defaultMode: expected a string, got {type(raw).__name__}"
        )
    mode = mode_from_name(raw)
    if mode == "auto":
        report("permissions.defaultMode", AUTO_MODE_NOTE)
    if mode is None:
        if raw in _CLAUDE_CODE_MODES:
            problem = f"{raw!r} is not supported by trioexec; using 'default'"
        else:
            hint = suggestion(raw, _CLAUDE_CODE_MODES)
            problem = f"unknown mode {raw!r}{hint}; using 'default'"
        report("permissions.defaultMode", problem)
        return "default"
    return mode
