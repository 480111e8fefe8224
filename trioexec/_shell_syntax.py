"""One reading of a shell command: a bash syntax tree and what it yields.

A command line is parsed once, with the tree-sitter bash grammar, into a
:class:`ShellAnalysis`: every simple command the shell may run (those inside
command substitutions, function bodies and ``case`` arms included), each with
its words after quote removal, every redirection, and the constructs the
analysis does not fully model.  Both consumers read this one value: Bash rule
matching (``_bash_rules``) and the read-only classifier
(``tools._bash_classifier``).

The analysis never guesses: a word whose value the shell computes is marked
not ``static``, and anything it does not model is named in
:attr:`ShellAnalysis.unmodelled`, so each consumer can fail closed.  A parse
error anywhere makes the whole line ``unparsed`` (bash runs the lines before a
syntax error, so no part of such a line can be trusted).

Pure functions, no trio.  The grammar is loaded on first use, so importing
trioexec does not pay for it.
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING, Any

import attrs

if TYPE_CHECKING:
    from tree_sitter import Node, Parser

__all__ = [
    "Redirect",
    "ShellAnalysis",
    "SimpleCommand",
    "Word",
    "analyse",
    "decode_ansi_c",
    "split_bash_command",
]


@attrs.define(unsafe_hash=True)  # never mutated; not frozen: cheaper to build
class Word:
    """One shell word after quote removal.

    Attributes:
        text: the word's value when ``static``; otherwise its static parts,
            with each computed part left as written.
        raw: the word as written.
        static: True when no expansion can change it: no parameter, command,
            arithmetic or process substitution, no locale string.
        expands: an unquoted glob (``*``, ``?``, ``[...]``) or brace expansion
            could turn it into other words.
        braces: an unquoted brace expansion (``{a,b}``, ``{1..3}``).
        ansi_c: it contains an ANSI-C (``$'...'``) quote (``text`` is decoded).
    """

    text: str
    raw: str = attrs.field(default="", eq=False)
    static: bool = attrs.field(default=True, eq=False)
    expands: bool = False
    braces: bool = attrs.field(default=False, eq=False)
    ansi_c: bool = attrs.field(default=False, eq=False)


@attrs.define(unsafe_hash=True)  # never mutated; not frozen: cheaper to build
class Redirect:
    """One redirection.

    Attributes:
        operator: as written: ``>``, ``>>``, ``>|``, ``&>``, ``&>>``, ``>&``,
            ``<``, ``<&``, ``<>``, ``<<``, ``<<-``, ``<<<``, ``>&-``, ``<&-``.
        target: the file (or descriptor, or here-string / here-doc body)
            redirected to; None when closing a descriptor.
        descriptor: the explicit descriptor number written before the operator.
    """

    operator: str
    target: Word | None
    descriptor: int | None = None

    @property
    def writes(self) -> bool:
        """Whether the redirection opens ``target`` for writing (a file, not a descriptor)."""
        if self.operator in (">", ">>", ">|", "&>", "&>>", "<>"):
            return True
        if self.operator == ">&" and self.target is not None:
            return not re.fullmatch(r"[0-9]+-?|-", self.target.text) or not self.target.static
        return False

    @property
    def reads_file(self) -> bool:
        """Whether the redirection opens ``target`` as a file for reading."""
        if self.operator in ("<", "<>"):
            return True
        if self.operator == "<&" and self.target is not None:
            return not re.fullmatch(r"[0-9]+-?|-", self.target.text) or not self.target.static
        return False


@attrs.define(unsafe_hash=True)  # never mutated; not frozen: cheaper to build
class SimpleCommand:
    """One simple command the shell may run.

    Attributes:
        words: the command name, then its arguments (assignments and
            redirections left out).
        assignments: the ``NAME=value`` words before the name.
        redirects: the redirections that apply to it (also those written
            around an enclosing group or list).
        text: the command as written, without its redirections.
        nested: it runs inside a command or process substitution, or in the
            body of a function, ``case`` arm, loop or other compound command.
    """

    words: tuple[Word, ...]
    assignments: tuple[Word, ...] = ()
    redirects: tuple[Redirect, ...] = ()
    text: str = ""
    nested: bool = False

    @property
    def name(self) -> Word | None:
        """The command word (None: assignments or redirections only)."""
        return self.words[0] if self.words else None


@attrs.frozen
class ShellAnalysis:
    """What one command line means to the shell, as far as the analysis models it.

    Attributes:
        source: the command line.
        commands: every simple command, in source order, nested ones included.
        redirects: every redirection anywhere in the line.
        unmodelled: the constructs present that the analysis does not fully
            model (``"function"``, ``"case"``, ``"substitution"``,
            ``"background"``, ...), each named once, in order of appearance.
        unparsed: the line has a syntax error (or could not be read at all);
            nothing in it can be trusted.
    """

    source: str
    commands: tuple[SimpleCommand, ...] = ()
    redirects: tuple[Redirect, ...] = ()
    unmodelled: tuple[str, ...] = ()
    unparsed: bool = False
    comments: bool = False
    """The line has a comment (modelled: the grammar ends it where bash does)."""

    @property
    def plain(self) -> bool:
        """Only simple commands joined by ``;``, ``&&``, ``||``, ``|`` and newlines."""
        return not self.unparsed and not self.unmodelled


_OPERATOR_WORD = re.compile(rb"(^|[ \t\n;|&(])(?:==|=~|!=)(?=[ \t\n;|&)]|$)")
_MAX_SOURCE = 100_000
"""Longer command lines are not parsed (``unparsed``): fail closed instead of slow."""


@functools.cache
def _parser() -> Parser:
    import tree_sitter
    import tree_sitter_bash

    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))


@functools.lru_cache(maxsize=2048)
def analyse(command: str) -> ShellAnalysis:
    """Parse ``command`` once and return what the shell would run.

    Never raises: a line the grammar rejects (or one longer than 100,000
    characters, or with a NUL) is returned with ``unparsed=True``.
    """
    if len(command) > _MAX_SOURCE or "\0" in command:
        return ShellAnalysis(command, unparsed=True)
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
    if tree.root_node.has_error and _OPERATOR_WORD.search(data):
        # The grammar takes a lone `==`, `=~` or `!=` for a test operator even where
        # bash sees a plain word (`echo a == b`).  Parse again with such words
        # spelled as plain letters of the same length (offsets stay; the reader
        # takes every text from the original bytes).
        retry = _parser().parse(_OPERATOR_WORD.sub(lambda m: m[1] + b"__", data))
        if not retry.root_node.has_error:
            tree = retry
    reader = _Reader(data)
    reader.statement(tree.root_node, (), nested=False)
    return ShellAnalysis(
        command,
        tuple(reader.commands),
        tuple(reader.redirects),
        tuple(dict.fromkeys(reader.unmodelled)),
        tree.root_node.has_error or reader.broken,
        reader.comments,
    )


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
    if len(command) > _MAX_SOURCE or "\0" in command:
        return (command.strip(),) if command.strip() else ()
    data = command.encode("utf-8", "surrogatepass")
    pieces: list[str] = []

    later: list[Node] = []  # statements the grammar nests in a here-doc redirection

    def text(node: Node) -> str:
        if node.type == "heredoc_redirect":
            kept = []
            for child in node.children:
                if child.type in _HEREDOC_PARTS or not child.is_named or child.type in _REDIRECTS:
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
        if node.type in _LISTS:
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


_LISTS = frozenset(["program", "list", "pipeline"])
_COMPOUND = {
    "subshell": "subshell",
    "compound_statement": "group",
    "do_group": "",
    "if_statement": "if",
    "elif_clause": "if",
    "else_clause": "if",
    "while_statement": "loop",
    "for_statement": "loop",
    "c_style_for_statement": "loop",
    "case_statement": "case",
    "case_item": "case",
    "function_definition": "function",
    "negated_command": "negation",
}
_REDIRECTS = frozenset(["file_redirect", "heredoc_redirect", "herestring_redirect"])
_PLAIN_LEAVES = frozenset(["word", "regex", "string_content", "extglob_pattern", "number"])
_HEREDOC_PARTS = frozenset(["heredoc_start", "heredoc_body", "heredoc_end"])
_SUBSTITUTIONS = frozenset(["command_substitution", "process_substitution"])
_DYNAMIC = frozenset(
    [
        "simple_expansion",
        "expansion",
        "arithmetic_expansion",
        "command_substitution",
        "process_substitution",
    ]
)
_BRACES = re.compile(r"\{[^{}]*(?:,|\.\.)[^{}]*\}")
_ANSI_ESCAPE = re.compile(
    r"\\(?:x([0-9A-Fa-f]{1,2})|u([0-9A-Fa-f]{1,4})|U([0-9A-Fa-f]{1,8})|([0-7]{1,3})|c(.)|(.))",
    re.DOTALL,
)
_SIMPLE_ESCAPES = {
    "a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n",
    "r": "\r", "t": "\t", "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?",
}  # fmt: skip


def decode_ansi_c(body: str) -> str:
    """The value of an ANSI-C quoted string's body (``$'...'`` without the quotes)."""

    def one(match: re.Match[str]) -> str:
        hex2, u4, u8, octal, control, other = match.groups()
        if hex2 or u4 or u8:
            code = int(hex2 or u4 or u8, 16)
            return chr(code) if code <= 0x10FFFF else "\ufffd"
        if octal:
            return chr(int(octal, 8) & 0xFF)
        if control:
            return chr(ord(control) & 0x1F)
        return _SIMPLE_ESCAPES.get(other, "\\" + other)

    return _ANSI_ESCAPE.sub(one, body)


