"""What known commands do with their words: run other commands, write files.

:func:`command_views` lists every command line a parsed command may run, as
word tuples: the command as written, then what each wrapper runs
(``sudo -u x rm`` -> ``rm``; ``find -exec rm {} ;`` -> ``rm``; ``sh -c 'rm
x'`` -> ``rm x``; ``git -C . push`` -> ``git push``).  A word that is not
``static`` (or that expands) stands for anything; a view whose command name is
such a word (:data:`UNSURE`) may be any command at all.  Deny and ask rules
are matched against every view.

:func:`runs_other_commands` says whether a command hands (part of) its words
to another program or to a shell, and :func:`write_targets` which files a
command is known to write (``tee FILE``, ``sort -o FILE``, ``sed -i``...).
Pure functions over :mod:`._syntax` values.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from ._arithmetic import hides_code_in_strings
from ._carriers import CARRIERS, Carried, carried, git_carried
from ._itself import runs_itself
from ._programs import (
    ALWAYS_UNSURE,
    APPENDS_ARGUMENTS,
    CHANGES_WHAT_RUNS,
    DECLARATIONS,
    FIND_RUNS,
    GIT_FLAGS,
    GIT_SAFE_CONFIG,
    GIT_VALUED,
    OPAQUE_WRAPPERS,
    PERMUTED,
    RUNS_VALUE,
    SCRIPT_FIRST_OPERAND,
    SCRIPT_OPERANDS,
    SHELL_LONG_ARGS,
    SHELL_LONG_FLAGS,
    SHELLS,
    WRAPPERS,
    Options,
)
from ._syntax import ShellAnalysis, SimpleCommand, Word, analyse
from ._writes import write_targets

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

__all__ = [
    "UNSURE",
    "View",
    "command_views",
    "line_views",
    "nested_scripts",
    "runs_other_commands",
    "too_complex",
    "write_targets",
]

View = tuple[Word, ...]
UNSURE: View = (Word("\0", "\0", static=False),)
"""A view that stands for any command: every deny and ask rule matches it."""

_ANY = Word("\0", "\0", static=False)
_MAX_DEPTH = 8


_SCRIPT = Word("\0script", "\0script", static=False)
"""Marks a pseudo-view ``(_SCRIPT, Word(script))``: a script the line hands to a shell."""
_BIND = Word("\0bind", "\0bind", static=False)
"""Marks a pseudo-view ``(_BIND, Word(name), *target)``: the line binds a command name to
another program (``hash -p /bin/rm ls``, ``BASH_CMDS[ls]=/bin/rm``, a git alias
``git config alias.p push`` as ``(_BIND, Word("git p"), git, push)``)."""


def command_views(analysis: ShellAnalysis) -> Iterator[View]:
    """Every command ``analysis`` may run, as word tuples (see the module docstring), in
    order (a command written twice may give its views once or twice: every consumer asks
    whether any view matches, or collects names it deduplicates itself).  ``analysis`` is
    the one :func:`analyse` gives for its source."""
    return iter(_read_views(analysis.source)[0])


def line_views(source: str) -> tuple[View, ...]:
    """:func:`command_views` of the analysis of ``source``, as the tuple kept for it."""
    return _read_views(source)[0]


def nested_scripts(analysis: ShellAnalysis) -> list[ShellAnalysis]:
    """The scripts the line hands to a shell, ``eval``, ``trap``... (at any depth), parsed."""
    return [analyse(script) for script in _read_views(analysis.source)[1]]


@functools.lru_cache(maxsize=2048)
def too_complex(command: str) -> str:
    """Why ``command`` (or a script it hands to a shell) is too complex to check: longer,
    deeper or with more commands than the analysis reads; empty when it was read."""
    analysis = analyse(command)
    if analysis.too_complex:
        return analysis.too_complex
    for script in _read_views(command)[1]:
        reason = analyse(script).too_complex
        if reason:
            return reason
    return ""


@functools.lru_cache(maxsize=2048)
def _read_views(source: str) -> tuple[tuple[View, ...], tuple[str, ...]]:
    """The views of a line and the scripts it hands on, worked out once per line."""
    analysis = analyse(source)
    plain = _plain_views(analysis)
    if plain is not None:
        return plain, ()
    views: list[View] = []
    scripts: list[str] = []
    bindings: dict[str, list[tuple[Word, ...]]] = {}
    seen: set[tuple[tuple[str, str, bool, bool, bool, bool], ...]] = set()
    for view in _all_views(analysis):
        if view[0] is _SCRIPT:
            scripts.append(view[1].text)
        elif view[0] is _BIND:
            bindings.setdefault(view[1].text, []).append(view[2:])
        elif view is UNSURE:
            views.append(view)
        else:
            # A command written many times (a here-doc of 20,000 `ls x` lines) is one
            # view: every consumer asks whether any view matches.
            key = tuple([(w.text, w.raw, w.static, w.expands, w.braces, w.ansi_c) for w in view])
            if key not in seen:
                seen.add(key)
                views.append(view)
    if bindings:
        views.extend(_rebound(views, bindings))
    return tuple(views), tuple(dict.fromkeys(scripts)) if scripts else ()


def _rebound(views: list[View], bindings: dict[str, list[tuple[Word, ...]]]) -> list[View]:
    """Each view whose command name the line binds to another program, as that program
    (``hash -p /bin/rm ls; ls -rf x`` runs ``rm -rf x``; after ``git config alias.p push``,
    ``git p --force`` is ``git push --force``)."""
    found: list[View] = []
    for view in views:
        if view is UNSURE:
            continue
        name = view[0].text.rpartition("/")[2]
        found.extend((*target, *view[1:]) for target in bindings.get(name, ()))
        if name == "git" and len(view) > 1:
            found.extend((*target, *view[2:]) for target in bindings.get("git " + view[1].text, ()))
    return found


def _plain_views(analysis: ShellAnalysis) -> tuple[View, ...] | None:
    """:func:`_all_views` of a line whose every command runs only itself (no assignment,
    no here-doc, nothing hidden in strings): each command's words; None for any other."""
    if analysis.unparsed:
        return None
    views: list[View] = []
    for command in analysis.commands:
        if command.assignments:
            return None
        words = command.words
        if words:
            if not runs_itself(words):
                return None
            views.append(words)
    for redirect in analysis.redirects:
        if redirect.operator in ("<<", "<<-"):
            return None
    if hides_code_in_strings(analysis):
        return None
    return tuple(views)


