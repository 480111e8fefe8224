"""Glob patterns and directory walking shared by ``Glob`` and ``Grep``.

Patterns use ``/`` as separator: ``*`` and ``?`` match within one path
component, ``[...]`` is a character class (``[!...]`` negated), ``**`` as a
whole component matches any number of directories, and ``{a,b}`` expands to
alternatives (nesting allowed).  Walking is synchronous (it runs in worker
threads), sorted by name for determinism, never follows directory symlinks
(no cycles) and skips version-control directories.  It checks for trio
cancellation every few hundred entries when run from a trio worker thread.
"""

from __future__ import annotations

import itertools
import os
import re
from typing import TYPE_CHECKING

import trio

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

__all__ = [
    "SKIPPED_DIRS",
    "GlobPatternError",
    "compile_glob",
    "expand_braces",
    "has_magic",
    "walk_files",
]

SKIPPED_DIRS = frozenset({".git", ".hg", ".svn", ".bzr", ".jj"})
MAX_BRACE_EXPANSIONS = 1024
_CANCEL_CHECK_EVERY = 256


class GlobPatternError(Exception):
    """A glob pattern cannot be used; the message says why."""


def has_magic(text: str) -> bool:
    """Whether ``text`` contains glob syntax."""
    return any(ch in text for ch in "*?[{")


def expand_braces(pattern: str) -> list[str]:
    """``a/{b,c{d,e}}.txt`` -> ``['a/b.txt', 'a/cd.txt', 'a/ce.txt']``.

    A brace group without a top-level comma is kept literally.

    Raises:
        GlobPatternError: more than MAX_BRACE_EXPANSIONS alternatives.
    """
    results = _expand(pattern)
    if len(results) > MAX_BRACE_EXPANSIONS:
        raise GlobPatternError(f"the pattern expands to more than {MAX_BRACE_EXPANSIONS} globs")
    return list(dict.fromkeys(results))


def _expand(pattern: str) -> list[str]:
    depth = 0
    start = -1
    commas: list[int] = []
    for i, ch in enumerate(pattern):
        if ch == "{":
            if depth == 0:
                start, commas = i, []
            depth += 1
        elif ch == "}" and depth:
            depth -= 1
            if depth == 0:
                if not commas:
                    head, tail = pattern[: i + 1], pattern[i + 1 :]
                    return [head + rest for rest in _expand(tail)]
                bounds = [start, *commas, i]
                options = [pattern[a + 1 : b] for a, b in itertools.pairwise(bounds)]
                prefix, suffix = pattern[:start], pattern[i + 1 :]
                out: list[str] = []
                for option in options:
                    out.extend(_expand(prefix + option + suffix))
                    if len(out) > MAX_BRACE_EXPANSIONS:
                        return out
                return out
        elif ch == "," and depth == 1:
            commas.append(i)
    return [pattern]


def compile_glob(pattern: str) -> re.Pattern[str]:
    """Compile one brace-free glob into a regex that fullmatches relative ``/`` paths."""
    parts = [p for p in pattern.split("/") if p not in ("", ".")]
    if not parts:
        raise GlobPatternError("the pattern is empty")
    regex = ""
    for index, part in enumerate(parts):
        last = index == len(parts) - 1
        if part == "**":
            regex += ".*" if last else "(?:[^/]+/)*"
        else:
            regex += _component(part) + ("" if last else "/")
    return re.compile(regex, re.DOTALL)


def _component(part: str) -> str:
    out = ""
    i = 0
    while i < len(part):
        ch = part[i]
        if ch == "*":
            out += "[^/]*"
        elif ch == "?":
            out += "[^/]"
        elif ch == "[":
            end = part.find("]", i + 2)
            if end < 0:
                out += re.escape(ch)
            else:
                body = part[i + 1 : end]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out += "[" + body.replace("\\", "\\\\") + "]"
                i = end
        else:
            out += re.escape(ch)
        i += 1
    return out


def walk_files(
    base: Path, *, max_depth: int | None = None
) -> Iterator[tuple[str, os.DirEntry[str]]]:
    """Yield ``(relative posix path, entry)`` for every file under ``base``.

    ``max_depth`` 1 means files directly in ``base``.  Symlinks to files are
    yielded; symlinks to directories are not descended.  Unreadable
    directories are skipped.
    """
    stack: list[tuple[str, str, int]] = [(os.fspath(base), "", 1)]
    seen = 0
    in_trio_thread = _in_trio_thread()
    while stack:
        directory, prefix, depth = stack.pop()
        try:
            with os.scandir(directory) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            continue
        subdirs: list[tuple[str, str, int]] = []
        for entry in entries:
            seen += 1
            if in_trio_thread and seen % _CANCEL_CHECK_EVERY == 0:
                trio.from_thread.check_cancelled()
            rel = prefix + entry.name
            try:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name not in SKIPPED_DIRS and (max_depth is None or depth < max_depth):
                        subdirs.append((entry.path, rel + "/", depth + 1))
                elif entry.is_file():
                    yield rel, entry
            except OSError:
                continue
        stack.extend(reversed(subdirs))


def _in_trio_thread() -> bool:
    try:
        trio.from_thread.check_cancelled()
    except RuntimeError:
        return False
    return True
