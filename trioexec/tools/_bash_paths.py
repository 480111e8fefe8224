"""What a Bash command names on disk: the paths it reads, the files it writes.

Read from the one shell analysis (:func:`trioexec._shell_syntax.analyse`),
including the scripts the line hands to a shell (``bash -c 'cat x'``).  Every
function here touches the file system (``realpath``, ``glob``, ``os.walk``),
so ``Bash`` calls them in a worker thread.
"""

from __future__ import annotations

import functools
import glob
import itertools
import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from .._path_rules import match_path_rule
from .._protected import protected_path_reason
from .._shell_commands import UNSURE, command_views, nested_scripts, write_targets
from .._shell_syntax import ShellAnalysis, Word, analyse
from .._texts import read_denied_message, sensitive_file_message
from .._tool import PermissionResult
from ._base import path_rule_covers
from ._bash_classifier import is_read_only_command, path_words, stays_in_working_directory

if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = [
    "ReadCheck",
    "denied_read",
    "judge_paths",
    "needs_worker_thread",
    "protected_write_target",
    "resolves_inside",
    "write_target_words",
]

_MAX_BASES = 16
_MAX_GLOB_MATCHES = 1000
_MAX_WALK = 2000


@attrs.frozen
class ReadCheck:
    """The answer of :func:`denied_read`: a covered path, or a name it could not check."""

    path: str | None = None
    """An absolute path a Read deny rule covers."""
    unknown: str | None = None
    """A word whose value the shell computes (or too many names to check): as written."""


@attrs.frozen
class _Plan:
    """What a command line names, read once per line: no file system fact is kept here.

    Everything in it follows from the text of the command alone (the analysis
    and the tables of what commands do), so it is cached per command; every
    check of what those names are on disk runs again on each call.
    """

    names: tuple[Word, ...]
    """Every word that may name a file the line reads (see :func:`_names`)."""
    moves: tuple[str, ...] | None
    """The ``cd``/``pushd`` targets in order (None: one the shell computes)."""
    writes: tuple[Word, ...]
    """Every file the line is known to write (see :func:`write_target_words`)."""
    globs: bool
    """A name is an unquoted glob or brace expansion: checking it expands it."""
    allowable: bool
    """Read-only and lexically inside the working directory: only the disk can say no."""
    inside: tuple[tuple[tuple[Word, str], ...], tuple[Word, ...]] | None
    """For :func:`resolves_inside`: ``(word, name)`` pairs and the ``cd`` targets of the
    classifier's reading of the line (None: it does not read it)."""


@functools.lru_cache(maxsize=1024)
def _plan(command: str) -> _Plan:
    analyses = _analyses(command)
    names = tuple(_names(analyses))
    return _Plan(
        names,
        _moves(analyses),
        tuple(_write_targets(analyses)),
        any(word.expands for word in names),
        is_read_only_command(command) and stays_in_working_directory(command),
        _inside_names(command),
    )


def _analyses(command: str) -> list[ShellAnalysis]:
    analysis = analyse(command)
    return [analysis, *nested_scripts(analysis)]


def _moves(analyses: list[ShellAnalysis]) -> tuple[str, ...] | None:
    targets: list[str] = []
    for analysis in analyses:
        for command in analysis.commands:
            words = command.words
            if words and words[0].text in ("cd", "pushd") and len(words) > 1:
                target = words[-1]
                if not target.static or target.expands:
                    return None
                targets.append(target.text)
    return tuple(targets)


def _bases(moves: tuple[str, ...] | None, cwd: Path) -> list[str] | None:
    """The directories a relative name may be resolved against: cwd and every ``cd`` target."""
    if moves is None:
        return None
    bases = [str(cwd)]
    for target in moves:
        moved = [os.path.join(base, os.path.expanduser(target)) for base in bases]
        bases.extend(moved)
        if len(bases) > _MAX_BASES:
            return None
    return list(dict.fromkeys(bases))


