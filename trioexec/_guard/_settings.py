"""Loading Claude Code settings files: the ``permissions``, ``hooks`` and ``sandbox`` sections.

Several sources merge into one :class:`Settings`, lowest precedence first:
user (``~/.claude/settings.json``), project (``.claude/settings.json``),
local (``.claude/settings.local.json``), then managed settings
(``/etc/claude-code/managed-settings.json`` and ``managed-settings.d/*.json``
on Linux), which nothing overrides.  Rule lists and hooks are concatenated,
so a deny rule in any source wins (deny is always checked first);
``permissions.defaultMode`` and ``disableAllHooks`` come from the last
source that sets them.  ``disableAllHooks: true`` in managed settings turns
every hook off; anywhere else it turns off every hook but the managed ones
(as in Claude Code, a user cannot disable the organisation's hooks).

Settings never fail silently: an unknown key (``permisions``), an unknown
hook event (``PreToolUze``), an unknown handler key (``timout``), a rule
naming a tool in the wrong case (``bash(rm:*)``) or a near-miss of a Claude
Code tool, an unknown mode, and ``auto`` (which has no classifier here:
:data:`AUTO_MODE_NOTE`): each is logged on ``trioexec.settings`` as
``{source}: {field}: {problem} (did you mean '...'?)`` and listed in
:attr:`Settings.problems`, and the rest of the file loads.  A field of the wrong type raises
:class:`~trioexec.ConfigurationError` naming the source and the field, e.g.
``.claude/settings.json: permissions.deny[2]: expected a string, got int``.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Literal, TypeAlias

import attrs

from .._contract._permission_context import PermissionContext, PermissionMode
from .._contract._rules import PermissionRule
from .._errors import ConfigurationError
from .._hooks._config import HookSet
from .._hooks._http import HttpHook, url_allowed
from .._hooks._settings import suggestion
from ._permissions_section import (
    AUTO_MODE_NOTE,
    CLAUDE_CODE_TOOLS,
    PERMISSION_KEYS,
    read_mode,
    read_rules,
)
from ._sandbox._settings import SandboxSettings, parse_sandbox

__all__ = [
    "AUTO_MODE_NOTE",
    "CLAUDE_CODE_TOOLS",
    "MANAGED_SETTINGS_DIR",
    "Settings",
    "SettingsFile",
    "SettingsScope",
    "SettingsSource",
    "default_settings_paths",
    "load_settings",
    "managed_settings_paths",
]

logger = logging.getLogger("trioexec.settings")

SettingsScope: TypeAlias = Literal["user", "project", "local", "managed", "other"]


def _to_path(value: str | os.PathLike[str]) -> Path:
    return Path(value)


@attrs.frozen
class SettingsFile:
    """A settings file and the scope it was found in (which changes what it may do).

    ``user``: a leading ``/`` in its path rules is rooted at ``~/.claude``
    (Claude Code's ``getSettingsRootPathForSource``); ``managed``: highest
    precedence, and its ``disableAllHooks`` also turns off managed hooks.
    """

    path: Path = attrs.field(converter=_to_path)
    scope: SettingsScope = "other"

    def __fspath__(self) -> str:
        return os.fspath(self.path)


SettingsSource: TypeAlias = (
    "str | os.PathLike[str] | Mapping[str, object] | SettingsFile | Settings"
)
"""A settings file (path or :class:`SettingsFile`), parsed settings (a dict), or a
:class:`Settings` already loaded (its rules, hooks and mode, merged as one source)."""

MANAGED_SETTINGS_DIR = (
    Path("/Library/Application Support/ClaudeCode")
    if sys.platform == "darwin"
    else Path("/etc/claude-code")
)
"""Where managed (organisation) settings live: Claude Code's ``getManagedFilePath``."""

_TOP_LEVEL_KEYS = (
    "$schema",
    "additionalDirectories",
    "advisorModel",
    "agent",
    "allowManagedHooksOnly",
    "allowManagedMcpServersOnly",
    "allowManagedPermissionRulesOnly",
    "allowedChannelPlugins",
    "allowedHttpHookUrls",
    "allowedMcpServers",
    "alwaysThinkingEnabled",
    "apiKeyHelper",
    "attribution",
    "autoDreamEnabled",
    "autoMemoryDirectory",
    "autoMemoryEnabled",
    "autoUpdates",
    "autoUpdatesChannel",
    "availableModels",
    "awsAuthRefresh",
    "awsCredentialExport",
    "blockedMarketplaces",
    "channelsEnabled",
    "claudeMdExcludes",
    "cleanupPeriodDays",
    "companyAnnouncements",
    "defaultShell",
    "deniedMcpServers",
    "disableAllHooks",
    "disabledMcpjsonServers",
    "effortLevel",
    "enableAllProjectMcpServers",
    "enabledMcpjsonServers",
    "enabledPlugins",
    "env",
    "extraKnownMarketplaces",
    "fastMode",
    "fastModePerSessionOptIn",
    "feedbackSurveyRate",
    "fileSuggestion",
    "forceLoginMethod",
    "forceLoginOrgUUID",
    "gcpAuthRefresh",
    "hooks",
    "httpHookAllowedEnvVars",
    "includeCoAuthoredBy",
    "includeGitInstructions",
    "language",
    "minimumVersion",
    "model",
    "modelOverrides",
    "modelType",
    "otelHeadersHelper",
    "outputStyle",
    "permissions",
    "plansDirectory",
    "pluginConfigs",
    "pluginTrustMessage",
    "prefersReducedMotion",
    "promptSuggestionEnabled",
    "remote",
    "respectGitignore",
    "sandbox",
    "showClearContextOnPlanAccept",
    "showThinkingSummaries",
    "skipDangerousModePermissionPrompt",
    "skipWebFetchPreflight",
    "spinnerTipsEnabled",
    "spinnerTipsOverride",
    "spinnerVerbs",
    "sshConfigs",
    "statusLine",
    "strictKnownMarketplaces",
    "strictPluginOnlyCustomization",
    "syntaxHighlightingDisabled",
    "terminalTitleFromRename",
    "theme",
    "worktree",
)
"""Claude Code's top-level settings keys (its settings schema); trioexec reads
``permissions``, ``hooks``, ``disableAllHooks`` and ``sandbox`` and ignores the others."""


@attrs.frozen
class Settings:
    """The merged ``permissions`` and ``hooks`` of one or more settings sources.

    Attributes:
        permissions: the merged rules, under ``mode`` (or ``default``).
        hooks: the hooks in force (``disableAllHooks`` already applied).
        mode: None when no source sets ``permissions.defaultMode``.
        problems: one line per problem found (``{source}: {field}: {problem}``),
            in the order found; each was also logged on ``trioexec.settings``.
        sources: the name of each source read, lowest precedence first.
        disable_all_hooks: the merged ``disableAllHooks``.
        sandbox: the merged ``sandbox`` section (booleans from the
            highest-precedence file that sets them, lists concatenated).
    """

    permissions: PermissionContext = attrs.field(factory=PermissionContext)
    hooks: HookSet = attrs.field(factory=HookSet)
    mode: PermissionMode | None = None
    problems: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    disable_all_hooks: bool = False
    sandbox: SandboxSettings = attrs.field(factory=SandboxSettings)

    def to_json(self) -> dict[str, object]:
        """The effective settings as Claude Code's JSON (what ``settings check`` prints)."""
        hooks: dict[str, list[object]] = {}
        for entry in self.hooks.entries:
            handler: dict[str, object] = {"type": "command", "command": entry.label}
            if isinstance(entry.hook, HttpHook):
                handler = {"type": "http", "url": entry.hook.url}
            handler["timeout"] = entry.timeout
            if entry.condition is not None:
                handler["if"] = entry.condition
            if entry.run_async:
                handler["async"] = True
            if entry.rewake:
                handler["asyncRewake"] = True
            group = {"matcher": entry.matcher or "", "hooks": [handler]}
            hooks.setdefault(entry.event, []).append(group)
        permissions = self.permissions
        shown: dict[str, object] = {
            "permissions": {
                "allow": [str(r) for r in permissions.allow],
                "ask": [str(r) for r in permissions.ask],
                "deny": [str(r) for r in permissions.deny],
                "defaultMode": _claude_code_mode(permissions.mode),
            },
            "hooks": hooks,
            "disableAllHooks": self.disable_all_hooks,
        }
        if self.sandbox != SandboxSettings():  # some source has a ``sandbox`` key
            shown["sandbox"] = self.sandbox.to_json()
        return shown


def _claude_code_mode(mode: PermissionMode) -> str:
    from .._contract._permission_context import claude_code_mode_name

    return claude_code_mode_name(mode)


def managed_settings_paths(managed_dir: Path | None = None) -> tuple[SettingsFile, ...]:
    """The managed settings files that exist: ``managed-settings.json``, then drop-ins.

    ``managed_dir`` defaults to :data:`MANAGED_SETTINGS_DIR`; the drop-ins are
    ``managed-settings.d/*.json`` in name order (later ones win), as Claude
    Code merges them.
    """
    base = managed_dir if managed_dir is not None else MANAGED_SETTINGS_DIR
    found = []
    main = base / "managed-settings.json"
    if main.is_file():
        found.append(SettingsFile(main, "managed"))
    drop_ins = base / "managed-settings.d"
    if drop_ins.is_dir():
        found += [
            SettingsFile(p, "managed")
            for p in sorted(drop_ins.glob("*.json"))
            if p.is_file() and not p.name.startswith(".")
        ]
    return tuple(found)


def default_settings_paths(
    cwd: Path | None = None, *, home: Path | None = None, managed_dir: Path | None = None
) -> tuple[SettingsFile, ...]:
    """The standard settings files that exist, lowest precedence first.

    ``~/.claude/settings.json`` (user), ``{cwd}/.claude/settings.json``
    (project), ``{cwd}/.claude/settings.local.json`` (local), then the
    managed files (:func:`managed_settings_paths` of ``managed_dir``).
    """
    cwd = cwd if cwd is not None else Path.cwd()
    home = home if home is not None else Path.home()
    candidates = (
        SettingsFile(home / ".claude" / "settings.json", "user"),
        SettingsFile(cwd / ".claude" / "settings.json", "project"),
        SettingsFile(cwd / ".claude" / "settings.local.json", "local"),
    )
    found = tuple(file for file in candidates if file.path.is_file())
    return found + managed_settings_paths(managed_dir)


@attrs.define
class _Merge:
    allow: list[PermissionRule] = attrs.field(factory=list)
    ask: list[PermissionRule] = attrs.field(factory=list)
    deny: list[PermissionRule] = attrs.field(factory=list)
    hooks: HookSet = attrs.field(factory=HookSet)
    managed_hooks: HookSet = attrs.field(factory=HookSet)
    mode: PermissionMode | None = None
    disable_all: bool | None = None
    managed_disable_all: bool = False
    problems: list[str] = attrs.field(factory=list)
    names: list[str] = attrs.field(factory=list)
    http_urls: list[str] | None = None  # allowedHttpHookUrls, merged (None: no source set it)
    http_env: list[str] | None = None  # httpHookAllowedEnvVars, merged
    sandbox: SandboxSettings = attrs.field(factory=SandboxSettings)


def load_settings(*sources: SettingsSource) -> Settings:
    """Load and merge settings files (paths) and already-parsed settings (mappings).

    A :class:`SettingsFile` brings its scope (``default_settings_paths``
    returns them); a plain path or mapping counts as a project-like source.  A
    :class:`Settings` (what this function returns) merges in as one source:
    its rules, its hooks in force, its mode, and its problems and source
    names, so loaded settings compose (``GuardRails.from_settings(settings,
    {"permissions": ...})``).

    Raises:
        ConfigurationError: a file cannot be read or is not JSON, or a field
            has the wrong type; the message names the source and the field.
    """
    merge = _Merge()
    for number, source in enumerate(sources, start=1):
        if isinstance(source, Settings):
            _merge_loaded(merge, source)
            continue
        scope: SettingsScope = "other"
        if isinstance(source, SettingsFile):
            scope = source.scope
        if isinstance(source, Mapping):
            name, data = f"<settings #{number}>", source
        else:
            name, data = os.fspath(source), _read_json(source)
        merge.names.append(name)
        _load_one(merge, data, name, scope, source)
    hooks = _restrict_http(merge.hooks + merge.managed_hooks, merge)
    if merge.managed_disable_all:
        hooks = HookSet()
    elif merge.disable_all:
        hooks = merge.managed_hooks
    permissions = PermissionContext(
        allow=merge.allow, ask=merge.ask, deny=merge.deny, mode=merge.mode or "default"
    )
    return Settings(
        permissions,
        hooks,
        merge.mode,
        tuple(merge.problems),
        tuple(merge.names),
        bool(merge.disable_all or merge.managed_disable_all),
        merge.sandbox,
    )


def _merge_loaded(merge: _Merge, settings: Settings) -> None:
    """Merge settings loaded before: already checked, so nothing is reported again."""
    permissions = settings.permissions
    for rules, into in (
        (permissions.allow, merge.allow),
        (permissions.ask, merge.ask),
        (permissions.deny, merge.deny),
    ):
        into += [rule for rule in rules if rule not in into]
    merge.hooks += settings.hooks
    merge.mode = settings.mode or merge.mode
    merge.problems += settings.problems
    merge.names += settings.sources


def _load_one(
    merge: _Merge,
    data: Mapping[str, object],
    name: str,
    scope: SettingsScope,
    source: SettingsSource,
) -> None:
    def report(field: str, problem: str) -> None:
        line = f"{name}: {field}: {problem}"
        logger.warning("%s", line)
        merge.problems.append(line)

    for key in data:
        if key not in _TOP_LEVEL_KEYS:
            report(key, f"unknown setting{suggestion(key, _TOP_LEVEL_KEYS)}; it is ignored")
    section = data.get("permissions")
    if section is not None:
        if not isinstance(section, Mapping):
            raise ConfigurationError(f"{name}: permissions: expected an object")
        for key in section:
            if key not in PERMISSION_KEYS:
                hint = suggestion(key, PERMISSION_KEYS)
                report(f"permissions.{key}", f"unknown key{hint}; it is ignored")
        root = _user_root(source) if scope == "user" else None
        for behavior, into in (("allow", merge.allow), ("ask", merge.ask), ("deny", merge.deny)):
            for rule in read_rules(section, behavior, name, report, root):
                if rule not in into:
                    into.append(rule)
        merge.mode = read_mode(section, name, report) or merge.mode
    if "allowedHttpHookUrls" in data:  # arrays merge across sources
        urls = merge.http_urls = merge.http_urls or []
        urls += _strings(data["allowedHttpHookUrls"], name, "allowedHttpHookUrls")
    if "httpHookAllowedEnvVars" in data:
        env = merge.http_env = merge.http_env or []
        env += _strings(data["httpHookAllowedEnvVars"], name, "httpHookAllowedEnvVars")
    disable = data.get("disableAllHooks")
    if disable is not None:
        if not isinstance(disable, bool):
            raise ConfigurationError(f"{name}: disableAllHooks: expected true or false")
        if scope == "managed":
            merge.managed_disable_all = merge.managed_disable_all or disable
        else:
            merge.disable_all = disable
    if "sandbox" in data:
        found_sandbox = parse_sandbox(
            data["sandbox"],
            name=name,
            managed=scope == "managed",
            root=_sandbox_root(source, scope),
            report=report,
        )
        merge.sandbox = merge.sandbox.merged(found_sandbox)
    if "hooks" in data:
        found = HookSet.from_settings(data, source=name, problems=merge.problems)
        if scope == "managed":
            merge.managed_hooks += found
        else:
            merge.hooks += found


def _strings(raw: object, name: str, key: str) -> list[str]:
    if not isinstance(raw, list) or not all(isinstance(v, str) for v in raw):
        raise ConfigurationError(f"{name}: {key}: expected a list of strings")
    return list(raw)


def _restrict_http(hooks: HookSet, merge: _Merge) -> HookSet:
    """Apply ``allowedHttpHookUrls`` and ``httpHookAllowedEnvVars`` (merged over every source).

    As Claude Code: when the URL list is set, an HTTP hook whose URL matches
    no pattern never runs (an empty list: no HTTP hook runs), reported as a
    problem; when the variable list is set, a hook's ``allowedEnvVars`` is
    cut down to the variables it also names.
    """
    if merge.http_urls is None and merge.http_env is None:
        return hooks
    urls, env = merge.http_urls, merge.http_env
    kept = []
    for entry in hooks.entries:
        hook = entry.hook
        if isinstance(hook, HttpHook):
            if urls is not None and not url_allowed(hook.url, tuple(urls)):
                line = (
                    f"{', '.join(merge.names)}: allowedHttpHookUrls: the {entry.event} http "
                    f"hook to {hook.url!r} matches no allowed URL pattern; it never runs"
                )
                logger.warning("%s", line)
                merge.problems.append(line)
                continue
            if env is not None:
                allowed = tuple(v for v in hook.allowed_env_vars if v in env)
                entry = attrs.evolve(entry, hook=attrs.evolve(hook, allowed_env_vars=allowed))
        kept.append(entry)
    return HookSet(kept)


def _user_root(source: SettingsSource) -> Path | None:
    """``~/.claude`` for a user settings file: where its leading-``/`` path rules are rooted."""
    if isinstance(source, SettingsFile):
        return source.path.parent
    return None


def _sandbox_root(source: SettingsSource, scope: SettingsScope) -> Path | None:
    """What relative ``sandbox.filesystem`` entries of ``source`` are relative to.

    ``~/.claude`` for user settings, the project root (the parent of
    ``.claude/``) for project and local settings and for any file in a
    ``.claude`` directory; None (the call's working directory) otherwise.
    """
    if isinstance(source, SettingsFile):
        path = source.path.absolute()
    elif isinstance(source, (str, os.PathLike)):
        path = Path(os.fspath(source)).absolute()
    else:  # a mapping, or settings already loaded: no file to be relative to
        return None
    if scope == "user":
        return path.parent
    if scope in ("project", "local") or path.parent.name == ".claude":
        return path.parent.parent
    return None


def _read_json(path: str | os.PathLike[str]) -> Mapping[str, object]:
    name = os.fspath(path)
    try:
        text = Path(name).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigurationError(f"{name}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigurationError(f"{name}: not UTF-8 text: {exc.reason}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigurationError(
            f"{name}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
        ) from None
    if not isinstance(data, dict):
        raise ConfigurationError(f"{name}: expected a JSON object at the top level")
    return data
