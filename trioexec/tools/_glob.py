"""The ``Glob`` tool: find files by name pattern, oldest first (as ``rg --sort=modified``).

The files searched are ripgrep's selection (:mod:`._ignore`): ignored and
hidden files are left out unless the pattern names them.  With an ``rg``
binary available the listing comes from ``rg --files`` (:mod:`._ripgrep`);
the answer is the same either way.
"""

from __future__ import annotations

import functools
import os
import re
import time
from pathlib import Path
from typing import TYPE_CHECKING

import attrs
import trio

from .._contract._path_access import PathAccess
from .._contract._tool import PermissionResult
from .._guard._file_access import NOTHING_HIDDEN, ReadFilter, read_filter
from ._base import FileToolError, PathTool
from ._globs import GlobPatternError, compile_glob, expand_braces, has_magic
from ._ignore import FileSelection, is_hidden_pattern, walk_selected
from ._paths import OutsideRootError, display_path, resolve_path, resolve_sync
from ._responses import Reported, glob_response
from ._ripgrep import RipgrepChoice, rg_files, ripgrep_binary

if TYPE_CHECKING:
    from .._contract._tool import CallContext, ProgressSender

__all__ = ["GlobInput", "GlobTool"]

MAX_RESULTS = 100
TRUNCATED_NOTE = "(Results are truncated. Consider using a more specific path or pattern.)"
NO_FILES = "No files found"


@attrs.frozen
class GlobInput:
    """Input of ``Glob``."""

    pattern: str = attrs.field(
        metadata={"description": 'The glob pattern to match files against, e.g. "**/*.py"'}
    )
    path: str | None = attrs.field(
        default=None,
        metadata={"description": "The directory to search in (default: the working directory)"},
    )


@attrs.frozen
class _Search:
    """One brace alternative: a resolved base directory and the glob below it."""

    base: Path
    regex: re.Pattern[str]
    max_depth: int | None
    hidden: bool
    """The pattern names hidden entries (``.github/*``, ``**/.env``), so they are searched."""


class GlobTool(PathTool[GlobInput]):
    """Find files whose path (relative to ``path``) matches a glob.

    Concurrency-safe; an interrupt cancels it.  The walk runs in a worker
    thread that checks for cancellation every few hundred entries (or in an
    ``rg`` subprocess, killed on cancellation).

    Args:
        root: the workspace root (see :class:`PathTool`).
        ripgrep: ``True`` (default) lists files with an ``rg`` binary when one
            is found, ``False`` never does, a string is the binary to use.
    """

    name = "Glob"
    description = (
        "Fast file pattern matching. Supports globs like **/*.js or src/**/*.{ts,tsx}. "
        f"Returns matching file paths sorted by modification time, oldest first, at most "
        f"{MAX_RESULTS}."
    )
    input_type = GlobInput
    path_access = PathAccess("path", reads=True, default=".")

    def __init__(self, root: Path | str | None = None, *, ripgrep: RipgrepChoice = True) -> None:
        super().__init__(root)
        self.ripgrep = ripgrep

    def is_concurrency_safe(self, input: GlobInput) -> bool:  # noqa: A002
        return True

    def input_path(self, input: GlobInput) -> str | None:  # noqa: A002
        return input.path

    async def validate_input(self, input: GlobInput, ctx: CallContext) -> str | None:  # noqa: A002
        try:
            await self._plan(input, ctx)
        except FileToolError as exc:
            return str(exc)
        return None

    async def check_permissions(self, input: GlobInput, ctx: CallContext) -> PermissionResult:  # noqa: A002
        """Allowed only when every directory searched lies inside the working directory.

        Besides ``path``, the pattern's literal leading parts move the search
        (``../*``, ``/etc/*``, ``~/*``, one per brace alternative); those bases
        are resolved with symlinks followed.  An unusable pattern or path
        passes through (the permission chain decides).
        """
        result = await super().check_permissions(input, ctx)
        if result.behavior != "allow":
            return result
        try:
            searches, _ = await self._plan(input, ctx)
        except FileToolError:
            return PermissionResult.passthrough()
        cwd = await resolve_path(".", cwd=ctx.cwd, root=None)
        if all(search.base.is_relative_to(cwd) for search in searches):
            return result
        return PermissionResult.passthrough()

    async def call(
        self,
        input: GlobInput,  # noqa: A002
        ctx: CallContext,
        progress: ProgressSender,
    ) -> str:
        """List the matching files.

        Raises:
            FileToolError: the directory or the pattern is unusable.
        """
        started = time.monotonic()
        searches, cwd = await self._plan(input, ctx)
        rg = ripgrep_binary(self.ripgrep)
        listings: list[list[str] | None] = []
        for search in searches:
            listed = None
            if rg is not None:
                listed = await rg_files(
                    rg, search.base, hidden=search.hidden, max_depth=search.max_depth
                )
            listings.append(listed)
        hidden = read_filter(self, ctx, input.path)
        text = await trio.to_thread.run_sync(
            functools.partial(_run, searches, listings, cwd, hidden)
        )
        took = round((time.monotonic() - started) * 1000)
        response = glob_response(
            text, no_files=NO_FILES, truncated_note=TRUNCATED_NOTE, duration_ms=took
        )
        return Reported(text, response)

    async def _plan(self, input: GlobInput, ctx: CallContext) -> tuple[list[_Search], Path]:  # noqa: A002
        base = await self.resolve(input.path, ctx)
        return await trio.to_thread.run_sync(
            functools.partial(_plan_sync, input, base, ctx.cwd, self.root)
        )