def _names(analyses: list[ShellAnalysis]) -> Iterator[Word]:
    """Every word that may name a file the line reads: arguments, option values, ``< file``."""
    for analysis in analyses:
        for redirect in analysis.redirects:
            if redirect.reads_file and redirect.target is not None:
                yield redirect.target
        for view in command_views(analysis):
            if view is UNSURE:
                continue
            for word in view[1:]:
                if not word.static:
                    yield word
                    continue
                for text in candidates(word.text):
                    yield attrs.evolve(word, text=text)


def candidates(text: str) -> list[str]:
    """What a word may name on disk: itself, an option's ``=value``, a short option's tail."""
    if not text.startswith("-") or text == "-":
        return [text]
    found = [text]
    if "=" in text:
        found.append(text.partition("=")[2])
    if not text.startswith("--"):
        found.extend(text[k:] for k in range(2, len(text)))  # ``-fFILE``, ``-nfFILE``
    return found


def denied_read(command: str, cwd: Path, rules: tuple[str, ...]) -> ReadCheck:
    """The first path ``command`` reads that a Read deny rule (its ``rules`` contents) covers.

    Every argument, option value (``--file=x``, the tail of ``-fx``), glob match
    and ``< file`` source of every command the line may run (those in a ``-c``
    script too) is resolved against the working directory and every ``cd``
    target, and matched as written and with symlinks resolved; a directory
    named is walked (up to 2,000 entries), since ``grep -r`` and ``cat dir/*``
    read what is inside.  A word the shell computes (``$F``, ``$(...)``) cannot
    be checked: it is returned as ``unknown``.
    """
    plan = _plan(command)
    bases = _bases(plan.moves, cwd)
    if bases is None:
        return ReadCheck(unknown="cd")
    for word in plan.names:
        if not word.static:
            return ReadCheck(unknown=word.raw or word.text)
        for base in bases:
            found = _covered(word, base, cwd, rules)
            if found is not None:
                return found
    return ReadCheck()


def _covered(word: Word, base: str, cwd: Path, rules: tuple[str, ...]) -> ReadCheck | None:
    path = os.path.join(base, os.path.expanduser(word.text))
    paths = [path]
    if word.expands:
        if word.braces:
            return ReadCheck(unknown=word.raw)
        matches = glob.iglob(os.path.expanduser(word.text), root_dir=base, include_hidden=True)
        paths.extend(
            os.path.join(base, m) for m in itertools.islice(matches, _MAX_GLOB_MATCHES + 1)
        )
        if len(paths) > _MAX_GLOB_MATCHES:
            return ReadCheck(unknown=word.raw)
    for candidate in paths:
        for found in _with_contents(candidate):
            if found is None:
                return ReadCheck(unknown=word.raw)
            if _rules_cover(rules, found, cwd):
                return ReadCheck(path=os.path.normpath(found))
    return None


def _rules_cover(rules: tuple[str, ...], path: str, cwd: Path) -> bool:
    """A Read deny rule covers ``path`` as written or, when it exists, with symlinks resolved.

    A path that does not exist cannot be read (no earlier command of the line
    can put a denied file's contents there without naming it), so only
    existing paths pay for ``realpath``.
    """
    if any(match_path_rule(rule, path, cwd=cwd) for rule in rules):
        return True
    if not os.path.lexists(path):
        return False
    return any(path_rule_covers(rule, path, cwd) for rule in rules)


def _with_contents(path: str) -> Iterator[str | None]:
    """``path``, then (for a directory) what is inside it; None: too much to check."""
    yield path
    if not os.path.lexists(path) or not os.path.isdir(path):
        return
    seen = 0
    for root, dirs, files in os.walk(path):
        for name in itertools.chain(dirs, files):
            seen += 1
            if seen > _MAX_WALK:
                yield None
                return
            yield os.path.join(root, name)


def write_target_words(command: str) -> list[Word]:
    """Every file ``command`` is known to write: output redirections and the targets of
    ``tee``, ``sort -o``, ``sed -i``, ``cp``... in every command the line may run,
    those in ``-c`` scripts included."""
    return list(_plan(command).writes)


def _write_targets(analyses: list[ShellAnalysis]) -> list[Word]:
    targets: list[Word] = []
    for analysis in analyses:
        targets.extend(r.target or Word("", static=False) for r in analysis.redirects if r.writes)
        for view in command_views(analysis):
            if view is not UNSURE:
                targets.extend(write_targets(view))
    return list(dict.fromkeys(targets))


