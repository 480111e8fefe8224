"""Whether the names a read-only Bash command gives stay inside the working directory.

What :func:`~trioexec.tools._bash_paths.judge_paths` asks before it allows a
read-only command: every name it reads, tried against the working directory and
every directory a ``cd`` may have moved to, resolves (symlinks followed) inside.
Which names a line gives follows from its text (kept per command); what they are
on disk is looked at afresh on each call, with ``lstat`` first and ``realpath``
only where that cannot say.
"""

from __future__ import annotations

import functools
import glob
import itertools
import os
import stat
from pathlib import Path

from .._guard._bash_rules import allow_parts, covered_parts
from .._shell._read_only import (
    is_read_only_command,
    read_only_part,
    read_words,
    stays_in_working_directory,
)
from .._shell._syntax import Word

__all__ = [
    "MAX_BASES",
    "MAX_GLOB_MATCHES",
    "MAX_NAMES",
    "Plan",
    "allowable_plan",
    "candidates",
    "plan_resolves_inside",
    "resolves_inside",
    "uncovered_plan",
]

MAX_BASES = 16
"""Directories a relative name is tried against, at most (the cwd and the ``cd`` targets)."""
MAX_GLOB_MATCHES = 1000
"""Matches of one glob looked at, at most (beyond: unsure)."""
MAX_NAMES = 4000
"""Names one line gives that are looked up on disk, at most (beyond: unsure, so asked):
each costs an ``lstat`` or two, so this bounds a decision's disk work."""

Plan = tuple[tuple[tuple[Word, str], ...], tuple[Word, ...]]
"""What :func:`resolves_inside` looks at: ``(word, name)`` pairs, then the ``cd`` targets."""


@functools.lru_cache(maxsize=1024)
def allowable_plan(command: str) -> Plan | None:
    """Read-only and lexically inside the working directory (only the disk can say no):
    what :func:`resolves_inside` looks at; None for any other command."""
    if not (is_read_only_command(command) and stays_in_working_directory(command)):
        return None
    lexed = read_words(command)
    if lexed is None:
        return None
    plan = _plan_of(*lexed)
    return None if len(plan[0]) > MAX_NAMES else plan


@functools.lru_cache(maxsize=1024)
def uncovered_plan(command: str, allow_rules: tuple[str, ...]) -> Plan | None:
    """A compound line some of whose parts ``allow_rules`` cover, each other part being
    read-only and lexically inside the working directory: what :func:`plan_resolves_inside`
    looks at for those other parts (and every ``cd``).  None for any other line, and for
    one every part of which a rule covers (the rules allow that by themselves).
    """
    covered = covered_parts(allow_rules, command)
    if covered is None or all(covered) or not any(covered):
        return None
    parts = allow_parts(command)
    assert parts is not None  # covered_parts read them
    commands: list[tuple[Word, ...]] = []
    inputs: list[str] = []
    for part, is_covered in zip(parts, covered, strict=True):
        if is_covered and part.words[0].text not in ("cd", "pushd", "popd"):
            continue
        reading = read_only_part(part)
        if reading is None:
            return None
        commands.append(reading[0])
        inputs.extend(reading[1])
    plan = _plan_of(tuple(commands), tuple(dict.fromkeys(inputs)))
    return None if len(plan[0]) > MAX_NAMES else plan


def candidates(text: str) -> list[str]:
    """What a word may name on disk: itself, an option's ``=value``, a short option's tail."""
    if not text.startswith("-") or text == "-":
        return [text]
    found = [text]
    if "=" in text:
        found.append(text.partition("=")[2])
    if not text.startswith("--"):
        found.extend([text[k:] for k in range(2, len(text))])  # ``-fFILE``, ``-nfFILE``
    return found


def resolves_inside(command: str, cwd: Path) -> bool:
    """Whether everything ``command`` names resolves (symlinks followed) inside ``cwd``.

    Each name is tried against the working directory and every directory a
    ``cd`` may have moved to (a failed ``cd`` leaves the old one).  Unquoted
    globs are expanded (a bracket expression, or too many matches, means
    False).  Unsure means False, so the call is asked about.

    Each call looks at the disk afresh (nothing it finds there is kept): a
    relative name without ``..`` whose every component is ``lstat``-ed and
    found to be no symbolic link (or missing) lies inside; a name that meets a
    symbolic link, or anything else, is resolved with ``realpath``.
    """
    plan = _inside_names(command)
    if plan is None:
        return False
    return plan_resolves_inside(plan, cwd)


def plan_resolves_inside(plan: Plan, cwd: Path) -> bool:
    answer = _resolves_inside_directly(plan, str(cwd))
    if answer is not None:
        return answer
    return _resolves_inside_resolved(plan, cwd)


