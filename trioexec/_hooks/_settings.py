"""Reading the ``hooks`` section of a Claude Code settings file, never silently.

Events trioexec runs (``PreToolUse``, ``PostToolUse``, ``PostToolUseFailure``)
become :class:`~trioexec._hooks._config.HookEntry` values; Claude Code's other
events (``Stop``, ``SessionStart``, ...) are skipped without a word.  What a
file cannot have meant is reported, each as one line naming the source, the
field and the likely intended spelling (found with :mod:`difflib`), and
the rest of the file still loads:

- an unknown event (``PreToolUze``), group key or handler key (``timout``);
- a handler type trioexec cannot run (``prompt``, ``agent``, ``mcp_tool``):
  that one handler is skipped, its siblings and the file's rules stay;
- an ``if`` that is not a permission rule (the hook then always runs).

A field of the wrong type (``"command": 3``) is a
:class:`~trioexec.ConfigurationError`: the file is wrong, not merely newer.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping

import attrs

from .._contract._rules import PermissionRule
from .._errors import ConfigurationError
from ._http import HttpHook

__all__ = [
    "CLAUDE_CODE_HOOK_EVENTS",
    "UNSUPPORTED_HOOK_TYPES",
    "HookSpec",
    "parse_hooks_section",
    "suggestion",
]

CLAUDE_CODE_HOOK_EVENTS = (
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "PostToolBatch",
    "Notification",
    "UserPromptSubmit",
    "UserPromptExpansion",
    "SessionStart",
    "SessionEnd",
    "Stop",
    "StopFailure",
    "SubagentStart",
    "SubagentStop",
    "PreCompact",
    "PostCompact",
    "PermissionRequest",
    "PermissionDenied",
    "Setup",
    "TeammateIdle",
    "TaskCreated",
    "TaskCompleted",
    "Elicitation",
    "ElicitationResult",
    "ConfigChange",
    "WorktreeCreate",
    "WorktreeRemove",
    "InstructionsLoaded",
    "CwdChanged",
    "FileChanged",
    "DirectoryAdded",
    "PreModelSwitch",
    "PostModelSwitch",
    "MessageDisplay",
)
"""Every hook event Claude Code knows; only the three tool events run in trioexec."""

UNSUPPORTED_HOOK_TYPES = ("prompt", "agent", "mcp_tool")
"""Handler types that need a model or an MCP client; skipped with a warning."""

_GROUP_KEYS = ("matcher", "hooks")
_COMMON_KEYS = ("type", "if", "timeout", "statusMessage", "once")
_HANDLER_KEYS: Mapping[str, tuple[str, ...]] = {
    "command": (*_COMMON_KEYS, "command", "shell", "async", "asyncRewake"),
    "http": (*_COMMON_KEYS, "url", "headers", "allowedEnvVars"),
}
_ALL_TYPES = (*_HANDLER_KEYS, *UNSUPPORTED_HOOK_TYPES)

Report = Callable[[str, str], None]
"""``report(field, problem)``: one problem of a source, its field named."""


def suggestion(word: str, known: tuple[str, ...] | list[str]) -> str:
    """``" (did you mean 'X'?)"`` for the closest known spelling, or ``""``."""
    lowered = {k.lower(): k for k in known}
    if word.lower() in lowered and lowered[word.lower()] != word:
        return f" (did you mean {lowered[word.lower()]!r}?)"
    close = difflib.get_close_matches(word, list(known), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _unknown_keys(
    data: Mapping[str, object], known: tuple[str, ...], at: str, report: Report
) -> None:
    for key in data:
        if key not in known:
            report(f"{at}.{key}", f"unknown key{suggestion(key, known)}; it is ignored")


@attrs.frozen
class HookSpec:
    """One handler read from a file: a ``command`` string or an :class:`HttpHook`."""

    event: str
    matcher: str | None
    hook: str | HttpHook
    timeout: float
    condition: str | None = None
    run_async: bool = False
    rewake: bool = False
    """``asyncRewake: true``: async, and its exit-2 stderr is told to the model later."""


def parse_hooks_section(
    section: object,
    source: str,
    report: Report,
    *,
    events: tuple[str, ...],
    default_timeout: float,
) -> list[HookSpec]:
    """The hooks of ``section`` (the value of ``hooks``) for ``events``.

    Problems that do not make the file wrong go to ``report``; the hook
    concerned is skipped (or, for an unreadable ``if``, kept unconditional).

    Raises:
        ConfigurationError: a field has the wrong type; the message names
            ``source`` and the field (``hooks.PreToolUse[0].hooks[1].command``).
    """

    def fail(field: str, problem: str) -> ConfigurationError:
        return ConfigurationError(f"{source}: {field}: {problem}")

    if not isinstance(section, Mapping):
        raise fail("hooks", "expected an object")
    entries: list[HookSpec] = []
    for event, groups in section.items():
        if event not in events:
            if event not in CLAUDE_CODE_HOOK_EVENTS:
                hint = suggestion(event, CLAUDE_CODE_HOOK_EVENTS)
                report(f"hooks.{event}", f"unknown hook event{hint}; its hooks never run")
            continue
        if not isinstance(groups, list):
            raise fail(f"hooks.{event}", "expected a list")
        for i, group in enumerate(groups):
            at = f"hooks.{event}[{i}]"
            if not isinstance(group, Mapping):
                raise fail(at, "expected an object")
            _unknown_keys(group, _GROUP_KEYS, at, report)
            matcher = group.get("matcher")
            if matcher is not None and not isinstance(matcher, str):
                raise fail(f"{at}.matcher", "expected a string")
            hooks = group.get("hooks")
            if not isinstance(hooks, list):
                raise fail(f"{at}.hooks", "expected a list")
            for j, raw in enumerate(hooks):
                entry = _handler(raw, f"{at}.hooks[{j}]", fail, report, default_timeout)
                if entry is not None:
                    entries.append(HookSpec(event, matcher, *entry))
    return entries


def _handler(
    raw: object,
    where: str,
    fail: Callable[[str, str], ConfigurationError],
    report: Report,
    default_timeout: float,
) -> tuple[str | HttpHook, float, str | None, bool, bool] | None:
    if not isinstance(raw, Mapping):
        raise fail(where, "expected an object")
    kind = raw.get("type")
    if not isinstance(kind, str):
        raise fail(f"{where}.type", f"expected a string, got {type(kind).__name__}")
    if kind in UNSUPPORTED_HOOK_TYPES:
        report(f"{where}.type", f"hook type {kind!r} is not supported by trioexec; skipped")
        return None
    if kind not in _HANDLER_KEYS:
        report(
            f"{where}.type", f"unknown hook type {kind!r}{suggestion(kind, _ALL_TYPES)}; skipped"
        )
        return None
    _unknown_keys(raw, _HANDLER_KEYS[kind], where, report)
    hook: str | HttpHook
    if kind == "command":
        command = raw.get("command")
        if not isinstance(command, str) or not command.strip():
            raise fail(f"{where}.command", "expected a non-empty string")
        hook = command
    else:
        url = raw.get("url")
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise fail(f"{where}.url", "expected an http:// or https:// URL")
        headers = raw.get("headers", {})
        if not isinstance(headers, Mapping) or not all(
            isinstance(v, str) for v in headers.values()
        ):
            raise fail(f"{where}.headers", "expected an object of strings")
        allowed = raw.get("allowedEnvVars", [])
        if not isinstance(allowed, list) or not all(isinstance(v, str) for v in allowed):
            raise fail(f"{where}.allowedEnvVars", "expected a list of strings")
        hook = HttpHook(url, dict(headers), tuple(allowed))
    timeout = raw.get("timeout", default_timeout)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
        raise fail(f"{where}.timeout", "expected a positive number")
    condition = raw.get("if")
    if condition is not None:
        if not isinstance(condition, str):
            raise fail(f"{where}.if", "expected a permission rule string")
        try:
            PermissionRule.parse(condition)
        except ValueError as exc:
            report(f"{where}.if", f"not a permission rule ({exc}); the hook always runs")
            condition = None
    run_async = raw.get("async", False)
    if not isinstance(run_async, bool):
        raise fail(f"{where}.async", "expected true or false")
    rewake = raw.get("asyncRewake", False)
    if not isinstance(rewake, bool):
        raise fail(f"{where}.asyncRewake", "expected true or false")
    return hook, float(timeout), condition, run_async or rewake, rewake
