"""The base class of the file tools: workspace root, path resolution, rules, permissions."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, TypeVar

from .._contract._tool import CallContext, InterruptBehavior, PermissionResult, Tool
from .._guard._file_access import path_rule_covers as _path_rule_covers
from .._texts import edit_denied_message, read_denied_message
from ._paths import OutsideRootError, absolute_path, resolve_path
from ._responses import reported_response

if TYPE_CHECKING:
    from .._contract._rules import RuleBehavior
    from .._models import JSONValue

__all__ = [
    "BINARY_SNIFF_BYTES",
    "FileToolError",
    "PathTool",
    "looks_binary",
    "open_regular",
    "path_rule_covers",
    "write_atomic",
    "write_text",
    "written_message",
]

if TYPE_CHECKING:
    from .._models import JSONValue

InputT = TypeVar("InputT")

_ACCEPTING = frozenset({"acceptEdits", "auto"})
"""Modes in which an edit inside the working directory is allowed (``auto``
starts from ``acceptEdits``, as Claude Code's auto mode does before its classifier)."""

BINARY_SNIFF_BYTES = 8192
"""How much of a file is inspected to tell text from binary (as git does)."""


class FileToolError(Exception):
    """A file tool cannot do what it was asked; the message is shown to the model."""


def looks_binary(head: bytes) -> bool:
    """A NUL byte in the first bytes of a file marks it as binary."""
    return b"\0" in head


def open_regular(path: Path, shown: str) -> BinaryIO:
    """Open a regular file for reading, refusing directories, devices and pipes.

    The file is opened with ``O_NONBLOCK`` and checked with ``fstat``, so a
    FIFO swapped in at the last moment cannot block the worker thread.

    Raises:
        FileToolError: missing, a directory, not a regular file, or no permission.
    """
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except (FileNotFoundError, NotADirectoryError):
        raise FileToolError(f"File does not exist: {shown}") from None
    except IsADirectoryError:
        raise FileToolError(_is_a_directory(shown)) from None
    except PermissionError:
        raise FileToolError(f"Permission denied: {shown}") from None
    except OSError as exc:
        raise FileToolError(f"Cannot open {shown}: {exc.strerror}") from None
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise FileToolError(_is_a_directory(shown))
        if not stat.S_ISREG(mode):
            raise FileToolError(f"{shown} is not a regular file (a device, socket or pipe).")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _is_a_directory(shown: str) -> str:
    return f"{shown} is a directory, not a file. Use Glob (or Bash with ls) to list a directory."


def write_atomic(path: Path, data: bytes, shown: str) -> bool:
    """Write ``data`` to ``path``, creating parent directories; return True if it was new.

    An existing file is replaced atomically (a temporary file in the same
    directory, then ``os.replace``) and keeps its permission bits, so a reader
    never sees half a file.  A new file is created with the default mode.

    Raises:
        FileToolError: ``path`` is a directory, a parent is not a directory, or
            the file system refused.
    """
    try:
        try:
            old_mode: int | None = stat.S_IMODE(os.stat(path).st_mode)
        except FileNotFoundError:
            old_mode = None
        if old_mode is not None and path.is_dir():
            raise FileToolError(_is_a_directory(shown))
        path.parent.mkdir(parents=True, exist_ok=True)
        if old_mode is None:
            try:
                with open(path, "xb") as new_file:
                    new_file.write(data)
            except FileExistsError:  # created meanwhile: replace it like any existing file
                old_mode = stat.S_IMODE(os.stat(path).st_mode)
            else:
                return True
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as tmp_file:
                tmp_file.write(data)
            os.chmod(tmp, old_mode)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        return False
    except FileToolError:
        raise
    except (FileExistsError, NotADirectoryError):
        raise FileToolError(f"Cannot write {shown}: a parent path is not a directory.") from None
    except PermissionError:
        raise FileToolError(f"Permission denied: {shown}") from None
    except OSError as exc:
        if exc.errno == errno.EISDIR:
            raise FileToolError(_is_a_directory(shown)) from None
        raise FileToolError(f"Cannot write {shown}: {exc.strerror}") from None


def write_text(path: Path, text: str, shown: str) -> bool:
    """:func:`write_atomic` for text, encoded as UTF-8 (Write's and Edit's write path)."""
    return write_atomic(path, text.encode("utf-8"), shown)


def written_message(shown: str, *, created: bool) -> str:
    """What Write and Edit answer once they have written ``shown``."""
    if created:
        return f"File created successfully at: {shown}"
    return f"The file {shown} has been updated successfully."


def path_rule_covers(content: str, path: Path | str, cwd: Path) -> bool:
    """Whether a deny/ask path rule covers ``path`` as written or with symlinks resolved.

    The resolved path is matched against ``cwd`` as written and resolved, so a
    symlinked working directory does not move the rules' root.  Blocking file
    system calls (``realpath``); cheap enough to run in the event loop thread.
    """
    return _path_rule_covers(content, path, cwd, behavior="deny")


class PathTool(Tool[InputT]):
    """A tool whose input names a path.

    Args:
        root: the workspace root; when given, paths resolving outside it are
            refused with a clear message (symlinks are followed first).
    """

    interrupt_behavior: InterruptBehavior = "cancel"
    read_only = True
    """Read-only tools are allowed inside the working directory without asking."""

    def __init__(self, root: Path | str | None = None) -> None:
        self.root = Path(os.path.abspath(root)) if root is not None else None

    def input_path(self, input: InputT) -> str | None:  # noqa: A002
        """The path the input names (None: the working directory)."""
        raise NotImplementedError

    async def resolve(self, raw: str | None, ctx: CallContext) -> Path:
        """Resolve ``raw`` against ``ctx.cwd`` and check it against the root.

        Raises:
            FileToolError: the path is outside the workspace root.
        """
        try:
            return await resolve_path(raw or ".", cwd=ctx.cwd, root=self.root)
        except OutsideRootError as exc:
            raise FileToolError(str(exc)) from None

    def match_rule_content(
        self,
        content: str,
        input: InputT,  # noqa: A002
        ctx: CallContext,
        *,
        behavior: RuleBehavior,
    ) -> bool:
        """Match a ``Tool(pattern)`` rule against the input's path (gitignore-style).

        A deny or ask rule matches the path as written or with symlinks
        resolved, so a link cannot lead around it (``docs -> secrets`` does not
        escape ``Read(./secrets/**)``); an allow rule must match both, so a
        link cannot lead out of an allowed tree.  The permission chain matches
        the rules of every declaring tool this way (``path_access``).
        """
        return _path_rule_covers(content, self.input_path(input) or ".", ctx.cwd, behavior=behavior)

    def tool_response(self, input: InputT, output: object) -> JSONValue:  # noqa: A002
        """The output object the call reported (:mod:`~trioexec.tools._responses`)."""
        return reported_response(output)

    def rule_denial_message(self, input: InputT, ctx: CallContext) -> str:  # noqa: A002
        """``Permission to read {path} has been denied.`` (``edit`` for a writing tool).

        ``{path}`` is the absolute path the input names.
        """
        path = str(absolute_path(self.input_path(input) or ".", ctx.cwd))
        return read_denied_message(path) if self.read_only else edit_denied_message(path)

    def is_read_only(self, input: InputT) -> bool:  # noqa: A002
        """Read, Glob and Grep change nothing; Write and Edit do."""
        return self.read_only

    async def check_permissions(self, input: InputT, ctx: CallContext) -> PermissionResult:  # noqa: A002
        """Reads inside the working directory (symlinks followed) are allowed; the rest passes.

        Writes pass through, so the permission chain (rules, mode, the
        application) decides them, except in ``acceptEdits`` mode: there an
        edit inside the working directory (symlinks followed) is allowed, as
        Claude Code's "allow all writes in original cwd" does (and in ``auto``
        mode, which starts from ``acceptEdits``).  Deny and ask
        rules still come first.
        """
        accepting = ctx.permissions is not None and ctx.permissions.mode in _ACCEPTING
        if self.read_only or accepting:
            path = await resolve_path(self.input_path(input) or ".", cwd=ctx.cwd, root=None)
            if path.is_relative_to(await resolve_path(".", cwd=ctx.cwd, root=None)):
                return PermissionResult.allow()
        shown = absolute_path(self.input_path(input) or ".", ctx.cwd)
        verb = "read from" if self.read_only else "write to"
        return PermissionResult.passthrough(
            f"Claude requested permissions to {verb} {shown}, but you haven't granted it yet."
        )
