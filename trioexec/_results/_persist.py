"""Per-call result size handling (SPEC §7): empty placeholder and persistence.

A tool result that is empty becomes ``({Tool} completed with no output)``,
because an empty tool_result can read to a model like the end of a turn.  A
result larger than ``min(tool.max_result_size_chars, 50_000)`` characters is
written to ``{session_dir}/tool-results/{name}.txt`` (``.json`` for a list of
text blocks) and replaced by a ``<persisted-output>`` wrapper that holds a
preview and the path.  **(trioexec)** Without a session folder such a result is
still bounded: it is replaced by a ``<truncated-output>`` wrapper with the same
preview, saying how much was cut, that the rest was not kept, and how to ask
for less.  Errors and results with an image block are never replaced.

Everything that decides (thresholds, sizes, previews, file names, the wrapper
text) is a pure function; only :func:`write_exclusive` and
:func:`finalize_result` touch the disk, through trio's async file API.

Sizes count characters (Python ``len``, i.e. code points), as Claude Code
counts the JavaScript string length; the word ``bytes`` in the wrapper is
Claude Code's wording and is kept byte for byte.
"""

from __future__ import annotations

import errno
import hashlib
import json
import logging
import math
import os
import re
import secrets
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
import trio

from .._models import Content, ImageBlock, TextBlock, ToolResult

if TYPE_CHECKING:
    from .._contract._tool import Tool

__all__ = [
    "DEFAULT_MAX_RESULT_CHARS",
    "MAX_FILE_STEM_CHARS",
    "MAX_WRAPPER_CHARS",
    "PERSISTED_OUTPUT_CLOSING_TAG",
    "PERSISTED_OUTPUT_TAG",
    "PREVIEW_CHARS",
    "TRUNCATED_OUTPUT_CLOSING_TAG",
    "TRUNCATED_OUTPUT_TAG",
    "PersistPlan",
    "content_size",
    "empty_placeholder",
    "finalize_result",
    "format_size",
    "generate_preview",
    "has_image",
    "is_content_empty",
    "is_persisted",
    "persisted_output_message",
    "persistence_threshold",
    "plan_persistence",
    "safe_file_stem",
    "tool_result_path",
    "tool_results_dir",
    "truncated_output_message",
    "write_exclusive",
]

logger = logging.getLogger("trioexec.results")

DEFAULT_MAX_RESULT_CHARS = 50_000
"""The global per-call ceiling; a tool's own limit can only lower it."""

PREVIEW_CHARS = 2_000
"""How much of a persisted result the model sees inline."""

PERSISTED_OUTPUT_TAG = "<persisted-output>"
PERSISTED_OUTPUT_CLOSING_TAG = "</persisted-output>"
TRUNCATED_OUTPUT_TAG = "<truncated-output>"
TRUNCATED_OUTPUT_CLOSING_TAG = "</truncated-output>"

MAX_WRAPPER_CHARS = PREVIEW_CHARS + 5_000
"""Longest text :func:`is_persisted` accepts: a full preview plus room for a ``PATH_MAX`` path."""

MAX_FILE_STEM_CHARS = 200
"""Longest file stem used as is; longer names are hashed (file names stay < 255 bytes)."""

_PLAIN_ID = re.compile(r"[A-Za-z0-9_-]+")
_PLAIN_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")

# What JavaScript's String.prototype.trim() removes (Claude Code's notion of blank).
_JS_WHITESPACE = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)


# -- pure helpers ---------------------------------------------------------------------------


def empty_placeholder(tool_name: str) -> str:
    """The text that stands in for an empty result of ``tool_name``."""
    return f"({tool_name} completed with no output)"


def is_content_empty(content: Content | None) -> bool:
    """True for None, a blank string, an empty list, or a list of only blank text blocks."""
    if content is None:
        return True
    if isinstance(content, str):
        return not content.strip(_JS_WHITESPACE)
    return all(isinstance(b, TextBlock) and not b.text.strip(_JS_WHITESPACE) for b in content)


