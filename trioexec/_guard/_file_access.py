"""Enforcing declared path access: rule families, protected writes, and what a search may show.

A tool declaring :class:`~trioexec.PathAccess` is governed by path rules of
its own name and of its families (``Read`` for reading, ``Edit`` for
writing; :meth:`PathAccess.rule_families`).  The permission chain asks this
module three things:

- :func:`rule_names` and :func:`paths_match`: which rules apply and whether
  one covers the call's paths.  A deny or ask rule covers a path as written
  *or* with symlinks resolved; an allow rule must cover it both ways, so a
  symlink can neither lead around a deny rule nor out of an allowed tree.
- :func:`protected_write`: a write to a protected path
  (:func:`~trioexec._guard._protected.protected_path_reason`) asks, in every mode,
  with Claude Code's text ``Claude requested permissions to edit {path}
  which is a sensitive file.``
- :func:`denial_before_validation`: a deny rule covering the path answers
  before the tool's own validation runs, so a tool never tells whether a
  denied file exists or what it contains (``File does not exist``).

Tools that list or search many files (Glob, Grep) ask :func:`read_filter`
once per call for a :class:`ReadFilter`, and skip every file it hides: the
files deny and ask rules of their families cover.

Everything here is synchronous (``os.path.realpath`` on a local file system),
with no trio, so it runs in the event loop thread or in a worker thread alike.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from .._contract._path_access import PathAccess
from .._contract._tool import PermissionResult
from .._texts import (
    edit_denied_message,
    permission_denied_message,
    read_denied_message,
    sensitive_file_message,
)
from ._path_rules import match_path_rule
from ._protected import protected_reason_resolved

if TYPE_CHECKING:
    from .._contract._permission_context import PermissionContext
    from .._contract._rules import RuleBehavior
    from .._contract._tool import CallContext, Tool

__all__ = [
    "NOTHING_HIDDEN",
    "ReadFilter",
    "Resolver",
    "denial_before_validation",
    "path_access_of",
    "path_denial_message",
    "path_rule_covers",
    "paths_match",
    "protected_write",
    "read_filter",
    "rule_names",
]


def path_access_of(tool: Tool[Any]) -> PathAccess | None:
    """The tool's :class:`PathAccess` declaration, or None (also for a malformed attribute)."""
    access = getattr(tool, "path_access", None)
    return access if isinstance(access, PathAccess) else None


def rule_names(
    tool: Tool[Any], access: PathAccess | None, behavior: RuleBehavior
) -> tuple[str, ...]:
    """The names whose ``behavior`` rules govern ``tool``: its own, its aliases, its families."""
    names = (tool.name, *tool.aliases)
    if access is None:
        return names
    return tuple(dict.fromkeys([*names, *access.rule_families(behavior)]))


def _absolute(raw: str | os.PathLike[str], cwd: Path) -> str:
    return os.path.normpath(os.path.join(cwd, os.path.expanduser(os.fspath(raw))))


class Resolver:
    """Symlink resolution for one permission decision: each path is resolved once.

    Never shared between calls (the file system may change between them).
    """

    __slots__ = ("_real", "_real_cwd", "cwd")

    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd
        self._real: dict[str, str] = {}
        self._real_cwd: Path | None = None

    def real(self, written: str) -> str:
        """``written`` (absolute, normalised) with every symlink resolved."""
        found = self._real.get(written)
        if found is None:
            found = self._real[written] = os.path.realpath(written)
        return found

    def real_cwd(self) -> Path:
        """The working directory with every symlink resolved."""
        if self._real_cwd is None:
            self._real_cwd = Path(self.real(os.path.normpath(self.cwd)))
        return self._real_cwd


