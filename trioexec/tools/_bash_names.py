"""What a Bash line names, read from its text alone.

What it reads and how, what it writes, where it moves.  Each fact follows from
the one shell analysis (:func:`~.._shell._syntax.analyse`, with the scripts the
line hands to a shell) and the tables of what programs do, so it is kept per
command, worked out when first needed.  Nothing here looks at
the disk: :mod:`._bash_paths` looks at what these names are, afresh on each call.
"""

from __future__ import annotations

import functools
import os
import re
from typing import TYPE_CHECKING

from .._shell._syntax import ShellAnalysis, Word, analyse
from .._shell._views import UNSURE, command_views, nested_scripts, write_targets
from ._bash_stays_in_cwd import MAX_BASES, candidates

if TYPE_CHECKING:
    from pathlib import Path

__all__ = [
    "LIST",
    "NAMES",
    "NO_FOLLOW",
    "READ",
    "bases_of",
    "lexical_reading",
    "line_analyses",
    "moves_of",
    "read_names",
    "writes_of",
]

# What a command line names follows from its text alone (the analysis and the
# tables of what commands do), so each such fact is kept per command, worked out
# when first needed; every look at what those names are on disk runs again on
# each call.


@functools.lru_cache(maxsize=1024)
def read_names(command: str) -> tuple[tuple[Word, str], ...]:
    """Every word that may name a file the line reads, with how it is read (see
    :func:`_names`)."""
    return tuple(_names(line_analyses(command)))


@functools.lru_cache(maxsize=1024)
def moves_of(command: str) -> tuple[str, ...] | None:
    """The ``cd``/``pushd`` targets in order (None: one the shell computes)."""
    return _moves(line_analyses(command))


def writes_of(command: str) -> tuple[Word, ...]:
    """Every file the line is known to write (see :func:`write_target_words`)."""
    return lexical_reading(command).writes


class _Lexical:
    """What every Bash check asks of a line, read in one pass over its views."""

    __slots__ = ("globs", "writes")

    def __init__(self, globs: bool, writes: tuple[Word, ...]) -> None:
        self.globs = globs
        """A name is an unquoted glob or brace expansion: checking it expands it."""
        self.writes = writes
        """Every file the line is known to write (see :func:`write_target_words`)."""


@functools.lru_cache(maxsize=1024)
def lexical_reading(command: str) -> _Lexical:
    globs = False
    targets: list[Word] = []
    for analysis in line_analyses(command):
        for r in analysis.redirects:
            target = r.target
            if not globs and target is not None and target.expands and r.reads_file:
                globs = True
            if r.writes:
                targets.append(target or Word("", static=False))
        for view in command_views(analysis):
            if view is UNSURE:
                continue
            if not globs:
                for w in view[1:]:
                    if w.expands:
                        globs = True
                        break
            written = write_targets(view)
            if written:
                targets.extend(written)
    return _Lexical(globs, tuple(dict.fromkeys(targets)) if targets else ())


@functools.lru_cache(maxsize=1024)
def line_analyses(command: str) -> tuple[ShellAnalysis, ...]:
    """The line's analysis, then those of the scripts it hands to a shell."""
    analysis = analyse(command)
    return (analysis, *nested_scripts(analysis))


def _moves(analyses: tuple[ShellAnalysis, ...]) -> tuple[str, ...] | None:
    targets: list[str] = []
    for analysis in analyses:
        for command in analysis.commands:
            words = command.words
            if not words or words[0].text not in ("cd", "pushd", "popd"):
                continue
            if len(words) == 1:
                if words[0].text != "cd":
                    return None  # `pushd` swaps, `popd` returns: to a directory not shown
                targets.append("~")  # a bare `cd` goes home
                continue
            target = words[-1]
            if not target.static or target.expands or target.text in ("-", "~-"):
                return None  # computed, or `cd -` ($OLDPWD)
            if words[0].text == "popd":
                return None
            targets.append(target.text)
    return tuple(targets)


def bases_of(moves: tuple[str, ...] | None, cwd: Path) -> list[str] | None:
    """The directories a relative name may be resolved against: cwd and every ``cd`` target."""
    if moves is None:
        return None
    bases = [str(cwd)]
    for target in moves:
        moved = [os.path.join(base, os.path.expanduser(target)) for base in bases]
        bases.extend(moved)
        if len(bases) > MAX_BASES:
            return None
    return list(dict.fromkeys(bases))


_NAMES_ONLY = frozenset(
    ["stat", "realpath", "readlink", "basename", "dirname", "test", "[", "mkdir", "rmdir",
     "touch", "cd", "pushd", "which", "type", "pwd"]
)  # fmt: skip
"""Programs that look at the names (and metadata) they are given, never at what a file
holds nor at a directory's entries: a directory they name is not walked."""
_LISTERS = {"ls": "R", "dir": "R", "vdir": "R", "du": "", "tree": "", "find": ""}
"""Programs that list a directory's entries (names, never contents, never through the
links inside): one level, or every level when recursive (always for those without a
letter; ``ls -R``)."""
_WALKS_NO_FOLLOW = {"grep": "R", "egrep": "R", "fgrep": "R", "rg": "L"}
"""Programs that walk a directory without following the symbolic links inside it, unless
given the option letter (``grep -R``, ``rg -L``) or its long form."""
_FOLLOW_LONG = ("--dereference-recursive", "--follow")
READ = "read"
NO_FOLLOW = "nofollow"
LIST = "list"
NAMES = "names"
_STRENGTH = {NAMES: 0, LIST: 1, NO_FOLLOW: 2, READ: 3}
_PLAIN_NAME = re.compile(r"[^-=@<:~]*")
_KEY_VALUE = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*=.")
_GIT_OBJECT_PATH = re.compile(r"^(?::[0-3]:|:|[^:\s]+:)(?!/)(.+)$")
"""``REV:path``, ``:path``, ``:N:path``: a file git reads from its object store."""


