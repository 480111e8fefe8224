"""One reading of a shell command: a bash syntax tree and what it yields.

A command line is parsed once, with the tree-sitter bash grammar, into a
:class:`ShellAnalysis`: every simple command the shell may run (those inside
command substitutions, function bodies and ``case`` arms included), each with
its words after quote removal, every redirection, and the constructs the
analysis does not fully model.  Both consumers read this one value: Bash rule
matching (``_bash_rules``) and the read-only classifier
(``_shell._read_only``).

The analysis never guesses: a word whose value the shell computes is marked
not ``static``, and anything it does not model is named in
:attr:`ShellAnalysis.unmodelled`, so each consumer can fail closed.  A parse
error anywhere makes the whole line ``unparsed`` (bash runs the lines before a
syntax error, so no part of such a line can be trusted).

Pure functions, no trio.  The grammar is loaded on first use, so importing
trioexec does not pay for it.  The values live in :mod:`._words`, the
tree walk in :mod:`._walk`.
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING

import attrs

from ._plain import read_plain
from ._walk import HEREDOC_PARTS, LISTS, REDIRECTS, Reader, decode_ansi_c
from ._words import Redirect, ShellAnalysis, SimpleCommand, Word

if TYPE_CHECKING:
    from tree_sitter import Node, Parser

__all__ = [
    "MAX_COMMANDS",
    "MAX_DEPTH",
    "MAX_SEPARATORS",
    "MAX_SOURCE",
    "Redirect",
    "ShellAnalysis",
    "SimpleCommand",
    "Word",
    "analyse",
    "decode_ansi_c",
    "split_bash_command",
]


_OPERATOR_WORD = re.compile(rb"(^|[ \t\n;|&(])(?:==|=~|!=)(?=[ \t\n;|&)]|$)")
MAX_SOURCE = 100_000
"""Longer command lines are not parsed (``unparsed``): fail closed instead of slow."""
MAX_DEPTH = 200
"""Syntax trees deeper than this are not read (about 100 nested ``$(``, or 200 ``&&``):
the walk is recursive, and no command a person writes nests so deep."""
MAX_COMMANDS = 2_000
"""Lines with more simple commands are not read further: every later check (views,
rules, paths) grows with their number."""
MAX_SEPARATORS = 4 * MAX_COMMANDS
"""Lines with more ``|``, ``;`` and ``&`` characters (quoted ones too) are not parsed."""
_SEPARATORS_CHECKED = MAX_SEPARATORS
"""Shorter lines cannot hold more separators: they are not counted."""
_SHALLOW = MAX_DEPTH
"""A tree with at most this many nodes cannot be deeper than :data:`MAX_DEPTH`."""


@functools.cache
def _parser() -> Parser:
    import tree_sitter
    import tree_sitter_bash

    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))


@functools.lru_cache(maxsize=2048)
def analyse(command: str) -> ShellAnalysis:
    """Parse ``command`` once and return what the shell would run.

    Never raises, and its work is bounded: a line the grammar rejects (or one
    with a NUL) is returned with ``unparsed=True``; one longer than
    :data:`MAX_SOURCE` characters, with a syntax tree deeper than
    :data:`MAX_DEPTH` or with more than :data:`MAX_COMMANDS` simple commands
    also has ``too_complex`` set to the reason (every consumer fails closed).
    """
    if len(command) > MAX_SOURCE:
        return ShellAnalysis(
            command, unparsed=True, too_complex=f"longer than {MAX_SOURCE:,} characters"
        )
    if "\0" in command:
        return ShellAnalysis(command, unparsed=True)
    plain = read_plain(command)  # the common shape, read without the grammar
    if plain is not None:
        return plain
    if len(command) > _SEPARATORS_CHECKED and _separators(command) > MAX_SEPARATORS:
        # The grammar parses a long pipeline slowly (about 2 µs a character): a line
        # with this many `|`, `;` and `&` has more commands than are read anyway.
        return ShellAnalysis(
            command, unparsed=True, too_complex=f"more than {MAX_SEPARATORS:,} `|`, `;` and `&`"
        )
    analysis = _analyse(command)
    if "\\\n" in command:
        # bash removes a backslash-newline before it splits words (`r\<newline>m` is
        # `rm`); the grammar does not always.  Read the joined line too: every
        # command either reading finds may run, and where the two differ the line
        # is not modelled.
        joined = _analyse(command.replace("\\\n", ""))
        ours = [c.words for c in analysis.commands]
        if [c.words for c in joined.commands] != ours:
            analysis = attrs.evolve(
                analysis,
                commands=analysis.commands + joined.commands,
                redirects=analysis.redirects + joined.redirects,
                unmodelled=(*analysis.unmodelled, "line continuation"),
                unparsed=analysis.unparsed or joined.unparsed,
            )
    return analysis


def _analyse(command: str) -> ShellAnalysis:
    data = _terminated(command.encode("utf-8", "surrogatepass"))
    tree = _parser().parse(data)
    root = tree.root_node
    if root.has_error and _OPERATOR_WORD.search(data):
        # The grammar takes a lone `==`, `=~` or `!=` for a test operator even where
        # bash sees a plain word (`echo a == b`).  Parse again with such words
        # spelled as plain letters of the same length (offsets stay; the reader
        # takes every text from the original bytes).
        retry = _parser().parse(_OPERATOR_WORD.sub(lambda m: m[1] + b"__", data))
        if not retry.root_node.has_error:
            root = retry.root_node
    if root.has_error and b"<>" in data:
        # The grammar lacks bash's read-write redirection `[n]<>file`: read it as the
        # append `>>` of the same length (the reader takes the operator's text, `<>`,
        # from the original bytes).
        retry = _parser().parse(data.replace(b"<>", b">>"))
        if not retry.root_node.has_error:
            root = retry.root_node
    errors = root.has_error
    if root.descendant_count > _SHALLOW and _depth(root) > MAX_DEPTH:
        return ShellAnalysis(
            command, unparsed=True, too_complex=f"nested more than {MAX_DEPTH} levels deep"
        )
    reader = Reader(data, errors=errors, max_commands=MAX_COMMANDS)
    try:
        reader.statement(root, (), nested=False)
    except RecursionError:  # pragma: no cover - MAX_DEPTH keeps the walk far from the limit
        return ShellAnalysis(command, unparsed=True, too_complex="nested too deep to read")
    if reader.overflow:
        return ShellAnalysis(
            command, unparsed=True, too_complex=f"more than {MAX_COMMANDS:,} commands"
        )
    return ShellAnalysis(
        command,
        tuple(reader.commands),
        tuple(reader.redirects) if reader.redirects else (),
        tuple(dict.fromkeys(reader.unmodelled)) if reader.unmodelled else (),
        errors or reader.broken,
        reader.comments,
    )


def _separators(command: str) -> int:
    return command.count("|") + command.count(";") + command.count("&")


def _depth(root: Node) -> int:
    """The depth of the tree below ``root``, walked without recursion (a cursor)."""
    cursor = root.walk()
    depth = deepest = 0
    while True:
        if cursor.goto_first_child():
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > MAX_DEPTH:
                    return deepest
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return deepest
            depth -= 1


def _terminated(data: bytes) -> bytes:
    """The line as the parser should read it: ending in a newline.

    The end of a ``-c`` script ends its last command just as a newline does,
    and the grammar reaches the end of a pipeline of three or more commands
    with no newline after it only through its error recovery (about 30 µs
    instead of 3).  A line ending in a backslash is left alone: there bash
    keeps the backslash, while before a newline it would join the lines.
    """
    return data if data.endswith((b"\n", b"\\")) else data + b"\n"


def split_bash_command(command: str) -> tuple[str, ...]:
    """Split a shell command line into its top-level commands, as written.

    Splits where bash does: ``&&``, ``||``, ``;``, ``|``, ``|&``, a background
    ``&`` and newlines, never inside quotes, substitutions or compound
    commands; ``2>&1`` and ``&>`` stay with their command.  Comments and
    here-doc bodies are left out, backslash-newlines joined, each piece
    stripped.  For display and logging; rule matching reads :func:`analyse`.
    """
    if analyse(command).too_complex or "\0" in command:
        return (command.strip(),) if command.strip() else ()
    data = command.encode("utf-8", "surrogatepass")
    pieces: list[str] = []

    later: list[Node] = []  # statements the grammar nests in a here-doc redirection

    def text(node: Node) -> str:
        if node.type == "heredoc_redirect":
            kept = []
            for child in node.children:
                if child.type in HEREDOC_PARTS or not child.is_named or child.type in REDIRECTS:
                    if child.type not in ("heredoc_body", "heredoc_end", "&&", "||", "|", "|&"):
                        kept.append(child)
                else:
                    later.append(child)
            return " ".join(text(c) for c in kept).replace("<< ", "<<").replace("<<- ", "<<-")
        if node.type == "redirected_statement" or any(
            c.type == "heredoc_redirect" for c in node.children
        ):
            return " ".join(text(c) for c in node.children)
        return data[node.start_byte : node.end_byte].decode("utf-8", "surrogatepass")

    def visit(node: Node) -> None:
        if node.type in LISTS:
            for child in node.named_children:
                visit(child)
        elif node.type != "comment":
            piece = text(node).replace("\\\n", "").strip()
            if piece.strip(";&| \t\n"):
                pieces.append(piece)
            while later:
                visit(later.pop(0))

    visit(_parser().parse(_terminated(data)).root_node)
    return tuple(pieces)
