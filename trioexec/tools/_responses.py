"""The standard tools' output objects, as PostToolUse hooks receive them (``tool_response``).

Claude Code gives PostToolUse hooks each tool's output object, not the text
the model reads: Bash ``{stdout, stderr, interrupted, isImage}``, Write
``{type, filePath, content, structuredPatch, originalFile}``, Edit
``{filePath, oldString, newString, originalFile, structuredPatch,
userModified, replaceAll}``, Read ``{type: "text", file: {filePath, content,
numLines, startLine, totalLines}}`` (or ``{type: "image", file: {base64,
type, originalSize}}``), Glob ``{durationMs, numFiles, filenames,
truncated}``, Grep ``{mode, numFiles, filenames, content?, numLines?,
numMatches?}``.  Scripts read them with ``jq '.tool_response.stdout'``.

A standard tool's ``call`` returns :class:`Reported`: the model's text, a
``str``, carrying that object; ``Tool.tool_response`` hands it over.
``structuredPatch`` has the shape of jsdiff's ``structuredPatch`` hunks
(``{oldStart, oldLines, newStart, newLines, lines}``, three lines of context).
"""

from __future__ import annotations

import difflib
import re
from typing import TYPE_CHECKING, Self

if TYPE_CHECKING:
    from .._models import JSONObject, JSONValue

__all__ = [
    "PATCH_CONTEXT_LINES",
    "Reported",
    "glob_response",
    "grep_response",
    "reported_response",
    "structured_patch",
]

PATCH_CONTEXT_LINES = 3
"""Lines of context around each hunk (Claude Code's ``CONTEXT_LINES``)."""


class Reported(str):
    """The text a tool answers with, carrying its output object for PostToolUse hooks.

    A ``str`` in every other respect, so callers of ``call`` that compare or
    search the text see no difference.
    """

    response: JSONValue

    def __new__(cls, text: str, response: JSONValue) -> Self:
        """``text`` (the model's) with ``response`` (the hooks') attached."""
        self = super().__new__(cls, text)
        self.response = response
        return self


def reported_response(output: object) -> JSONValue:
    """The output object a :class:`Reported` carries; None for anything else."""
    return output.response if isinstance(output, Reported) else None


def _lines(text: str) -> list[str]:
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def structured_patch(old: str, new: str) -> list[JSONValue]:
    """The hunks turning ``old`` into ``new``, as jsdiff's ``structuredPatch`` gives them.

    Each hunk is ``{oldStart, oldLines, newStart, newLines, lines}`` where
    ``lines`` are the hunk's lines prefixed with ``" "``, ``"-"`` or ``"+"``.
    """
    a, b = _lines(old), _lines(new)
    hunks: list[JSONValue] = []
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for group in matcher.get_grouped_opcodes(PATCH_CONTEXT_LINES):
        lines: list[JSONValue] = []
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                lines.extend(" " + line for line in a[i1:i2])
                continue
            lines.extend("-" + line for line in a[i1:i2])
            lines.extend("+" + line for line in b[j1:j2])
        first, last = group[0], group[-1]
        old_lines, new_lines = last[2] - first[1], last[4] - first[3]
        hunk: JSONObject = {
            # jsdiff counts from 1; an empty side starts at the line before.
            "oldStart": first[1] + 1 if old_lines else first[1],
            "oldLines": old_lines,
            "newStart": first[3] + 1 if new_lines else first[3],
            "newLines": new_lines,
            "lines": lines,
        }
        hunks.append(hunk)
    return hunks


def glob_response(text: str, *, no_files: str, truncated_note: str, duration_ms: int) -> JSONObject:
    """Glob's ``{durationMs, numFiles, filenames, truncated}`` from its answer text."""
    lines = [] if text == no_files else text.split("\n")
    truncated = bool(lines) and lines[-1] == truncated_note
    filenames: list[JSONValue] = list(lines[:-1] if truncated else lines)
    return {
        "durationMs": duration_ms,
        "numFiles": len(filenames),
        "filenames": filenames,
        "truncated": truncated,
    }


_FOUND_FILES = re.compile(r"Found \d+ files?( .*)?")
_COUNT_SUMMARY = re.compile(
    r"\n\nFound (\d+) total occurrences? across \d+ files?\.( with pagination = .*)?\Z"
)
_PAGINATION_NOTE = re.compile(r"\n\n\[Showing results with pagination = [^\n]*\]\Z")


_APPLIED = re.compile(r"(limit|offset): (\d+)")


def _applied(note: str | None) -> JSONObject:
    """``appliedLimit`` (only when the limit cut something off) and ``appliedOffset``
    (only when not zero), read from Grep's pagination note (``limit: 250, offset: 10``)."""
    found: JSONObject = {}
    for key, value in _APPLIED.findall(note or ""):
        found["appliedLimit" if key == "limit" else "appliedOffset"] = int(value)
    return found


def grep_response(text: str, mode: str) -> JSONObject:
    """Grep's ``{mode, numFiles, filenames, content?, numLines?, numMatches?, appliedLimit?,
    appliedOffset?}`` from its text."""
    if mode == "files_with_matches":
        lines = [] if text == "No files found" else text.split("\n")
        header = _FOUND_FILES.fullmatch(lines[0]) if lines else None
        names: list[JSONValue] = [
            line for line in lines if line and not _FOUND_FILES.fullmatch(line)
        ]
        applied = _applied(header.group(1) if header else None)
        return {"mode": mode, "numFiles": len(names), "filenames": names, **applied}
    if mode == "count":
        matches = 0
        applied = {}
        summary = _COUNT_SUMMARY.search(text)
        if summary is not None:
            matches = int(summary.group(1))
            applied = _applied(summary.group(2))
            text = text[: summary.start()]
        entries = [] if text == "No matches found" else [e for e in text.split("\n") if e]
        names = [entry.rpartition(":")[0] for entry in entries]
        return {
            "mode": mode,
            "numFiles": len(names),
            "filenames": names,
            "numMatches": matches,
            **applied,
        }
    note = _PAGINATION_NOTE.search(text)
    body = text[: note.start()] if note is not None else text
    if body == "No matches found":
        body = ""
    lines = body.split("\n") if body else []
    return {
        "mode": mode,
        "numFiles": 0,
        "filenames": [],
        "content": body,
        "numLines": len(lines),
        **_applied(note.group(0) if note is not None else None),
    }