def _plan_sync(
    input: GlobInput,  # noqa: A002
    base: Path,
    cwd: Path,
    root: Path | None,
) -> tuple[list[_Search], Path]:
    shown = input.path if input.path is not None else str(base)
    if not base.exists():
        raise FileToolError(f"Directory does not exist: {shown}")
    if not base.is_dir():
        raise FileToolError(f"Path is not a directory: {shown}")
    try:
        alternatives = expand_braces(input.pattern)
    except GlobPatternError as exc:
        raise FileToolError(f"Invalid glob pattern {input.pattern!r}: {exc}") from None
    searches = [_search_for(alt, base, root, input.pattern) for alt in alternatives]
    return searches, Path(os.path.realpath(cwd))


def _search_for(pattern: str, base: Path, root: Path | None, original: str) -> _Search:
    """Move the pattern's literal leading directories (``/abs``, ``..``) into the base."""
    expanded = os.path.expanduser(pattern)
    parts = expanded.split("/")
    literal: list[str] = []
    if expanded.startswith("/"):
        literal.append("/")
        parts = parts[1:]
    while len(parts) > 1 and not has_magic(parts[0]):
        literal.append(parts.pop(0))
    rest = "/".join(parts)
    if ".." in rest.split("/"):
        raise FileToolError(
            f"Invalid glob pattern {original!r}: '..' may only come before the first wildcard."
        )
    try:
        search_base = resolve_sync(os.path.join(*literal) if literal else ".", cwd=base, root=root)
        compiled = compile_glob(rest)
    except OutsideRootError as exc:
        raise FileToolError(str(exc)) from None
    except GlobPatternError as exc:
        raise FileToolError(f"Invalid glob pattern {original!r}: {exc}") from None
    components = [p for p in rest.split("/") if p not in ("", ".")]
    depth = None if "**" in components else len(components)
    return _Search(search_base, compiled, depth, is_hidden_pattern(rest))


def _run(
    searches: list[_Search],
    listings: list[list[str] | None],
    cwd: Path,
    hidden: ReadFilter = NOTHING_HIDDEN,
) -> str:
    found: dict[str, float] = {}
    prefix = os.fspath(cwd).rstrip("/") + "/"
    for search, listed in zip(searches, listings, strict=True):
        if not search.base.is_dir():
            continue
        for path in _matching(search, listed):
            if hidden and hidden.hides(path):  # a Read-denied file: not even its name
                continue
            try:
                mtime = os.stat(path, follow_symlinks=False).st_mtime
            except OSError:
                continue
            found.setdefault(_shown(path, cwd, prefix), mtime)
    if not found:
        return NO_FILES
    ordered = sorted(found, key=lambda p: (found[p], p))  # oldest first, after filtering
    lines = ordered[:MAX_RESULTS]
    if len(ordered) > MAX_RESULTS:
        lines.append(TRUNCATED_NOTE)
    return "\n".join(lines)


def _shown(path: str, cwd: Path, prefix: str) -> str:
    """:func:`display_path` for a normalised absolute path, without building Path objects."""
    if prefix != "/" and path.startswith(prefix):
        return path[len(prefix) :]
    return display_path(Path(path), cwd)


def _matching(search: _Search, listed: list[str] | None) -> list[str]:
    """Absolute paths of the selected files whose relative path the pattern matches."""
    base = os.fspath(search.base)
    if listed is not None:
        return [os.path.join(base, rel) for rel in listed if search.regex.fullmatch(rel)]
    selection = FileSelection.for_base(search.base, hidden=search.hidden)
    return [
        entry.path
        for rel, entry in walk_selected(selection, max_depth=search.max_depth)
        if search.regex.fullmatch(rel)
    ]
