"""The ``Grep`` tool: search file contents with a Python regular expression.

The input keeps Claude Code's field names, ``-i``, ``-n``, ``-A``, ``-B``,
``-C`` included; since those are not Python identifiers the tool declares its
JSON Schema explicitly, receives the validated dict and reads it into a
:class:`GrepInput`.  The files searched are ripgrep's selection
(:mod:`._ignore`); with an ``rg`` binary available, ripgrep lists them and
narrows the search to files containing the pattern's literal text
(:mod:`._ripgrep`), and the Python pattern decides, so the answer is the same
either way.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TypeAlias, cast

import attrs
import trio

from .._contract._path_access import PathAccess
from .._guard._file_access import NOTHING_HIDDEN, ReadFilter, read_filter
from ._base import BINARY_SNIFF_BYTES, FileToolError, PathTool, looks_binary
from ._filetypes import UnknownFileTypeError, type_matcher
from ._globs import GlobPatternError, compile_glob, expand_braces
from ._ignore import FileSelection, is_hidden_pattern, walk_selected
from ._paths import display_path
from ._responses import Reported, grep_response
from ._ripgrep import (
    MAX_FILE_BYTES,
    RipgrepChoice,
    required_literals,
    rg_files,
    rg_files_containing,
    ripgrep_binary,
)

if TYPE_CHECKING:
    from .._contract._tool import CallContext, ProgressSender
    from .._models import JSONObject, JSONValue

__all__ = ["GREP_SCHEMA", "GrepInput", "GrepTool", "OutputMode"]

OutputMode: TypeAlias = Literal["content", "files_with_matches", "count"]
DEFAULT_HEAD_LIMIT = 250
MAX_LINE_BYTES = 500
"""Longer lines are omitted from content output, as ``rg --max-columns 500`` does."""

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
        "type": {
            "type": "string",
            "description": "Only search files of this type (as rg --type): py, js, ts, rust, go, "
            "java, c, cpp, md, json, yaml, ...",
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
        "-C": {"type": "integer", "minimum": 0, "description": "Alias for context"},
        "context": {
            "type": "integer",
            "minimum": 0,
            "description": "Lines of context before and after a match (content mode)",
        },
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
        "offset": {
            "type": "integer",
            "minimum": 0,
            "description": "Skip this many lines/entries before applying head_limit (default 0)",
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
    file_type: str | None = None
    offset: int = 0

    @classmethod
    def from_json(cls, raw: Mapping[str, JSONValue]) -> GrepInput:
        """Read an input that already passed :data:`GREP_SCHEMA`.

        As in Claude Code, ``context`` (or its alias ``-C``) wins over ``-A``/``-B``.
        """
        context = _opt_int(raw.get("context"))
        if context is None:
            context = _opt_int(raw.get("-C"))
        after = context if context is not None else _int(raw.get("-A"), 0)
        before = context if context is not None else _int(raw.get("-B"), 0)
        return cls(
            pattern=str(raw["pattern"]),
            path=_opt_str(raw.get("path")),
            glob=_opt_str(raw.get("glob")),
            output_mode=cast("OutputMode", raw.get("output_mode", "files_with_matches")),
            case_insensitive=raw.get("-i") is True,
            line_numbers=raw.get("-n") is not False,
            after=after,
            before=before,
            multiline=raw.get("multiline") is True,
            head_limit=_int(raw.get("head_limit"), DEFAULT_HEAD_LIMIT),
            file_type=_opt_str(raw.get("type")) or None,
            offset=_int(raw.get("offset"), 0),
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


def _opt_int(value: JSONValue | None) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _int(value: JSONValue | None, default: int) -> int:
    found = _opt_int(value)
    return default if found is None else found


class GrepTool(PathTool[Mapping[str, "JSONValue"]]):
    """Search file contents.

    Concurrency-safe; an interrupt cancels it.  A directory search sees
    ripgrep's file selection: ``.gitignore`` / ``.ignore`` / ``.rgignore``
    / ``.git/info/exclude`` rules apply, hidden files are searched only when
    ``path`` or ``glob`` names one, and symlinks met on the way are not
    followed.  Binary files, files over 64 MiB and version-control
    directories are skipped; symlinked files that lead outside the workspace
    root are skipped too, and so, without a word, are files a ``Read`` or
    ``Grep`` deny or ask rule covers (``ctx.permissions``;
    :func:`~trioexec._guard._file_access.read_filter`): never read, named or
    counted.  The search runs in a worker thread that checks for cancellation
    between files (ripgrep, when used, in a subprocess killed on cancellation).

    Args:
        root: the workspace root (see :class:`PathTool`).
        ripgrep: ``True`` (default) uses an ``rg`` binary when one is found,
            ``False`` never does, a string is the binary to use.
    """

    name = "Grep"
    description = (
        "Searches file contents with a Python regular expression. Filter files with `glob` or "
        "`type`; output_mode 'files_with_matches' (default) lists files, 'content' shows "
        "matching lines (with -n line numbers and -A/-B/-C context), 'count' counts matching "
        "lines. Respects .gitignore; hidden files only when `path` or `glob` names them."
    )
    input_schema = GREP_SCHEMA
    max_result_size_chars = 20_000
    path_access = PathAccess("path", reads=True, default=".")

    def __init__(self, root: Path | str | None = None, *, ripgrep: RipgrepChoice = True) -> None:
        super().__init__(root)
        self.ripgrep = ripgrep

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

        Cancellation: the worker thread stops before the next file; a ripgrep
        subprocess is killed.

        Raises:
            FileToolError: the pattern, glob, type or path is unusable.
        """
        grep = GrepInput.from_json(input)
        job = await self._prepare(grep, ctx)
        listed: list[str] | None = None
        rg = ripgrep_binary(self.ripgrep)
        if rg is not None and await trio.to_thread.run_sync(job.target.is_dir):
            literals = required_literals(grep.pattern, ignore_case=grep.case_insensitive)
            if literals is not None:
                listed = await rg_files_containing(
                    rg, job.target, literals, ignore_case=grep.case_insensitive, hidden=job.hidden
                )
            else:
                listed = await rg_files(rg, job.target, hidden=job.hidden)
        text = await trio.to_thread.run_sync(job.run, listed)
        return Reported(text, grep_response(text, grep.output_mode))

    async def _prepare(self, grep: GrepInput, ctx: CallContext) -> _Job:
        try:
            regex = grep.compile()
        except re.error as exc:
            raise FileToolError(f"Invalid regular expression {grep.pattern!r}: {exc}") from None
        globs: tuple[tuple[bool, re.Pattern[str]], ...] = ()
        hidden = False
        if grep.glob:
            try:
                alternatives = [g for p in _glob_parts(grep.glob) for g in expand_braces(p)]
                globs = tuple(("/" in g, compile_glob(g)) for g in alternatives)
            except GlobPatternError as exc:
                raise FileToolError(f"Invalid glob {grep.glob!r}: {exc}") from None
            hidden = any(is_hidden_pattern(g) for g in alternatives)
        file_type = None
        if grep.file_type is not None:
            try:
                file_type = type_matcher(grep.file_type)
            except UnknownFileTypeError as exc:
                raise FileToolError(str(exc)) from None
        target = await self.resolve(grep.path, ctx)
        real_root = await trio.to_thread.run_sync(_realpath_or_none, self.root)
        job = _Job(
            grep,
            regex,
            globs,
            target,
            ctx.cwd,
            real_root,
            read_filter(self, ctx, grep.path),
            file_type,
            hidden,
            tuple(required_literals(grep.pattern, ignore_case=grep.case_insensitive) or ()),
        )
        await trio.to_thread.run_sync(job.check_target)
        return job


