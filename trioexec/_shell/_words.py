"""The values one reading of a shell command yields.

:class:`ShellAnalysis` holds every :class:`SimpleCommand` a line may run, each
with its :class:`Word` s (after quote removal) and :class:`Redirect` s.  Built
by the tree walk in :mod:`._walk`, read through
:func:`trioexec._shell._syntax.analyse`.  Pure values, no trio, no parser.
"""

from __future__ import annotations

import re

import attrs

__all__ = [
    "Redirect",
    "ShellAnalysis",
    "SimpleCommand",
    "Word",
]


@attrs.define(unsafe_hash=True)  # never mutated (docs/performance.md#unfrozen-values)
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


@attrs.define(unsafe_hash=True)  # never mutated (docs/performance.md#unfrozen-values)
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


@attrs.define(unsafe_hash=True)  # never mutated (docs/performance.md#unfrozen-values)
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


@attrs.define(unsafe_hash=True)  # never mutated (docs/performance.md#unfrozen-values)
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
    too_complex: str = ""
    """Why the line was not read (longer, deeper or with more commands than the analysis
    reads; ``unparsed`` is then set too): empty for a line that was read."""

    @property
    def plain(self) -> bool:
        """Only simple commands joined by ``;``, ``&&``, ``||``, ``|`` and newlines."""
        return not self.unparsed and not self.unmodelled
