"""The ``Grep`` tool: search file contents with a Python regular expression.

The input keeps Claude Code's field names, ``-i``, ``-n``, ``-A``, ``-B``,
``-C`` included; since those are not Python identifiers the tool declares its
JSON Schema explicitly, receives the validated dict and reads it into a
:class:`GrepInput`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TypeAlias, cast

import attrs
import trio

from ._base import BINARY_SNIFF_BYTES, FileToolError, PathTool, looks_binary, path_rule_covers
from ._globs import GlobPatternError, compile_glob, expand_braces, walk_files
from ._paths import display_path
from ._responses import Reported, grep_response

if TYPE_CHECKING:
    from .._models import JSONObject, JSONValue
    from .._permission_context import PermissionContext
    from .._tool import CallContext, ProgressSender

__all__ = ["GREP_SCHEMA", "GrepInput", "GrepTool", "OutputMode"]

OutputMode: TypeAlias = Literal["content", "files_with_matches", "count"]
DEFAULT_HEAD_LIMIT = 250
MAX_LINE_CHARS = 500
MAX_FILE_BYTES = 64 * 1024 * 1024
"""Larger files are skipped (a search must not load gigabytes into memory)."""

GREP_SCHEMA: JSONObject = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "properties": {
        "pattern": {"type": "string", "description": "The Python regular expression to find"},
        "path": {
            "type": "string",
            "description": "File or directory to search in (default: the working directory)",
        },
        "glob": {
            "type": "string",
            "description": 'Only search files matching this glob ("*.py", "src/**/*.{ts,tsx}")',
        },
        "output_mode": {
            "enum": ["content", "files_with_matches", "count"],
            "default": "files_with_matches",
            "description": "content: matching lines; files_with_matches: file paths; "
            "count: matching lines per file",
        },
        "-i": {"type": "boolean", "description": "Case-insensitive search"},
        "-n": {"type": "boolean", "description": "Show line numbers (content mode; default true)"},
        "-A": {"type": "integer", "minimum": 0, "description": "Lines of context after a match"},
        "-B": {"type": "integer", "minimum": 0, "description": "Lines of context before a match"},
        "-C": {"type": "integer", "minimum": 0, "description": "Lines of context around a match"},
        "multiline": {
            "type": "boolean",
            "description": "Let patterns span lines; '.' then matches newlines too",
        },
        "head_limit": {
            "type": "integer",
            "minimum": 0,
            "description": f"Show at most this many lines/entries (default {DEFAULT_HEAD_LIMIT}; "
            "0 means no limit)",
        },
    },
    "required": ["pattern"],
    "additionalProperties": False,
}


@attrs.frozen
class GrepInput:
    """The typed form of a ``Grep`` input (see :data:`GREP_SCHEMA` for the JSON names)."""

    pattern: str
    path: str | None = None
    glob: str | None = None
    output_mode: OutputMode = "files_with_matches"
    case_insensitive: bool = False
    line_numbers: bool = True
    after: int = 0
    before: int = 0
    multiline: bool = False
    head_limit: int = DEFAULT_HEAD_LIMIT

    @classmethod
    def from_json(cls, raw: Mapping[str, JSONValue]) -> GrepInput:
        """Read an input that already passed :data:`GREP_SCHEMA`."""
        context = _int(raw.get("-C"), 0)
        return cls(
            pattern=str(raw["pattern"]),
            path=_opt_str(raw.get("path")),
            glob=_opt_str(raw.get("glob")),
            output_mode=cast("OutputMode", raw.get("output_mode", "files_with_matches")),
            case_insensitive=raw.get("-i") is True,
            line_numbers=raw.get("-n") is not False,
            after=_int(raw.get("-A"), context),
            before=_int(raw.get("-B"), context),
            multiline=raw.get("multiline") is True,
            head_limit=_int(raw.get("head_limit"), DEFAULT_HEAD_LIMIT),
        )

    def compile(self) -> re.Pattern[str]:
        """The compiled pattern.

        Raises:
            re.error: the pattern is not a valid Python regular expression.
        """
        flags = re.IGNORECASE if self.case_insensitive else 0
        if self.multiline:
            flags |= re.MULTILINE | re.DOTALL
        return re.compile(self.pattern, flags)


def _opt_str(value: JSONValue | None) -> str | None:
    return value if isinstance(value, str) else None


def _int(value: JSONValue | None, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


class GrepTool(PathTool[Mapping[str, "JSONValue"]]):
    """Search file contents.

    Concurrency-safe; an interrupt cancels it.  Binary files, files over
    64 MiB and version-control directories are skipped; symlinked files that
    lead outside the workspace root are skipped too, and so, without a word,
    are files a ``Read`` or ``Grep`` deny rule covers (``ctx.permissions``).  The search runs in a
    worker thread that checks for cancellation between files.
    """

    name = "Grep"
    path_key = "path"
    description = (
        "Searches file contents with a Python regular expression. Filter files with `glob`; "
        "output_mode 'files_with_matches' (default) lists files, 'content' shows matching "
        "lines (with -n line numbers and -A/-B/-C context), 'count' counts matching lines."
    )
    input_schema = GREP_SCHEMA
    max_result_size_chars = 20_000

    def is_concurrency_safe(self, input: Mapping[str, JSONValue]) -> bool:  # noqa: A002
        return True

    def input_path(self, input: Mapping[str, JSONValue]) -> str | None:  # noqa: A002
        return _opt_str(input.get("path"))

    async def validate_input(
        self,
        input: Mapping[str, JSONValue],  # noqa: A002
        ctx: CallContext,
    ) -> str | None:
        try:
            await self._prepare(GrepInput.from_json(input), ctx)
        except FileToolError as exc:
            return str(exc)
        return None

    async def call(
        self,
        input: Mapping[str, JSONValue],  # noqa: A002
        ctx: CallContext,
        progress: ProgressSender,
    ) -> str:
        """Run the search.

        Raises:
            FileToolError: the pattern, glob or path is unusable.
        """
        grep = GrepInput.from_json(input)
        job = await self._prepare(grep, ctx)
        text = await trio.to_thread.run_sync(job.run)
        return Reported(text, grep_response(text, grep.output_mode))

    async def _prepare(self, grep: GrepInput, ctx: CallContext) -> _Job:
        try:
            regex = grep.compile()
        except re.error as exc:
            raise FileToolError(f"Invalid regular expression {grep.pattern!r}: {exc}") from None
        globs: tuple[tuple[bool, re.Pattern[str]], ...] = ()
        if grep.glob:
            try:
                globs = tuple(("/" in g, compile_glob(g)) for g in expand_braces(grep.glob))
            except GlobPatternError as exc:
                raise FileToolError(f"Invalid glob {grep.glob!r}: {exc}") from None
        target = await self.resolve(grep.path, ctx)
        real_root = await trio.to_thread.run_sync(_realpath_or_none, self.root)
        job = _Job(grep, regex, globs, target, ctx.cwd, real_root, _denied_reads(ctx.permissions))
        await trio.to_thread.run_sync(job.check_target)
        return job


_READ_TOOLS = ("Read", "Grep")
"""Whose deny rules hide a file from a search (as Claude Code's Grep does)."""


def _denied_reads(permissions: PermissionContext | None) -> tuple[str, ...] | None:
    """The path patterns of the Read/Grep deny rules (None: a whole-tool Read deny)."""
    if permissions is None:
        return ()
    if any(rule.tool_name == "Read" and rule.content is None for rule in permissions.deny):
        return None
    return tuple(c for name in _READ_TOOLS for c in permissions.rule_contents(name, "deny"))


def _realpath_or_none(path: Path | None) -> Path | None:
    return None if path is None else Path(os.path.realpath(path))


@attrs.frozen
class _Hit:
    shown: str
    mtime: float
    lines: tuple[str, ...]
    count: int


@attrs.frozen
class _Job:
    """One prepared search; ``run`` executes it in a worker thread."""

    grep: GrepInput
    regex: re.Pattern[str]
    globs: tuple[tuple[bool, re.Pattern[str]], ...]
    """(has a slash, compiled) per brace alternative of the ``glob`` filter."""
    target: Path
    cwd: Path
    root: Path | None
    denied: tuple[str, ...] | None = ()
    """Path patterns of Read/Grep deny rules: matching files are skipped silently
    (None: every file is)."""

    def check_target(self) -> None:
        shown = self.grep.path if self.grep.path is not None else str(self.target)
        if not self.target.exists():
            raise FileToolError(f"Path does not exist: {shown}")

    def run(self) -> str:
        cwd = Path(os.path.realpath(self.cwd))
        single = self.target.is_file()
        hits: list[_Hit] = []
        for path in self._files():
            trio.from_thread.check_cancelled()
            hit = self._search(path, display_path(path, cwd), single=single)
            if hit is not None:
                hits.append(hit)
        return self._format(hits)

    def _files(self) -> list[Path]:
        if self.target.is_file():
            return [self.target]
        return [
            Path(entry.path)
            for rel, entry in walk_files(self.target)
            if not self.globs or any(_glob_matches(g, rel) for g in self.globs)
        ]

    def _is_denied(self, path: Path) -> bool:
        """Whether a Read/Grep deny rule covers the file (as written or resolved)."""
        if self.denied is None:
            return True
        return any(path_rule_covers(content, path, self.cwd) for content in self.denied)

    def _search(self, path: Path, shown: str, *, single: bool) -> _Hit | None:
        try:
            if self._leaves_root(path) or self._is_denied(path):
                return None
            info = path.stat()
            if info.st_size > MAX_FILE_BYTES:
                return None
            data = path.read_bytes()
        except OSError:
            return None
        if looks_binary(data[:BINARY_SNIFF_BYTES]):
            return None
        lines = data.decode("utf-8", errors="replace").split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        lines = [line.removesuffix("\r") for line in lines]
        matched = self._matching_lines(lines)
        if not matched:
            return None
        out: tuple[str, ...] = ()
        if self.grep.output_mode == "content":
            out = tuple(self._content(lines, matched, "" if single else shown))
        return _Hit(shown, info.st_mtime, out, len(matched))

    def _leaves_root(self, path: Path) -> bool:
        """A symlinked file pointing outside the workspace root is not read."""
        if self.root is None or not path.is_symlink():
            return False
        return not Path(os.path.realpath(path)).is_relative_to(self.root)

    def _matching_lines(self, lines: list[str]) -> list[int]:
        if not self.grep.multiline:
            return [i for i, line in enumerate(lines) if self.regex.search(line)]
        text = "\n".join(lines)
        found: set[int] = set()
        for match in self.regex.finditer(text):
            first = text.count("\n", 0, match.start())
            last = text.count("\n", 0, max(match.end() - 1, match.start()))
            found.update(range(first, last + 1))
        return sorted(found)

    def _content(self, lines: list[str], matched: list[int], shown: str) -> list[str]:
        before, after = self.grep.before, self.grep.after
        show: dict[int, bool] = {}
        for i in matched:
            for j in range(max(0, i - before), min(len(lines), i + after + 1)):
                show.setdefault(j, False)
            show[i] = True
        out: list[str] = []
        previous = -2
        for i in sorted(show):
            if (before or after) and previous >= 0 and i > previous + 1:
                out.append("--")
            previous = i
            sep = ":" if show[i] else "-"
            line = lines[i]
            if len(line) > MAX_LINE_CHARS:
                line = line[:MAX_LINE_CHARS] + " [...]"
            prefix = f"{shown}{sep}" if shown else ""
            if self.grep.line_numbers:
                prefix += f"{i + 1}{sep}"
            out.append(prefix + line)
        return out

    def _format(self, hits: list[_Hit]) -> str:
        mode = self.grep.output_mode
        if not hits:
            return "No files found" if mode == "files_with_matches" else "No matches found"
        limit = self.grep.head_limit or None
        if mode == "files_with_matches":
            names = [h.shown for h in sorted(hits, key=lambda h: (-h.mtime, h.shown))]
            noun = "file" if len(names) == 1 else "files"
            return _limited(f"Found {len(names)} {noun}", names, limit, "files")
        if mode == "count":
            total = sum(h.count for h in hits)
            entries = [f"{h.shown}:{h.count}" for h in hits]
            summary = (
                f"\n\nFound {total} matching {'line' if total == 1 else 'lines'} across "
                f"{len(hits)} {'file' if len(hits) == 1 else 'files'}."
            )
            return _limited(None, entries, limit, "entries") + summary
        out = [line for h in hits for line in h.lines]
        return _limited(None, out, limit, "lines")


def _glob_matches(glob: tuple[bool, re.Pattern[str]], rel: str) -> bool:
    """A glob without ``/`` matches a file name at any depth (as ripgrep's ``--glob``)."""
    has_slash, regex = glob
    return regex.fullmatch(rel if has_slash else rel.rsplit("/", 1)[-1]) is not None


def _limited(header: str | None, items: list[str], limit: int | None, unit: str) -> str:
    shown = items if limit is None else items[:limit]
    text = "\n".join(shown if header is None else [header, *shown])
    if len(shown) < len(items):
        text += (
            f"\n\n(Showing the first {len(shown)} of {len(items)} {unit}; "
            "raise head_limit or narrow the search to see more.)"
        )
    return text
