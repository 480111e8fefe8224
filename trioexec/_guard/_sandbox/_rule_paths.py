"""The paths ``Read(...)`` deny rules hide and ``Edit(...)`` allow rules open, in the sandbox.

Claude Code adds the paths of ``Edit`` allow rules to the sandbox's
writable paths and the paths of ``Read`` deny rules to its unreadable ones.
Rule content is read as permission rules read it (gitignore style, the
**opposite** of ``sandbox.filesystem`` entries): ``//x`` is absolute,
``~/x`` is in the home directory, ``/x`` and ``./x`` are relative to the
project root (the working directory), and a name without a ``/`` (``.env``)
matches at any depth.  A trailing ``/`` or ``/**`` is stripped.

A pattern (``*``, ``?``, ``[``) is expanded for reads, over what exists
when the sandbox is prepared (at most :data:`MAX_MATCHES` paths, and a walk
of at most :data:`MAX_WALK` entries), and skipped for writes, as Claude Code
does on Linux.  A file created later is not hidden by the sandbox; the rule
reading of the command (and the file tools) still deny it.
"""

from __future__ import annotations

import os
from fnmatch import fnmatchcase
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

__all__ = ["MAX_MATCHES", "MAX_WALK", "rule_paths"]

MAX_MATCHES = 1000
"""Most paths one ``Read`` pattern adds to the hidden ones."""
MAX_WALK = 20_000
"""Most directory entries looked at to expand one pattern."""
_GLOB = frozenset("*?[")


def _strip(text: str) -> str:
    while text.endswith("/**") or (len(text) > 1 and text.endswith("/")):
        text = text[:-3] if text.endswith("/**") else text[:-1]
    return text


def _anchor(content: str, cwd: Path, home: Path) -> tuple[Path, str]:
    """``(base directory, pattern relative to it)``; an unanchored name gets ``**/``."""
    text = _strip(content)
    if text.startswith("//"):
        return Path("/"), text.lstrip("/")
    if text == "~" or text.startswith("~/"):
        return home, text[2:]
    if text.startswith("/"):
        return cwd, text.lstrip("/")
    if text.startswith("./"):
        return cwd, text[2:]
    if "/" not in text:
        return cwd, f"**/{text}"
    return cwd, text


def rule_paths(contents: Iterable[str], cwd: Path, home: Path, *, expand: bool) -> list[Path]:
    """The absolute paths the rule ``contents`` name.

    Args:
        contents: rule contents (``.env``, ``./secrets/**``, ``~/.ssh``).
        cwd: the project root and working directory.
        home: the home directory.
        expand: expand patterns over the file system (reads); False skips
            them (writes).

    Returns:
        The paths in rule order, without duplicates.
    """
    found: dict[Path, None] = {}
    for content in contents:
        base, pattern = _anchor(content, cwd, home)
        if _GLOB.isdisjoint(pattern):
            found[Path(os.path.normpath(base / pattern)) if pattern else base] = None
            continue
        if not expand:
            continue
        for match in _expand(base, pattern):
            found[match] = None
    return list(found)


def _expand(base: Path, pattern: str) -> Iterator[Path]:
    """Paths under ``base`` whose relative path matches ``pattern`` (``**`` any depth)."""
    parts = pattern.split("/")
    fixed: list[str] = []
    while parts and _GLOB.isdisjoint(parts[0]):
        fixed.append(parts.pop(0))
    start = base.joinpath(*fixed)
    if not parts or not start.is_dir():
        return
    matches = walked = 0
    stack: list[tuple[str, tuple[str, ...]]] = [(os.fspath(start), tuple(parts))]
    while stack:
        directory, rest = stack.pop()
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue
        for entry in entries:
            walked += 1
            if walked > MAX_WALK:
                return
            is_dir = entry.is_dir(follow_symlinks=False)
            for remaining in _advance(entry.name, rest):
                if not remaining:
                    matches += 1
                    yield Path(entry.path)
                    if matches >= MAX_MATCHES:
                        return
                elif is_dir:
                    stack.append((entry.path, remaining))


def _advance(name: str, rest: tuple[str, ...]) -> list[tuple[str, ...]]:
    """The patterns left for what lies below ``name`` once ``name`` matched ``rest[0]``."""
    head = rest[0]
    if head == "**":
        out: list[tuple[str, ...]] = [rest]  # ** goes on matching deeper
        out += _advance(name, rest[1:]) if len(rest) > 1 else [()]
        return out
    return [rest[1:]] if fnmatchcase(name, head) else []
