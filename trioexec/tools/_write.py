"""The ``Write`` tool: create or overwrite a whole file."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

import attrs
import trio

from .._contract._path_access import PathAccess
from .._guard._file_access import denial_before_validation
from ._base import FileToolError, PathTool, open_regular, write_text, written_message
from ._responses import Reported, structured_patch

if TYPE_CHECKING:
    from pathlib import Path

    from .._contract._tool import CallContext, ProgressSender
    from .._models import JSONObject
    from ._read_state import FileReadState

__all__ = ["WriteInput", "WriteTool"]


@attrs.frozen
class WriteInput:
    """Input of ``Write``."""

    file_path: str = attrs.field(
        metadata={"description": "The path of the file to write (relative: to the working dir)"}
    )
    content: str = attrs.field(metadata={"description": "The content to write to the file"})


class WriteTool(PathTool[WriteInput]):
    """Write a file, creating parent directories.

    Not concurrency-safe; ``interrupt_behavior`` is ``"block"``.  The write runs
    in a worker thread that is never abandoned, and an existing file is
    replaced atomically: after a cancellation the file holds either its old or
    its new content, never a mix.
    """

    name = "Write"
    description = (
        "Writes a file to the local filesystem, replacing it if it exists and creating "
        "missing parent directories. Prefer Edit for changing part of an existing file."
    )
    input_type = WriteInput
    interrupt_behavior = "block"
    read_only = False
    path_access = PathAccess("file_path", writes=True)

    def __init__(
        self, root: Path | str | None = None, *, read_state: FileReadState | None = None
    ) -> None:
        super().__init__(root)
        self.read_state = read_state
        """The session's reads: an existing file must have been Read (None: no check)."""

    def input_path(self, input: WriteInput) -> str:  # noqa: A002
        return input.file_path

    async def validate_input(self, input: WriteInput, ctx: CallContext) -> str | None:  # noqa: A002
        try:
            path = await self.resolve(input.file_path, ctx)
        except FileToolError as exc:
            return str(exc)
        if await trio.Path(path).is_dir():
            return (
                f"{input.file_path} is a directory, not a file. Give the path of a file to write."
            )
        if self.read_state is not None:
            return await trio.to_thread.run_sync(self.read_state.check_write, path)
        return None

    async def call(
        self,
        input: WriteInput,  # noqa: A002
        ctx: CallContext,
        progress: ProgressSender,
    ) -> str:
        """Write the file and say whether it was created or updated.

        Raises:
            FileToolError: outside the root, a directory, or the write failed.
        """
        path = await self.resolve(input.file_path, ctx)
        denial = denial_before_validation(self, input, ctx)
        if denial is not None:  # the path changed (a symlink swapped) since it was allowed
            raise FileToolError(denial)
        original, created = await trio.to_thread.run_sync(
            functools.partial(_write, path, input.content, input.file_path)
        )
        if self.read_state is not None:
            await trio.to_thread.run_sync(self.read_state.record, path, input.content)
        response: JSONObject = {
            "type": "create" if created else "update",
            "filePath": input.file_path,
            "content": input.content,
            "structuredPatch": [] if created else structured_patch(original or "", input.content),
            "originalFile": None if created else original,
        }
        return Reported(written_message(input.file_path, created=created), response)


def _write(path: Path, content: str, shown: str) -> tuple[str | None, bool]:
    """The file's old text (None: none, or not text) and whether the write created it."""
    try:
        with open_regular(path, shown) as file:
            original: str | None = file.read().decode("utf-8", errors="replace")
    except FileToolError:
        original = None
    created = write_text(path, content, shown)
    return original, created
