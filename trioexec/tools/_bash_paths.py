"""What a Bash command names on disk: the paths it reads, the files it writes.

Read from the one shell analysis (:func:`trioexec._shell_syntax.analyse`),
including the scripts the line hands to a shell (``bash -c 'cat x'``).  Every
function here touches the file system (``realpath``, ``glob``, ``os.walk``),
so ``Bash`` calls them in a worker thread.
"""

from __future__ import annotations

import glob
import itertools
import os
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


def _analyses(command: str) -> list[ShellAnalysis]:
    analysis = analyse(command)
    return [analysis, *nested_scripts(analysis)]


def _bases(analyses: list[ShellAnalysis], cwd: Path) -> list[str] | None:
    """The directories a relative name may be resolved against: cwd and every ``cd`` target."""
    bases = [str(cwd)]
    for analysis in analyses:
        for command in analysis.commands:
            words = command.words
            if words and words[0].text in ("cd", "pushd") and len(words) > 1:
                target = words[-1]
                if not target.static or target.expands:
                    return None
                moved = [os.path.join(base, os.path.expanduser(target.text)) for base in bases]
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
    analyses = _analyses(command)
    bases = _bases(analyses, cwd)
    if bases is None:
        return ReadCheck(unknown="cd")
    for word in _names(analyses):
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
    targets: list[Word] = []
    for analysis in _analyses(command):
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
    analyses = _analyses(command)
    bases = _bases(analyses, cwd)
    for target in write_target_words(command):
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
    if (
        is_read_only_command(command)
        and stays_in_working_directory(command)
        and resolves_inside(command, cwd)
    ):
        return PermissionResult.allow()
    return PermissionResult.passthrough()


def needs_worker_thread(command: str, cwd: Path, *, walks: bool) -> bool:
    """Whether :func:`judge_paths` may glob, or (``walks``) walk a directory the command names."""
    analyses = _analyses(command)
    for word in _names(analyses):
        if word.expands:
            return True
        if walks and word.static and os.path.isdir(os.path.join(cwd, word.text)):
            return True
    return False


def resolves_inside(command: str, cwd: Path) -> bool:
    """Whether everything ``command`` names resolves (symlinks followed) inside ``cwd``.

    Each name is tried against the working directory and every directory a
    ``cd`` may have moved to (a failed ``cd`` leaves the old one).  Unquoted
    globs are expanded (a bracket expression, or too many matches, means
    False).  Unsure means False, so the call is asked about.
    """
    lexed = path_words(command)
    if lexed is None:
        return False
    commands, inputs = lexed
    root = Path(os.path.realpath(cwd))

    def inside(path: str) -> bool:
        if not os.path.lexists(path):  # nothing to read there: the name as written decides
            return Path(os.path.normpath(path)).is_relative_to(root) or Path(
                os.path.realpath(path)
            ).is_relative_to(root)
        return Path(os.path.realpath(path)).is_relative_to(root)

    bases = [str(root)]
    names: list[tuple[Word, str]] = [(Word(t), t) for t in inputs]
    for words in commands:
        names.extend((w, c) for w in words[1:] for c in candidates(w.text))
        if words[0].text == "cd" and len(words) == 2:
            if words[1].expands:
                return False  # where a globbed ``cd`` lands is not tracked
            moved = [os.path.join(base, words[1].text) for base in bases]
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
