"""The one walk over a bash syntax tree that builds a :class:`~._words.ShellAnalysis`.

:class:`Reader` visits each node once, in source order: statements and lists,
compound commands (whose bodies it reads as nested), simple commands with
their words and redirections, and the substitutions hidden anywhere in a
word.  Whatever it does not fully model it names in ``unmodelled``; an error
node makes it ``broken``.  Node texts are taken from the source bytes by
offset (never ``Node.text``), and a plain word is recognised without visiting
its parts: reading a tree-sitter node from Python costs tens of nanoseconds
per property.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import attrs

from ._words import Redirect, SimpleCommand, Word

if TYPE_CHECKING:
    from tree_sitter import Node

__all__ = ["HEREDOC_PARTS", "LISTS", "PLAIN_BYTES", "REDIRECTS", "Reader", "decode_ansi_c"]

LISTS = frozenset(["program", "list", "pipeline"])
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
REDIRECTS = frozenset(["file_redirect", "heredoc_redirect", "herestring_redirect"])
_PLAIN_LEAVES = frozenset(["word", "regex", "string_content", "extglob_pattern", "number"])
HEREDOC_PARTS = frozenset(["heredoc_start", "heredoc_body", "heredoc_end"])
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
_ARITHMETIC_EXPANSION = re.compile(r"\$\{(?:!|#?[^}:\[]*(?:\[|:(?![-=?+])))")
"""A parameter expansion that evaluates arithmetic: ``${!x}``, ``${a[i]}``, ``${s:i:n}``."""
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
PLAIN_BYTES = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./,:+%@~-"
"""A word spelt only with these holds no quote, expansion, glob, brace, assignment,
redirection or comment: its text is its value (``bytes.translate`` deleting them
leaves nothing; cheaper than a regular expression)."""
_PLAIN_OR_BLANK = PLAIN_BYTES + b" \t"


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


class Reader:
    """Walks the syntax tree once, collecting commands, redirections and what it skips."""

    def __init__(self, data: bytes, *, errors: bool = True, max_commands: int = 0) -> None:
        self.data = data
        self.max_commands = max_commands
        """Stop reading after this many simple commands (0: no limit); ``overflow`` says so."""
        self.overflow = False
        self.errors = errors
        """The tree may hold ERROR or MISSING nodes (tree-sitter's ``has_error``): when it
        does not, no node needs checking for them."""
        self.commands: list[SimpleCommand] = []
        self.redirects: list[Redirect] = []
        self.unmodelled: list[str] = []
        self.broken = False
        self.comments = False

    def source(self, node: Node) -> str:
        return self.data[node.start_byte : node.end_byte].decode("utf-8", "surrogatepass")

    # statements
    def statement(self, node: Node, outer: tuple[Redirect, ...], *, nested: bool) -> None:
        if self.max_commands and len(self.commands) > self.max_commands:
            self.overflow = True
            return
        kind = node.type
        if self.errors and (node.is_missing or kind == "ERROR"):
            self.broken = True
            return
        if kind == "command":  # the common case first
            self.command(node, outer, nested=nested)
            return
        if kind in LISTS:
            limit = self.max_commands or len(self.data)
            for child in node.children:
                if len(self.commands) > limit:
                    self.overflow = True
                    return
                child_kind = child.type
                if child_kind == "command" and not self.errors:
                    self.command(child, outer, nested=nested)  # what statement() would do
                elif child_kind == "&":
                    self.unmodelled.append("background")
                elif child_kind == "|&":
                    self.unmodelled.append("stderr pipe")
                elif child.is_named:
                    self.statement(child, outer, nested=nested)
                elif child_kind not in ("&&", "||", ";", "|", "\n"):
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
            if kind == "c_style_for_statement":
                self.unmodelled.append("arithmetic")  # `for ((i=x; ...))` evaluates x's value
            for child in node.children:
                if child.is_named:
                    self.part(child, outer, nested=True)
            return
        self.unknown(node, nested=nested)

    def part(self, node: Node, outer: tuple[Redirect, ...], *, nested: bool) -> None:
        """A child of a compound command: a statement, or a word / expression to search."""
        if node.type in LISTS or node.type in _COMPOUND or node.type in (
            "command", "redirected_statement", "variable_assignment", "variable_assignments",
            "declaration_command", "unset_command", "test_command", "comment",
        ):  # fmt: skip
            self.statement(node, outer, nested=nested)
        elif node.type in REDIRECTS:
            self.redirects.extend(self.redirect(node, nested=nested))
        else:
            self.search(node)

    def unknown(self, node: Node, *, nested: bool) -> None:
        self.unmodelled.append(node.type)
        self.search(node)

    def search(self, node: Node) -> None:
        """Find the substitutions (and errors) anywhere below ``node``."""
        if self.errors and (node.is_missing or node.type == "ERROR"):
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
        elif node.type == "expansion":
            self.expansion(node)
        elif node.type in ("arithmetic_expansion", "ansi_c_string"):
            self.unmodelled.append("arithmetic" if node.type[0] == "a" else "ansi-c quote")
        for child in node.children:
            self.search(child)

    def expansion(self, node: Node) -> None:
        """``${...}``: an indirection (``${!x}``), a subscript or a substring offset
        (``${s:i}``) evaluates a variable's value as arithmetic (``a[$(cmd)]`` runs)."""
        if _ARITHMETIC_EXPANSION.match(self.source(node)):
            self.unmodelled.append("arithmetic")

    def substitution(self, node: Node) -> None:
        self.unmodelled.append("substitution")
        for child in node.children:
            if child.is_named:
                self.part(child, (), nested=True)

    # simple commands
    def command(self, node: Node, outer: tuple[Redirect, ...], *, nested: bool) -> None:
        span = self.data[node.start_byte : node.end_byte]
        if span and not span.translate(None, _PLAIN_OR_BLANK):
            # Only letters, digits, `_./,:+%@~-` and blanks: every child is a plain word
            # (no quote, expansion, glob, redirection, assignment or comment can be
            # spelled without another character), so the words are the blank-separated
            # pieces of the command's own text.
            source = span.decode("ascii")
            pieces = tuple([Word(piece, piece) for piece in source.split()])
            self.commands.append(SimpleCommand(pieces, (), outer, source, nested))
            return
        assignments: list[Word] = []
        words: list[Word] = []
        own: list[Redirect] = []
        start: int | None = None
        end = node.start_byte
        data = self.data
        locale_at = -1  # the index of a string the grammar split from its `$`
        children = node.children
        for index, child in enumerate(children):
            first, last = child.start_byte, child.end_byte
            span = data[first:last]
            if span and not span.translate(None, PLAIN_BYTES):  # a plain word, whatever its node
                text = span.decode("ascii")
                words.append(Word(text, text))
                if start is None:
                    start = first
                end = last
                continue
            kind = child.type
            if kind == "command_name" or kind == "word":  # the common case first
                named = child.children[0] if kind == "command_name" else child
                word: Word | None = None
                if named.type == "word" and not named.child_count:  # a plain word
                    raw = data[named.start_byte : named.end_byte].decode("utf-8", "surrogatepass")
                    if _SPECIAL.isdisjoint(raw):
                        word = Word(raw, raw)
                words.append(word or self.word(named))
                if start is None:
                    start = child.start_byte
                end = child.end_byte
            elif kind == "variable_assignment":
                assignments.append(self.assignment_word(child))
            elif kind in REDIRECTS:
                own.extend(self.redirect(child, nested=nested))
            elif kind == "comment":
                self.comments = True
            elif index == locale_at:
                continue
            elif child.is_named:
                words.append(self.word(child))
                if start is None:
                    start = child.start_byte
                end = child.end_byte
            elif kind == "$":
                following = children[index + 1] if index + 1 < len(children) else None
                if (
                    following is not None
                    and following.type == "string"
                    and (following.start_byte == child.end_byte)
                ):  # `$"..."` the grammar split in two: a locale string
                    locale_at = index + 1
                    self.unmodelled.append("locale quote")
                    locale = self.word(following)
                    words.append(attrs.evolve(locale, raw="$" + locale.raw, static=False))
                    end = following.end_byte
                else:
                    words.append(Word("$", "$", static=False))
                    end = child.end_byte
                if start is None:
                    start = child.start_byte
        text = "" if start is None else data[start:end].decode("utf-8", "surrogatepass")
        if not words:
            self.unmodelled.append("assignment" if assignments else "bare redirection")
        if own:
            redirects = (*outer, *own)
            self.redirects.extend(r for r in own if r not in outer)
        else:
            redirects = outer
        self.commands.append(
            SimpleCommand(tuple(words), tuple(assignments), redirects, text, nested)
        )

    def declaration(self, node: Node, outer: tuple[Redirect, ...], *, nested: bool) -> None:
        words: list[Word] = []
        for child in node.children:
            if child.type == "variable_assignment":
                words.append(self.assignment_word(child))
            elif child.type in REDIRECTS:
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
        if node.type not in REDIRECTS:
            self.unknown(node, nested=nested)
            return []
        found: list[Redirect] = []
        operator = ""
        descriptor: int | None = None
        target: Word | None = None
        quoted = False
        for index, child in enumerate(node.children):
            field = node.field_name_for_child(index)
            if self.errors and (child.type == "ERROR" or child.is_missing):
                self.broken = True
            elif field == "descriptor" or child.type == "file_descriptor":
                text = self.source(child)
                descriptor = int(text) if text.isdigit() else None
            elif child.type in REDIRECTS:
                found.extend(self.redirect(child, nested=nested))
            elif not child.is_named:
                if not operator:
                    operator = child.type
                    if operator == ">>" and self.source(child) == "<>":
                        operator = "<>"  # read as `>>` (see _syntax._analyse)
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
            if _SPECIAL.isdisjoint(raw):  # the common case: a plain word
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
        if self.errors and (node.is_missing or kind == "ERROR"):
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
            self.search(node)  # (an `expansion` is read there too)
        elif kind == "$":
            parts.append("$")
            flags["static"] = False
        else:  # test operators, regexes, extglob patterns: taken as written
            if node.child_count == 0 and _hides_substitution(text):
                self.broken = True
            parts.append(text)
            unquoted.append(text)
            self.search(node)
