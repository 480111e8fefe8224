"""The ``sandbox`` key of Claude Code's settings files: read, checked, merged.

Pure data: nothing here runs a process or looks at the file system (except
:meth:`SandboxPath.resolve`, which only joins paths).  What the settings say
is :class:`SandboxSettings`; several files merge with
:meth:`SandboxSettings.merged`, as Claude Code merges them: a boolean comes
from the highest-precedence file that sets it, lists are concatenated.

Path entries (``filesystem.allowWrite`` and the other lists) keep the file
they came from, because their prefix rules depend on it (and are the
**opposite** of ``Read(...)`` / ``Edit(...)`` rules): ``/x`` and ``//x`` are
absolute, ``~/x`` is in the home directory, ``./x`` or ``x`` is relative to
the project root for project settings and to ``~/.claude`` for user
settings.  A trailing ``/`` or ``/**`` is stripped.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Literal, TypeAlias

import attrs

from ..._errors import ConfigurationError

__all__ = [
    "SandboxPath",
    "SandboxSettings",
    "parse_sandbox",
]

Report: TypeAlias = Callable[[str, str], None]
"""``report(field, problem)``: how a problem of a settings file is told."""

PathList: TypeAlias = Literal["allowWrite", "denyWrite", "denyRead", "allowRead"]

_TOP_KEYS = (
    "enabled",
    "failIfUnavailable",
    "autoAllowBashIfSandboxed",
    "excludedCommands",
    "allowUnsandboxedCommands",
    "enableWeakerNestedSandbox",
    "enableWeakerNetworkIsolation",
    "allowAppleEvents",
    "bwrapPath",
    "socatPath",
    "ripgrep",
    "ignoreViolations",
    "filesystem",
    "network",
    "credentials",
)
_FILESYSTEM_KEYS = (
    "allowWrite",
    "denyWrite",
    "denyRead",
    "allowRead",
    "allowManagedReadPathsOnly",
    "disabled",
)
_NETWORK_KEYS = (
    "allowedDomains",
    "deniedDomains",
    "allowUnixSockets",
    "allowAllUnixSockets",
    "allowLocalBinding",
    "allowMachLookup",
    "allowManagedDomainsOnly",
    "strictAllowlist",
    "httpProxyPort",
    "socksProxyPort",
    "tlsTerminate",
)
_NOT_IMPLEMENTED = {
    "credentials": "secret masking in the proxy is not implemented by trioexec",
    "filesystem.allowManagedReadPathsOnly": "not implemented by trioexec",
    "filesystem.disabled": "not implemented by trioexec: the filesystem rules still apply",
    "network.allowManagedDomainsOnly": "not implemented by trioexec",
    "network.tlsTerminate": "TLS termination is not implemented by trioexec",
    "network.httpProxyPort": "an external proxy is not supported: trioexec runs its own",
    "network.socksProxyPort": "an external proxy is not supported: trioexec runs its own",
}
"""Claude Code keys that would restrict more than trioexec enforces: each is reported
(a file using them should know they have no effect here)."""
_MANAGED_ONLY = ("bwrapPath", "socatPath")
_GLOB_CHARS = frozenset("*?[")


@attrs.frozen
class SandboxPath:
    """One entry of a ``sandbox.filesystem`` list, with the root its relative form uses.

    Attributes:
        text: the entry as written (a trailing ``/`` or ``/**`` already stripped).
        root: what ``./x`` and ``x`` are relative to: the project root of a
            project settings file, ``~/.claude`` for user settings; None: the
            working directory of the call (settings given as a mapping, or a
            file whose project is not known).
    """

    text: str
    root: Path | None = None

    def resolve(self, cwd: Path, home: Path) -> Path:
        """The absolute path this entry names for a call running in ``cwd``.

        ``/x`` and ``//x`` are absolute; ``~`` and ``~/x`` are in ``home``;
        anything else is joined to :attr:`root` (or ``cwd``).  ``.`` and
        ``..`` are folded; symlinks are not followed.
        """
        text = self.text
        if text.startswith("/"):
            joined = "/" + text.lstrip("/")
        elif text == "~" or text.startswith("~/"):
            joined = os.path.join(home, text[2:])
        else:
            base = self.root if self.root is not None else cwd
            joined = os.path.join(base, text[2:] if text.startswith("./") else text)
        return Path(os.path.normpath(joined))

    @property
    def has_glob(self) -> bool:
        """Whether the entry contains ``*``, ``?`` or ``[`` (a pattern, not a path)."""
        return not _GLOB_CHARS.isdisjoint(self.text)


def _strip(text: str) -> str:
    """A trailing ``/**`` or ``/`` removed (``/`` alone stays)."""
    if text.endswith("/**"):
        text = text[:-3] or "/"
    while len(text) > 1 and text.endswith("/"):
        text = text[:-1]
    return text


@attrs.frozen
class SandboxSettings:
    """The ``sandbox`` settings of one or more files (None: no file set the boolean).

    The ``*_or_default`` properties give Claude Code's defaults.  Path lists
    hold :class:`SandboxPath` entries; :meth:`merged` concatenates them.
    """

    enabled: bool | None = None
    fail_if_unavailable: bool | None = None
    auto_allow_bash_if_sandboxed: bool | None = None
    allow_unsandboxed_commands: bool | None = None
    excluded_commands: tuple[str, ...] = ()
    allow_write: tuple[SandboxPath, ...] = ()
    deny_write: tuple[SandboxPath, ...] = ()
    deny_read: tuple[SandboxPath, ...] = ()
    allow_read: tuple[SandboxPath, ...] = ()
    allowed_domains: tuple[str, ...] = ()
    denied_domains: tuple[str, ...] = ()
    allow_unix_sockets: tuple[str, ...] = ()
    allow_all_unix_sockets: bool | None = None
    allow_local_binding: bool | None = None
    bwrap_path: str | None = None
    socat_path: str | None = None

    @property
    def is_enabled(self) -> bool:
        """``enabled``, false when unset."""
        return bool(self.enabled)

    @property
    def auto_allow(self) -> bool:
        """``autoAllowBashIfSandboxed``, true when unset."""
        return self.auto_allow_bash_if_sandboxed is not False

    @property
    def allows_unsandboxed(self) -> bool:
        """``allowUnsandboxedCommands``, true when unset."""
        return self.allow_unsandboxed_commands is not False

    def merged(self, higher: SandboxSettings) -> SandboxSettings:
        """These settings under ``higher`` (a file of higher precedence).

        A boolean (or executable path) ``higher`` sets wins; lists are
        concatenated, this file's entries first, duplicates dropped.
        """
        changes: dict[str, object] = {}
        for field in attrs.fields(SandboxSettings):
            mine, theirs = getattr(self, field.name), getattr(higher, field.name)
            if isinstance(mine, tuple):
                changes[field.name] = tuple(dict.fromkeys((*mine, *theirs)))
            else:
                changes[field.name] = theirs if theirs is not None else mine
        return SandboxSettings(**changes)  # type: ignore[arg-type]

    def with_enabled(self) -> SandboxSettings:
        """The same settings with ``enabled: true`` (``trioexec agent --sandbox``)."""
        return attrs.evolve(self, enabled=True)

    def to_json(self) -> dict[str, object]:
        """The effective settings in Claude Code's JSON shape, defaults filled in."""

        def paths(entries: tuple[SandboxPath, ...]) -> list[str]:
            return [
                e.text
                if e.root is None or e.text.startswith(("/", "~"))
                else os.path.join(e.root, e.text[2:] if e.text.startswith("./") else e.text)
                for e in entries
            ]

        shown: dict[str, object] = {
            "enabled": self.is_enabled,
            "failIfUnavailable": bool(self.fail_if_unavailable),
            "autoAllowBashIfSandboxed": self.auto_allow,
            "allowUnsandboxedCommands": self.allows_unsandboxed,
            "excludedCommands": list(self.excluded_commands),
            "filesystem": {
                "allowWrite": paths(self.allow_write),
                "denyWrite": paths(self.deny_write),
                "denyRead": paths(self.deny_read),
                "allowRead": paths(self.allow_read),
            },
            "network": {
                "allowedDomains": list(self.allowed_domains),
                "deniedDomains": list(self.denied_domains),
                "allowUnixSockets": list(self.allow_unix_sockets),
                "allowAllUnixSockets": bool(self.allow_all_unix_sockets),
                "allowLocalBinding": bool(self.allow_local_binding),
            },
        }
        if self.bwrap_path is not None:
            shown["bwrapPath"] = self.bwrap_path
        if self.socat_path is not None:
            shown["socatPath"] = self.socat_path
        return shown


def parse_sandbox(
    raw: object,
    *,
    name: str,
    managed: bool,
    root: Path | None,
    report: Report,
) -> SandboxSettings:
    """Read the ``sandbox`` value of one settings file.

    Args:
        raw: the value of the ``sandbox`` key.
        name: the file's name, for error messages.
        managed: whether the file is managed settings (only those may set
            ``bwrapPath`` and ``socatPath``).
        root: what relative ``filesystem`` entries are relative to (see
            :class:`SandboxPath`).
        report: called with ``(field, problem)`` for each problem that does
            not stop the file loading: an unknown key (the likely intended
            spelling named), a key trioexec does not implement, a write entry
            with a glob (skipped on Linux, as Claude Code), ``bwrapPath``
            outside managed settings.

    Raises:
        ConfigurationError: a value of the wrong type, naming the file and the field.
    """
    from ..._hooks._settings import suggestion

    section = _object(raw, name, "sandbox")
    for key in section:
        if key not in _TOP_KEYS:
            report(f"sandbox.{key}", f"unknown key{suggestion(key, _TOP_KEYS)}; it is ignored")
        elif key in _NOT_IMPLEMENTED:
            report(f"sandbox.{key}", f"{_NOT_IMPLEMENTED[key]}; it is ignored")
    values: dict[str, object] = {}
    for key, attr in (
        ("enabled", "enabled"),
        ("failIfUnavailable", "fail_if_unavailable"),
        ("autoAllowBashIfSandboxed", "auto_allow_bash_if_sandboxed"),
        ("allowUnsandboxedCommands", "allow_unsandboxed_commands"),
    ):
        values[attr] = _boolean(section, key, name, "sandbox")
    values["excluded_commands"] = _strings(section, "excludedCommands", name, "sandbox")
    for key, attr in (("bwrapPath", "bwrap_path"), ("socatPath", "socat_path")):
        text = section.get(key)
        if text is None:
            continue
        if not isinstance(text, str) or not text.startswith("/"):
            raise ConfigurationError(f"{name}: sandbox.{key}: expected an absolute path")
        if key in _MANAGED_ONLY and not managed:
            report(f"sandbox.{key}", "only managed settings may set it; it is ignored")
            continue
        values[attr] = text
    filesystem = section.get("filesystem")
    if filesystem is not None:
        fs = _object(filesystem, name, "sandbox.filesystem")
        for key in fs:
            field = f"sandbox.filesystem.{key}"
            if key not in _FILESYSTEM_KEYS:
                report(field, f"unknown key{suggestion(key, _FILESYSTEM_KEYS)}; it is ignored")
            elif field[len("sandbox.") :] in _NOT_IMPLEMENTED:
                report(field, f"{_NOT_IMPLEMENTED[field[len('sandbox.') :]]}; it is ignored")
        for key, attr in (
            ("allowWrite", "allow_write"),
            ("denyWrite", "deny_write"),
            ("denyRead", "deny_read"),
            ("allowRead", "allow_read"),
        ):
            entries = []
            for index, text in enumerate(_strings(fs, key, name, "sandbox.filesystem")):
                entry = SandboxPath(_strip(text), root)
                if key in ("allowWrite", "denyWrite") and entry.has_glob:
                    report(
                        f"sandbox.filesystem.{key}[{index}]",
                        f"{text!r} is a pattern; write entries with '*', '?' or '[' are "
                        "skipped on Linux (as Claude Code does)",
                    )
                    continue
                entries.append(entry)
            values[attr] = tuple(entries)
    network = section.get("network")
    if network is not None:
        net = _object(network, name, "sandbox.network")
        for key in net:
            field = f"sandbox.network.{key}"
            if key not in _NETWORK_KEYS:
                report(field, f"unknown key{suggestion(key, _NETWORK_KEYS)}; it is ignored")
            elif field[len("sandbox.") :] in _NOT_IMPLEMENTED:
                report(field, f"{_NOT_IMPLEMENTED[field[len('sandbox.') :]]}; it is ignored")
        at = "sandbox.network"
        values["allowed_domains"] = _strings(net, "allowedDomains", name, at)
        values["denied_domains"] = _strings(net, "deniedDomains", name, at)
        values["allow_unix_sockets"] = _strings(net, "allowUnixSockets", name, at)
        values["allow_all_unix_sockets"] = _boolean(net, "allowAllUnixSockets", name, at)
        values["allow_local_binding"] = _boolean(net, "allowLocalBinding", name, at)
        if net.get("strictAllowlist") is False:
            report(
                f"{at}.strictAllowlist",
                "trioexec asks nobody about an unlisted domain: it is always refused",
            )
    return SandboxSettings(**values)  # type: ignore[arg-type]


def _object(raw: object, name: str, field: str) -> Mapping[str, object]:
    if not isinstance(raw, Mapping):
        raise ConfigurationError(f"{name}: {field}: expected an object")
    return raw


def _boolean(section: Mapping[str, object], key: str, name: str, at: str) -> bool | None:
    value = section.get(key)
    if value is not None and not isinstance(value, bool):
        raise ConfigurationError(f"{name}: {at}.{key}: expected true or false")
    return value


def _strings(section: Mapping[str, object], key: str, name: str, at: str) -> tuple[str, ...]:
    value = section.get(key)
    if value is None:
        return ()
    if not isinstance(value, list):
        raise ConfigurationError(f"{name}: {at}.{key}: expected a list of strings")
    for index, item in enumerate(value):
        if not isinstance(item, str):
            raise ConfigurationError(
                f"{name}: {at}.{key}[{index}]: expected a string, got {type(item).__name__}"
            )
    return tuple(value)
