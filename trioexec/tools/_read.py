"""The ``Read`` tool: a text file with line numbers, or an image.

Read bounds its own output (a line window, long lines cut, a character cap),
so its ``max_result_size_chars`` is infinite: a result is never persisted to a
file, which the model would then have to Read again, in a loop.
"""

from __future__ import annotations

import base64
import functools
import math
import os
from typing import TYPE_CHECKING

import attrs
import trio

from .._contract._path_access import PathAccess
from .._models import ImageBlock
from ._base import BINARY_SNIFF_BYTES, FileToolError, PathTool, looks_binary, open_regular
from ._responses import Reported, reported_response

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path
    from typing import BinaryIO

    from .._contract._tool import CallContext, ProgressSender
    from .._models import JSONObject, JSONValue
    from ._read_state import FileReadState

__all__ = ["ReadInput", "ReadTool"]

DEFAULT_LIMIT = 2000
"""Lines shown when the call gives no ``limit``."""
MAX_LINE_CHARS = 2000
"""Longer lines are cut (minified files would otherwise flood the context)."""
LINE_READ_BYTES = 4 * MAX_LINE_CHARS + 16
"""Bytes of a line read at most: enough for ``MAX_LINE_CHARS`` characters of
UTF-8 and more, so a longer line is known to be cut without reading it whole."""
SKIP_CHUNK_BYTES = 256 * 1024
"""The rest of a long line is skipped in chunks this big, checking for
cancellation between them, so one huge line is never held in memory."""
MAX_OUTPUT_CHARS = 100_000
"""The formatted output stops at the last whole line under this many characters."""
MAX_IMAGE_BYTES = 3_932_160
"""3.75 MiB: its base64 form stays under the Messages API's 5 MB image limit."""
IMAGE_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
}
EMPTY_FILE_WARNING = (
    "<system-reminder>Warning: the file exists but the contents are empty.</system-reminder>"
)
"""Claude Code's text for a file of no lines (its Read never sends it: a file has one line at
least, so an empty file reads as shorter than the offset)."""
MALWARE_REMINDER = (
    "\n\n<system-reminder>\nWhenever you read a file, you should consider whether it would be "
    "considered malware. You CAN and SHOULD provide analysis of malware, what it is doing. "
    "But you MUST refuse to improve or augment the code. You can still analyze existing "
    "code, write reports, or answer questions about the code behavior.\n</system-reminder>\n"
)
"""Appended to every text Read shows, as Claude Code 2.1.88 does."""


@attrs.frozen
class ReadInput:
    """Input of ``Read``."""

    file_path: str = attrs.field(
        metadata={"description": "The path of the file to read (relative: to the working dir)"}
    )
    offset: int | None = attrs.field(
        default=None,
        metadata={"description": "The line number to start reading from (1-based)"},
    )
    limit: int | None = attrs.field(
        default=None,
        metadata={"description": f"The number of lines to read (default {DEFAULT_LIMIT})"},
    )


def _image_response(block: ImageBlock) -> JSONValue:
    """``{type: "image", file: {base64, type, originalSize}}`` for an image Read returned."""
    data = block.source.get("data")
    encoded = data if isinstance(data, str) else ""
    size = len(encoded) * 3 // 4 - len(encoded[-2:]) + len(encoded[-2:].rstrip("="))
    file: JSONObject = {
        "base64": encoded,
        "type": block.source.get("media_type"),
        "originalSize": size,
    }
    return {"type": "image", "file": file}


