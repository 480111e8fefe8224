"""What a Bash command names on disk: the paths it reads, the files it writes.

The names come from the line's text (:mod:`._bash_names`, kept per command);
what they are on disk is looked at afresh on each call.  Every function here
touches the file system (``lstat``, ``realpath``, ``glob``, ``os.walk``), so
``Bash`` calls :func:`judge_paths` in a worker thread unless it is given a
budget (a few names, looked at in place).
"""

from __future__ import annotations

import functools
import glob
import itertools
import os
import stat
from typing import TYPE_CHECKING

import attrs

from .._contract._tool import PermissionResult
from .._guard._file_access import Resolver
from .._guard._path_rules import match_path_rule
from .._guard._protected import protected_path_reason
from .._shell._views import (
    too_complex,
)
from .._texts import read_denied_message, sensitive_file_message
from ._bash_names import (
    LIST,
    NAMES,
    READ,
    bases_of,
    lexical_reading,
    line_analyses,
    moves_of,
    read_names,
    writes_of,
)
from ._bash_stays_in_cwd import (
    MAX_GLOB_MATCHES,
    MAX_NAMES,
    allowable_plan,
    plan_resolves_inside,
    uncovered_plan,
)

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from .._shell._syntax import Word

__all__ = [
    "ReadCheck",
    "WalkTooLong",
    "denied_read",
    "judge_paths",
    "may_glob",
    "protected_write_target",
    "too_complex_message",
    "unreadable_message",
    "write_target_words",
]

_MAX_WALK = 2000

_ALLOWED = PermissionResult.allow()
_PASSED = PermissionResult.passthrough()


@attrs.frozen
class ReadCheck:
    """The answer of :func:`denied_read`: a covered path, or a name it could not check."""

    path: str | None = None
    """An absolute path a Read deny rule covers."""
    unknown: str | None = None
    """A word whose value the shell computes (or too many names to check): as written."""


class WalkTooLong(Exception):
    """More entries to look at than :func:`judge_paths` was allowed to walk in place."""


class _Disk:
    """What one decision reads from the disk: each symlink resolved once, entries counted.

    Never shared between calls (the file system may change between them).
    """

    __slots__ = ("left", "resolver")

    def __init__(self, cwd: Path, budget: int | None) -> None:
        self.resolver = Resolver(cwd)
        self.left = budget
        """How many more entries may be looked at (None: no limit)."""

    def spend(self) -> None:
        if self.left is not None:
            self.left -= 1
            if self.left < 0:
                raise WalkTooLong


def denied_read(
    command: str, cwd: Path, rules: tuple[str, ...], *, budget: int | None = None
) -> ReadCheck:
    """The first path ``command`` reads that a Read deny rule (its ``rules`` contents) covers.

    Every argument, option value (``--file=x``, the tail of ``-fx``), glob match
    and ``< file`` source of every command the line may run (those in a ``-c``
    script too) is resolved against the working directory and every ``cd``
    target, and matched as written and with symlinks resolved; a directory
    named is walked (up to 2,000 entries), since ``grep -r`` and ``cat dir/*``
    read what is inside.  A word the shell computes (``$F``, ``$(...)``) cannot
    be checked: it is returned as ``unknown``, and so is a line naming more than
    :data:`~trioexec.tools._bash_stays_in_cwd.MAX_NAMES` paths (counted once per
    directory a ``cd`` may have moved to).

    Raises:
        WalkTooLong: more than ``budget`` paths (names, glob matches and
            directory entries together) would have to be looked at.
    """
    bases = bases_of(moves_of(command), cwd)
    if bases is None:
        return ReadCheck(unknown="cd")
    names = read_names(command)
    if len(names) * len(bases) > MAX_NAMES:
        return ReadCheck(unknown=f"more than {MAX_NAMES:,} names")
    disk = _Disk(cwd, budget)
    for word, how in names:
        if not word.static:
            return ReadCheck(unknown=word.raw or word.text)
        for base in bases:
            found = _covered(word, base, cwd, rules, disk, how)
            if found is not None:
                return found
    return ReadCheck()