@functools.lru_cache(maxsize=1024)
def _inside_names(command: str) -> Plan | None:
    """For :func:`resolves_inside`: ``(word, name)`` pairs and the ``cd`` targets of the
    classifier's reading of the line (None: it does not read it)."""
    lexed = read_words(command)
    return None if lexed is None else _plan_of(*lexed)


def _plan_of(commands: tuple[tuple[Word, ...], ...], inputs: tuple[str, ...]) -> Plan:
    """The names the classifier's reading (``commands``, ``inputs``) gives to check."""
    names: dict[tuple[str, bool], tuple[Word, str]] = {(t, False): (Word(t), t) for t in inputs}
    moves: list[Word] = []
    for words in commands:
        for word in words[1:]:
            text = word.text
            if text[:1] != "-" or text == "-":  # not an option: the word names itself
                names.setdefault((text, word.expands), (word, text))
                continue
            for name in candidates(text):  # each name is checked once
                names.setdefault((name, word.expands), (word, name))
        if words[0].text == "cd" and len(words) == 2:
            moves.append(words[1])
    return tuple(names.values()), tuple(moves)


def _plainly_inside(base: str, name: str) -> bool | None:
    """True when ``name`` under the directory ``base`` (itself inside) meets no symbolic
    link and no ``..`` (so it resolves inside, or does not exist); None: resolve it."""
    if "/" not in name:  # one component: one lstat
        if name in ("", "."):
            return True
        if name == "..":
            return None
        try:
            mode = os.lstat(f"{base.rstrip('/')}/{name}").st_mode
        except (FileNotFoundError, NotADirectoryError):
            return True  # nothing there: the name as written stays inside
        except OSError:
            return None
        return None if stat.S_ISLNK(mode) else True
    if name.startswith("/") or ".." in name.split("/"):
        return None
    path = base.rstrip("/")
    for part in name.split("/"):
        if part in ("", "."):
            continue
        path = f"{path}/{part}"
        try:
            mode = os.lstat(path).st_mode
        except (FileNotFoundError, NotADirectoryError):
            return True  # nothing there: the name as written stays inside
        except OSError:
            return None
        if stat.S_ISLNK(mode):
            return None
    return True


def _resolves_inside_directly(plan: Plan, cwd: str) -> bool | None:
    """:func:`resolves_inside` with ``lstat`` alone; None where that cannot say."""
    names, moves = plan
    bases = [cwd]
    for target in moves:
        if target.expands:
            return False
        moved = [os.path.join(base, target.text) for base in bases]
        if not all(_plainly_inside(base, target.text) for base in bases):
            return None
        bases.extend(moved)
        if len(bases) > MAX_BASES:
            return False
    lstat, is_link = os.lstat, stat.S_ISLNK
    for base in bases:
        root = base.rstrip("/")
        for word, name in names:
            if "/" not in name and name not in ("", ".", ".."):  # _plainly_inside, inline
                try:
                    if is_link(lstat(f"{root}/{name}").st_mode):
                        return None
                except (FileNotFoundError, NotADirectoryError):
                    pass  # nothing there: the name as written stays inside
                except OSError:
                    return None
            elif not _plainly_inside(base, name):
                return None
            if word.expands:
                if "[" in name:
                    return False
                matches = glob.iglob(name, root_dir=base, include_hidden=True)
                for count, match in enumerate(itertools.islice(matches, MAX_GLOB_MATCHES + 1)):
                    if count >= MAX_GLOB_MATCHES or not _plainly_inside(base, match):
                        return None
    return True


def _resolves_inside_resolved(plan: Plan, cwd: Path) -> bool:
    """:func:`resolves_inside` with every name resolved by ``realpath``."""
    names, moves = plan
    root = Path(os.path.realpath(cwd))

    def inside(path: str) -> bool:
        if not os.path.lexists(path):  # nothing to read there: the name as written decides
            return Path(os.path.normpath(path)).is_relative_to(root) or Path(
                os.path.realpath(path)
            ).is_relative_to(root)
        return Path(os.path.realpath(path)).is_relative_to(root)

    bases = [str(root)]
    for target in moves:
        if target.expands:
            return False  # where a globbed ``cd`` lands is not tracked
        moved = [os.path.join(base, target.text) for base in bases]
        if not all(inside(base) for base in moved):
            return False
        bases.extend(os.path.realpath(base) for base in moved)
        if len(bases) > MAX_BASES:
            return False
    for base in bases:
        for word, name in names:
            if not inside(os.path.join(base, name)):
                return False
            if word.expands:
                if "[" in name:
                    return False
                matches = glob.iglob(name, root_dir=base, include_hidden=True)
                for count, match in enumerate(itertools.islice(matches, MAX_GLOB_MATCHES + 1)):
                    if count >= MAX_GLOB_MATCHES or not inside(os.path.join(base, match)):
                        return False
    return True