def _all_views(analysis: ShellAnalysis) -> Iterator[View]:
    if analysis.unparsed:
        yield UNSURE
    if hides_code_in_strings(analysis):
        yield UNSURE
    for command in analysis.commands:
        for assignment in command.assignments:
            yield from _assignment(assignment, 0)
        words = command.words
        if words:
            if runs_itself(words):
                yield words  # what _views gives such a command: itself, and nothing else
            else:
                yield from _views(words, command, 0)
    for redirect in analysis.redirects:
        if redirect.operator in ("<<", "<<-") and redirect.target is not None:
            # Read a here-doc's lines as commands too: if the grammar and bash ever
            # disagree on where a body ends, no line of it hides a command.
            for line in redirect.target.text.splitlines():
                inner = analyse(line)
                for command in () if inner.unparsed else inner.commands:
                    yield from _views(command.words, command, _MAX_DEPTH - 2)


def _assignment(word: Word, depth: int) -> Iterator[View]:
    """``NAME=value`` before a command, after ``env``/``export``: a value some program runs."""
    name, eq, value = word.text.partition("=")
    if not eq:
        return
    name = name.rstrip("+")
    if name.startswith(("BASH_CMDS", "BASH_ALIASES")):
        # `BASH_CMDS[ls]=/bin/rm`: the hash table of command names; BASH_ALIASES the aliases
        inner = name.partition("[")[2].rstrip("]")
        if not word.static or not inner or not value or "(" in value:
            yield UNSURE
            return
        if name.startswith("BASH_CMDS"):
            program = value.rpartition("/")[2] or value
            yield (_BIND, Word(inner), Word(program))
            yield (Word(program),)
        else:
            yield from _script(Word(value), depth)
            yield (_BIND, Word(inner), *(Word(part) for part in value.split()))
        return
    if name in RUNS_VALUE:
        yield from _script(Word(value, static=word.static), depth)
    elif name in CHANGES_WHAT_RUNS or name.startswith(
        ("BASH_FUNC_", "GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_")
    ):
        yield UNSURE


