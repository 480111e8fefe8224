"""Path resolution and the workspace root shared by the file tools.

A path is resolved the way a shell would see it: ``~`` expanded, a relative
path joined to the call's working directory (``CallContext.cwd``), then every
symlink followed (``os.path.realpath``).  When a workspace root is configured,
the *resolved* path must lie under the resolved root, so neither ``..`` nor a
symlink can lead out of it.  Resolution touches the file system, so it runs in
a worker thread; it is short and is not abandoned on cancellation.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

import trio

__all__ = ["OutsideRootError", "absolute_path", "display_path", "resolve_path", "resolve_sync"]


class OutsideRootError(Exception):
    """A path resolves to a place outside the configured workspace root."""

    def __init__(self, path: str, root: Path) -> None:
        super().__init__(
            f"Path {path} is outside the workspace root {root}; "
            "only files under the workspace root can be used."
        )
        self.path = path
        self.root = root


def absolute_path(raw: str, cwd: Path) -> Path:
    """``raw`` with ``~`` expanded, joined to ``cwd`` and normalised; no file system access."""
    return Path(os.path.normpath(os.path.join(cwd, os.path.expanduser(raw))))


def resolve_sync(raw: str, *, cwd: Path, root: Path | None) -> Path:
    """Blocking version of :func:`resolve_path`.

    Raises:
        OutsideRootError: ``root`` is set and the resolved path is not under it.
    """
    real = Path(os.path.realpath(os.path.join(cwd, os.path.expanduser(raw))))
    if root is not None and not real.is_relative_to(os.path.realpath(root)):
        raise OutsideRootError(raw, root)
    return real


async def resolve_path(raw: str, *, cwd: Path, root: Path | None) -> Path:
    """Resolve ``raw`` (symlinks followed) and check it against the workspace root.

    Cancellation: checked before the worker thread starts; the short resolution
    itself always runs to completion.

    Raises:
        OutsideRootError: ``root`` is set and the resolved path is not under it.
    """
    return await trio.to_thread.run_sync(functools.partial(resolve_sync, raw, cwd=cwd, root=root))


def display_path(path: Path, cwd: Path) -> str:
    """``path`` relative to ``cwd`` when it lies under it (shorter output), else absolute.

    With ``/`` as the working directory every path stays absolute.
    """
    if cwd.parent == cwd:
        return str(path)
    try:
        return str(path.relative_to(cwd))
    except ValueError:
        return str(path)