def _covered(
    word: Word, base: str, cwd: Path, rules: tuple[str, ...], disk: _Disk, how: str = READ
) -> ReadCheck | None:
    path = os.path.join(base, os.path.expanduser(word.text))
    paths = [path]
    if word.expands:
        if word.braces:
            return ReadCheck(unknown=word.raw)
        matches = glob.iglob(os.path.expanduser(word.text), root_dir=base, include_hidden=True)
        paths.extend(os.path.join(base, m) for m in itertools.islice(matches, MAX_GLOB_MATCHES + 1))
        if len(paths) > MAX_GLOB_MATCHES:
            return ReadCheck(unknown=word.raw)
    for candidate in paths:
        for found in _with_contents(candidate, disk, base, how):
            if found is None:
                return ReadCheck(unknown=word.raw)
            if _rules_cover(rules, *found, cwd, disk):
                return ReadCheck(path=os.path.normpath(found[0]))
    return None


def _rules_cover(
    rules: tuple[str, ...], path: str, real: str | None, cwd: Path, disk: _Disk
) -> bool:
    """A Read deny rule covers ``path`` as written or, when it exists, with symlinks resolved
    (``real``; matched against ``cwd`` as written and resolved, as
    :func:`~trioexec._guard._file_access.path_rule_covers` does).

    A path that does not exist cannot be read (no earlier command of the line
    can put a denied file's contents there without naming it), so only
    existing paths are resolved.
    """
    if any(match_path_rule(rule, path, cwd=cwd) for rule in rules):
        return True
    if real is None or real == os.path.normpath(path):
        return False
    real_cwd = disk.resolver.real_cwd()
    return any(
        match_path_rule(rule, real, cwd=cwd)
        or (real_cwd != cwd and match_path_rule(rule, real, cwd=real_cwd))
        for rule in rules
    )


def _with_contents(
    path: str, disk: _Disk, base: str, how: str = READ
) -> Iterator[tuple[str, str | None] | None]:
    """``(path, resolved)``, then (for a directory) the same for what is inside it, in
    :func:`os.walk`'s order; ``resolved`` is None for a path that does not exist, and
    None instead of a pair means too much to check.

    Only the symbolic links met are given to ``realpath`` (and ``base``, the
    directory a name is resolved against, once per decision): a path that is no
    link and names one entry of ``base`` (or of a directory walked) resolves to
    its resolved directory joined with its name; any other path is resolved.
    """
    disk.spend()
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        yield path, None
        return
    parent, name = os.path.split(path)
    if not stat.S_ISLNK(mode) and name not in ("", ".", "..") and parent == base:
        real = os.path.join(disk.resolver.real(os.path.normpath(base)), name)
    else:
        real = disk.resolver.real(os.path.normpath(path))
    yield path, real
    if how == NAMES or not (stat.S_ISDIR(mode) or (stat.S_ISLNK(mode) and os.path.isdir(path))):
        return
    if how == LIST:
        try:
            with os.scandir(path) as scan:
                names = [entry.name for entry in scan]
        except OSError:
            return
        for name in names:
            disk.spend()
            yield os.path.join(path, name), None  # a name listed, matched as written
        return
    seen = 0
    pending = [(path, real)]
    while pending:
        root, real_root = pending.pop()
        try:
            with os.scandir(root) as scan:
                entries = list(scan)
        except OSError:
            continue  # as os.walk: a directory it cannot list is skipped
        dirs: list[tuple[str, str, bool]] = []
        files: list[tuple[str, str, bool]] = []
        for entry in entries:
            try:
                is_dir = entry.is_dir()
            except OSError:
                is_dir = False
            link = entry.is_symlink()
            (dirs if is_dir else files).append((entry.name, entry.path, link))
        for name, entry_path, link in itertools.chain(dirs, files):
            seen += 1
            if seen > _MAX_WALK:
                yield None
                return
            disk.spend()
            if link:
                # a link met inside the walk: read through only by a program that follows
                resolved = disk.resolver.real(entry_path) if how == READ else None
            else:
                resolved = os.path.join(real_root, name)
            yield entry_path, resolved
        pending.extend(
            (entry_path, os.path.join(real_root, name))
            for name, entry_path, link in reversed(dirs)
            if not link
        )


def write_target_words(command: str) -> list[Word]:
    """Every file ``command`` is known to write: output redirections and the targets of
    ``tee``, ``sort -o``, ``sed -i``, ``cp``... in every command the line may run,
    those in ``-c`` scripts included."""
    return list(writes_of(command))