def runs_other_commands(command: SimpleCommand) -> bool:
    """Whether ``command`` hands words to another program or a shell to run.

    True for wrappers (``sudo``, ``env``, ``timeout``, ``nice``, ``xargs``...),
    shells and ``eval``/``source``/``trap``/``alias``, ``find`` with an
    ``-exec``-like action, and a command name the shell computes.
    """
    views = list(_views(command.words, command, 0))
    return len(views) > 1 or any(view is UNSURE for view in views)


def _views(words: Sequence[Word], command: SimpleCommand, depth: int) -> Iterator[View]:
    if not words:
        return
    if depth > _MAX_DEPTH:
        yield UNSURE
        return
    view = tuple(words)
    yield view
    name = words[0]
    if not name.static or name.expands or name.ansi_c or not name.text:
        yield UNSURE
        return
    base = name.text.rpartition("/")[2] or name.text  # os.path.basename
    if base != name.text:
        view = (Word(base, base), *words[1:])
        yield view
    if base in DECLARATIONS:
        for word in view[1:]:
            if "=" in word.text and not word.text.startswith(("-", "=")):
                yield from _assignment(word, depth)
    if base in ALWAYS_UNSURE:
        yield UNSURE
    elif base == "!":  # `! ! rm x`: the grammar reads the second `!` as a command name
        yield from _views(view[1:], command, depth + 1)
    elif base in SHELLS:
        yield from _shell(view, command, depth)
    elif base in SCRIPT_FIRST_OPERAND:
        yield from _script_operands(base, view, depth)
    elif base == "find":
        yield from _find(view, command, depth)
    elif base == "git":
        stripped = [view]
        for found in _git(view, command, depth):
            yield found
            if found is not UNSURE and found[0] is view[0]:
                stripped.append(found)
        for target in stripped:
            yield from _carried(git_carried(target), command, depth)
    elif base in OPAQUE_WRAPPERS:
        for start in range(1, len(view)):
            yield from _views(view[start:], command, depth + 1)
    elif base in WRAPPERS:
        yield from _wrapper(base, view, command, depth)
    elif base == "hash":
        yield from _hash(view)
    elif base in CARRIERS:
        yield from _carried(carried(base, view), command, depth)


def _carried(found: Iterator[Carried], command: SimpleCommand, depth: int) -> Iterator[View]:
    """Views of what a command's options carry (:mod:`._carriers`)."""
    for kind, words in found:
        if kind == "script":
            yield from _script(words[0], depth)
        elif kind == "program":
            yield from _views((words[0], _ANY), command, depth + 1)
        elif kind == "words":
            yield from _views(words, command, depth + 1)
        elif kind == "bind":
            yield (_BIND, *words)
        else:
            yield UNSURE


def _hash(view: View) -> Iterator[View]:
    """``hash -p PATH NAME...``: NAME runs PATH from now on (bash's command hash table)."""
    args = list(view[1:])
    for index, word in enumerate(args):
        if not word.static:
            yield UNSURE
            return
        if word.text.startswith("-") and "p" in word.text[1:]:
            rest = word.text[word.text.index("p") + 1 :]
            path = Word(rest) if rest else (args[index + 1] if index + 1 < len(args) else _ANY)
            names = args[index + (1 if rest else 2) :]
            if not path.static:
                yield UNSURE
                return
            program = path.text.rpartition("/")[2] or path.text
            yield (Word(program), _ANY)
            for name in names:
                yield (_BIND, Word(name.text), Word(program))
            return


def _script(word: Word | str, depth: int) -> Iterator[View]:
    """The commands of a shell script given as one word (UNSURE when it is computed)."""
    if isinstance(word, Word):
        if not word.static:
            yield UNSURE
            return
        word = word.text
    if depth >= _MAX_DEPTH:
        yield UNSURE
        return
    inner = analyse(word)
    yield (_SCRIPT, Word(word, word))
    if inner.unparsed or hides_code_in_strings(inner):
        yield UNSURE
    for command in inner.commands:
        if command.words:
            yield from _views(command.words, command, depth + 1)