class ReadTool(PathTool[ReadInput]):
    """Read a text file (``cat -n`` style numbered lines) or an image.

    Concurrency-safe; an interrupt cancels it.  The reading runs in a worker
    thread that checks for cancellation every thousand lines and between the
    chunks of a long line's skipped rest, so a cancelled Read of a huge file
    (or of one huge line) stops promptly.  Only the first
    :data:`LINE_READ_BYTES` of a line are read into memory.
    """

    name = "Read"
    description = (
        "Reads a file from the local filesystem. Text is returned with line numbers "
        f"(cat -n format), at most {DEFAULT_LIMIT} lines from `offset`; lines longer than "
        f"{MAX_LINE_CHARS} characters are cut. Images (png, jpg, gif, webp) are returned "
        "as images. Use `offset` and `limit` to read a long file in parts."
    )
    input_type = ReadInput
    max_result_size_chars = math.inf
    path_access = PathAccess("file_path", reads=True)

    def __init__(
        self, root: Path | str | None = None, *, read_state: FileReadState | None = None
    ) -> None:
        super().__init__(root)
        self.read_state = read_state
        """Where a text Read is recorded, for Write and Edit's read-before-write check."""

    def is_concurrency_safe(self, input: ReadInput) -> bool:  # noqa: A002
        return True

    def input_path(self, input: ReadInput) -> str:  # noqa: A002
        return input.file_path

    def tool_response(self, input: ReadInput, output: object) -> JSONValue:  # noqa: A002
        """``{type: "text", file: {filePath, content, numLines, startLine, totalLines}}``,
        or ``{type: "image", file: {base64, type, originalSize}}``, as in Claude Code."""
        if isinstance(output, tuple) and output and isinstance(output[0], ImageBlock):
            return _image_response(output[0])
        return reported_response(output)

    async def validate_input(self, input: ReadInput, ctx: CallContext) -> str | None:  # noqa: A002
        if input.offset is not None and input.offset < 0:
            return "offset must be a line number >= 1"
        if input.limit is not None and input.limit < 1:
            return "limit must be at least 1"
        try:
            path = await self.resolve(input.file_path, ctx)
            if not await trio.to_thread.run_sync(_missing_or_directory, path):
                # Claude Code finds a missing file or a directory in the call, not here.
                await trio.to_thread.run_sync(_check_readable, path, input.file_path)
        except FileToolError as exc:
            return str(exc)
        return None

    async def call(
        self,
        input: ReadInput,  # noqa: A002
        ctx: CallContext,
        progress: ProgressSender,
    ) -> str | tuple[ImageBlock, ...]:
        """Read the file.

        Raises:
            FileToolError: the file is missing or a directory (Claude Code's
                texts), or it changed kind since validation.
        """
        path = await self.resolve(input.file_path, ctx)
        if await trio.to_thread.run_sync(_missing_or_directory, path):
            if await trio.to_thread.run_sync(path.is_dir):
                # Node's error for reading a directory, which Claude Code passes on.
                raise FileToolError(f"EISDIR: illegal operation on a directory, read '{path}'")
            raise FileToolError(
                f"File does not exist. Note: your current working directory is {ctx.cwd}."
            )
        result = await trio.to_thread.run_sync(
            functools.partial(_read, path, input.file_path, input.offset, input.limit)
        )
        if self.read_state is not None and isinstance(result, Reported):
            file = result.response.get("file") if isinstance(result.response, dict) else None
            whole = input.offset is None and input.limit is None
            content = file.get("content") if whole and isinstance(file, dict) else None
            await trio.to_thread.run_sync(
                self.read_state.record, path, content if isinstance(content, str) else None
            )
        return result


def _missing_or_directory(path: Path) -> bool:
    return not path.exists() or path.is_dir()


def _check_readable(path: Path, shown: str) -> None:
    with open_regular(path, shown) as file:
        media_type = IMAGE_TYPES.get(path.suffix.lower())
        if media_type is not None:
            size = os.fstat(file.fileno()).st_size
            if size > MAX_IMAGE_BYTES:
                raise FileToolError(
                    f"{shown} is too large to read as an image ({size} bytes; "
                    f"the limit is {MAX_IMAGE_BYTES} bytes)."
                )
            return
        if looks_binary(file.read(BINARY_SNIFF_BYTES)):
            raise FileToolError(
                f"{shown} is a binary file. Read shows text files and images "
                "(png, jpg, gif, webp) only."
            )