def protected_write_target(command: str, cwd: Path) -> tuple[str, str | None] | None:
    """The first protected file ``command`` writes: ``(path, reason)``; None when there is none.

    Every write target of :func:`write_target_words` is resolved against the
    working directory and every ``cd`` target and judged by
    :func:`trioexec._protected.protected_path_reason` (as written and with
    symlinks resolved; a file with other hard links counts, since a
    redirection writes into it).  A target the shell computes (``> $F``,
    ``> *.log``) cannot be judged: ``(as written, None)``.
    """
    plan = _plan(command)
    if not plan.writes:
        return None
    bases = _bases(plan.moves, cwd)
    for target in plan.writes:
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


def judge_paths(command: str, cwd: Path, read_rules: tuple[str, ...]) -> PermissionResult:
    """``Bash``'s own permission check (blocking: call it from a worker thread when
    :func:`needs_worker_thread` says so).

    Deny when a Read deny rule (``read_rules``, their contents) covers a path
    the command reads; ask as a safety check for a computed name that could be
    one, a protected write target, or a computed write target; allow a
    read-only command whose names all resolve inside ``cwd``; else passthrough.
    """
    if read_rules:
        read = denied_read(command, cwd, read_rules)
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
    if _plan(command).allowable and resolves_inside(command, cwd):
        return PermissionResult.allow()
    return PermissionResult.passthrough()


def needs_worker_thread(command: str, cwd: Path, *, walks: bool) -> bool:
    """Whether :func:`judge_paths` may glob, or (``walks``) walk a directory the command names."""
    plan = _plan(command)
    if plan.globs:
        return True
    return walks and any(
        word.static and os.path.isdir(os.path.join(cwd, word.text)) for word in plan.names
    )


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
    plan = _plan(command).inside
    if plan is None:
        return False
    answer = _resolves_inside_directly(plan, str(cwd))
    if answer is not None:
        return answer
    return _resolves_inside_resolved(plan, cwd)


def _inside_names(command: str) -> tuple[tuple[tuple[Word, str], ...], tuple[Word, ...]] | None:
    lexed = path_words(command)
    if lexed is None:
        return None
    commands, inputs = lexed
    names: list[tuple[Word, str]] = [(Word(t), t) for t in inputs]
    moves: list[Word] = []
    for words in commands:
        names.extend((w, c) for w in words[1:] for c in candidates(w.text))
        if words[0].text == "cd" and len(words) == 2:
            moves.append(words[1])
    return tuple(names), tuple(moves)


def _plainly_inside(base: str, name: str) -> bool | None:
    """True when ``name`` under the directory ``base`` (itself inside) meets no symbolic
    link and no ``..`` (so it resolves inside, or does not exist); None: resolve it."""
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


def _resolves_inside_directly(
    plan: tuple[tuple[tuple[Word, str], ...], tuple[Word, ...]], cwd: str
) -> bool | None:
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
        if len(bases) > _MAX_BASES:
            return False
    for base in bases:
        for word, name in names:
            if not _plainly_inside(base, name):
                return None
            if word.expands:
                if "[" in name:
                    return False
                matches = glob.iglob(name, root_dir=base, include_hidden=True)
                for count, match in enumerate(itertools.islice(matches, _MAX_GLOB_MATCHES + 1)):
                    if count >= _MAX_GLOB_MATCHES or not _plainly_inside(base, match):
                        return None
    return True


def _resolves_inside_resolved(
    plan: tuple[tuple[tuple[Word, str], ...], tuple[Word, ...]], cwd: Path
) -> bool:
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
        if len(bases) > _MAX_BASES:
            return False
    for base in bases:
        for word, name in names:
            if not inside(os.path.join(base, name)):
                return False
            if word.expands:
                if "[" in name:
                    return False
                matches = glob.iglob(name, root_dir=base, include_hidden=True)
                for count, match in enumerate(itertools.islice(matches, _MAX_GLOB_MATCHES + 1)):
                    if count >= _MAX_GLOB_MATCHES or not inside(os.path.join(base, match)):
                        return False
    return True
