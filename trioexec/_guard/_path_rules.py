"""gitignore-style path rules: the content of ``Read(...)``, ``Edit(...)`` and other file rules.

A pure function: paths are compared lexically; callers that must see through
symlinks (deny and ask rules) match the resolved path too.
"""

from __future__ import annotations

import functools
import os
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["match_path_rule"]


def match_path_rule(content: str, path: str | os.PathLike[str], *, cwd: Path) -> bool:
    """Whether the gitignore-style pattern ``content`` covers ``path``.

    Where the pattern is rooted: ``//abs/x`` at the file system root,
    ``~/x`` at the home directory, ``/x`` and ``./x`` at ``cwd`` (the settings
    root); a bare ``x/y`` (a slash inside) is anchored at ``cwd`` too, while a
    bare name without a slash (``*.env``) matches at any depth below ``cwd``.
    ``*`` and ``?`` never cross ``/``; ``**`` spans directories; ``[...]`` is a
    character class; a trailing ``/`` matches directories only (so what is
    inside them).  As in gitignore, a path is covered when it or any of its
    parent directories matches.  A relative ``path`` is resolved against
    ``cwd``; paths are compared lexically (symlinks are not resolved).
    """
    compiled = _pattern(content)
    if compiled is None:
        return False
    anchor, dir_only, itself, parents = compiled
    if anchor == "/":
        root = "/"
    elif anchor == "~":
        root = _root(os.path.expanduser("~"))
    else:
        root = _root(os.fspath(cwd))

    raw = os.fspath(path)
    if raw.startswith("~"):
        raw = os.path.expanduser(raw)
    target = os.path.normpath(raw if raw.startswith("/") else os.path.join(cwd, raw))
    if target == root:
        return False
    prefix = root if root.endswith(os.sep) else root + os.sep
    if not target.startswith(prefix):
        return False  # outside the pattern's root
    relative = target[len(prefix) :]
    # The path itself (when it can be a directory) and each parent directory, in one match.
    if not dir_only or os.fspath(path).endswith("/"):
        return itself.fullmatch(relative) is not None
    return parents.fullmatch(relative) is not None


@functools.lru_cache(maxsize=64)
def _root(directory: str) -> str:
    return os.path.normpath(directory)


@functools.lru_cache(maxsize=512)
def _pattern(content: str) -> tuple[str, bool, re.Pattern[str], re.Pattern[str]] | None:
    """Where ``content`` is rooted (``/``, ``~`` or the working directory ``.``), whether
    it names directories only, and its compiled glob twice: matching a path or one of
    its parent directories, and matching one of its parent directories only (the
    glob's match ends where a path component does); None for an empty pattern."""
    pattern = content.strip()
    if not pattern:
        return None
    if pattern.startswith("//"):
        anchor, pattern = "/", pattern[2:]
    elif pattern == "~" or pattern.startswith("~/"):
        anchor, pattern = "~", pattern[2:]
    elif pattern.startswith("./"):
        anchor, pattern = ".", pattern[2:]
    elif pattern.startswith("/"):
        anchor, pattern = ".", pattern[1:]
    else:
        anchor = "."
        if "/" not in pattern.rstrip("/"):
            pattern = "**/" + pattern
    if not pattern:
        return None
    glob = _compile_glob(pattern.rstrip("/")).pattern
    itself = re.compile(f"(?:{glob})(?:/.*)?", re.DOTALL)
    parents = re.compile(f"(?:{glob})/.+", re.DOTALL)
    return anchor, pattern.endswith("/"), itself, parents


@functools.lru_cache(maxsize=512)
def _compile_glob(pattern: str) -> re.Pattern[str]:
    segments: list[str] = []
    for segment in pattern.split("/"):
        if not (segment == "**" and segments and segments[-1] == "**"):
            segments.append(segment)
    out: list[str] = []
    for index, segment in enumerate(segments):
        first, last = index == 0, index == len(segments) - 1
        if segment == "**":
            if last:
                out.append(".*" if first else "/.*")
            else:
                out.append("(?:.*/)?" if first else "/(?:.*/)?")
            continue
        if not first and segments[index - 1] != "**":
            out.append("/")
        out.append(_glob_segment(segment))
    return re.compile("".join(out), re.DOTALL)


def _glob_segment(segment: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(segment):
        c = segment[i]
        if c == "\\" and i + 1 < len(segment):
            out.append(re.escape(segment[i + 1]))
            i += 2
            continue
        if c == "*":
            while i + 1 < len(segment) and segment[i + 1] == "*":
                i += 1
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            end = segment.find("]", i + 2)
            if end < 0:
                out.append(re.escape(c))
            else:
                body = segment[i + 1 : end]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = end
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)