def path_rule_covers(
    content: str,
    path: str | os.PathLike[str],
    cwd: Path,
    *,
    behavior: RuleBehavior = "deny",
    resolver: Resolver | None = None,
) -> bool:
    """Whether the path rule ``content`` covers ``path`` for a ``behavior`` rule.

    A deny or ask rule covers the path as written or with symlinks resolved
    (the resolved path is matched against ``cwd`` as written and resolved, so
    a symlinked working directory does not move the rules' root).  An allow
    rule covers it only when it covers both the written and the resolved path,
    so ``src/link -> ~/.ssh`` is not allowed by ``Edit(./src/**)``.  Blocking
    file system calls (``realpath``); cheap enough for the event loop thread.
    ``resolver`` shares the resolutions of one decision.
    """
    written = _absolute(path, cwd)
    as_written = match_path_rule(content, written, cwd=cwd)
    if as_written and behavior != "allow":
        return True
    if not as_written and behavior == "allow":
        return False
    resolver = resolver or Resolver(cwd)
    real = resolver.real(written)
    if real == written:
        return as_written
    if match_path_rule(content, real, cwd=cwd):
        return True
    real_cwd = resolver.real_cwd()
    return real_cwd != cwd and match_path_rule(content, real, cwd=real_cwd)


def paths_match(
    contents: tuple[str, ...],
    paths: tuple[str, ...] | None,
    cwd: Path,
    behavior: RuleBehavior,
    resolver: Resolver | None = None,
) -> bool:
    """Whether one of the path rule ``contents`` applies to a call naming ``paths``.

    A deny or ask rule applies when it covers any of the paths; an allow rule
    when it covers all of them (and there is at least one).  ``paths`` None
    (the field held no readable path) fails closed: every deny and ask rule
    applies, no allow rule does.
    """
    if not contents:
        return False
    if paths is None:
        return behavior != "allow"
    if not paths:
        return False
    resolver = resolver or Resolver(cwd)
    if behavior == "allow":
        return any(
            all(path_rule_covers(c, p, cwd, behavior="allow", resolver=resolver) for p in paths)
            for c in contents
        )
    return any(
        path_rule_covers(c, p, cwd, behavior=behavior, resolver=resolver)
        for c in contents
        for p in paths
    )


def protected_write(
    tool: Tool[Any], parsed_input: object, ctx: CallContext, resolver: Resolver | None = None
) -> PermissionResult | None:
    """A safety-check ask when the call writes a protected path; None when it does not.

    Only tools declaring ``PathAccess(writes=True)`` are judged.  A field that
    holds no readable path asks too (it cannot be judged).
    """
    access = path_access_of(tool)
    if access is None or not access.writes:
        return None
    paths = access.paths(parsed_input)
    if paths is None:
        return PermissionResult.ask(
            f"Claude requested permissions to use {tool.name}, whose {access.field} "
            "could not be read as a path.",
            safety_check=True,
        )
    resolver = resolver or Resolver(ctx.cwd)
    for path in paths:
        written = _absolute(path, ctx.cwd)
        if protected_reason_resolved(written, resolver.real(written)) is not None:
            return PermissionResult.ask(
                sensitive_file_message(_absolute(path, ctx.cwd)), safety_check=True
            )
    return None


def path_denial_message(
    tool: Tool[Any], parsed_input: object, ctx: CallContext, contents: tuple[str, ...] = ()
) -> str:
    """The model's text when a content deny rule stops the call.

    The tool's own :meth:`~trioexec.Tool.rule_denial_message` first; for a
    tool declaring path access, ``Permission to edit {path} has been denied.``
    (a writer) or ``Permission to read {path} has been denied.`` (a reader),
    ``{path}`` absolute, as Claude Code names what was denied (the first path
    one of the deny rule ``contents`` covers); otherwise ``Permission to use
    {Tool} has been denied.``
    """
    own = tool.rule_denial_message(parsed_input, ctx)
    if own:
        return own
    access = path_access_of(tool)
    paths = access.paths(parsed_input) if access is not None else None
    if access is None or not paths:
        return permission_denied_message(tool.name)
    covered = next(
        (p for p in paths if any(path_rule_covers(c, p, ctx.cwd) for c in contents)), paths[0]
    )
    shown = _absolute(covered, ctx.cwd)
    return edit_denied_message(shown) if access.writes else read_denied_message(shown)