def _how_read(view: tuple[Word, ...]) -> str:
    name = view[0].text.rpartition("/")[2]
    if name in _NAMES_ONLY:
        return NAMES
    if name in _LISTERS:
        recursive = not _LISTERS[name] or any(
            w.text == "--recursive" or (w.text[:1] == "-" and w.text[1:2] != "-" and "R" in w.text)
            for w in view[1:]
        )
        return NO_FOLLOW if recursive else LIST
    follow = _WALKS_NO_FOLLOW.get(name)
    if follow is None:
        return READ
    for word in view[1:]:
        text = word.text
        if text.startswith(_FOLLOW_LONG) or (
            text[:1] == "-" and text[1:2] != "-" and follow in text[1:]
        ):
            return READ
    return NO_FOLLOW


def _read_candidates(program: str, text: str) -> list[str]:
    """What one static word may name for reading: itself, an option's value (the tail of
    ``-fFILE``), an ``@file`` / ``<file`` upload (``curl -d @f``, ``-F x=@f;type=...``),
    the path of git's ``REV:path``, and ``~+`` (``$PWD``) spelled as ``.``."""
    found = candidates(text)
    extra: list[str] = []
    for name in found:
        extra.extend(
            name.rpartition(marker)[2].split(";", 1)[0] for marker in ("=@", "=<") if marker in name
        )
        if name.startswith("@") and len(name) > 1:
            extra.append(name[1:].split(";", 1)[0])
        elif program == "curl" and "@" in name:  # `--data-urlencode name@file`
            extra.append(name.partition("@")[2])
        if _KEY_VALUE.match(name):  # `dd if=FILE`, `make F=FILE`: the value may be a path
            extra.append(name.partition("=")[2])
        if program == "git" and ":" in name and not name.startswith("-"):
            match = _GIT_OBJECT_PATH.match(name)
            if match:
                extra.append(match[1])
    found.extend(extra)
    return [("." + t[2:]) if t.startswith("~+") and t[2:3] in ("", "/") else t for t in found]


_FILES_FROM = ("files0-from", "files-from", "exclude-from", "arg-file")


def _names_listed_in_file(text: str) -> bool:
    """An option whose value is a file listing the names to read (their values unknown):
    ``--files0-from`` (sort, wc, du), ``--files-from`` (tar, rsync, cpio), ``xargs
    --arg-file`` (a unique prefix counts)."""
    if not text.startswith("--") or len(text) < 5:
        return False
    given = text[2:].partition("=")[0]
    return any(name.startswith(given) for name in _FILES_FROM)


def _names(analyses: tuple[ShellAnalysis, ...]) -> list[tuple[Word, str]]:
    """Every word that may name a file the line reads: arguments, option values, ``< file``
    (each once: a word the views of a line share is one name), with how it is read:
    ``read`` (a directory named is walked, symlinks inside followed), ``nofollow``
    (walked, the symlinks inside not followed: ``grep -r``, ``rg``, ``find``), ``list``
    (one level of names: ``ls``) or ``names`` (never walked: ``stat``, ``cd``)."""
    found: dict[tuple[str, str, bool, bool, bool], tuple[Word, str]] = {}

    def add(word: Word, how: str) -> None:
        key = (word.text, word.raw, word.static, word.expands, word.braces)
        known = found.get(key)
        if known is None or _STRENGTH[how] > _STRENGTH[known[1]]:
            found[key] = (word, how)

    for analysis in analyses:
        for redirect in analysis.redirects:
            if redirect.reads_file and redirect.target is not None:
                add(redirect.target, READ)
        for view in command_views(analysis):
            if view is UNSURE:
                continue
            how = _how_read(view)
            program = view[0].text.rpartition("/")[2]
            for word in view[1:]:
                if not word.static:
                    add(word, how)
                    continue
                known = found.get((word.text, word.raw, True, word.expands, word.braces))
                if known is not None and _STRENGTH[known[1]] >= _STRENGTH[how]:
                    continue  # the same word again: its names are in already
                if _PLAIN_NAME.fullmatch(word.text):
                    add(word, how)  # no option, value, upload, revision or tilde form
                    continue
                if word.text.startswith("~-") and word.text[2:3] in ("", "/"):
                    add(Word(word.text, word.raw, static=False), how)  # $OLDPWD: not known
                    continue
                if _names_listed_in_file(word.text):
                    # `--files0-from=LIST`, `tar -T LIST`: the names are in a file
                    add(Word(word.text, word.raw, static=False), how)
                    continue
                for text in _read_candidates(program, word.text):
                    if text == word.text:
                        add(word, how)
                    else:
                        add(Word(text, word.raw, True, word.expands, word.braces, word.ansi_c), how)
    return list(found.values())