def _read(
    path: Path, shown: str, offset: int | None, limit: int | None
) -> Reported | tuple[ImageBlock, ...]:
    _check_readable(path, shown)
    media_type = IMAGE_TYPES.get(path.suffix.lower())
    if media_type is not None:
        with open_regular(path, shown) as file:
            data = file.read(MAX_IMAGE_BYTES + 1)
        if len(data) > MAX_IMAGE_BYTES:
            raise FileToolError(f"{shown} grew too large to read as an image.")
        source = {"type": "base64", "media_type": media_type, "data": _b64(data)}
        return (ImageBlock(source),)
    return _read_text(path, shown, offset, limit)


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _lines(raw: BinaryIO) -> Iterator[bytes]:
    """The file's lines, each cut to its first :data:`LINE_READ_BYTES` bytes.

    A longer line's rest is read and dropped in chunks, checking for
    cancellation between them.  A cut line decodes to more than
    :data:`MAX_LINE_CHARS` characters, so it is shown cut as before; the
    bytes past the cut never matter to the characters shown.
    """
    while line := raw.readline(LINE_READ_BYTES):
        if not line.endswith(b"\n"):
            while (rest := raw.readline(SKIP_CHUNK_BYTES)) and not rest.endswith(b"\n"):
                trio.from_thread.check_cancelled()
        yield line


def _read_text(path: Path, shown: str, offset: int | None, limit: int | None) -> Reported:
    """The numbered window of the file; reports ``{type: "text", file: {...}}`` for hooks.

    Lines are counted as Claude Code counts them: the text split on ``\\n``, so
    a file ending in a newline has an empty last line (numbered and shown),
    and an empty file has one empty line.
    """
    start = max(offset or 1, 1)
    window = limit if limit is not None else DEFAULT_LIMIT
    out: list[str] = []
    plain: list[str] = []
    chars = 0
    line_count = 0
    cut_short = False
    last_ended = True  # an empty file is one empty line
    with open_regular(path, shown) as raw:
        # Binary lines split on b"\n" only, so a lone "\r" inside a line is kept.
        numbered = enumerate(_lines(raw), 1)
        for number, raw_line in numbered:
            line_count = number
            last_ended = raw_line.endswith(b"\n")
            if number % 1000 == 0:
                trio.from_thread.check_cancelled()
            if number < start:
                continue
            if len(out) >= window:
                cut_short = limit is None
                line_count = number + _count_rest(raw)
                last_ended = False  # counted already
                break
            body = raw_line.decode("utf-8", errors="replace").rstrip("\n").removesuffix("\r")
            if len(body) > MAX_LINE_CHARS:
                body = body[:MAX_LINE_CHARS] + " [line truncated]"
            entry = f"{number}\t{body}"
            if out and chars + len(entry) + 1 > MAX_OUTPUT_CHARS:
                cut_short = True
                line_count = number + _count_rest(raw)
                last_ended = False
                break
            out.append(entry)
            plain.append(body)
            chars += len(entry) + 1
    if last_ended:
        # The empty line after a final newline (Claude Code's split("\n")).
        line_count += 1
        if line_count >= start and len(out) < window:
            out.append(f"{line_count}\t")
            plain.append("")

    def reported(text: str) -> Reported:
        file: JSONObject = {
            "filePath": shown,
            "content": "\n".join(plain),
            "numLines": len(plain),
            "startLine": start,
            "totalLines": line_count,
        }
        return Reported(text, {"type": "text", "file": file})

    if not "\n".join(plain):
        # Claude Code: no content to show; the window held nothing, or one empty line.
        return reported(
            "<system-reminder>Warning: the file exists but is shorter than the provided "
            f"offset ({start}). The file has {line_count} lines.</system-reminder>"
        )
    text = "\n".join(out)
    if cut_short:
        last = start + len(out) - 1
        text += (
            f"\n\n(Showing lines {start}-{last}; the file has more. "
            f"Use offset={last + 1} to read on.)"
        )
    return reported(text + MALWARE_REMINDER)


def _count_rest(raw: BinaryIO) -> int:
    """How many lines are left in ``raw`` (checking for cancellation as it goes)."""
    count = 0
    for count, _ in enumerate(_lines(raw), 1):
        if count % 1000 == 0:
            trio.from_thread.check_cancelled()
    return count