def denial_before_validation(tool: Tool[Any], parsed_input: object, ctx: CallContext) -> str | None:
    """The denial of a call a deny rule stops, decided before the tool's validation runs.

    A tool's validation may reveal what the permission chain would hide
    (``File does not exist``, ``String to replace not found``), so the deny
    rules of a declaring tool and its families are matched first.  The answer
    is the chain's own text: ``Permission to use {Tool} has been denied.`` for
    a whole-tool rule, :func:`path_denial_message` for a path rule (Claude
    Code's Read, Write and Edit answer a path rule with the input error
    :data:`DENIED_DIRECTORY`; trioexec keeps one denial text, naming the
    path, under every policy).  None: no deny rule applies (the chain still
    decides later, for the input as hooks may replace it).
    """
    permissions = ctx.permissions
    access = path_access_of(tool)
    if permissions is None or access is None:
        return None
    deny = permissions.rules_for(rule_names(tool, access, "deny"), "deny")
    if deny.whole:
        return permission_denied_message(tool.name)
    if paths_match(deny.contents, access.paths(parsed_input), ctx.cwd, "deny"):
        return path_denial_message(tool, parsed_input, ctx, deny.contents)
    return None


DENIED_DIRECTORY = "File is in a directory that is denied by your permission settings."
"""Claude Code's Read, Write and Edit input error for a path a deny rule covers
(trioexec answers with :func:`path_denial_message`; docs/policies.md lists it)."""


@attrs.frozen
class ReadFilter:
    """Which files a listing or searching tool must not show (or read).

    ``hides(path)`` is true for a file a deny or ask rule of the tool's read
    families covers (as written or resolved).  Ask rules that cover the
    call's own path are left out: the chain already asked about them.
    Thread-safe and synchronous: call it from the worker thread that walks.
    """

    cwd: Path
    contents: tuple[str, ...] = ()
    everything: bool = False
    """A whole-tool deny: every file is hidden."""

    def __bool__(self) -> bool:
        """Whether anything may be hidden (False: skip the per-file check)."""
        return self.everything or bool(self.contents)

    def hides(self, path: str | os.PathLike[str]) -> bool:
        """Whether ``path`` must be left out of the tool's answer."""
        if self.everything:
            return True
        return any(path_rule_covers(c, path, self.cwd) for c in self.contents)


NOTHING_HIDDEN = ReadFilter(Path("/"))
"""The filter of a call with no read rules: hides nothing."""


def read_filter(tool: Tool[Any], ctx: CallContext, target: str | None = None) -> ReadFilter:
    """The :class:`ReadFilter` for one listing or searching call of ``tool``.

    Args:
        tool: the tool (its name, aliases and :class:`PathAccess` families;
            a tool declaring nothing is treated as a reader).
        ctx: the call's context (``permissions`` and ``cwd``).
        target: the path the call searches (its declared field), if any:
            ask rules covering it were already asked about and hide nothing.

    Returns:
        A filter; :data:`NOTHING_HIDDEN` when no rule could hide a file.
    """
    permissions: PermissionContext | None = ctx.permissions
    if permissions is None:
        return NOTHING_HIDDEN
    access = path_access_of(tool) or PathAccess("path", reads=True, default=".")
    names = rule_names(tool, attrs.evolve(access, reads=True, writes=False), "deny")
    deny = permissions.rules_for(names, "deny")
    if deny.whole:
        return ReadFilter(ctx.cwd, everything=True)
    ask = permissions.rules_for(names, "ask")
    asked: tuple[str, ...] = ()
    if ask.contents and not ask.whole:
        where = target if target is not None else access.default
        asked = tuple(
            c for c in ask.contents if where is None or not path_rule_covers(c, where, ctx.cwd)
        )
    contents = tuple(dict.fromkeys([*deny.contents, *asked]))
    if not contents:
        return NOTHING_HIDDEN
    return ReadFilter(ctx.cwd, contents)