def _joined(words: Sequence[Word]) -> Word:
    return Word(
        " ".join(w.text for w in words), static=all(w.static and not w.expands for w in words)
    )


def _wrapper(base: str, view: View, command: SimpleCommand, depth: int) -> Iterator[View]:
    options = WRAPPERS[base]
    if base == "command" and any(w.text in ("-v", "-V") for w in view[1:2]):
        return  # `command -v rm` only looks the name up
    start, scripts = _after_options(view, options)
    if base in PERMUTED:  # getopt permutes: `su root -c 'rm x'`, `flock /tmp/l -c 'rm x'`
        scripts.extend(_permuted_scripts(view, options))
    for script in scripts:
        yield from _script(script, depth)
    if start is None:  # an option it does not know: any later word may start the command
        for index in range(1, len(view)):
            yield from _views(view[index:], command, depth + 1)
        return
    rest = view[start:]
    if base in APPENDS_ARGUMENTS:
        rest = (*rest, _ANY) if rest else (Word("echo", "echo"), _ANY)
    if base in SCRIPT_OPERANDS and rest and not (base == "watch" and "-x" in _flags(view)):
        yield from _script(_joined([w for w in rest if w is not _ANY]), depth)
    if base in ("sudo", "doas") and ({"-s", "-i", "--shell", "--login"} & _flags(view)):
        yield from _script(_joined(rest), depth)
    yield from _views(rest, command, depth + 1)


def _permuted_scripts(view: View, options: Options) -> list[Word]:
    found: list[Word] = []
    for index, word in enumerate(view[1:], start=1):
        text = word.text
        if text == "--":
            break
        name, eq, value = text[2:].partition("=")
        if text.startswith("--") and name in options.long_scripts:
            found.append(Word(value, static=word.static) if eq else _at(view, index + 1))
        elif text.startswith("-") and not text.startswith("--"):
            for k, letter in enumerate(text[1:], start=1):
                if letter in options.scripts:
                    rest = text[k + 1 :]
                    found.append(Word(rest, static=word.static) if rest else _at(view, index + 1))
                    break
                if letter in options.short_args:
                    break
    return found


def _flags(view: View) -> set[str]:
    return {w.text for w in view[1:] if w.text.startswith("-")}


def _after_options(view: View, options: Options) -> tuple[int | None, list[Word]]:
    """Where the wrapped command starts (None: unsure) and the script-valued options."""
    scripts: list[Word] = []
    i = 1
    while i < len(view):
        word = view[i]
        text = word.text
        if not word.static or word.expands:
            return None, scripts
        if text == "--":
            i += 1
            break
        if text == "-" and options.assignments:  # `env -`: -i
            i += 1
            continue
        if not text.startswith("-") or text == "-":
            break
        if options.numeric and text[1:].isdigit():
            i += 1
            continue
        if text.startswith("--"):
            name, eq, value = text[2:].partition("=")
            if name in options.long_args:
                if name in options.long_scripts:
                    scripts.append(Word(value) if eq else _at(view, i + 1))
                i += 1 if eq else 2
            elif name in options.long_flags and not eq:
                i += 1
            else:
                return None, scripts
            continue
        for k, letter in enumerate(text[1:], start=1):
            if letter in options.short_args:
                value = text[k + 1 :]
                if letter in options.scripts:
                    scripts.append(Word(value) if value else _at(view, i + 1))
                i += 1 if value else 2
                break
            if letter not in options.short_flags:
                return None, scripts
        else:
            i += 1
    if options.assignments:
        while i < len(view) and "=" in view[i].text and not view[i].text.startswith("="):
            i += 1
    i += options.operands
    return min(i, len(view)), scripts


def _at(view: View, index: int) -> Word:
    return view[index] if index < len(view) else _ANY


def _script_operands(base: str, view: View, depth: int) -> Iterator[View]:
    args = list(view[1:])
    if base == "eval":
        yield from _script(_joined(args), depth)
    elif base == "trap":
        while args and args[0].text in ("--", "-p", "-l", "-P"):
            if args[0].text != "--":
                return
            args = args[1:]
        if args:
            yield from _script(args[0], depth)
    else:  # alias name=value...
        for word in args:
            if not word.static:
                yield UNSURE
            elif "=" in word.text:
                yield from _script(word.text.partition("=")[2], depth)


