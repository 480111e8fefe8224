"""Loading Claude Code settings files: the ``permissions`` and ``hooks`` sections.

Several sources (typically user, project, local, in that order) merge into one
:class:`Settings`: rule lists and hooks are concatenated, so a deny rule in
any source wins (deny is always checked first); ``permissions.defaultMode``
is taken from the last source that sets it (a mode trioexec does not have,
such as ``acceptEdits`` or ``plan``, counts as ``default`` and is logged on
``trioexec.settings``).  Other top-level keys of the files (``env``,
``model``, ...) are ignored.  A malformed source raises
:class:`~trioexec.ConfigurationError` naming the source and the field, e.g.
``.claude/settings.json: permissions.deny[2]: expected a string, got int``.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping
from pathlib import Path

import attrs

from ._errors import ConfigurationError
from ._hooks import HookSet
from ._permission_context import PermissionContext, PermissionMode, mode_from_name
from ._rules import PermissionRule

__all__ = ["Settings", "SettingsSource", "default_settings_paths", "load_settings"]

SettingsSource = str | os.PathLike[str] | Mapping[str, object]

logger = logging.getLogger("trioexec.settings")


@attrs.frozen
class Settings:
    """The merged ``permissions`` and ``hooks`` of one or more settings sources.

    ``mode`` is None when no source sets ``permissions.defaultMode``.
    """

    permissions: PermissionContext = attrs.field(factory=PermissionContext)
    hooks: HookSet = attrs.field(factory=HookSet)
    mode: PermissionMode | None = None


def default_settings_paths(
    cwd: Path | None = None, *, home: Path | None = None
) -> tuple[Path, ...]:
    """The standard settings files that exist, lowest precedence first.

    ``~/.claude/settings.json`` (user), ``{cwd}/.claude/settings.json``
    (project), ``{cwd}/.claude/settings.local.json`` (local).
    """
    cwd = cwd if cwd is not None else Path.cwd()
    home = home if home is not None else Path.home()
    candidates = (
        home / ".claude" / "settings.json",
        cwd / ".claude" / "settings.json",
        cwd / ".claude" / "settings.local.json",
    )
    return tuple(path for path in candidates if path.is_file())


def load_settings(*sources: SettingsSource) -> Settings:
    """Load and merge settings files (paths) and already-parsed settings (mappings).

    Raises:
        ConfigurationError: a file cannot be read or is not JSON, or a field
            is malformed; the message names the source and the field.
    """
    allow: list[PermissionRule] = []
    ask: list[PermissionRule] = []
    deny: list[PermissionRule] = []
    hooks = HookSet()
    mode: PermissionMode | None = None
    for number, source in enumerate(sources, start=1):
        if isinstance(source, Mapping):
            name, data = f"<settings #{number}>", source
        else:
            name, data = os.fspath(source), _read_json(source)
        section = data.get("permissions")
        if section is not None:
            if not isinstance(section, Mapping):
                raise ConfigurationError(f"{name}: permissions: expected an object")
            for behavior, into in (("allow", allow), ("ask", ask), ("deny", deny)):
                for rule in _rules(section, behavior, name):
                    if rule not in into:
                        into.append(rule)
            mode = _mode(section, name) or mode
        if "hooks" in data:
            hooks += HookSet.from_settings(data, source=name)
    permissions = PermissionContext(allow=allow, ask=ask, deny=deny, mode=mode or "default")
    return Settings(permissions, hooks, mode)


def _read_json(path: str | os.PathLike[str]) -> Mapping[str, object]:
    name = os.fspath(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
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


def _rules(section: Mapping[str, object], behavior: str, name: str) -> list[PermissionRule]:
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
            rules.append(PermissionRule.parse(text))
        except ValueError as exc:
            raise ConfigurationError(f"{name}: {field}: {exc}") from None
    return rules


def _mode(section: Mapping[str, object], name: str) -> PermissionMode | None:
    """The source's mode; Claude Code modes trioexec does not have fall back to ``default``.

    ``acceptEdits``, ``plan``, ``dontAsk`` (and modes added later) are valid in
    Claude Code, so refusing them would break settings files that work there;
    ``default`` is the mode that grants nothing by itself.
    """
    raw = section.get("defaultMode")
    if raw is None:
        return None
    if not isinstance(raw, str):
        raise ConfigurationError(
            f"{name}: permissions.defaultMode: expected a string, got {type(raw).__name__}"
        )
    mode = mode_from_name(raw)
    if mode is None:
        logger.warning(
            "%s: permissions.defaultMode: %r is not supported by trioexec; using 'default'",
            name,
            raw,
        )
        return "default"
    return mode