def has_image(content: Content) -> bool:
    """True when the content is a block list holding at least one image."""
    return not isinstance(content, str) and any(isinstance(b, ImageBlock) for b in content)


def is_persisted(content: Content) -> bool:
    """True when the content is exactly the shape of a wrapper that stands for a result.

    A ``<persisted-output>`` wrapper: the opening tag line, the ``Output too
    large (...)`` line naming the file, the preview header, a preview of at
    most :data:`PREVIEW_CHARS` characters and the closing tag at the very end;
    the whole at most :data:`MAX_WRAPPER_CHARS` characters.  Or the
    ``<truncated-output>`` wrapper of a result cut without a session folder
    (:func:`truncated_output_message`).  Any other text, even one that starts
    with a tag (e.g. ``cat`` of a saved transcript), is ordinary output.
    """
    if not isinstance(content, str) or len(content) > MAX_WRAPPER_CHARS:
        return False
    if content.startswith(PERSISTED_OUTPUT_TAG):
        match = _WRAPPER.fullmatch(content)
    elif content.startswith(TRUNCATED_OUTPUT_TAG):
        match = _TRUNCATED.fullmatch(content)
    else:
        return False
    return match is not None and len(match["preview"]) <= PREVIEW_CHARS


def content_size(content: Content) -> int:
    """Size in characters: the string's length, or the sum of the text blocks' lengths."""
    if isinstance(content, str):
        return len(content)
    return sum(len(b.text) for b in content if isinstance(b, TextBlock))


def persistence_threshold(max_result_size_chars: float) -> float:
    """``min(max_result_size_chars, 50_000)``; ``math.inf`` stays ``math.inf`` (never persist)."""
    if math.isinf(max_result_size_chars) and max_result_size_chars > 0:
        return math.inf
    return min(max_result_size_chars, DEFAULT_MAX_RESULT_CHARS)


def _tenths(numerator: int, shift: int) -> str:
    # numerator / 2**shift rounded to one decimal, half away from zero (JavaScript's
    # toFixed(1) on an exactly representable value), with a trailing ".0" dropped.
    tenths = (numerator * 20 + (1 << shift)) >> (shift + 1)
    whole, frac = divmod(tenths, 10)
    return f"{whole}" if frac == 0 else f"{whole}.{frac}"


def format_size(size: int) -> str:
    """``N bytes`` under 1 KiB, else ``X.YKB`` / ``MB`` / ``GB`` with a trailing ``.0`` dropped.

    Units step at 1024.  The unit is chosen before rounding, so 1,048,575 reads
    ``1024KB`` (as in Claude Code).
    """
    if size < 1024:
        return f"{size} bytes"
    if size < 1024**2:
        return f"{_tenths(size, 10)}KB"
    if size < 1024**3:
        return f"{_tenths(size, 20)}MB"
    return f"{_tenths(size, 30)}GB"


def generate_preview(text: str, limit: int = PREVIEW_CHARS) -> tuple[str, bool]:
    """Return ``(preview, has_more)``.

    The preview is the whole text when it fits in ``limit`` characters;
    otherwise the first ``limit`` characters, cut at the last newline in them
    when that newline lies past the middle (index > ``limit // 2``), so a log
    line or table row is not split.  The newline itself is not included.
    """
    if len(text) <= limit:
        return text, False
    cut = text.rfind("\n", 0, limit)
    if cut <= limit // 2:
        cut = limit
    return text[:cut], True


def persisted_output_message(*, size: int, path: str, preview: str, has_more: bool) -> str:
    """The exact ``<persisted-output>`` wrapper that replaces a persisted result."""
    tail = "\n...\n" if has_more else "\n"
    return (
        f"{PERSISTED_OUTPUT_TAG}\n"
        f"Output too large ({format_size(size)}). Full output saved to: {path}\n\n"
        f"Preview (first {format_size(PREVIEW_CHARS)}):\n"
        f"{preview}{tail}"
        f"{PERSISTED_OUTPUT_CLOSING_TAG}"
    )


