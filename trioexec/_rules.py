"""Permission rules as Claude Code writes them: parsing and content matching.

A rule is ``Tool`` or ``Tool(content)``.  What ``content`` means depends on
the tool: a shell command pattern for ``Bash`` (:func:`match_bash_rule`), a
gitignore-style path pattern for the file tools (:func:`match_path_rule`).
Everything here is a pure function: no I/O, no trio, no file system access,
so the matching rules are tested without an event loop.
"""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TypeAlias

import attrs

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

__all__ = [
    "PermissionRule",
    "RuleBehavior",
    "match_bash_rule",
    "match_path_rule",
    "split_bash_command",
]

_TOOL_NAME = re.compile(r"[A-Za-z0-9_.\-*]+")


@attrs.frozen
class PermissionRule:
    """One parsed rule: a tool name and optional content (None: the whole tool).

    ``Tool``, ``Tool()`` and ``Tool(*)`` all mean the whole tool.  In the
    content, ``\\(``, ``\\)`` and ``\\\\`` stand for ``(``, ``)`` and ``\\``.
    """

    tool_name: str
    content: str | None = None

    @classmethod
    def parse(cls, text: str) -> PermissionRule:
        """Parse ``Tool`` / ``Tool(content)``.

        Raises:
            ValueError: empty rule, bad tool name, unbalanced parentheses, or
                text after the closing parenthesis.
        """
        text = text.strip()
        open_at = _first_unescaped(text, "(")
        if open_at < 0:
            name, content = text, None
            if _last_unescaped(text, ")") >= 0:
                raise ValueError(f"rule {text!r} has ')' without '('")
        else:
            close_at = _last_unescaped(text, ")")
            if close_at < open_at:
                raise ValueError(f"rule {text!r} has '(' without a closing ')'")
            if close_at != len(text) - 1:
                raise ValueError(f"rule {text!r} has text after the closing ')'")
            name = text[:open_at]
            raw = text[open_at + 1 : close_at]
            content = None if raw in ("", "*") else _unescape_content(raw)
        if not _TOOL_NAME.fullmatch(name):
            raise ValueError(f"rule {text!r} does not start with a tool name")
        return cls(name, content)

    def __str__(self) -> str:
        if self.content is None:
            return self.tool_name
        escaped = self.content.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
        return f"{self.tool_name}({escaped})"


def _is_escaped(text: str, index: int) -> bool:
    backslashes = 0
    while index > 0 and text[index - 1] == "\\":
        backslashes += 1
        index -= 1
    return backslashes % 2 == 1


def _first_unescaped(text: str, char: str) -> int:
    return next((i for i, c in enumerate(text) if c == char and not _is_escaped(text, i)), -1)


def _last_unescaped(text: str, char: str) -> int:
    for i in range(len(text) - 1, -1, -1):
        if text[i] == char and not _is_escaped(text, i):
            return i
    return -1


