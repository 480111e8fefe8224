"""Plain lines read without the grammar: the common shape, in one scan.

Most lines a coding agent sends are simple commands of plain words joined by
``|``, ``&&``, ``||`` and ``;`` (``git status``, ``cat f | grep -n x | head``,
``rg -n 'def main' src``).  For those, what the grammar and the tree walk give
is fixed by the text alone: each command's words split at blanks, quotes
removed, nothing computed, nothing nested, no redirection.  :func:`read_plain`
builds that :class:`ShellAnalysis` directly, and returns None for every other
line, which :func:`~._syntax.analyse` then parses as before.

What counts as plain is deliberately narrow: unquoted words of letters, digits
and ``_./,:+%@~=-``; single-quoted text; double-quoted text without ``$``, a
backtick, a backslash or ``!``; blanks (space, tab); the four operators, each
between two commands.  No newline, no ``#``, no word starting with ``=`` (the
grammar takes ``==`` and ``=~`` for test operators); a command's first word
unquoted, without ``=`` (an assignment), and neither a reserved word nor a
declaration builtin (the grammar reads those as other nodes, and splits
``for'x'`` in two); ASCII only; a bounded size, so a line past the analysis's
limits is never read here.  A test reads every line of the corpus and many
generated ones both ways and requires the same analysis, field by field.
"""

from __future__ import annotations

import re

from ._words import ShellAnalysis, SimpleCommand, Word

__all__ = ["MAX_PLAIN", "read_plain"]

MAX_PLAIN = 2_000
"""Longer lines are left to the grammar (they are rare, and the limits live there)."""
_MAX_OPERATORS = 64
"""Lines joining more commands are left to the grammar (it also bounds their depth)."""

_PLAIN = r"A-Za-z0-9_./,:+%@~=\-"
_TOKEN = re.compile(
    rf"""(?P<blank>[ \t]+)
       |(?P<op>&&|\|\||[|;])
       |(?P<word>(?:[{_PLAIN}]|'[^'\x00-\x08\n-\x1f\x7f]*'|"[^"\\$`!\x00-\x08\n-\x1f\x7f]*")+)
    """,
    re.VERBOSE,
)
_UNQUOTED = re.compile(rf"[{_PLAIN}]+")
_LINE_BYTES = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./,:+%@~=- \t|&;"
"""Every character of a plain line without quotes (``bytes.translate`` deleting them
leaves nothing)."""
_OPERATOR = re.compile(r"(&&|\|\||[|;])")
_NAME = re.compile(r"[A-Za-z0-9_./][A-Za-z0-9_./+-]*")
"""A command name read here: ``@``, ``%``, ``,``, ``:`` and ``~`` are left to the grammar,
which reads some of them (``a@``, ``coproc%``) as other tokens in that place; nor a
name starting with ``-`` or ``+`` (``- a@`` does not parse)."""
_QUOTED = re.compile(rf"[{_PLAIN}]+|'([^']*)'|\"([^\"]*)\"")
_NOT_A_NAME = frozenset(
    [
        # reserved words (bash's and the grammar's)
        "if", "then", "else", "elif", "fi", "case", "esac", "for", "select", "while",
        "until", "do", "done", "in", "function", "time", "coproc",
        # builtins the grammar reads as declarations, not commands
        "declare", "typeset", "export", "readonly", "local", "unset", "unsetenv",
    ]
)  # fmt: skip
"""Words the grammar reads as something other than a command name in that place."""
_KEYWORD = re.compile("(?:" + "|".join(sorted(_NOT_A_NAME)) + r")(?![A-Za-z0-9_])")
"""A command name that starts with one of them (``done.x`` too: the grammar's lexer may
end the reserved word there)."""


def read_plain(command: str) -> ShellAnalysis | None:
    """The analysis of ``command`` when it is a plain line (see the module docstring),
    equal to what the grammar gives; None for any other line.  Never raises."""
    if len(command) > MAX_PLAIN or not command.isascii():
        return None
    if "'" in command or '"' in command:
        return _read_quoted(command)
    if command.encode().translate(None, _LINE_BYTES) or "&" in command.replace("&&", ""):
        return None  # a character the plain shape does not allow, or a lone `&`
    pieces = _OPERATOR.split(command)
    if len(pieces) > 2 * _MAX_OPERATORS:
        return None
    commands: list[SimpleCommand] = []
    for piece in pieces[::2]:
        text = piece.strip(" \t")
        if not text:
            return None  # an operator with no command before or after it
        words = text.split()
        name = words[0]
        if not _NAME.fullmatch(name) or _KEYWORD.match(name):
            return None  # a reserved word, or what the grammar may split off
        if "=" in text and any(word[0] == "=" for word in words):
            return None  # `==`, `=~`: the grammar reads a test operator there
        commands.append(
            SimpleCommand(tuple([Word(word, word) for word in words]), (), (), text, False)
        )
    return ShellAnalysis(command, tuple(commands))


def _read_quoted(command: str) -> ShellAnalysis | None:
    """:func:`read_plain` of a line with quotes: token by token."""
    match = _TOKEN.match
    size = len(command)
    position = 0
    commands: list[SimpleCommand] = []
    words: list[Word] = []
    start = end = 0
    operators = 0
    while position < size:
        token = match(command, position)
        if token is None:
            return None  # a character the plain shape does not allow
        kind = token.lastgroup
        position = token.end()
        if kind == "word":
            raw = token.group()
            if not words:
                start = token.start()
                if not _NAME.fullmatch(raw) or _KEYWORD.match(raw):
                    return None  # a reserved word, or what the grammar may split off
            elif raw[0] == "=":
                return None  # `==`, `=~`: the grammar reads a test operator there
            end = position
            words.append(_word(raw))
        elif kind == "op":
            if not words:
                return None  # an operator with no command before it
            operators += 1
            if operators > _MAX_OPERATORS:
                return None
            commands.append(SimpleCommand(tuple(words), (), (), command[start:end], False))
            words = []
    if not words:
        return None  # nothing at all, or a line ending in an operator
    commands.append(SimpleCommand(tuple(words), (), (), command[start:end], False))
    return ShellAnalysis(command, tuple(commands))


def _word(raw: str) -> Word:
    if _UNQUOTED.fullmatch(raw):
        return Word(raw, raw)
    parts: list[str] = []
    for piece in _QUOTED.finditer(raw):
        single, double = piece.group(1), piece.group(2)
        parts.append(single if single is not None else double if double is not None else piece[0])
    return Word("".join(parts), raw)