def truncated_output_message(*, size: int, preview: str) -> str:
    """The ``<truncated-output>`` wrapper that replaces an oversized result with no session folder.

    It says how large the output was, how much of it is shown and how much
    was cut, that the rest was not kept anywhere, and how to see more.
    """
    cut = size - len(preview)
    return (
        f"{TRUNCATED_OUTPUT_TAG}\n"
        f"Output too large ({format_size(size)}) and not kept: no session folder is "
        f"configured, so only its first {len(preview):,} characters are shown and the other "
        f"{cut:,} were cut. To see more, ask for less at a time (a narrower command or "
        "pattern, a range of lines, head, tail or grep).\n\n"
        f"Preview (first {format_size(PREVIEW_CHARS)}):\n"
        f"{preview}\n...\n"
        f"{TRUNCATED_OUTPUT_CLOSING_TAG}"
    )


_TRUNCATED = re.compile(
    re.escape(f"{TRUNCATED_OUTPUT_TAG}\nOutput too large (")
    + r"[^\n]*"
    + re.escape(f"\n\nPreview (first {format_size(PREVIEW_CHARS)}):\n")
    + r"(?P<preview>.*?)"
    + re.escape(f"\n...\n{TRUNCATED_OUTPUT_CLOSING_TAG}"),
    re.DOTALL,
)

_WRAPPER = re.compile(
    re.escape(f"{PERSISTED_OUTPUT_TAG}\nOutput too large (")
    + r"(?:[0-9]+ bytes|[0-9]+(?:\.[0-9])?(?:KB|MB|GB))"
    + re.escape("). Full output saved to: ")
    + r".+?"  # the path (a session folder may hold any character)
    + re.escape(f"\n\nPreview (first {format_size(PREVIEW_CHARS)}):\n")
    + r"(?P<preview>.*?)\n(?:\.\.\.\n)?"
    + re.escape(PERSISTED_OUTPUT_CLOSING_TAG),
    re.DOTALL,
)


def safe_file_stem(tool_use_id: str) -> str:
    """Map a tool_use id to a file stem that cannot leave ``tool-results/``.

    The mapping is injective, so two ids never share a file:

    * an id of 1 to 200 characters from ``[A-Za-z0-9_-]`` is used as is
      (no ``%`` in it);
    * any other id of which the encoding fits in 200 characters is
      percent-encoded: every UTF-8 byte outside ``[A-Za-z0-9_-]`` becomes
      ``%XX`` (upper-case hex), so the stem holds a ``%`` but never ``%%``;
    * the empty id and every longer id become ``%%`` + the SHA-256 hex
      digest of the id's UTF-8 bytes.

    The three forms cannot be confused with each other, and no stem contains
    ``/``, ``\\``, ``.`` or is empty, so ``.``/``..`` and separators never reach
    the file system.  (Ids that differ only in letter case still share a file on
    a case-insensitive file system.)
    """
    if len(tool_use_id) <= MAX_FILE_STEM_CHARS and _PLAIN_ID.fullmatch(tool_use_id):
        return tool_use_id
    if tool_use_id and len(tool_use_id) <= MAX_FILE_STEM_CHARS:
        encoded = "".join(
            chr(byte) if byte in _PLAIN_BYTES else f"%{byte:02X}"
            for byte in tool_use_id.encode("utf-8", "surrogatepass")
        )
        if len(encoded) <= MAX_FILE_STEM_CHARS:
            return encoded
    digest = hashlib.sha256(tool_use_id.encode("utf-8", "surrogatepass")).hexdigest()
    return f"%%{digest}"


def tool_results_dir(session_dir: Path) -> Path:
    """``{session_dir}/tool-results``."""
    return session_dir / "tool-results"


def tool_result_path(session_dir: Path, tool_use_id: str, *, is_json: bool) -> Path:
    """Where the result of ``tool_use_id`` is persisted (``.json`` for block lists)."""
    suffix = ".json" if is_json else ".txt"
    return tool_results_dir(session_dir) / f"{safe_file_stem(tool_use_id)}{suffix}"


