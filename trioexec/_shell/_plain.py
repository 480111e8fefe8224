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
limits is never read here; nor a double-quoted string of blanks alone (the grammar
reads ``" "`` as empty).  A test reads every line of the corpus and many generated
ones both ways and requires the same analysis, field by field.
"""

from __future__ import annotations

import re

from ._walk import PLAIN_BYTES
from ._words import ShellAnalysis, SimpleCommand, Word

__all__ = ["MAX_PLAIN", "read_plain"]

MAX_PLAIN = 2_000
"""Longer lines are left to the grammar (they are rare, and the limits live there)."""
_MAX_OPERATORS = 64
"""Lines joining more commands are left to the grammar (it also bounds their depth)."""

_PLAIN = re.escape((PLAIN_BYTES + b"=").decode())
"""The characters of an unquoted word: the tree walk's plain ones and ``=``."""
_TOKENS = re.compile(
    rf"""[ \t]+
       |&&|\|\||[|;]
       |(?:[{_PLAIN}]|'[^'\x00-\x08\n-\x1f\x7f]*'|"[^"\\$`!\x00-\x08\n-\x1f\x7f]*")+
    """,
    re.VERBOSE,
)
"""A blank run, an operator or a word: the tokens of a plain line (anything else is
skipped by ``findall``, which the caller notices)."""
_PIECES = re.compile(r"([^'\"]+)|'([^']*)'|\"([^\"]*)\"")
"""An unquoted run, a single-quoted string or a double-quoted one (no escapes inside)."""
_BLANK_STRING = re.compile(r'"[ \t]+"')
"""A double-quoted string of blanks alone, which the grammar reads as empty (bash keeps the
blanks): such a line is left to the grammar, so this reading never differs from it."""
_LINE_BYTES = PLAIN_BYTES + b"= \t|&;"
"""Every character of a plain line without quotes (``bytes.translate`` deleting them
leaves nothing)."""
_OPERATOR = re.compile(r"(&&|\|\||[|;])")
_NAME = re.compile(r"[A-Za-z0-9_./][A-Za-z0-9_./+-]*")
"""A command name read here: ``@``, ``%``, ``,``, ``:`` and ``~`` are left to the grammar,
which reads some of them (``a@``, ``coproc%``) as other tokens in that place; nor a
name starting with ``-`` or ``+`` (``- a@`` does not parse)."""
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
        if not _read_as_a_name(words[0]):
            return None
        if "=" in text and any(word[0] == "=" for word in words):
            return None  # `==`, `=~`: the grammar reads a test operator there
        commands.append(
            SimpleCommand(tuple([Word(word, word) for word in words]), (), (), text, False)
        )
    return ShellAnalysis(command, tuple(commands))


def _read_quoted(command: str) -> ShellAnalysis | None:
    """:func:`read_plain` of a line with quotes: its tokens, found in one pass."""
    tokens = _TOKENS.findall(command)
    if sum(map(len, tokens)) != len(command):
        return None  # a character the plain shape does not allow (findall skipped it)
    if len(tokens) > 8 * _MAX_OPERATORS:
        return None
    commands: list[SimpleCommand] = []
    words: list[Word] = []
    start = end = position = 0
    for token in tokens:
        first = token[0]
        if first == " " or first == "\t":
            pass
        elif first in "|&;":
            if not words:
                return None  # an operator with no command before it
            commands.append(SimpleCommand(tuple(words), (), (), command[start:end], False))
            words = []
        else:
            if not words:
                start = position
                if not _read_as_a_name(token):
                    return None
            elif first == "=":
                return None  # `==`, `=~`: the grammar reads a test operator there
            if '"' in token and _BLANK_STRING.search(token):
                return None  # the grammar drops what `" "` holds: left to it, as it reads
            end = position + len(token)
            words.append(Word(_unquoted(token), token))
        position += len(token)
    if not words or len(commands) > _MAX_OPERATORS:
        return None  # nothing at all, or a line ending in an operator
    commands.append(SimpleCommand(tuple(words), (), (), command[start:end], False))
    return ShellAnalysis(command, tuple(commands))


def _read_as_a_name(word: str) -> bool:
    """Whether the grammar reads ``word``, first in a command, as its plain name: not a
    reserved word or declaration builtin, nothing it may split off or read otherwise."""
    return _NAME.fullmatch(word) is not None and _KEYWORD.match(word) is None


def _unquoted(token: str) -> str:
    """A plain word's value: its quotes removed (neither kind holds its own quote, and
    a double-quoted string here holds no ``$``, backtick or backslash)."""
    single, double = "'" in token, '"' in token
    if not double:
        return token.replace("'", "") if single else token
    if not single:
        return token.replace('"', "")
    return "".join([a + b + c for a, b, c in _PIECES.findall(token)])
