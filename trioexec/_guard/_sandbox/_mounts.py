"""Which paths one sandboxed command may write, may not write, may not read.

:func:`plan_mounts` looks at the file system (``lstat``, ``realpath``; no
process, no trio) and returns the :class:`~trioexec._sandbox._bwrap.MountPlan`
plus the protected paths that do not exist yet (:class:`Watch`), which are
checked once the command has ended.

Protected paths, read-only even inside a writable root ``W`` (the working
directory and every ``allowWrite`` root), looked for at the top of ``W``:

- ``W/.git``: bound onto itself, so that it is a mount point (which cannot
  be renamed away and replaced), with ``.git/hooks`` and ``.git/config``
  read-only inside; a ``.git`` *file* (a worktree's pointer) read-only;
- ``.claude``, ``.vscode``, ``.idea``, ``.husky``, ``.config/git``,
  ``.config/fish``: the whole directory read-only;
- every file name of :data:`~trioexec._protected.PROTECTED_FILES`
  (``.mcp.json``, ``.gitconfig``, ``.bashrc``...), and every ``denyWrite`` path.

A mount needs an existing path, and creating a placeholder would leave
empty files in the user's tree (and in ``git status``).  So a protected
path that does not exist is *watched*: if the command created it, it is
removed when the command has ended, and the call's result says so.
"""

from __future__ import annotations

import os
import shutil
import stat
from typing import TYPE_CHECKING

import attrs

from .._protected import PROTECTED_FILES
from ._bwrap import MountPlan

if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path

__all__ = ["Watch", "plan_mounts"]

_PROTECTED_TOP_DIRS = (".claude", ".vscode", ".idea", ".husky", ".config/git", ".config/fish")
_GIT_INSIDE = ("hooks", "config")


@attrs.frozen
class Watch:
    """Protected paths that did not exist when the command started."""

    paths: tuple[str, ...] = ()

    def created(self) -> list[str]:
        """The watched paths that exist now (``lstat``: a dangling symlink counts)."""
        return [p for p in self.paths if os.path.lexists(p)]

    def remove_created(self) -> list[str]:
        """Remove what the command created at a watched path; the paths removed.

        A directory is removed with everything in it, a symlink itself (never
        what it points to).  A path that cannot be removed is still returned.
        """
        found = self.created()
        for path in found:
            try:
                if os.path.isdir(path) and not os.path.islink(path):
                    shutil.rmtree(path)
                else:
                    os.unlink(path)
            except OSError:
                pass
        return found


def _real(path: Path | str) -> str:
    return os.path.realpath(path)


def _kind(path: str) -> int | None:
    """``stat.S_IFMT`` of ``path`` (symlinks followed), None if it does not exist."""
    try:
        return stat.S_IFMT(os.stat(path).st_mode)
    except OSError:
        return None


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def plan_mounts(
    *,
    cwd: Path,
    tmpdir: Path,
    allow_write: Iterable[Path] = (),
    deny_write: Iterable[Path] = (),
    deny_read: Iterable[Path] = (),
    allow_read: Iterable[Path] = (),
) -> tuple[MountPlan, Watch]:
    """The mounts of one sandboxed command, and the protected paths to watch.

    Args:
        cwd: the working directory (writable).
        tmpdir: the sandbox's temporary directory (writable, ``$TMPDIR`` inside).
        allow_write: more writable roots (missing ones are skipped).
        deny_write: paths read-only even inside a writable root.
        deny_read: paths hidden (missing ones are skipped).
        allow_read: paths readable again inside a hidden directory.

    Returns:
        ``(plan, watch)``.
    """
    writable: list[str] = []
    for path in (cwd, tmpdir, *allow_write):
        real = _real(path)
        if _kind(real) == stat.S_IFDIR and real not in writable:
            writable.append(real)
        elif _kind(real) is not None and real not in writable:
            writable.append(real)  # a writable file
    tmp_real = _real(tmpdir)
    read_only: list[str] = []
    watched: list[str] = []
    git_binds: list[str] = []

    def protect(path: str) -> None:
        if os.path.lexists(path):
            real = _real(path)
            inside = any(_within(real, w) for w in writable)
            if _kind(real) is not None and inside and real not in read_only:
                read_only.append(real)
        elif path not in watched:
            watched.append(path)

    for root in writable:
        if root == tmp_real or _kind(root) != stat.S_IFDIR:
            continue
        git = os.path.join(root, ".git")
        git_kind = _kind(git)
        if git_kind == stat.S_IFDIR and not os.path.islink(git):
            git_binds.append(git)
            for name in _GIT_INSIDE:
                protect(os.path.join(git, name))
        elif git_kind is not None:
            protect(git)
        for name in _PROTECTED_TOP_DIRS:
            protect(os.path.join(root, name))
        for name in PROTECTED_FILES:
            protect(os.path.join(root, name))
    for path in deny_write:
        protect(os.fspath(path))
    hidden_dirs: list[str] = []
    hidden_files: list[str] = []
    for path in deny_read:
        real = _real(path)
        kind = _kind(real)
        if kind == stat.S_IFDIR:
            if real not in hidden_dirs:
                hidden_dirs.append(real)
        elif kind is not None and real not in hidden_files:
            hidden_files.append(real)
    hidden_dirs.sort(key=len)  # an outer directory first: an inner one lies inside its tmpfs
    hidden_dirs = [d for d in hidden_dirs if not any(_within(d, o) and d != o for o in hidden_dirs)]
    hidden_files = [f for f in hidden_files if not any(_within(f, d) for d in hidden_dirs)]
    readable = [
        real
        for real in dict.fromkeys(_real(p) for p in allow_read)
        if _kind(real) is not None and any(_within(real, d) for d in hidden_dirs)
    ]
    plan = MountPlan(
        writable=(*writable, *git_binds),
        read_only=tuple(read_only),
        empty_dirs=tuple(hidden_dirs),
        empty_files=tuple(hidden_files),
        readable=tuple(readable),
    )
    return plan, Watch(tuple(watched))
