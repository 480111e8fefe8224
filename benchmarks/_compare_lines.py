"""Lines of cancellation and teardown code, counted by one mechanical rule.

The rule, applied alike to every file named for a runtime:

1. A *code line* is a physical line holding at least one token that is not a
   comment, a line break or indentation, and that is not part of a docstring
   (the string statement opening a module, class or function).
2. A code line is a *cancellation/teardown line* when one of its name tokens
   (identifiers and keywords, never the text inside strings) matches
   :data:`TEARDOWN_WORDS` (case-insensitive): anything about cancelling,
   shielding, time limits, exception groups, the task group/nursery that joins
   the children, ``finally`` and closing.

Counting is over named files only (the orchestrator of each runtime, not the
pure parts both share), so the figures say how much of each orchestrator is
about stopping and cleaning up, and how large each orchestrator is.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from typing import TYPE_CHECKING

import attrs

if TYPE_CHECKING:
    from pathlib import Path

TEARDOWN_WORDS = re.compile(
    r"cancel|shield|move_on|fail_after|fail_at|deadline|timeout|grace|watchdog"
    r"|nursery|taskgroup|task_group|exceptiongroup|finally|aclose|teardown|uncancel",
    re.IGNORECASE,
)
"""What makes a code line a cancellation/teardown line (searched in name tokens)."""

_SKIPPED = {
    tokenize.COMMENT,
    tokenize.NL,
    tokenize.NEWLINE,
    tokenize.INDENT,
    tokenize.DEDENT,
    tokenize.ENDMARKER,
    tokenize.ENCODING,
}


@attrs.frozen
class LineCount:
    """One file's (or several files') counts."""

    code: int
    teardown: int

    def __add__(self, other: LineCount) -> LineCount:
        return LineCount(self.code + other.code, self.teardown + other.teardown)


def _docstring_lines(tree: ast.AST) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        body = node.body
        if (
            body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            end = body[0].end_lineno or body[0].lineno
            lines.update(range(body[0].lineno, end + 1))
    return lines


def count_source(source: str) -> LineCount:
    """Code lines and cancellation/teardown lines of one module's source.

    Args:
        source: Python source text.

    Returns:
        The two counts of the rule in this module's docstring.

    Raises:
        SyntaxError: the source does not parse.
    """
    docstrings = _docstring_lines(ast.parse(source))
    code: set[int] = set()
    teardown: set[int] = set()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type in _SKIPPED:
            continue
        rows = set(range(token.start[0], token.end[0] + 1)) - docstrings
        if not rows:
            continue
        code.update(rows)
        if token.type == tokenize.NAME and TEARDOWN_WORDS.search(token.string):
            teardown.add(token.start[0])
    return LineCount(len(code), len(teardown))


def count_files(root: Path, files: tuple[str, ...]) -> dict[str, LineCount]:
    """The counts of each named file (paths relative to ``root``); missing files are left out."""
    counts: dict[str, LineCount] = {}
    for name in files:
        path = root / name
        if path.is_file():
            counts[name] = count_source(path.read_text(encoding="utf-8"))
    return counts


TRIOEXEC_FILES = (
    "trioexec/_core.py",
    "trioexec/_cancel.py",
    "trioexec/_batch.py",
    "trioexec/_streaming.py",
    "trioexec/_timeouts.py",
    "trioexec/_groups.py",
    "trioexec/_lifecycle.py",
)
"""trioexec's orchestrator: the run core, cancellation, both front ends, time limits,
exception groups, one call's lifecycle (the pure parts the twin reuses are not named)."""