@attrs.frozen
class PersistPlan:
    """What persisting one result means: the file, its text, and the wrapper that replaces it.

    ``path`` is None when there is no session folder: nothing is written and
    the replacement is the ``<truncated-output>`` wrapper.
    """

    path: Path | None
    data: str
    replacement: str


def plan_persistence(content: Content, tool_use_id: str, session_dir: Path | None) -> PersistPlan:
    """Compute the file, its text and the exact replacement for ``content`` (pure).

    A string is saved as is (``.txt``); a list of text blocks is saved as its
    Messages API JSON, indented by two spaces (``.json``).  The size in the
    wrapper and the preview are those of the saved text.  With no
    ``session_dir`` the plan writes nothing and cuts the text to the preview
    (:func:`truncated_output_message`).
    """
    if isinstance(content, str):
        data, is_json = content, False
    else:
        blocks = [b.to_api() for b in content]
        data, is_json = json.dumps(blocks, indent=2, ensure_ascii=False), True
    if session_dir is None:
        preview, _ = generate_preview(data)
        return PersistPlan(None, data, truncated_output_message(size=len(data), preview=preview))
    path = tool_result_path(session_dir, tool_use_id, is_json=is_json)
    preview, has_more = generate_preview(data)
    replacement = persisted_output_message(
        size=len(data), path=str(path), preview=preview, has_more=has_more
    )
    return PersistPlan(path=path, data=data, replacement=replacement)


# -- disk -------------------------------------------------------------------------------------


def _under_mock_clock() -> bool:
    # Under trio.testing.MockClock a worker thread would let virtual time jump
    # (autojump sees every task blocked) while the disk works, so the file is
    # written with plain blocking calls instead.  (trio.testing is looked up,
    # not imported: it imports pytest when pytest is installed, and a clock
    # from it exists only once it is imported.)
    testing = sys.modules.get("trio.testing")
    return testing is not None and isinstance(trio.lowlevel.current_clock(), testing.MockClock)


def _temp_path(path: Path) -> Path:
    # Same folder, so os.link never crosses a file system; the leading dot and
    # the random part keep it apart from every file stem safe_file_stem makes.
    return path.with_name(f".{path.name}.{secrets.token_hex(8)}.tmp")


def _holds(path: Path, expected: bytes) -> bool:
    """True when the file at ``path`` holds exactly ``expected`` (reads at most one byte more)."""
    with path.open("rb") as file:
        return file.read(len(expected) + 1) == expected


def _other_contents(path: Path) -> FileExistsError:
    return FileExistsError(errno.EEXIST, "File exists and holds other contents", str(path))


