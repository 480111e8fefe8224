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
Pure functions over :mod:`._shell_syntax` values.
"""

from __future__ import annotations

import itertools
import os
from typing import TYPE_CHECKING

import attrs

from ._shell_syntax import ShellAnalysis, SimpleCommand, Word, analyse

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

__all__ = ["UNSURE", "View", "command_views", "runs_other_commands", "write_targets"]

View = tuple[Word, ...]
UNSURE: View = (Word("\0", "\0", static=False),)
"""A view that stands for any command: every deny and ask rule matches it."""

_ANY = Word("\0", "\0", static=False)
_MAX_DEPTH = 8


@attrs.frozen
class _Options:
    """How a wrapper reads its options before the command it runs."""

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
    scripts: str = ""
    """Short options whose value is a shell script (``flock -c``, ``script -c``)."""
    long_scripts: frozenset[str] = frozenset()


def _opts(
    short_flags: str = "",
    short_args: str = "",
    long_flags: str = "",
    long_args: str = "",
    *,
    operands: int = 0,
    assignments: bool = False,
    numeric: bool = False,
    scripts: str = "",
    long_scripts: str = "",
) -> _Options:
    return _Options(
        short_flags,
        short_args + scripts,
        frozenset(long_flags.split()),
        frozenset((long_args + " " + long_scripts).split()),
        operands,
        assignments,
        numeric,
        scripts,
        frozenset(long_scripts.split()),
    )


_WRAPPERS: dict[str, _Options] = {
    "nice": _opts("", "n", "", "adjustment", numeric=True),
    "env": _opts(
        "iv0", "uCP", "ignore-environment null debug", "unset chdir", assignments=True,
        scripts="S", long_scripts="split-string",
    ),
    "timeout": _opts("v", "sk", "preserve-status foreground verbose", "signal kill-after",
                     operands=1),
    "command": _opts("p"),
    "builtin": _opts(),
    "exec": _opts("cl", "a"),
    "sudo": _opts(
        "AbEHiKklnPSsVv", "ugCDhprtTUR",
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
    "chrt": _opts("abdefiormRv", "TPD", "all-tasks batch deadline fifo idle other rr "
                  "reset-on-fork verbose", "sched-runtime sched-period sched-deadline",
                  operands=1),
    "taskset": _opts("ac", "", "all-tasks cpu-list", operands=1),
    "flock": _opts("sxunoFe", "wEc", "shared exclusive unlock nonblock close no-fork verbose",
                   "timeout wait conflict-exit-code", operands=1, scripts="c",
                   long_scripts="command"),
    "caffeinate": _opts("dimsu", "tw"),
    "unbuffer": _opts("p"),
    "busybox": _opts(),
    "chroot": _opts("", "", "skip-chdir", "userspec groups", operands=1),
    "runuser": _opts("lmpf", "ugGs", "login preserve-environment", "user group supp-group "
                     "shell", scripts="c", long_scripts="command session-command"),
    "su": _opts("lmpf", "gGsw", "login preserve-environment", "group supp-group shell "
                "whitelist-environment", scripts="c", long_scripts="command session-command"),
    "xargs": _opts(
        "0prtxeil", "adEILnPs",
        "null interactive no-run-if-empty verbose exit open-tty",
        "arg-file delimiter max-lines max-args max-procs max-chars replace eof process-slot-var",
    ),
    "watch": _opts("bcdeghprtx", "nq", "beep color differences errexit chgexit exec no-title "
                   "precise no-linewrap", "interval equexit"),
    "script": _opts("aefqkETBIOm", "tT", "append echo flush force quiet return",
                    "timing log-io log-in log-out log-timing logging-format output-limit",
                    scripts="c", long_scripts="command"),
    "parallel": _opts("0qkv", "jSI", "null quote keep-order verbose", "jobs sshlogin"),
}  # fmt: skip
"""Commands that run the command named by their first operand (after options)."""

_APPENDS_ARGUMENTS = frozenset(["xargs", "parallel"])
"""Wrappers that add words the analysis cannot see to the command they run."""
_SCRIPT_OPERANDS = frozenset(["watch", "parallel", "su", "runuser"])
"""Wrappers that (also) hand their remaining words to a shell as one script."""
_OPAQUE_WRAPPERS = frozenset(
    ["fakeroot", "pkexec", "systemd-run", "unshare", "nsenter", "setarch", "firejail", "proot",
     "xvfb-run", "dbus-run-session", "strace", "ltrace", "valgrind", "catchsegv", "sg",
     "torsocks", "proxychains", "proxychains4", "nix-shell", "direnv", "chronic", "ssh-agent",
     "systemd-inhibit", "numactl", "cgexec", "prlimit", "faketime", "rlwrap"]
)  # fmt: skip
"""Commands that run a command after options this module does not model: every later
word may start the command."""
_SHELLS = frozenset(
    ["sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "rbash", "yash", "posh",
     "csh", "tcsh", "lksh", "oksh", "loksh", "pdksh", "elvish", "nu", "xonsh"]
)  # fmt: skip
_SHELL_LONG_FLAGS = frozenset(
    ["norc", "noprofile", "login", "posix", "restricted", "verbose", "noediting", "debugger",
     "dump-strings", "dump-po-strings", "help", "version", "protected", "interactive",
     "no-config", "private", "no-execute", "print-rpath"]
)  # fmt: skip
_SHELL_LONG_ARGS = frozenset(["rcfile", "init-file"])
_ALWAYS_UNSURE = frozenset(["source", ".", "coproc", "exec-as", "enable"])
"""Commands that run code the command line does not show."""
_SCRIPT_FIRST_OPERAND = frozenset(["eval", "trap", "alias"])


def command_views(analysis: ShellAnalysis) -> Iterator[View]:
    """Every command ``analysis`` may run, as word tuples (see the module docstring)."""
    if analysis.unparsed:
        yield UNSURE
    if _hides_code_in_strings(analysis):
        yield UNSURE
    for command in analysis.commands:
        if command.words:
            yield from _views(command.words, command, 0)
    for redirect in analysis.redirects:
        if redirect.operator in ("<<", "<<-") and redirect.target is not None:
            # Read a here-doc's lines as commands too: if the grammar and bash ever
            # disagree on where a body ends, no line of it hides a command.
            for line in redirect.target.text.splitlines():
                inner = analyse(line)
                for command in () if inner.unparsed else inner.commands:
                    yield from _views(command.words, command, _MAX_DEPTH - 2)


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
    base = os.path.basename(name.text) or name.text
    if base != name.text:
        view = (Word(base, base), *words[1:])
        yield view
    if base in _ALWAYS_UNSURE:
        yield UNSURE
    elif base in _SHELLS:
        yield from _shell(view, command, depth)
    elif base in _SCRIPT_FIRST_OPERAND:
        yield from _script_operands(base, view, depth)
    elif base == "find":
        yield from _find(view, command, depth)
    elif base == "git":
        yield from _git(view, command, depth)
    elif base in _OPAQUE_WRAPPERS:
        for start in range(1, len(view)):
            yield from _views(view[start:], command, depth + 1)
    elif base in _WRAPPERS:
        yield from _wrapper(base, view, command, depth)


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
    if inner.unparsed or _hides_code_in_strings(inner):
        yield UNSURE
    for command in inner.commands:
        if command.words:
            yield from _views(command.words, command, depth + 1)


def _joined(words: Sequence[Word]) -> Word:
    return Word(
        " ".join(w.text for w in words), static=all(w.static and not w.expands for w in words)
    )


def _wrapper(base: str, view: View, command: SimpleCommand, depth: int) -> Iterator[View]:
    options = _WRAPPERS[base]
    if base == "command" and any(w.text in ("-v", "-V") for w in view[1:2]):
        return  # `command -v rm` only looks the name up
    start, scripts = _after_options(view, options)
    for script in scripts:
        yield from _script(script, depth)
    if start is None:  # an option it does not know: any later word may start the command
        for index in range(1, len(view)):
            yield from _views(view[index:], command, depth + 1)
        return
    rest = view[start:]
    if base in _APPENDS_ARGUMENTS:
        rest = (*rest, _ANY) if rest else (Word("echo", "echo"), _ANY)
    if base in _SCRIPT_OPERANDS and rest and not (base == "watch" and "-x" in _flags(view)):
        yield from _script(_joined([w for w in rest if w is not _ANY]), depth)
    if base in ("sudo", "doas") and ({"-s", "-i", "--shell", "--login"} & _flags(view)):
        yield from _script(_joined(rest), depth)
    yield from _views(rest, command, depth + 1)


def _flags(view: View) -> set[str]:
    return {w.text for w in view[1:] if w.text.startswith("-")}


def _after_options(view: View, options: _Options) -> tuple[int | None, list[Word]]:
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
            if name in _SHELL_LONG_ARGS:
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
            if name not in _SHELL_LONG_FLAGS:
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


_FIND_RUNS = frozenset(["-exec", "-execdir", "-ok", "-okdir"])


def _find(view: View, command: SimpleCommand, depth: int) -> Iterator[View]:
    words = list(view)
    for index, word in enumerate(words):
        if word.text in _FIND_RUNS or not word.static:
            inner: list[Word] = []
            for later in words[index + 1 :]:
                if later.text in (";", "+"):
                    break
                inner.append(_ANY if "{}" in later.text else later)
            if not word.static:
                yield UNSURE
            elif inner:
                yield from _views(inner, command, depth + 1)


_GIT_VALUED = frozenset(
    ["-C", "-c", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--config-env",
     "--attr-source", "--list-cmds", "--exec-path"]
)  # fmt: skip
_GIT_FLAGS = frozenset(
    ["--no-pager", "-P", "-p", "--paginate", "--bare", "--no-replace-objects",
     "--literal-pathspecs", "--glob-pathspecs", "--noglob-pathspecs", "--icase-pathspecs",
     "--no-optional-locks", "--no-lazy-fetch", "--no-advice", "--html-path", "--man-path",
     "--info-path", "--version", "--help", "--exec-path"]
)  # fmt: skip
_GIT_SAFE_CONFIG = (
    "color.", "advice.", "user.", "i18n.", "column.", "status.", "init.defaultbranch",
    "core.quotepath", "core.autocrlf", "core.safecrlf", "core.longpaths", "core.ignorecase",
    "core.abbrev", "pull.rebase", "pull.ff", "push.default", "merge.conflictstyle",
    "rebase.autosquash", "protocol.version", "log.date", "log.decorate", "safe.directory",
)  # fmt: skip
"""``git -c`` keys that run no program; any other key may (``core.pager``,
``core.fsmonitor``, ``alias.x=!cmd``, ``diff.x.textconv``...)."""


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
        if name in _GIT_VALUED and (eq or text == "--exec-path" or name != text):
            if name in ("-c", "--config-env") and eq:
                yield from _git_config(value, depth)
            i += 1
            if text == "--exec-path" and not eq:
                continue
        elif text in _GIT_VALUED:
            if text in ("-c", "--config-env"):
                yield from _git_config(_at(view, i + 1).text, depth)
            i += 2
        elif text in _GIT_FLAGS:
            i += 1
        elif text.startswith("-"):  # an option this module does not know: unsure from here
            for start in range(i + 1, len(view)):
                yield (view[0], *view[start:])
            return
        else:
            break
    if i > 1:
        yield (view[0], *view[i:])


def _git_config(setting: str, depth: int) -> Iterator[View]:
    key, _, value = setting.partition("=")
    key = key.lower()
    if key.startswith("alias.") and value.startswith("!"):
        yield from _script(value[1:], depth)
    elif not key.startswith(_GIT_SAFE_CONFIG):
        yield UNSURE


_ARITHMETIC_COMMANDS = frozenset(
    ["let", "declare", "typeset", "local", "readonly", "export", "printf", "read", "unset",
     "mapfile", "readarray", "test", "[", "[[", "printf"]
)  # fmt: skip


def _hides_code_in_strings(analysis: ShellAnalysis) -> bool:
    """A quoted ``$(...)`` or backtick the shell may still run: an arithmetic context
    (``(( ))``, ``[[ -eq ]]``, an array subscript, ``let``, ``test -v``...) evaluates
    ``a[$(cmd)]`` held in a string."""
    contexts = {"arithmetic", "subscript", "conditional expression"} & set(analysis.unmodelled)
    if not contexts and not any(
        c.words and c.words[0].text in _ARITHMETIC_COMMANDS for c in analysis.commands
    ):
        return False
    return any(
        "$(" in w.text or "`" in w.text or "${" in w.text
        for c in analysis.commands
        for w in (*c.words, *c.assignments)
    )


# --- files a command writes -------------------------------------------------------------

_TARGET_LAST = frozenset(["cp", "mv", "install", "ln", "rsync", "scp"])
_TARGET_ALL = frozenset(["tee", "touch", "truncate", "mkdir", "rm", "rmdir", "shred", "unlink"])


def write_targets(words: Sequence[Word]) -> list[Word]:
    """The files ``words`` (one simple command) is known to write or remove.

    ``tee F``, ``touch F``, ``rm F``...: every operand; ``cp``/``mv``/``ln``/
    ``install``: the last operand or ``-t DIR``; ``sort -o F``; ``sed -i``: its
    operands; ``dd of=F``; ``curl -o F``, ``wget -O F``.  Commands not listed
    here are not known to write anything.
    """
    if not words:
        return []
    base = os.path.basename(words[0].text)
    args = list(words[1:])
    operands = [w for w in args if not w.text.startswith("-") or w.text == "-"]
    if base in _TARGET_ALL:
        return operands
    if base in _TARGET_LAST:
        targets = [after for w, after in itertools.pairwise(args) if w.text == "-t"]
        targets += [Word(w.text.partition("=")[2]) for w in args
                    if w.text.startswith("--target-directory=")]  # fmt: skip
        return targets or operands[-1:]
    if base == "dd":
        return [Word(w.text[3:], static=w.static) for w in args if w.text.startswith("of=")]
    valued = {"sort": ("-o", "--output"), "curl": ("-o", "--output"), "wget": ("-O",
              "--output-document"), "uniq": (), "gzip": ()}.get(base)  # fmt: skip
    if valued:
        return _option_values(args, *valued)
    if base == "sed" and any(
        w.text.startswith("--in-place") or (w.text[:2] != "--" and "i" in w.text[1:])
        for w in args
        if w.text.startswith("-")
    ):
        return operands
    return []


def _option_values(args: Sequence[Word], short: str, long: str) -> list[Word]:
    found: list[Word] = []
    for index, word in enumerate(args):
        text = word.text
        if text in (short, long):
            found.append(_at(tuple(args), index + 1))
        elif text.startswith(long + "="):
            found.append(Word(text.partition("=")[2], static=word.static))
        elif text.startswith(short) and len(text) > len(short) and not text.startswith("--"):
            found.append(Word(text[len(short) :], static=word.static))
    return found
