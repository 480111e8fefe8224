"""The ``Edit`` tool: exact string replacement in a file."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

import attrs
import trio

from .._contract._path_access import PathAccess
from .._guard._file_access import denial_before_validation
from ._base import (
    BINARY_SNIFF_BYTES,
    FileToolError,
    PathTool,
    looks_binary,
    open_regular,
    write_text,
    written_message,
)
from ._responses import Reported, structured_patch

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    from .._contract._tool import CallContext, ProgressSender
    from .._models import JSONObject, JSONValue
    from ._read_state import FileReadState

__all__ = ["EditInput", "EditTool", "apply_edit"]

NO_CHANGE = "No changes to make: old_string and new_string are exactly the same."
CWD_NOTE = "Note: your current working directory is"


@attrs.frozen
class EditInput:
    """Input of ``Edit``."""

    file_path: str = attrs.field(
        metadata={"description": "The path of the file to modify (relative: to the working dir)"}
    )
    old_string: str = attrs.field(metadata={"description": "The exact text to replace"})
    new_string: str = attrs.field(
        metadata={"description": "The text to replace it with (must differ from old_string)"}
    )
    replace_all: bool = attrs.field(
        default=False,
        metadata={"description": "Replace every occurrence of old_string (default false)"},
    )


@attrs.frozen
class EditOutcome:
    """The new text of a file and how many occurrences were replaced (0: a new file)."""

    text: str
    replaced: int


def apply_edit(
    text: str | None, old: str, new: str, *, replace_all: bool, shown: str
) -> EditOutcome:
    """Replace ``old`` by ``new`` in ``text`` (None: the file does not exist).

    ``old`` must occur exactly once unless ``replace_all``.  An empty ``old``
    creates a file that does not exist (or fills an empty one).  When the file
    uses CRLF line ends, the bare LFs of ``new`` become CRLF, so inserted
    lines keep the file's line ends; ``old`` (written with LF) is converted
    too when it is only found with CRLF.

    Raises:
        FileToolError: the edit cannot be applied; the message says why.
    """
    if old == new:
        raise FileToolError(NO_CHANGE)
    if text is None:
        if old == "":
            return EditOutcome(new, 0)
        raise FileToolError(f"File does not exist: {shown}")
    if old == "":
        if text.strip() == "":
            return EditOutcome(new, 0)
        raise FileToolError("Cannot create new file - file already exists.")
    count = text.count(old)
    if "\r\n" in text:
        if count == 0 and "\n" in old:
            crlf_old = _crlf(old)
            count = text.count(crlf_old)
            if count:
                old = crlf_old
        new = _crlf(new)
        if count and old == new:
            raise FileToolError(NO_CHANGE)
    if count == 0:
        raise FileToolError(f"String to replace not found in file.\nString: {old}")
    if count > 1 and not replace_all:
        raise FileToolError(
            f"Found {count} matches of the string to replace, but replace_all is false. "
            "To replace all occurrences, set replace_all to true. To replace only one "
            "occurrence, please provide more context to uniquely identify the instance.\n"
            f"String: {old}"
        )
    return EditOutcome(text.replace(old, new, -1 if replace_all else 1), count)


def _crlf(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\n", "\r\n")


class EditTool(PathTool[EditInput]):
    """Replace an exact string in a file.

    Not concurrency-safe; ``interrupt_behavior`` is ``"block"``.  Reading,
    replacing and the atomic write happen in one worker thread that is never
    abandoned, so a cancelled Edit leaves the file either untouched or fully
    edited.
    """

    name = "Edit"
    description = (
        "Performs an exact string replacement in a file. old_string must match the file "
        "exactly (whitespace included) and be unique unless replace_all is true. An empty "
        "old_string creates a new file with new_string as its content."
    )
    input_type = EditInput
    interrupt_behavior = "block"
    read_only = False
    path_access = PathAccess("file_path", reads=True, writes=True)
    """Edit reads the file it changes (its errors tell what the file holds), so
    Read deny and ask rules govern it as well as Edit rules."""

    def __init__(
        self, root: Path | str | None = None, *, read_state: FileReadState | None = None
    ) -> None:
        super().__init__(root)
        self.read_state = read_state
        """The session's reads: an existing file must have been Read (None: no check)."""

    def input_path(self, input: EditInput) -> str:  # noqa: A002
        return input.file_path

    def observable_input(
        self,
        input: Mapping[str, JSONValue],  # noqa: A002
        cwd: Path,
    ) -> Mapping[str, JSONValue]:
        """As :meth:`Tool.observable_input`, with ``replace_all`` given its default
        (``false``): hooks see the parsed input, as in Claude Code."""
        seen = super().observable_input(input, cwd)
        if "replace_all" in seen:
            return seen
        return {**seen, "replace_all": False}

    async def validate_input(self, input: EditInput, ctx: CallContext) -> str | None:  # noqa: A002
        """Claude Code's order: no change, a missing file, an empty ``old_string``, not
        read (or modified since), then whether ``old_string`` is found once."""
        try:
            path = await self.resolve(input.file_path, ctx)
            original = await trio.to_thread.run_sync(_load, path, input.file_path)
            if input.old_string != input.new_string:
                if original is None and input.old_string != "":
                    return f"File does not exist. {CWD_NOTE} {ctx.cwd}."
                if original is not None and input.old_string != "" and self.read_state is not None:
                    refusal = await trio.to_thread.run_sync(
                        self.read_state.check_write, path, original.replace("\r\n", "\n")
                    )
                    if refusal is not None:
                        return refusal
            _planned_edit(path, input, original)
        except FileToolError as exc:
            return str(exc)
        return None

    async def call(
        self,
        input: EditInput,  # noqa: A002
        ctx: CallContext,
        progress: ProgressSender,
    ) -> str:
        """Apply the edit.

        Raises:
            FileToolError: the file changed since validation so that the edit
                no longer applies, or the write failed.
        """
        path = await self.resolve(input.file_path, ctx)
        denial = denial_before_validation(self, input, ctx)
        if denial is not None:  # the path changed (a symlink swapped) since it was allowed
            raise FileToolError(denial)
        original, outcome = await trio.to_thread.run_sync(functools.partial(_edit, path, input))
        if self.read_state is not None:
            await trio.to_thread.run_sync(self.read_state.record, path, outcome.text)
        if input.replace_all:
            text = (
                f"The file {input.file_path} has been updated. "
                "All occurrences were successfully replaced."
            )
        else:  # a file the edit created too, as Claude Code says it
            text = written_message(input.file_path, created=False)
        response: JSONObject = {
            "filePath": input.file_path,
            "oldString": input.old_string,
            "newString": input.new_string,
            "originalFile": original or "",
            "structuredPatch": structured_patch(original or "", outcome.text),
            "userModified": False,
            "replaceAll": input.replace_all,
        }
        return Reported(text, response)


def _load(path: Path, shown: str) -> str | None:
    """The file's text, or None when it does not exist."""
    try:
        file = open_regular(path, shown)
    except FileToolError:
        if not path.exists() and not path.is_symlink():
            return None
        raise
    with file:
        data = file.read()
    if looks_binary(data[:BINARY_SNIFF_BYTES]):
        raise FileToolError(f"{shown} is a binary file; Edit changes text files only.")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise FileToolError(
            f"{shown} is not valid UTF-8 text; Edit cannot change it safely."
        ) from None


def _planned_edit(
    path: Path,
    input: EditInput,  # noqa: A002
    original: str | None = None,
) -> EditOutcome:
    """Load the file (unless given) and apply the edit in memory (validation runs only this)."""
    return apply_edit(
        _load(path, input.file_path) if original is None else original,
        input.old_string,
        input.new_string,
        replace_all=input.replace_all,
        shown=input.file_path,
    )


def _edit(path: Path, input: EditInput) -> tuple[str | None, EditOutcome]:  # noqa: A002
    """The file's old text (None: it did not exist) and the edit, written."""
    original = _load(path, input.file_path)
    outcome = _planned_edit(path, input, original)
    write_text(path, outcome.text, input.file_path)
    return original, outcome
