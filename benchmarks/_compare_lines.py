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

3. Where one runtime's files run code of the other's named files (the twin
   subclasses trioexec's run core, say), :func:`shared_parts` counts that code
   for it as well: every top-level class or function of those files that it
   imports (outside ``if TYPE_CHECKING:``), less the methods its own subclasses
   override, plus the top-level functions of the same file those parts name
   (transitively).
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


def count_source(source: str, only: set[int] | None = None) -> LineCount:
    """Code lines and cancellation/teardown lines of one module's source.

    Args:
        source: Python source text.
        only: count only these line numbers (1-based); None counts the whole module.

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
        if only is not None:
            rows &= only
        if not rows:
            continue
        code.update(rows)
        if (
            token.type == tokenize.NAME
            and token.start[0] in rows
            and TEARDOWN_WORDS.search(token.string)
        ):
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


def _runtime_imports(tree: ast.Module) -> list[ast.ImportFrom]:
    """``from x import y`` statements that run (those under ``if TYPE_CHECKING:`` do not)."""
    found: list[ast.ImportFrom] = []

    def visit(nodes: list[ast.stmt]) -> None:
        for node in nodes:
            if isinstance(node, ast.ImportFrom):
                found.append(node)
            elif isinstance(node, ast.If):
                test = node.test
                name = test.id if isinstance(test, ast.Name) else getattr(test, "attr", None)
                if name != "TYPE_CHECKING":
                    visit(node.body)
                visit(node.orelse)
            elif isinstance(node, ast.Try):
                visit(node.body)

    visit(tree.body)
    return found


def _span(node: ast.stmt) -> set[int]:
    first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
    return set(range(first, (node.end_lineno or node.lineno) + 1))


def shared_parts(
    root: Path, own_files: tuple[str, ...], other_files: tuple[str, ...]
) -> dict[str, LineCount]:
    """What of ``other_files`` the runtime of ``own_files`` runs as it is (rule 3).

    Args:
        root: the repository root; file names are relative to it.
        own_files: the runtime's own files.
        other_files: the other runtime's named files, as module paths
            (``trioexec/_core/_run.py`` is imported as ``trioexec._core._run``).

    Returns:
        other file -> the counts of its shared parts (files nothing is taken from are left out).
    """
    modules = {name.removesuffix(".py").replace("/", "."): name for name in other_files}
    imported: dict[str, set[str]] = {}
    overridden: dict[str, set[str]] = {}
    for name in own_files:
        path = root / name
        if not path.is_file():
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        local_to_source: dict[str, tuple[str, str]] = {}
        for node in _runtime_imports(tree):
            if node.module in modules:
                for alias in node.names:
                    imported.setdefault(modules[node.module], set()).add(alias.name)
                    local_to_source[alias.asname or alias.name] = (modules[node.module], alias.name)
        for node in ast.walk(tree):
            if not isinstance(node, ast.ClassDef):
                continue
            methods = {
                item.name
                for item in node.body
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)
            }
            for base in node.bases:
                if isinstance(base, ast.Name) and base.id in local_to_source:
                    file, cls = local_to_source[base.id]
                    overridden.setdefault(f"{file}:{cls}", set()).update(methods)
    counts: dict[str, LineCount] = {}
    for file, names in imported.items():
        source = (root / file).read_text(encoding="utf-8")
        tree = ast.parse(source)
        top = {
            node.name: node
            for node in tree.body
            if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        }
        wanted = [name for name in names if name in top]
        taken: set[str] = set()
        lines: set[int] = set()
        while wanted:
            name = wanted.pop()
            if name in taken:
                continue
            taken.add(name)
            node = top[name]
            span = _span(node)
            kept: list[ast.AST] = [node]
            if isinstance(node, ast.ClassDef):
                skip = overridden.get(f"{file}:{name}", set())
                kept = []
                for item in node.body:
                    if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and (
                        item.name in skip
                    ):
                        span -= _span(item)
                    else:
                        kept.append(item)
            lines |= span
            for part in kept:
                wanted.extend(
                    n.id for n in ast.walk(part) if isinstance(n, ast.Name) and n.id in top
                )
        if lines:
            counts[file] = count_source(source, only=lines)
    return counts


TRIOEXEC_FILES = (
    "trioexec/_core/_frame.py",
    "trioexec/_core/_run.py",
    "trioexec/_core/_cancel.py",
    "trioexec/_core/_batch.py",
    "trioexec/_core/_streaming.py",
    "trioexec/_core/_timeouts.py",
    "trioexec/_groups.py",
    "trioexec/_core/_lifecycle.py",
    "trioexec/_core/_turn.py",
)
"""trioexec's orchestrator: a run's frame, the run core, cancellation, both front ends, time limits,
exception groups, one call's lifecycle, the turn (the pure parts both runtimes use are
not named)."""