def _write_new_file_sync(path: Path, data: str, expected: bytes) -> bool:
    """The blocking twin of :func:`_write_new_file` (used under a MockClock)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        if _holds(path, expected):
            return False
        raise _other_contents(path)
    temp = _temp_path(path)
    try:
        with temp.open("x", encoding="utf-8", errors="backslashreplace", newline="") as file:
            file.write(data)
        try:
            os.link(temp, path)
        except FileExistsError:
            if _holds(path, expected):
                return False
            raise _other_contents(path) from None
        return True
    finally:
        temp.unlink(missing_ok=True)


async def _write_new_file(path: Path, data: str, expected: bytes) -> bool:
    """Write ``data`` to a temporary file, then hard-link it to ``path``; True when linked.

    ``os.link`` fails atomically when ``path`` exists, so ``path`` only ever
    names a complete file.  An existing file holding ``expected`` is reused
    (False); one holding anything else raises :class:`FileExistsError`.  The
    temporary file is removed whatever happens.  Call it shielded.
    """
    if _under_mock_clock():
        return _write_new_file_sync(path, data, expected)
    await trio.Path(path.parent).mkdir(parents=True, exist_ok=True)
    if await trio.Path(path).exists():
        if await trio.to_thread.run_sync(_holds, path, expected):
            return False
        raise _other_contents(path)
    temp = _temp_path(path)
    try:
        file = await trio.open_file(
            temp, "x", encoding="utf-8", errors="backslashreplace", newline=""
        )
        async with file:
            await file.write(data)
        try:
            await trio.to_thread.run_sync(os.link, temp, path)
        except FileExistsError:
            if await trio.to_thread.run_sync(_holds, path, expected):
                return False
            raise _other_contents(path) from None
        return True
    finally:
        await trio.Path(temp).unlink(missing_ok=True)


async def write_exclusive(path: Path, data: str) -> bool:
    """Create ``path`` with ``data`` (UTF-8) unless it exists; return True when written.

    Characters UTF-8 cannot hold (lone surrogates) are written backslash-escaped.

    The parent folder is created when missing.  The data goes to a temporary
    file in the same folder that is hard-linked to ``path`` only once complete,
    so ``path`` never names a truncated file, even after a failed write or a
    crash.  An existing file that holds exactly this data is reused, not
    overwritten (a result is persisted once even when decided twice).  Under
    a :class:`trio.testing.MockClock` the disk is used with blocking calls (no
    worker thread), so virtual time does not move during a write.  The work
    runs shielded from cancellation: a caller cancelled before the call
    touches nothing, otherwise the cancellation is delivered at the next
    checkpoint.

    Raises:
        FileExistsError: ``path`` exists and holds other contents.
        OSError: the folder or file could not be created or written, or the
            file system has no hard links.
    """
    expected = data.encode("utf-8", "backslashreplace")
    await trio.lowlevel.checkpoint_if_cancelled()  # already cancelled: touch nothing
    with trio.CancelScope(shield=True):
        written = await _write_new_file(path, data, expected)
    await trio.lowlevel.checkpoint()
    return written


async def finalize_result(
    tool: Tool[Any], result: ToolResult, *, session_dir: Path | None
) -> ToolResult:
    """Apply per-call size handling to one result (SPEC §4 step 9).

    An empty result gets the ``({tool.name} completed with no output)``
    placeholder.  A result larger than :func:`persistence_threshold` of the
    tool's ``max_result_size_chars`` is persisted under ``session_dir`` and
    replaced by the ``<persisted-output>`` wrapper; when ``session_dir`` is
    None it is replaced by the ``<truncated-output>`` wrapper (its preview, and
    how much was cut).  Error results, results with an image block, and
    results that already are a wrapper or the placeholder are returned
    unchanged, so the function is idempotent on its own output.  When the file
    cannot be written the result stays inline (logged), as in Claude Code; so
    does a result whose persistence fails in any other way (``MemoryError``
    included): the tool returned, and its real result is the answer.

    On cancellation nothing is returned; a file may have been fully written
    (it is reused next time), never half written.
    """
    if result.is_error:
        await trio.lowlevel.checkpoint()
        return result
    content = result.content
    if is_content_empty(content):
        await trio.lowlevel.checkpoint()
        return attrs.evolve(result, content=empty_placeholder(tool.name))
    threshold = persistence_threshold(tool.max_result_size_chars)
    if (
        has_image(content)
        or is_persisted(content)
        or content_size(content) <= threshold
        or content == empty_placeholder(tool.name)
    ):
        await trio.lowlevel.checkpoint()
        return result
    try:
        plan = plan_persistence(content, result.tool_use_id, session_dir)
        if plan.path is None:  # no session folder: cut, with the wrapper saying so
            await trio.lowlevel.checkpoint()
            return attrs.evolve(result, content=plan.replacement)
        await write_exclusive(plan.path, plan.data)
    except FileExistsError:
        logger.warning(
            "kept the result of %r inline: %s already holds other contents",
            result.tool_use_id,
            plan.path,
        )
        return result
    except Exception as exc:  # a full disk, no memory for the copy, a bug: never the tool's
        logger.warning(
            "could not persist the result of %r under %s (%s); kept inline",
            result.tool_use_id,
            session_dir,
            type(exc).__name__,
            exc_info=True,
        )
        return result
    return attrs.evolve(result, content=plan.replacement)