def _shell(view: View, command: SimpleCommand, depth: int) -> Iterator[View]:
    """``bash [options] [-c script [arg0 args...] | file | (stdin)]``."""
    has_script = False
    i = 1
    while i < len(view):
        word = view[i]
        text = word.text
        if not word.static or word.expands:
            yield UNSURE
            return
        if text in ("--", "-"):
            i += 1
            break
        if text.startswith("--"):
            name, eq, value = text[2:].partition("=")
            if name in SHELL_LONG_ARGS:
                i += 1 if eq else 2
                continue
            if name in ("command", "init-command"):  # fish
                has_script = True
                if eq:
                    yield from _script(Word(value), depth)
                else:
                    yield from _script(_at(view, i + 1), depth)
                    i += 1
                i += 1
                continue
            if name not in SHELL_LONG_FLAGS:
                yield UNSURE
                return
            i += 1
            continue
        if len(text) > 1 and text[0] in "-+":
            letters = text[1:]
            i += 1
            for letter in letters:
                if letter == "c" or (letter == "C" and view[0].text == "fish"):
                    has_script = True
                elif letter in "oO":
                    i += 1  # `-o errexit`, `-O extglob`
            continue
        break
    if has_script:
        if i >= len(view):
            yield UNSURE  # the script comes from a word this module could not place
            return
        yield from _script(view[i], depth)
        # `sh -c '"$@"' _ rm x` runs its later operands: any of them may start a command.
        for start in range(i + 1, len(view)):
            yield from _views(view[start:], command, depth + 1)
        return
    if i < len(view):
        return  # `bash script.sh`: a file, run like any program
    yield from _stdin_script(command, depth)


def _stdin_script(command: SimpleCommand, depth: int) -> Iterator[View]:
    """A shell reading its script from stdin: a here-string/doc is read, anything else unsure."""
    bodies = [r.target for r in command.redirects if r.operator.startswith("<<")]
    if not bodies:
        yield UNSURE  # a pipe, a file, the terminal: the script is not on the line
        return
    for body in bodies:
        if body is not None:
            yield from _script(body, depth)


def _find(view: View, command: SimpleCommand, depth: int) -> Iterator[View]:
    words = list(view)
    for index, word in enumerate(words):
        if word.text in FIND_RUNS or not word.static:
            inner: list[Word] = []
            for later in words[index + 1 :]:
                if later.text in (";", "+"):
                    break
                inner.append(_ANY if "{}" in later.text else later)
            if not word.static:
                yield UNSURE
            elif inner:
                yield from _views(inner, command, depth + 1)


def _git(view: View, command: SimpleCommand, depth: int) -> Iterator[View]:
    """``git`` with its global options removed (``git -C . -c x=y push`` -> ``git push``)."""
    i = 1
    while i < len(view):
        word = view[i]
        text = word.text
        if not word.static:
            yield UNSURE
            return
        name, eq, value = text.partition("=")
        if name in GIT_VALUED and (eq or text == "--exec-path" or name != text):
            if name in ("-c", "--config-env") and eq:
                yield from _git_config(value, depth)
            i += 1
            if text == "--exec-path" and not eq:
                continue
        elif text in GIT_VALUED:
            if text in ("-c", "--config-env"):
                yield from _git_config(_at(view, i + 1).text, depth)
            i += 2
        elif text in GIT_FLAGS:
            i += 1
        elif text.startswith("-"):  # an option this module does not know: unsure from here
            for start in range(i + 1, len(view)):
                yield (view[0], *view[start:])
            return
        else:
            break
    if i < len(view) and view[i].expands:
        yield UNSURE  # `git p*sh`: the subcommand is whatever the glob expands to
    if i > 1:
        yield (view[0], *view[i:])


def _git_config(setting: str, depth: int) -> Iterator[View]:
    key, _, value = setting.partition("=")
    key = key.lower()
    if key.startswith("alias.") and value.startswith("!"):
        yield from _script(value[1:], depth)
    elif not key.startswith(GIT_SAFE_CONFIG):
        yield UNSURE