def _glob_parts(glob: str) -> list[str]:
    """Claude Code's reading of ``glob``: split on whitespace, and on commas outside braces."""
    parts: list[str] = []
    for word in glob.split():
        if "{" in word and "}" in word:
            parts.append(word)
        else:
            parts.extend(p for p in word.split(",") if p)
    return parts


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
    denied: ReadFilter = NOTHING_HIDDEN
    """The files Read/Grep deny and ask rules cover: never read, named or counted."""
    file_type: re.Pattern[str] | None = None
    hidden: bool = False
    """The ``glob`` names hidden entries, so hidden files are searched."""
    literals: tuple[str, ...] = ()
    """Every match contains one of these (empty: unknown); a quick test per file."""

    def check_target(self) -> None:
        shown = self.grep.path if self.grep.path is not None else str(self.target)
        if not self.target.exists():
            raise FileToolError(f"Path does not exist: {shown}")

    def run(self, listed: list[str] | None = None) -> str:
        """Search; ``listed`` is ripgrep's candidate list (relative paths), None: walk here."""
        cwd = Path(os.path.realpath(self.cwd))
        single = self.target.is_file()
        hits: list[_Hit] = []
        for path in self._files(listed):
            trio.from_thread.check_cancelled()
            hit = self._search(path, display_path(path, cwd), single=single)
            if hit is not None:
                hits.append(hit)
        return self._format(hits)

    def _files(self, listed: list[str] | None) -> list[Path]:
        if self.target.is_file():
            return [self.target]
        if listed is None:
            selection = FileSelection.for_base(self.target, hidden=self.hidden)
            listed = [rel for rel, _ in walk_selected(selection)]
        base = os.fspath(self.target)
        return [
            Path(base, rel)
            for rel in sorted(listed)
            if (not self.globs or any(_glob_matches(g, rel) for g in self.globs))
            and (self.file_type is None or self.file_type.fullmatch(rel.rsplit("/", 1)[-1]))
        ]

    def _is_denied(self, path: Path) -> bool:
        """Whether a Read/Grep deny or ask rule covers the file (as written or resolved)."""
        return bool(self.denied) and self.denied.hides(path)

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
        text = data.decode("utf-8", errors="replace")
        if self.literals and not self._may_match(text):
            return None
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        lines = [line.removesuffix("\r") for line in lines]
        first_only = self.grep.output_mode == "files_with_matches"
        matched = self._matching_lines(lines, first_only=first_only)
        if not matched:
            return None
        out: tuple[str, ...] = ()
        if self.grep.output_mode == "content":
            out = tuple(self._content(lines, matched, "" if single else shown))
        return _Hit(shown, info.st_mtime, out, len(matched))

    def _may_match(self, text: str) -> bool:
        """False only when the file lacks every required literal (so it cannot match)."""
        if self.grep.case_insensitive:
            folded = text.casefold()
            return any(literal.casefold() in folded for literal in self.literals)
        return any(literal in text for literal in self.literals)

    def _leaves_root(self, path: Path) -> bool:
        """A symlinked file pointing outside the workspace root is not read."""
        if self.root is None or not path.is_symlink():
            return False
        return not Path(os.path.realpath(path)).is_relative_to(self.root)

    def _matching_lines(self, lines: list[str], *, first_only: bool) -> list[int]:
        if not self.grep.multiline:
            search = self.regex.search
            if first_only:
                return next(([i] for i, line in enumerate(lines) if search(line)), [])
            return [i for i, line in enumerate(lines) if search(line)]
        text = "\n".join(lines)
        found: set[int] = set()
        for match in self.regex.finditer(text):
            first = text.count("\n", 0, match.start())
            last = text.count("\n", 0, max(match.end() - 1, match.start()))
            found.update(range(first, last + 1))
            if first_only:
                break
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
            if len(line) > MAX_LINE_BYTES // 4 and len(line.encode()) > MAX_LINE_BYTES:
                line = (
                    f"[Omitted long line with {self._count_matches(line)} matches]"
                    if show[i]
                    else "[Omitted long context line]"
                )
            prefix = f"{shown}{sep}" if shown else ""
            if self.grep.line_numbers:
                prefix += f"{i + 1}{sep}"
            out.append(prefix + line)
        return out

    def _count_matches(self, line: str) -> int:
        return max(1, sum(1 for _ in self.regex.finditer(line)))

    def _format(self, hits: list[_Hit]) -> str:
        mode = self.grep.output_mode
        limit, offset = self.grep.head_limit, self.grep.offset
        if mode == "files_with_matches":
            names = [h.shown for h in sorted(hits, key=lambda h: (-h.mtime, h.shown))]
            shown, info = _paginate(names, limit, offset)
            if not shown:
                return "No files found"
            noun = "file" if len(shown) == 1 else "files"
            return "\n".join([f"Found {len(shown)} {noun}{' ' + info if info else ''}", *shown])
        if mode == "count":
            entries, info = _paginate([f"{h.shown}:{h.count}" for h in hits], limit, offset)
            counts = [int(e.rsplit(":", 1)[1]) for e in entries]
            total = sum(counts)
            summary = (
                f"\n\nFound {total} total {'occurrence' if total == 1 else 'occurrences'} "
                f"across {len(counts)} {'file' if len(counts) == 1 else 'files'}."
                f"{f' with pagination = {info}' if info else ''}"
            )
            return ("\n".join(entries) or "No matches found") + summary
        lines: list[str] = []
        for hit in hits:
            if lines and (self.grep.before or self.grep.after):
                lines.append("--")
            lines.extend(hit.lines)
        shown, info = _paginate(lines, limit, offset)
        text = "\n".join(shown) or "No matches found"
        return f"{text}\n\n[Showing results with pagination = {info}]" if info else text


def _glob_matches(glob: tuple[bool, re.Pattern[str]], rel: str) -> bool:
    """A glob without ``/`` matches a file name at any depth (as ripgrep's ``--glob``)."""
    has_slash, regex = glob
    return regex.fullmatch(rel if has_slash else rel.rsplit("/", 1)[-1]) is not None


def _paginate(items: list[str], limit: int, offset: int) -> tuple[list[str], str]:
    """Claude Code's ``head_limit`` / ``offset``: the items shown and the note about them.

    The note names the limit only when it cut something off, and the offset
    when it is not zero (``limit: 250, offset: 10``); empty: nothing to say.
    """
    if limit == 0:
        shown = items[offset:]
        truncated = False
    else:
        shown = items[offset : offset + limit]
        truncated = len(items) - offset > limit
    parts = [f"limit: {limit}"] if truncated else []
    if offset:
        parts.append(f"offset: {offset}")
    return shown, ", ".join(parts)
