"""A session transcript: one JSON line per conversation message, as Claude Code keeps one.

::

    transcript = Transcript(default_transcript_path(cwd, session_id), session_id=session_id,
                            cwd=cwd)
    agent = Agent(client, tools=tools, model=model, guard=guard, transcript=transcript)

Hooks receive the file's path as ``transcript_path`` and commonly read it to
see the conversation so far.  Each line carries the fields hooks commonly
read from Claude Code's transcripts: ``type`` (``"user"`` / ``"assistant"``),
``message`` (the message in Messages API shape), ``uuid``, ``parentUuid`` (the
previous line's ``uuid``; null for the first), ``sessionId``, ``timestamp``
(UTC, ISO 8601 with milliseconds and ``Z``), ``cwd``, ``isSidechain`` (always
false) and ``userType`` (``"external"``).  It is not the whole of Claude
Code's format: no ``summary`` lines, no ``toolUseResult``, no ``requestId``,
and the file is not meant to be resumed by Claude Code.

Writes are synchronous: each message is one ``os.write`` of a whole line on
a file opened with ``O_APPEND``, so it is on disk for a reader (a hook's
process) the moment :meth:`Transcript.append` returns, and trio cannot cancel
it half-way (there is no checkpoint inside).  A line is a few kilobytes at
most for ordinary messages; a local append of that size takes microseconds,
less than a trip through a worker thread would.
"""

from __future__ import annotations

import datetime
import json
import os
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Self

from .._errors import ConfigurationError

if TYPE_CHECKING:
    from collections.abc import Mapping
    from types import TracebackType

    from .._models import JSONValue

__all__ = ["Transcript", "default_transcript_path", "transcript_home"]


def transcript_home() -> Path:
    """Where ``trioexec agent`` keeps transcripts: ``$XDG_STATE_HOME/trioexec/projects``.

    ``$XDG_STATE_HOME`` defaults to ``~/.local/state``.  trioexec does not
    write into Claude Code's ``~/.claude/projects``: its lines carry only part
    of Claude Code's format, and Claude Code's ``--resume`` lists every file
    there as one of its own sessions.
    """
    state = os.environ.get("XDG_STATE_HOME") or str(Path("~/.local/state").expanduser())
    return Path(state) / "trioexec" / "projects"


def default_transcript_path(cwd: Path, session_id: str) -> Path:
    """``transcript_home() / <cwd with every / replaced by -> / <session_id>.jsonl``.

    The project folder is named as Claude Code names its own
    (``/home/me/app`` -> ``-home-me-app``).

    Raises:
        ValueError: ``session_id`` is empty or holds a path separator.
    """
    if not session_id or "/" in session_id or os.sep in session_id or session_id in ("..", "."):
        raise ValueError(f"not a usable session id for a file name: {session_id!r}")
    folder = str(cwd.absolute()).replace(os.sep, "-").replace("/", "-")
    return transcript_home() / folder / f"{session_id}.jsonl"


class Transcript:
    """Appends each message of a conversation to a JSON Lines file as it is added.

    Args:
        path: the file (made absolute; missing parent folders are created).
            An existing file is appended to; the chain of ``parentUuid``
            starts afresh.
        session_id: the ``sessionId`` of every line; by default a new UUID.
            Give the guard rails the same one (:class:`~trioexec.anthropic.Agent`
            does it).
        cwd: the ``cwd`` of every line (default: the process's).

    Raises:
        ConfigurationError: the file cannot be opened for appending (the
            message names it and says why).

    Close it with :meth:`close` or use it as a context manager.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        session_id: str | None = None,
        cwd: Path | None = None,
    ) -> None:
        self.path = Path(path).expanduser().absolute()
        self.session_id = session_id if session_id is not None else str(uuid.uuid4())
        self.cwd = str((cwd or Path.cwd()).absolute())
        self._parent: str | None = None
        try:
            if self.path.is_dir():
                raise IsADirectoryError(21, "Is a directory")
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fd: int | None = os.open(
                self.path,
                os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0),
                0o600,
            )
        except OSError as exc:
            reason = exc.strerror or str(exc)
            raise ConfigurationError(f"cannot write the transcript {self.path}: {reason}") from None

    def append(self, message: Mapping[str, JSONValue]) -> str:
        """Write one line for ``message`` (API shape, ``role`` "user" or "assistant").

        Returns:
            the line's ``uuid`` (the next line's ``parentUuid``).

        Raises:
            ValueError: the transcript is closed, or ``message`` is not JSON.
            OSError: the write failed (disk full, ...); nothing of the line
                stays behind unless the operating system wrote part of it.

        Synchronous and never a checkpoint: a cancellation cannot split a line.
        """
        if self._fd is None:
            raise ValueError(f"the transcript {self.path} is closed")
        role = message.get("role")
        line_uuid = str(uuid.uuid4())
        now = datetime.datetime.now(datetime.UTC)
        record = {
            "parentUuid": self._parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": self.cwd,
            "sessionId": self.session_id,
            "type": "assistant" if role == "assistant" else "user",
            "message": dict(message),
            "uuid": line_uuid,
            "timestamp": now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z",
        }
        data = (json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
        view = memoryview(data)
        while view:
            written = os.write(self._fd, view)
            view = view[written:]
        self._parent = line_uuid
        return line_uuid

    def close(self) -> None:
        """Close the file (idempotent); every line is already written."""
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Transcript({str(self.path)!r}, session_id={self.session_id!r})"
