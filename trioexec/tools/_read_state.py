"""What the session has read: Write and Edit refuse a file the model has not Read.

Claude Code 2.1.88 checks, before Write or Edit changes an existing file, that
the model Read it in this session (in full or in part) and that it has not
been modified since (its modification time, to the millisecond, is not later
than when it was read; an Edit after a full Read also passes when the text is
unchanged).  Read records a file; a successful Write or Edit records what it
wrote, so a file can be edited twice in a row.  Later Claude Code releases
dropped the check: :attr:`~trioexec.Policy.read_before_write` selects it, and
:func:`~trioexec.tools.default_tools` gives the file tools one shared state
when it is on.

Blocking (``os.stat``): call from a worker thread.
"""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING

import attrs

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["MODIFIED_SINCE_READ", "NOT_READ", "FileReadState"]

NOT_READ = "File has not been read yet. Read it first before writing to it."
MODIFIED_SINCE_READ = (
    "File has been modified since read, either by the user or by a linter. "
    "Read it again before attempting to write it."
)


@attrs.frozen
class _Entry:
    mtime_ms: int
    content: str | None  # the text, when the whole file was read


def _mtime_ms(path: Path) -> int | None:
    try:
        return os.stat(path).st_mtime_ns // 1_000_000
    except OSError:
        return None


class FileReadState:
    """The files read (or written) in one session, by absolute path; thread-safe."""

    def __init__(self) -> None:
        self._entries: dict[str, _Entry] = {}
        self._lock = threading.Lock()

    def record(self, path: Path, content: str | None) -> None:
        """Note that ``path`` was read or written now; ``content``: its whole text, or
        None after a partial read."""
        mtime = _mtime_ms(path)
        if mtime is None:
            return
        with self._lock:
            self._entries[os.fspath(path)] = _Entry(mtime, content)

    def check_write(self, path: Path, current: str | None = None) -> str | None:
        """Why an existing ``path`` may not be changed now, or None when it may.

        Args:
            path: the resolved path (a missing file may always be written).
            current: the file's text as it is now (Edit passes it: after a
                full read, unchanged text passes despite a newer mtime).

        Returns:
            :data:`NOT_READ`, :data:`MODIFIED_SINCE_READ` or None.
        """
        mtime = _mtime_ms(path)
        if mtime is None:
            return None
        with self._lock:
            entry = self._entries.get(os.fspath(path))
        if entry is None:
            return NOT_READ
        if mtime > entry.mtime_ms:
            if current is not None and entry.content is not None and current == entry.content:
                return None
            return MODIFIED_SINCE_READ
        return None