def _unescape_content(raw: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(raw):
        if raw[i] == "\\" and i + 1 < len(raw) and raw[i + 1] in "()\\":
            out.append(raw[i + 1])
            i += 2
        else:
            out.append(raw[i])
            i += 1
    return "".join(out)


# --- Bash -----------------------------------------------------------------------------


@attrs.frozen
class _Subcommand:
    text: str
    opaque: bool
    """True when the text runs code a pattern cannot see: ``$(...)``, backticks,
    ``<(...)`` / ``>(...)``, a here-doc, or an unterminated quote."""
    heredocs: tuple[str, ...] = ()
    """The bodies of the here-docs the command reads (their ``$(...)`` still run)."""


def split_bash_command(command: str) -> tuple[str, ...]:
    """Split a shell command line into its simple commands.

    Splits on ``&&``, ``||``, ``;``, ``|``, ``|&``, a background ``&`` and
    newlines, but never inside single, double or ``$'...'`` quotes or after a
    backslash; ``2>&1`` and ``&>`` are redirections, not separators.  An
    unquoted ``#`` starting a word starts a comment (dropped, up to the end of
    the line); here-doc bodies (``<<EOF`` ... ``EOF``) are not commands and are
    left out.  Empty pieces are dropped and each piece is stripped.
    """
    return tuple(sub.text for sub in _split(command))


_WORD_BREAK = frozenset(" \t\n;&|()<>")
_HEREDOC_WORD = re.compile(r"""(?:[^\s;&|()<>'"\\]|\\.|'[^']*'|"(?:[^"\\]|\\.)*")+""", re.DOTALL)


@functools.lru_cache(maxsize=1024)
def _split(command: str) -> tuple[_Subcommand, ...]:
    pieces: list[_Subcommand] = []
    current: list[str] = []
    bodies: list[str] = []
    pending: list[tuple[str, bool]] = []  # here-doc delimiters waiting for their line
    opaque = False
    quote: str | None = None  # "'", '"' or "$'" (ANSI-C)
    i, n = 0, len(command)

    def cut() -> None:
        nonlocal opaque
        text = "".join(current).strip()
        if text:
            pieces.append(_Subcommand(text, opaque, tuple(bodies)))
        current.clear()
        bodies.clear()
        opaque = False

    def read_bodies(start: int) -> int:
        """Skip the pending here-doc bodies starting at ``start``; where the next line is."""
        pos = start
        for delimiter, strip_tabs in pending:
            body: list[str] = []
            while pos < n:
                end = command.find("\n", pos)
                end = n if end < 0 else end
                line = command[pos:end]
                pos = end + 1
                if (line.lstrip("\t") if strip_tabs else line) == delimiter:
                    break
                body.append(line)
            bodies.append("\n".join(body))
        pending.clear()
        return min(pos, n)

    while i < n:
        c = command[i]
        nxt = command[i + 1] if i + 1 < n else ""
        if quote == "'":
            current.append(c)
            quote = None if c == "'" else quote
            i += 1
            continue
        if quote == "$'":
            current.append(command[i : i + 2] if c == "\\" else c)
            if c == "'":
                quote = None
            i += 2 if c == "\\" else 1
            continue
        if c == "\\":
            if nxt == "\n" and quote is None:  # line continuation
                i += 2
                continue
            current.append(command[i : i + 2])
            i += 2
            continue
        if quote == '"':
            current.append(c)
            if c == '"':
                quote = None
            elif (c == "$" and nxt == "(") or c == "`":
                opaque = True
            i += 1
            continue
        # Unquoted.
        prev = command[i - 1] if i > 0 else ""
        if c == "$" and nxt == "'":
            quote = "$'"
            current.append("$'")
            i += 2
            continue
        if c in "'\"":
            quote = c
        elif c == "#" and (i == 0 or prev in _WORD_BREAK):
            end = command.find("\n", i)
            i = n if end < 0 else end
            continue
        elif c == "<" and nxt == "<" and command[i + 2 : i + 3] != "<":
            strip_tabs = command[i + 2 : i + 3] == "-"
            start = i + (3 if strip_tabs else 2)
            while start < n and command[start] in " \t":
                start += 1
            word = _HEREDOC_WORD.match(command, start)
            raw = word.group() if word else ""
            pending.append((_unquote_word(raw), strip_tabs))
            opaque = True
            current.append(command[i : start + len(raw)])
            i = start + len(raw)
            continue
        elif (c == "$" and nxt == "(") or c == "`" or (c in "<>" and nxt == "("):
            opaque = True
        elif c == "\n" or c == ";":
            i += 1
            if c == "\n" and pending:
                i = read_bodies(i)
            cut()
            continue
        elif c == "|":
            cut()
            i += 2 if nxt in "|&" else 1
            continue
        elif c == "&":
            if nxt == "&":
                cut()
                i += 2
                continue
            if prev not in "<>" and nxt != ">":  # not 2>&1, >&2, &>file
                cut()
                i += 1
                continue
        current.append(c)
        i += 1
    if quote is not None:
        opaque = True
    if pending:  # a here-doc whose line never ended: it reads nothing
        opaque = True
    cut()
    return tuple(pieces)


def _unquote_word(word: str) -> str:
    """One shell word with quotes and backslashes removed (no expansion)."""
    out: list[str] = []
    i, n = 0, len(word)
    while i < n:
        c = word[i]
        if c == "\\":
            out.append(word[i + 1 : i + 2])
            i += 2
        elif c == "'":
            end = word.find("'", i + 1)
            end = n if end < 0 else end
            out.append(word[i + 1 : end])
            i = end + 1
        elif c == '"':
            i += 1
            while i < n and word[i] != '"':
                if word[i] == "\\" and i + 1 < n and word[i + 1] in '"\\$`\n':
                    i += 1
                out.append(word[i])
                i += 1
            i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


RuleBehavior: TypeAlias = Literal["allow", "ask", "deny"]


def match_bash_rule(content: str, command: str, *, behavior: RuleBehavior = "allow") -> bool:
    """Whether the ``Bash(content)`` rule applies to ``command``.

    ``content`` ending in ``:*`` is a prefix (``npm run test:*`` covers
    ``npm run test`` and ``npm run test -- x`` but not ``npm run testing``);
    content with an unescaped ``*`` is a wildcard pattern (``\\*`` is a literal
    star; a trailing `` *`` also covers the bare command, so ``git *`` covers
    ``git``); anything else is exact.  An exact rule covers the identical full
    command line.

    For an allow rule (the default) the command is otherwise split
    (:func:`split_bash_command`) and every subcommand must be covered on its
    own, so ``npm run test && rm -rf /`` is not covered by ``npm run test:*``;
    a subcommand containing a command substitution (``$(...)``, backticks,
    ``<(...)``) or a here-doc is never covered by a prefix or wildcard rule.

    For a deny or ask rule one part is enough: any subcommand, any command
    inside a substitution or an unquoted here-doc, each also with quotes and
    backslashes removed and leading environment assignments, redirections,
    grouping (``(``, ``{``), shell keywords (``then``, ``do``...) and wrapper
    commands with their options (``sudo -u x``, ``env -i A=1``, ``nice -n 5``,
    ``timeout -s KILL 5``, ``command -p``, ``xargs``, ``sh -c``, ``eval``...)
    removed.  So ``Bash(rm:*)`` in ``deny`` catches ``ls && sudo rm -rf /`` and
    ``'rm' x``.  It fails closed: a wrapper option it does not know makes every
    later word a possible command, and a command name the shell computes
    (``$CMD``, a glob) matches every deny and ask rule.
    """
    content = content.strip()
    if command.strip() == content:
        return True
    matcher = _bash_matcher(content)
    if behavior != "allow":
        return any(part == _UNSURE or matcher(part) for part in _deny_parts(command))
    subcommands = _split(command)
    if not subcommands:
        return False
    return all(not sub.opaque and matcher(sub.text) for sub in subcommands)


_PREFIXES = re.compile(
    r"""^(?:
        [A-Za-z_][A-Za-z0-9_]*=(?:'[^']*'|"[^"]*"|\S)*   # VAR=value
        | [({!]
        | (?:then|do|else|elif|if|while|until|time|nohup|env|command|exec|sudo|xargs)(?=\s)
        | nice(?:\s+-n)?\s+-?\d+
        | timeout(?:\s+-\S+)*\s+\S+
    )\s*""",
    re.VERBOSE,
)


_UNSURE = "\0"
"""A deny part that every deny or ask rule matches: the command cannot be read safely."""


@functools.lru_cache(maxsize=1024)
def _deny_parts(command: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(_parts_to_deny(command)))


def _parts_to_deny(command: str, depth: int = 0) -> Iterator[str]:
    """Every simple command a deny rule should see, with wrappers peeled off.

    Each subcommand is seen as written, then (quotes and backslashes removed)
    with leading assignments, redirections, keywords and wrapper commands with
    their options removed.  What cannot be read with confidence (an unknown
    wrapper option, a command name made by an expansion) yields ``_UNSURE``.
    """
    if depth > 8:
        yield _UNSURE
        return
    subs = _split(command)
    if any(sub.heredocs or sub.opaque for sub in subs) and "<<" in command:
        # A here-doc changes how the following lines are read; also read every
        # line on its own, so a misjudged body cannot hide a command.
        for line in command.split("\n"):
            if line != command:
                yield from _parts_to_deny(line, depth + 1)
    for sub in subs:
        text = sub.text
        yield text
        while match := _PREFIXES.match(text):
            if not match.group():
                break
            text = text[match.end() :]
            yield text
        trimmed = text.rstrip(")} \t")
        if trimmed != text:
            yield trimmed
        yield from _word_parts(sub.text, depth)
        if sub.opaque:
            for body in _substitution_bodies(sub.text):
                yield from _parts_to_deny(body, depth + 1)
        for heredoc in sub.heredocs:
            for body in _substitution_bodies(heredoc, in_double=True):
                yield from _parts_to_deny(body, depth + 1)


_KEYWORDS = frozenset(
    [
        "!",
        "{",
        "}",
        "(",
        ")",
        "then",
        "do",
        "else",
        "elif",
        "if",
        "while",
        "until",
        "coproc",
    ]
)
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\+?=")
_REDIRECTION = re.compile(r"[0-9]*(?:[<>]{1,2}|&>>?|>&|<&|<>|>\|)")
_SHELLS = frozenset(["sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish"])


@attrs.frozen
class _Options:
    """How a wrapper command reads its options before the command it runs."""

    short_flags: str = ""
    short_args: str = ""
    long_flags: frozenset[str] = frozenset()
    long_args: frozenset[str] = frozenset()
    operands: int = 0
    """Words after the options before the command (``timeout``'s duration)."""
    assignments: bool = False
    """``NAME=VALUE`` words may follow the options (``env``, ``sudo``)."""
    numeric: bool = False
    """``-N`` is an option (``nice -5``)."""


def _opts(
    short_flags: str = "",
    short_args: str = "",
    long_flags: str = "",
    long_args: str = "",
    **kwargs: bool | int,
) -> _Options:
    return _Options(
        short_flags,
        short_args,
        frozenset(long_flags.split()),
        frozenset(long_args.split()),
        **kwargs,  # type: ignore[arg-type]
    )


_WRAPPERS: dict[str, _Options] = {
    "nice": _opts("", "n", "", "adjustment", numeric=True),
    "env": _opts(
        "iv0",
        "uCP",
        "ignore-environment null debug",
        "unset chdir",
        assignments=True,
    ),
    "timeout": _opts(
        "v", "sk", "preserve-status foreground verbose", "signal kill-after", operands=1
    ),
    "command": _opts("pvV"),
    "exec": _opts("cl", "a"),
    "sudo": _opts(
        "AbEHiKklnPSsVv",
        "ugCDhprtTUR",
        "askpass background preserve-env set-home login remove-timestamp reset-timestamp "
        "list non-interactive preserve-groups stdin shell validate",
        "user group close-from chdir host prompt role type command-timeout other-user chroot",
        assignments=True,
    ),
    "doas": _opts("ns", "uC"),
    "stdbuf": _opts("", "ioe", "", "input output error"),
    "nohup": _opts(),
    "setsid": _opts("cfw", "", "ctty fork wait"),
    "time": _opts("pavq", "fo", "portability append verbose quiet", "format output"),
    "ionice": _opts("tu", "cnp", "ignore", "class classdata pid"),
    "chrt": _opts("abdefiormpRv", "TPD"),
    "taskset": _opts("acp", "", "all-tasks cpu-list pid"),
    "xargs": _opts(
        "0prtxeil",
        "adEILnPs",
        "null interactive no-run-if-empty verbose exit open-tty",
        "arg-file delimiter max-lines max-args max-procs max-chars replace eof",
    ),
    "builtin": _opts(),
    "caffeinate": _opts("dimsu", "tw"),
    "unbuffer": _opts(),
}


def _word_parts(text: str, depth: int) -> Iterator[str]:
    """The subcommand's words, quotes removed, from its command word on, wrappers peeled."""
    words = _shell_words(text)
    if words is None:
        return
    queue: list[list[str]] = [words]
    seen = 0
    while queue and seen < 64:
        seen += 1
        words = queue.pop()
        while words and (
            words[0] in _KEYWORDS or _ASSIGNMENT.match(words[0]) or _REDIRECTION.fullmatch(words[0])
        ):
            skip = 2 if _REDIRECTION.fullmatch(words[0]) else 1
            words = words[skip:]
        if not words:
            continue
        if _REDIRECTION.match(words[0]):  # `>out rm x`: the redirection and its target
            words = words[1:]
            queue.append(words)
            continue
        name = words[0]
        yield " ".join(words)
        base = name.rsplit("/", 1)[-1]
        if base != name and base:
            yield " ".join([base, *words[1:]])
        if any(c in name for c in "$`*?[") or not base:
            yield _UNSURE  # the shell makes the command name
            continue
        if base == "eval" or (base in _SHELLS and "-c" in words[1:2]):
            rest = words[1:] if base == "eval" else words[2:3]
            yield from _parts_to_deny(" ".join(rest), depth + 1)
            continue
        options = _WRAPPERS.get(base)
        if options is None:
            continue
        start = _after_options(words, options)
        if start is None:  # an option it does not know: any later word may be the command
            queue.extend(words[k:] for k in range(len(words) - 1, 0, -1))
        else:
            queue.append(words[start:])


def _after_options(words: list[str], options: _Options) -> int | None:
    """Where the wrapped command starts in ``words`` (None: unsure)."""
    i = 1
    while i < len(words):
        word = words[i]
        if word == "--":
            i += 1
            break
        if word == "-" and options.assignments:  # `env -`: -i
            i += 1
            continue
        if not word.startswith("-") or word == "-":
            break
        if options.numeric and re.fullmatch(r"-[0-9]+", word):
            i += 1
            continue
        if word.startswith("--"):
            name, eq, _ = word[2:].partition("=")
            if name in options.long_args:
                i += 1 if eq else 2
            elif name in options.long_flags and not eq:
                i += 1
            else:
                return None
            continue
        for k, letter in enumerate(word[1:], start=1):
            if letter in options.short_args:
                i += 1 if k < len(word) - 1 else 2
                break
            if letter not in options.short_flags:
                return None
        else:
            i += 1
    if options.assignments:
        while i < len(words) and _ASSIGNMENT.match(words[i]):
            i += 1
    i += options.operands
    return i if i < len(words) else len(words)


def _shell_words(text: str) -> list[str] | None:
    """``text`` cut into words with quotes and backslashes removed (None: unterminated quote).

    ``(`` and ``)`` are words of their own; ``$'...'`` escapes are kept as written.
    """
    words: list[str] = []
    word: list[str] = []
    started = False
    i, n = 0, len(text)

    def end_word() -> None:
        nonlocal started
        if started:
            words.append("".join(word))
        word.clear()
        started = False

    while i < n:
        c = text[i]
        if c in " \t\n":
            end_word()
            i += 1
        elif c in "()":
            end_word()
            words.append(c)
            i += 1
        elif c == "\\":
            word.append(text[i + 1 : i + 2])
            started = True
            i += 2
        elif c == "'" or (c == "$" and text[i + 1 : i + 2] == "'"):
            ansi = c == "$"
            j = i + (2 if ansi else 1)
            while j < n and text[j] != "'":
                j += 2 if ansi and text[j] == "\\" else 1
            if j >= n:
                return None
            word.append(text[i + (2 if ansi else 1) : j])
            started = True
            i = j + 1
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                if text[j] == "\\" and j + 1 < n and text[j + 1] in '"\\$`\n':
                    j += 1
                word.append(text[j])
                j += 1
            if j >= n:
                return None
            started = True
            i = j + 1
        else:
            word.append(c)
            started = True
            i += 1
    end_word()
    return words


def _substitution_bodies(text: str, *, in_double: bool = False) -> list[str]:
    """The insides of ``$(...)``, ``<(...)``, ``>(...)`` and backticks (not in single quotes).

    ``in_double``: read ``text`` as inside double quotes (a here-doc body).
    """
    bodies: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c == "'" and not in_double:
            end = text.find("'", i + 1)
            i = n if end < 0 else end + 1
            continue
        if c == '"':
            in_double = not in_double
        elif c == "`":
            end = i + 1
            while end < n and text[end] != "`":
                end += 2 if text[end] == "\\" else 1
            bodies.append(text[i + 1 : end])
            i = end + 1
            continue
        elif c in "$<>" and text[i + 1 : i + 2] == "(" and (c == "$" or not in_double):
            end = _closing_paren(text, i + 1)
            bodies.append(text[i + 2 : end])
            i = end + 1
            continue
        i += 1
    return bodies


def _closing_paren(text: str, open_at: int) -> int:
    depth = 0
    quote: str | None = None
    i = open_at
    while i < len(text):
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if quote is not None:
            if c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return len(text)


@functools.lru_cache(maxsize=512)
def _bash_matcher(content: str) -> Callable[[str], bool]:
    if content.endswith(":*"):
        prefix = content[:-2].rstrip()

        def covers_prefix(text: str) -> bool:
            return text == prefix or (text.startswith(prefix) and text[len(prefix)].isspace())

        return covers_prefix
    if "*" in content:  # a wildcard, or a literal `\*`
        regex = _compile_wildcard(content)
        return lambda text: regex.fullmatch(text) is not None
    return lambda text: text == content


def _compile_wildcard(content: str) -> re.Pattern[str]:
    parts: list[str] = []
    stars = 0
    i = 0
    while i < len(content):
        c = content[i]
        if c == "\\" and i + 1 < len(content) and content[i + 1] in "*\\":
            parts.append(re.escape(content[i + 1]))
            i += 2
            continue
        if c == "*":
            parts.append(".*")
            stars += 1
        else:
            parts.append(re.escape(c))
        i += 1
    # `git *` also covers a bare `git` when that star is the only wildcard.
    if stars == 1 and content.endswith(" *") and not _is_escaped(content, len(content) - 1):
        parts[-2:] = ["(?: .*)?"]
    return re.compile("".join(parts), re.DOTALL)


# --- Paths ------------------------------------------------------------------------------


def match_path_rule(content: str, path: str | os.PathLike[str], *, cwd: Path) -> bool:
    """Whether the gitignore-style pattern ``content`` covers ``path``.

    Where the pattern is rooted: ``//abs/x`` at the file system root,
    ``~/x`` at the home directory, ``/x`` and ``./x`` at ``cwd`` (the settings
    root); a bare ``x/y`` (a slash inside) is anchored at ``cwd`` too, while a
    bare name without a slash (``*.env``) matches at any depth below ``cwd``.
    ``*`` and ``?`` never cross ``/``; ``**`` spans directories; ``[...]`` is a
    character class; a trailing ``/`` matches directories only (so what is
    inside them).  As in gitignore, a path is covered when it or any of its
    parent directories matches.  A relative ``path`` is resolved against
    ``cwd``; paths are compared lexically (symlinks are not resolved).
    """
    pattern = content.strip()
    if not pattern:
        return False
    if pattern.startswith("//"):
        root, pattern = Path("/"), pattern[2:]
    elif pattern == "~" or pattern.startswith("~/"):
        root, pattern = Path.home(), pattern[2:]
    elif pattern.startswith("./"):
        root, pattern = cwd, pattern[2:]
    elif pattern.startswith("/"):
        root, pattern = cwd, pattern[1:]
    else:
        root = cwd
        if "/" not in pattern.rstrip("/"):
            pattern = "**/" + pattern
    if not pattern:
        return False
    dir_only = pattern.endswith("/")
    regex = _compile_glob(pattern.rstrip("/"))

    raw = os.fspath(path)
    target = os.path.normpath(os.path.join(cwd, os.path.expanduser(raw)))
    rel = os.path.relpath(target, os.path.normpath(root))
    if rel in (os.curdir, os.pardir) or rel.startswith(os.pardir + os.sep):
        return False
    parts = rel.split(os.sep)
    # The path itself (when it can be a directory) and each parent directory.
    last = len(parts) if (not dir_only or raw.endswith("/")) else len(parts) - 1
    return any(regex.fullmatch("/".join(parts[:k])) for k in range(1, last + 1))


@functools.lru_cache(maxsize=512)
def _compile_glob(pattern: str) -> re.Pattern[str]:
    segments: list[str] = []
    for segment in pattern.split("/"):
        if not (segment == "**" and segments and segments[-1] == "**"):
            segments.append(segment)
    out: list[str] = []
    for index, segment in enumerate(segments):
        first, last = index == 0, index == len(segments) - 1
        if segment == "**":
            if last:
                out.append(".*" if first else "/.*")
            else:
                out.append("(?:.*/)?" if first else "/(?:.*/)?")
            continue
        if not first and segments[index - 1] != "**":
            out.append("/")
        out.append(_glob_segment(segment))
    return re.compile("".join(out), re.DOTALL)


def _glob_segment(segment: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(segment):
        c = segment[i]
        if c == "\\" and i + 1 < len(segment):
            out.append(re.escape(segment[i + 1]))
            i += 2
            continue
        if c == "*":
            while i + 1 < len(segment) and segment[i + 1] == "*":
                i += 1
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            end = segment.find("]", i + 2)
            if end < 0:
                out.append(re.escape(c))
            else:
                body = segment[i + 1 : end]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = end
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)