def protected_write_target(command: str, cwd: Path) -> tuple[str, str | None] | None:
    """The first protected file ``command`` writes: ``(path, reason)``; None when there is none.

    Every write target of :func:`write_target_words` is resolved against the
    working directory and every ``cd`` target and judged by
    :func:`trioexec._guard._protected.protected_path_reason` (as written and with
    symlinks resolved; a file with other hard links counts, since a
    redirection writes into it).  A target the shell computes (``> $F``,
    ``> *.log``) cannot be judged: ``(as written, None)``.
    """
    writes = writes_of(command)
    if not writes:
        return None
    bases = bases_of(moves_of(command), cwd)
    for target in writes:
        if target.static and not target.expands and target.text == "/dev/null":
            continue
        if not target.static or target.expands or not target.text or bases is None:
            return target.raw or target.text or "?", None
        for base in bases:
            reason = protected_path_reason(target.text, cwd=base, hard_links=True)
            if reason is not None:
                path = os.path.join(base, os.path.expanduser(target.text))
                return os.path.normpath(path), reason
    return None


def judge_paths(
    command: str,
    cwd: Path,
    read_rules: tuple[str, ...],
    *,
    budget: int | None = None,
    allow_rules: tuple[str, ...] = (),
) -> PermissionResult:
    """``Bash``'s own permission check (blocking: call it from a worker thread when
    :func:`may_glob` says so, or with a ``budget``).

    Deny when a Read deny rule (``read_rules``, their contents) covers a path
    the command reads; ask as a safety check for a computed name that could be
    one, a protected write target, or a computed write target; allow a
    read-only command whose names all resolve inside ``cwd``, and a list or
    pipeline whose every part is either covered by one of ``allow_rules`` (the
    ``Bash(...)`` allow rules' contents) or such a read-only command
    (``npm test | tail -20`` under ``Bash(npm test:*)``); else passthrough.

    A line too complex to check (:func:`~trioexec._shell._views.too_complex`: too
    long, too deep, too many commands) asks as a safety check, in bypass mode too.

    Raises:
        WalkTooLong: checking the Read deny rules would look at more than
            ``budget`` paths (then call it again in a worker thread).
    """
    unread = _unread(command)
    if unread is not None:
        return unread
    if read_rules:
        read = denied_read(command, cwd, read_rules, budget=budget)
        if read.path is not None:
            return PermissionResult.deny(read_denied_message(read.path))
        if read.unknown is not None:
            return PermissionResult.ask(
                f"Claude requested permissions to use Bash: {read.unknown} may name a file "
                "the Read deny rules cover, and its value is not known before the command runs.",
                safety_check=True,
            )
    protected = protected_write_target(command, cwd)
    if protected is not None:
        path, reason = protected
        if reason is None:
            message = (
                f"Claude requested permissions to use Bash, whose write target {path} "
                "could not be read as a path."
            )
        else:
            message = sensitive_file_message(path)
        return PermissionResult.ask(message, safety_check=True)
    plan = allowable_plan(command)
    if plan is not None and plan_resolves_inside(plan, cwd):
        return _ALLOWED
    if allow_rules:
        rest = uncovered_plan(command, allow_rules)
        if rest is not None and plan_resolves_inside(rest, cwd):
            return _ALLOWED
    return _PASSED


@functools.lru_cache(maxsize=1024)
def _unread(command: str) -> PermissionResult | None:
    """The safety-check ask for a line too complex to check or unreadable as bash."""
    complex_reason = too_complex(command)
    if complex_reason:
        return PermissionResult.ask(too_complex_message(complex_reason), safety_check=True)
    if any(analysis.unparsed for analysis in line_analyses(command)):
        # bash runs the lines before a syntax error: nothing it may write can be judged
        return PermissionResult.ask(unreadable_message(), safety_check=True)
    return None


def too_complex_message(reason: str) -> str:
    """The safety-check text for a line the analysis does not read (``reason``: why)."""
    return (
        f"Claude requested permissions to use Bash: the command is too complex to check "
        f"({reason}), so it needs approval."
    )


def unreadable_message() -> str:
    """The safety-check text for a line the bash grammar does not read."""
    return (
        "Claude requested permissions to use Bash: the command could not be read as bash "
        "(a syntax error, or a construct the reader does not know), so what it reads and "
        "writes cannot be checked."
    )


def may_glob(command: str) -> bool:
    """Whether :func:`judge_paths` may expand a glob the command names (any number of names)."""
    return lexical_reading(command).globs
