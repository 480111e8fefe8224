"""Which files a directory search sees: ripgrep's default file selection.

``Glob`` and ``Grep`` walk a tree the way ``rg --files`` does, so that a
virtual environment, ``node_modules`` or a build folder never drowns the
project's own files:

* ``.gitignore`` files (in the search directory, below it, and in its parents
  up to the repository root), ``.git/info/exclude``, ``.ignore`` and
  ``.rgignore`` files (in every parent too) are honoured with gitignore
  semantics (negations, anchoring, ``dir/`` patterns), each read with
  ``pathspec``.  ``.gitignore`` and ``exclude`` apply only inside a git
  repository (a folder with ``.git`` at or above the search directory).
* Precedence as in ripgrep: any ``.rgignore`` match beats any ``.ignore``
  match, which beats any ``.gitignore`` match, which beats ``exclude``; within
  one kind the deepest file that has a matching pattern decides (its last
  matching pattern).
* Hidden entries (a name starting with ``.``) are skipped unless the search
  asks for them (``hidden=True``) or an ignore file whitelists them (``!.env``).
* Version-control directories (``.git``, ``.hg``, ``.svn``, ``.bzr``,
  ``.jj``, ``.sl``) are always skipped, and symlinks are never followed
  during the walk (neither to files nor to directories: no cycles, nothing
  outside the tree); an ignored directory is not entered.

Walking is synchronous (it runs in worker threads), sorted by name for
determinism, and checks for trio cancellation every few hundred entries when
run from a trio worker thread.  The user's global git excludes file is not
read (the ripgrep backend is run with ``--no-ignore-global`` to match).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Final

import attrs
import trio

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence
    from pathlib import Path

    from pathspec import GitIgnoreSpec  # noqa: TC004 - attrs never resolves the annotations

__all__ = ["VCS_DIRS", "FileSelection", "is_hidden_pattern", "walk_selected"]

VCS_DIRS: Final = frozenset({".git", ".hg", ".svn", ".bzr", ".jj", ".sl"})
"""Always skipped (as Claude Code's Grep excludes them)."""

_KINDS: Final = (".rgignore", ".ignore", ".gitignore")
"""Ignore file names, highest precedence first."""
_CANCEL_CHECK_EVERY: Final = 256
_MAX_IGNORE_FILE_BYTES: Final = 4 * 1024 * 1024


@attrs.frozen
class _Rules:
    """The ignore files of one directory: ``specs[k]`` for ``_KINDS[k]`` (None: absent)."""

    directory: str
    """Absolute, without a trailing slash (``""`` for ``/``)."""
    specs: tuple[GitIgnoreSpec | None, ...]

    def decide(self, kind: int, path: str, is_dir: bool) -> bool | None:
        spec = self.specs[kind]
        if spec is None:
            return None
        rel = path[len(self.directory) + 1 :]
        result = spec.check_file(rel + "/" if is_dir else rel)
        return result.include


def _load(path: str) -> GitIgnoreSpec | None:
    import pathspec  # imported on the first search, not with the package

    try:
        with open(path, "rb") as handle:
            data = handle.read(_MAX_IGNORE_FILE_BYTES)
    except OSError:
        return None
    lines = data.decode("utf-8", errors="replace").splitlines()
    try:
        spec = pathspec.GitIgnoreSpec.from_lines(lines)
    except Exception:  # a pattern pathspec cannot compile: read the file without it
        spec = pathspec.GitIgnoreSpec.from_lines([line for line in lines if _compiles(line)])
    return spec if len(spec) else None


def _compiles(line: str) -> bool:
    import pathspec

    try:
        pathspec.GitIgnoreSpec.from_lines([line])
    except Exception:
        return False
    return True


def _rules_for(directory: str, *, in_repo: bool) -> _Rules | None:
    specs = tuple(
        _load(os.path.join(directory or "/", name)) if in_repo or name != ".gitignore" else None
        for name in _KINDS
    )
    if all(spec is None for spec in specs):
        return None
    return _Rules(directory, specs)


def _git_dir(repo: str) -> str | None:
    """The repository's git directory (``.git``, or where a worktree's ``.git`` file points)."""
    dot_git = os.path.join(repo, ".git")
    if os.path.isdir(dot_git):
        return dot_git
    try:
        with open(dot_git, encoding="utf-8", errors="replace") as handle:
            first = handle.readline().strip()
    except OSError:
        return None
    if not first.startswith("gitdir:"):
        return None
    git_dir = os.path.join(repo, first.removeprefix("gitdir:").strip())
    try:
        with open(os.path.join(git_dir, "commondir"), encoding="utf-8") as handle:
            return os.path.normpath(os.path.join(git_dir, handle.read().strip()))
    except OSError:
        return git_dir


@attrs.frozen
class FileSelection:
    """The ignore rules in force for one search below ``base``.

    Build it with :meth:`for_base` (reads the parents' ignore files and finds
    the repository); :func:`walk_selected` adds the files met on the way down.
    """

    base: str
    parents: tuple[_Rules, ...]
    """Rules of the parent directories, shallowest first."""
    repo: str | None
    exclude: GitIgnoreSpec | None
    hidden: bool

    @classmethod
    def for_base(cls, base: Path, *, hidden: bool) -> FileSelection:
        """The selection for a search of ``base`` (an existing, resolved directory)."""
        top = os.fspath(base).rstrip("/")
        chain: list[str] = []
        current = top
        while True:
            chain.append(current)
            parent = os.path.dirname(current or "/").rstrip("/")
            if parent == current:
                break
            current = parent
        chain.reverse()  # "/" (as "") first, ``top`` last
        repo = next(
            (d for d in reversed(chain) if os.path.lexists(os.path.join(d or "/", ".git"))), None
        )
        parents: list[_Rules] = []
        for directory in chain[:-1]:
            in_repo = repo is not None and (directory + "/").startswith(repo + "/")
            rules = _rules_for(directory, in_repo=in_repo)
            if rules is not None and not _covers_base(rules, top):
                parents.append(rules)
        exclude = None
        if repo is not None:
            git_dir = _git_dir(repo or "/")
            if git_dir is not None:
                exclude = _load(os.path.join(git_dir, "info", "exclude"))
                if exclude is not None and _spec_covers(exclude, top[len(repo) + 1 :]):
                    exclude = None
        return cls(top, tuple(parents), repo, exclude, hidden)

    def ignored(self, chain: Sequence[_Rules], path: str, name: str, is_dir: bool) -> bool:
        """Whether ``path`` (absolute, below ``base``) is left out of the search."""
        for kind in range(len(_KINDS)):
            for rules in reversed(chain):
                decision = rules.decide(kind, path, is_dir)
                if decision is not None:
                    return decision
        if self.exclude is not None and self.repo is not None:
            rel = path[len(self.repo) + 1 :]
            decision = self.exclude.check_file(rel + "/" if is_dir else rel).include
            if decision is not None:
                return decision
        return not self.hidden and name.startswith(".")


def _covers_base(rules: _Rules, base: str) -> bool:
    """A parent's ignore file that excludes the search directory itself is not applied.

    Searching an ignored folder on purpose (``path=".venv"``) lists its files,
    as ``rg --files .venv`` does.
    """
    rel = base[len(rules.directory) + 1 :]
    return any(spec is not None and _spec_covers(spec, rel) for spec in rules.specs)


def _spec_covers(spec: GitIgnoreSpec, rel: str) -> bool:
    parts = rel.split("/")
    return any(
        spec.check_file("/".join(parts[: i + 1]) + "/").include is True for i in range(len(parts))
    )


def is_hidden_pattern(pattern: str) -> bool:
    """Whether a glob names a hidden entry itself (``.env``, ``**/.github/*``, ``.*``).

    Such a pattern asks for hidden files, so the search includes them.
    """
    return any(part.startswith(".") and part not in (".", "..") for part in pattern.split("/"))


def walk_selected(
    selection: FileSelection, *, max_depth: int | None = None
) -> Iterator[tuple[str, os.DirEntry[str]]]:
    """Yield ``(relative posix path, entry)`` for every selected regular file.

    ``max_depth`` 1 means files directly in the base.  Unreadable directories
    are skipped.
    """
    in_repo = selection.repo is not None
    root_rules = _rules_for(selection.base, in_repo=in_repo)
    start_chain = (*selection.parents, *([root_rules] if root_rules is not None else []))
    stack: list[tuple[str, str, int, tuple[_Rules, ...], bool]] = [
        (selection.base, "", 1, start_chain, in_repo)
    ]
    seen = 0
    in_trio_thread = _in_trio_thread()
    while stack:
        directory, prefix, depth, chain, in_repo = stack.pop()
        try:
            with os.scandir(directory or "/") as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            continue
        subdirs: list[tuple[str, str, int, tuple[_Rules, ...], bool]] = []
        for entry in entries:
            seen += 1
            if in_trio_thread and seen % _CANCEL_CHECK_EVERY == 0:
                trio.from_thread.check_cancelled()
            name = entry.name
            if name in VCS_DIRS:
                continue
            try:
                if entry.is_symlink():
                    continue
                is_dir = entry.is_dir(follow_symlinks=False)
                if not is_dir and not entry.is_file(follow_symlinks=False):
                    continue
            except OSError:
                continue
            path = entry.path
            if selection.ignored(chain, path, name, is_dir):
                continue
            rel = prefix + name
            if is_dir:
                if max_depth is None or depth < max_depth:
                    # A nested repository makes its own .gitignore files count.
                    sub_repo = in_repo or os.path.lexists(os.path.join(path, ".git"))
                    rules = _rules_for(path, in_repo=sub_repo)
                    sub_chain = chain if rules is None else (*chain, rules)
                    subdirs.append((path, rel + "/", depth + 1, sub_chain, sub_repo))
            else:
                yield rel, entry
        stack.extend(reversed(subdirs))


def _in_trio_thread() -> bool:
    try:
        trio.from_thread.check_cancelled()
    except RuntimeError:
        return False
    return True