_ESCAPED = re.compile(r"\\.", re.DOTALL)
_ESCAPE = re.compile(r"\\(.)", re.DOTALL)
_DOUBLE_ESCAPE = re.compile(r"\\([$`\"\\\n])")
_CLASS = re.compile(r"\[.*\]")
_SPECIAL = frozenset("\\*?[{`$\n")


def _hides_substitution(text: str) -> bool:
    """Whether a leaf the grammar took for plain text holds a ``$(`` or backtick bash would run."""
    if "`" not in text and "$(" not in text:
        return False
    bare = _ESCAPED.sub("", text)
    return "`" in bare or "$(" in bare


def _unescape_unquoted(text: str) -> str:
    if "\\" not in text:
        return text
    return _ESCAPE.sub(r"\1", text.replace("\\\n", ""))


def _unescape_double(text: str) -> str:
    if "\\" not in text:
        return text
    return _DOUBLE_ESCAPE.sub(lambda m: "" if m.group(1) == "\n" else m.group(1), text)


class _Reader:
    """Walks the syntax tree once, collecting commands, redirections and what it skips."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.commands: list[SimpleCommand] = []
        self.redirects: list[Redirect] = []
        self.unmodelled: list[str] = []
        self.broken = False
        self.comments = False

    def source(self, node: Node) -> str:
        return self.data[node.start_byte : node.end_byte].decode("utf-8", "surrogatepass")

    # statements
    def statement(self, node: Node, outer: tuple[Redirect, ...], *, nested: bool) -> None:
        kind = node.type
        if node.is_missing or kind == "ERROR":
            self.broken = True
            return
        if kind in _LISTS:
            for child in node.children:
                if child.type == "&":
                    self.unmodelled.append("background")
                elif child.type == "|&":
                    self.unmodelled.append("stderr pipe")
                elif child.is_named:
                    self.statement(child, outer, nested=nested)
                elif child.type not in ("&&", "||", ";", "|", "\n"):
                    self.unknown(child, nested=nested)
            return
        if kind == "comment":
            self.comments = True
            return
        if kind == "redirected_statement":
            redirects = list(outer)
            body: Node | None = None
            for index, child in enumerate(node.children):
                if node.field_name_for_child(index) == "redirect":
                    own = self.redirect(child, nested=nested)
                    redirects.extend(own)
                    self.redirects.extend(own)
                elif child.is_named:
                    body = child
            if body is None:
                self.unmodelled.append("bare redirection")
                self.commands.append(SimpleCommand((), (), tuple(redirects), "", nested))
            else:
                self.statement(body, tuple(redirects), nested=nested)
            return
        if kind == "command":
            self.command(node, outer, nested=nested)
            return
        if kind in ("variable_assignment", "variable_assignments"):
            assignments = self.assignments(node, nested=nested)
            self.unmodelled.append("assignment")
            self.commands.append(SimpleCommand((), assignments, outer, self.source(node), nested))
            return
        if kind in ("declaration_command", "unset_command"):
            self.declaration(node, outer, nested=nested)
            return
        if kind == "test_command":
            self.test(node, outer, nested=nested)
            return
        if kind in _COMPOUND:
            label = _COMPOUND[kind]
            if kind == "compound_statement" and node.children and node.children[0].type == "((":
                label = "arithmetic"
            if label:
                self.unmodelled.append(label)
            for child in node.children:
                if child.is_named:
                    self.part(child, outer, nested=True)
            return
        self.unknown(node, nested=nested)

    def part(self, node: Node, outer: tuple[Redirect, ...], *, nested: bool) -> None:
        """A child of a compound command: a statement, or a word / expression to search."""
        if node.type in _LISTS or node.type in _COMPOUND or node.type in (
            "command", "redirected_statement", "variable_assignment", "variable_assignments",
            "declaration_command", "unset_command", "test_command", "comment",
        ):  # fmt: skip
            self.statement(node, outer, nested=nested)
        elif node.type in _REDIRECTS:
            self.redirects.extend(self.redirect(node, nested=nested))
        else:
            self.search(node)

    def unknown(self, node: Node, *, nested: bool) -> None:
        self.unmodelled.append(node.type)
        self.search(node)

    def search(self, node: Node) -> None:
        """Find the substitutions (and errors) anywhere below ``node``."""
        if node.is_missing or node.type == "ERROR":
            self.broken = True
            return
        if node.type in _SUBSTITUTIONS:
            self.substitution(node)
            return
        if (
            node.child_count == 0
            and node.type in _PLAIN_LEAVES
            and _hides_substitution(self.source(node))
        ):
            self.broken = True
        if node.type == "subscript":
            self.unmodelled.append("subscript")
        elif node.type in ("arithmetic_expansion", "ansi_c_string"):
            self.unmodelled.append("arithmetic" if node.type[0] == "a" else "ansi-c quote")
        for child in node.children:
            self.search(child)

    def substitution(self, node: Node) -> None:
        self.unmodelled.append("substitution")
        for child in node.children:
            if child.is_named:
                self.part(child, (), nested=True)

    # simple commands
    def command(self, node: Node, outer: tuple[Redirect, ...], *, nested: bool) -> None:
        assignments: list[Word] = []
        words: list[Word] = []
        redirects = list(outer)
        start: int | None = None
        end = node.start_byte
        children = node.children
        data = self.data
        index = 0
        while index < len(children):
            child = children[index]
            kind = child.type
            index += 1
            if kind == "variable_assignment":
                assignments.append(self.assignment_word(child))
            elif kind in _REDIRECTS:
                redirects.extend(self.redirect(child, nested=nested))
            elif kind == "comment":
                self.comments = True
            elif child.is_named:
                named = child.children[0] if kind == "command_name" else child
                word: Word | None = None
                if named.type == "word" and not named.child_count:  # the common plain word
                    raw = data[named.start_byte : named.end_byte].decode("utf-8", "surrogatepass")
                    if not _SPECIAL.intersection(raw):
                        word = Word(raw, raw)
                words.append(word or self.word(named))
                start = child.start_byte if start is None else start
                end = child.end_byte
            elif kind == "$":
                following = children[index] if index < len(children) else None
                if (
                    following is not None
                    and following.type == "string"
                    and (following.start_byte == child.end_byte)
                ):  # `$"..."` the grammar split in two: a locale string
                    index += 1
                    self.unmodelled.append("locale quote")
                    locale = self.word(following)
                    words.append(attrs.evolve(locale, raw="$" + locale.raw, static=False))
                    end = following.end_byte
                else:
                    words.append(Word("$", "$", static=False))
                    end = child.end_byte
                start = child.start_byte if start is None else start
        text = "" if start is None else self.data[start:end].decode("utf-8", "surrogatepass")
        if not words:
            self.unmodelled.append("assignment" if assignments else "bare redirection")
        self.commands.append(
            SimpleCommand(tuple(words), tuple(assignments), tuple(redirects), text, nested)
        )
        self.redirects.extend(r for r in redirects if r not in outer)

    def declaration(self, node: Node, outer: tuple[Redirect, ...], *, nested: bool) -> None:
        words: list[Word] = []
        for child in node.children:
            if child.type == "variable_assignment":
                words.append(self.assignment_word(child))
            elif child.type in _REDIRECTS:
                outer = (*outer, *self.redirect(child, nested=nested))
            else:
                words.append(self.word(child))
        self.commands.append(SimpleCommand(tuple(words), (), outer, self.source(node), nested))

    def test(self, node: Node, outer: tuple[Redirect, ...], *, nested: bool) -> None:
        """``[ ... ]`` / ``[[ ... ]]``: a command whose words are its leaves."""
        words: list[Word] = []

        def leaves(n: Node) -> None:
            if n.type in _DYNAMIC or n.type in ("string", "raw_string", "concatenation", "word"):
                words.append(self.word(n))
                return
            if n.type == "subscript":
                self.unmodelled.append("subscript")
            if n.child_count == 0:
                words.append(Word(self.source(n), self.source(n)))
                return
            for child in n.children:
                leaves(child)

        leaves(node)
        if node.children and node.children[0].type == "[[":
            self.unmodelled.append("conditional expression")
        self.commands.append(SimpleCommand(tuple(words), (), outer, self.source(node), nested))

    def assignments(self, node: Node, *, nested: bool) -> tuple[Word, ...]:
        if node.type == "variable_assignment":
            return (self.assignment_word(node),)
        return tuple(self.assignment_word(c) for c in node.children if c.is_named)

    def assignment_word(self, node: Node) -> Word:
        for child in node.children:
            if child.type == "subscript":
                self.unmodelled.append("subscript")
                self.search(child)
            elif child.is_named and child.type != "variable_name":
                value = self.word(child)
                name = self.source(node)[: child.start_byte - node.start_byte]
                return Word(name + value.text, self.source(node), value.static, value.expands)
        text = self.source(node)
        return Word(text, text)

    # redirections
    def redirect(self, node: Node, *, nested: bool) -> list[Redirect]:
        if node.type not in _REDIRECTS:
            self.unknown(node, nested=nested)
            return []
        found: list[Redirect] = []
        operator = ""
        descriptor: int | None = None
        target: Word | None = None
        quoted = False
        for index, child in enumerate(node.children):
            field = node.field_name_for_child(index)
            if child.type == "ERROR" or child.is_missing:
                self.broken = True
            elif field == "descriptor" or child.type == "file_descriptor":
                text = self.source(child)
                descriptor = int(text) if text.isdigit() else None
            elif child.type in _REDIRECTS:
                found.extend(self.redirect(child, nested=nested))
            elif not child.is_named:
                operator = operator or child.type
            elif child.type == "heredoc_start":
                quoted = any(c in self.source(child) for c in "'\"\\")
            elif child.type == "heredoc_body":
                self.search(child)
                dynamic = any(c.type in _DYNAMIC for c in child.children)
                body = self.source(child)
                target = Word(body, body, static=quoted or not dynamic)
            elif child.type == "heredoc_end":
                pass
            elif node.type == "heredoc_redirect" and child.is_named:
                # The grammar nests what follows `<<EOF` on its line (`| sh`, `&& rm x`)
                # inside the redirection: those are statements of their own.
                self.part(child, (), nested=nested)
            elif child.is_named:
                target = self.word(child)
        if operator in (">&-", "<&-"):
            target = None
        elif operator.startswith("<<") and operator != "<<<":
            self.unmodelled.append("here-doc")
            target = target or Word("", "")
        found.insert(0, Redirect(operator, target, descriptor))
        return found

    # words
    def word(self, node: Node) -> Word:
        """One argument node as a :class:`Word` (searching it for substitutions)."""
        if node.type == "word" and not node.child_count:
            raw = self.data[node.start_byte : node.end_byte].decode("utf-8", "surrogatepass")
            if not _SPECIAL.intersection(raw):  # the common case: a plain word
                return Word(raw, raw)
        parts: list[str] = []
        unquoted: list[str] = []
        flags = {"static": True, "ansi_c": False, "braces": False}
        self.word_parts(node, parts, unquoted, flags)
        bare = "".join(unquoted)
        braces = flags["braces"] or ("{" in bare and bool(_BRACES.search(bare)))
        glob = "*" in bare or "?" in bare or ("[" in bare and bool(_CLASS.search(bare)))
        expands = braces or glob
        raw = self.source(node)
        return Word("".join(parts), raw, flags["static"], expands, braces, flags["ansi_c"])

    def word_parts(
        self, node: Node, parts: list[str], unquoted: list[str], flags: dict[str, Any]
    ) -> None:
        kind = node.type
        text = self.source(node)
        if node.is_missing or kind == "ERROR":
            self.broken = True
            parts.append(text)
            flags["static"] = False
        elif kind in ("word", "number", "command_name"):
            if node.named_child_count:  # a number or word holding an expansion
                for child in node.children:
                    self.word_parts(child, parts, unquoted, flags)
                return
            if _hides_substitution(text) or "\n" in text.replace("\\\n", ""):
                # A backtick inside `${x:-...}`, or a word running over a newline
                # (`ls` newline `\rm x` is two commands to bash): not what bash reads.
                self.broken = True
            parts.append(_unescape_unquoted(text))
            unquoted.append(_ESCAPED.sub("_", text) if "\\" in text else text)
        elif kind == "raw_string":
            parts.append(text[1:-1])
        elif kind == "ansi_c_string":
            parts.append(decode_ansi_c(text[2:-1]))
            flags["ansi_c"] = True
            self.unmodelled.append("ansi-c quote")
        elif kind == "string":
            for child in node.children:
                if child.type == "string_content":
                    if _hides_substitution(self.source(child)):
                        self.broken = True
                    parts.append(_unescape_double(self.source(child)))
                elif child.is_named:
                    self.word_parts(child, parts, [], flags)
                elif child.type == "$":  # a lone `$` before the closing quote
                    parts.append("$")
        elif kind == "concatenation":
            children = node.children
            for index, child in enumerate(children):
                if (
                    child.type == "$"
                    and index + 1 < len(children)
                    and children[index + 1].type == "string"
                ):
                    flags["static"] = False
                    self.unmodelled.append("locale quote")
                    continue
                self.word_parts(child, parts, unquoted, flags)
        elif kind == "translated_string":  # `$"..."`: the locale's translation, not the text
            for child in node.children:
                if child.is_named:
                    self.word_parts(child, parts, [], flags)
            flags["static"] = False
            self.unmodelled.append("locale quote")
        elif kind == "brace_expression":
            parts.append(text)
            unquoted.append(text)
            flags["braces"] = True
        elif kind in _DYNAMIC:
            parts.append(text)
            flags["static"] = False
            self.search(node)
        elif kind == "$":
            parts.append("$")
            flags["static"] = False
        else:  # test operators, regexes, extglob patterns: taken as written
            if node.child_count == 0 and _hides_substitution(text):
                self.broken = True
            parts.append(text)
            unquoted.append(text)
            self.search(node)
