"""Decide whether a shell command is read-only, and so may run beside other calls.

A pure function with no trio import, over the one shell analysis
(:func:`trioexec._shell._syntax.analyse`, the same reading the rule matcher
uses).  It is deliberately conservative: a command is read-only only when the
analysis models all of it and every simple command is an allow-listed
read-only program with harmless arguments.  Whatever is not understood is
unsafe, so a false "unsafe" costs a little parallelism while a false "safe"
could let a write race a read (and, through ``Bash``'s permission check, run
without asking).

Rules (see docs/tools.md):

* only simple commands joined by ``&&``, ``||``, ``;``, ``|`` and newlines:
  a background ``&``, ``|&``, subshells and groups, functions, ``case``,
  loops, ``if``, ``[[ ]]``, assignments, comments, here-docs and a line that
  does not parse are unsafe;
* any expansion (``$x``, ``$(...)``, backticks, ``$((...))``, ``<(...)``,
  ``$'...'``, ``$"..."``) makes it unsafe;
* redirections: ``N>&M`` / ``>&N`` and output to ``/dev/null`` are allowed,
  input from a plain file name (``< file``) is allowed; any other output
  redirection, here-strings and ``<>`` are unsafe;
* each subcommand's first word must be an allow-listed command; prefix
  assignments (``A=b cmd``) and paths (``/bin/rm``) are therefore unsafe;
* ``cd`` together with ``git`` is unsafe (git runs programs the configuration
  of the repository it lands in names: ``core.fsmonitor``), and so is
  ``git -C``;
* commands with dangerous options (``find -delete``, ``sort -o``, ``sed -i``,
  ``git -c``, ``git diff --textconv``, ``rg --pre``...) are checked option by
  option, and for them an unquoted glob or brace expansion is unsafe (it could
  expand to such an option).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence

from ._syntax import SimpleCommand, Word, analyse

__all__ = [
    "Word",
    "is_read_only_command",
    "path_words",
    "read_only_part",
    "split_command",
    "stays_in_working_directory",
]

_DEV_NULL = "/dev/null"
_DESCRIPTOR = re.compile(r"[0-9]+-?|-")


def split_command(command: str) -> list[list[Word]] | None:
    """Split ``command`` into its simple commands, or None when it is not understood.

    Empty subcommands (``ls;``) are dropped.  Allowed redirections are removed
    from the words; anything the classifier must refuse gives None.
    """
    read = _read(command)
    return None if read is None else read[0]


def path_words(command: str) -> tuple[list[list[Word]], list[str]] | None:
    """The simple commands of ``command`` (redirections removed) and its ``< file`` targets.

    None when it is not understood.  For checks that look at what the
    arguments name on disk (symlinks), after :func:`stays_in_working_directory`.
    """
    return _read(command)


def read_words(command: str) -> tuple[tuple[tuple[Word, ...], ...], tuple[str, ...]] | None:
    """:func:`path_words` without copying: the cached reading itself (never mutate it)."""
    read = _read_cached(command)
    return None if read is None else (read.commands, read.inputs)


class _Reading:
    """The classifier's reading of a line: its simple commands' words, its ``< file``
    targets, and whether a word is an unquoted brace expansion."""

    __slots__ = ("braces", "commands", "inputs")

    def __init__(
        self, commands: tuple[tuple[Word, ...], ...], inputs: tuple[str, ...], braces: bool
    ) -> None:
        self.commands = commands
        self.inputs = inputs
        self.braces = braces


@functools.lru_cache(maxsize=1024)
def _read_cached(command: str) -> _Reading | None:
    analysis = analyse(command)
    if not analysis.plain or analysis.comments:
        return None  # substitutions, expansions of any kind, subshells, here-docs, `&`...
    commands: list[tuple[Word, ...]] = []
    inputs: list[str] = []
    braces = False
    for simple in analysis.commands:
        part = _part(simple)
        if part is None:
            return None
        commands.append(simple.words)
        inputs.extend(part[0])
        braces = braces or part[1]
    return _Reading(tuple(commands), tuple(dict.fromkeys(inputs)) if inputs else (), braces)


def _part(simple: SimpleCommand) -> tuple[list[str], bool] | None:
    """One simple command as the classifier reads it: its ``< file`` inputs and whether a
    word is a brace expansion; None when it has what the classifier refuses."""
    if simple.assignments or not simple.words:
        return None
    braces = False
    inputs: list[str] = []
    for w in simple.words:
        if not w.static:
            return None  # `$HOME`, `"$x"`: a value this classifier cannot see
        if w.braces:
            braces = True
    for redirect in simple.redirects:
        target = redirect.target
        if redirect.operator in (">&-", "<&-"):
            continue
        if target is None or not target.static or target.expands:
            return None
        if redirect.operator in (">&", "<&") and _DESCRIPTOR.fullmatch(target.text):
            continue
        if redirect.writes:
            if target.text != _DEV_NULL:
                return None
        elif redirect.operator == "<" and "~" not in target.text:
            inputs.append(target.text)
        else:
            return None  # here-strings, `<>`, `<&file`
    return inputs, braces


def read_only_part(simple: SimpleCommand) -> tuple[tuple[Word, ...], tuple[str, ...]] | None:
    """One part of a list or pipeline, judged on its own: its words and ``< file`` inputs
    when it is read-only and names nothing outside the working directory (lexically;
    what the names are on disk is left to the caller), else None.

    For a compound line whose other parts an allow rule covers: a read-only part
    needs no rule, as in Claude Code.
    """
    part = _part(simple)
    if part is None or part[1]:
        return None
    words = simple.words
    if not _subcommand_is_read_only(words):
        return None
    if words[0].text == "cd" and (len(words) != 2 or words[1].text[:1] == "-"):
        return None
    if not all(_relative_word(w.text) for w in words[1:]):
        return None
    if not all(_relative_word(text) for text in part[0]):
        return None
    return words, tuple(part[0])


def _read(command: str) -> tuple[list[list[Word]], list[str]] | None:
    read = _read_cached(command)
    if read is None:
        return None
    return [list(words) for words in read.commands], list(read.inputs)


def is_read_only_command(command: str) -> bool:
    """True only when every subcommand of ``command`` is known to be read-only."""
    read = _read_cached(command)
    if read is None or not read.commands or read.braces:
        return False  # brace expansion could make words (options, ``..``) checked nowhere
    parts = read.commands
    if len(parts) > 1:
        names = {words[0].text for words in parts}
        if "cd" in names and "git" in names:
            return False  # git reads the configuration of the repository it lands in
    for words in parts:  # noqa: SIM110 (a loop: no generator frame per command)
        if not _subcommand_is_read_only(words):
            return False
    return True


def stays_in_working_directory(command: str) -> bool:
    """A heuristic: no word of ``command`` names a path outside the working directory.

    True when the command can be split and no argument (nor ``< file``
    target) is absolute, starts with ``~``, contains a ``..`` component or
    could glob one (``.*``), and no option carries a path (``-f/etc/x``,
    ``--file=/x``).  A ``cd`` must name one such relative directory (a bare
    ``cd`` goes home).  Used to let read-only commands run without asking.
    """
    read = _read_cached(command)
    if read is None:
        return False
    commands = read.commands
    for words in commands:
        if words and words[0].text == "cd" and (len(words) != 2 or words[1].text[:1] == "-"):
            return False
    if read.braces:
        return False  # ``{..,x}/f`` or ``{/etc/passwd,x}`` are checked only after expansion
    for words in commands:
        for word in words[1:]:
            if not _relative_word(word.text):
                return False
    return all(_relative_word(text) for text in read.inputs)


_DOT_GLOB = re.compile(r"(?:^|/)\.[*?\[]")
_HOME = re.compile(r"(?:^|[=:])~")
_PATHLESS = frozenset("/.~")


def _relative_word(text: str) -> bool:
    if _PATHLESS.isdisjoint(text):
        return True  # no `/`, `.` or `~`: a plain name inside the working directory
    if _HOME.search(text) or _DOT_GLOB.search(text):
        return False
    if text.startswith("-"):
        return "/" not in text and ".." not in re.split(r"[=:,]", text)
    return not text.startswith("/") and ".." not in text.split("/")


# Per-command rules -----------------------------------------------------------

ArgCheck = Callable[[Sequence[Word]], bool]


def _any_args(args: Sequence[Word]) -> bool:
    return True


def _names_long(arg: str, names: Sequence[str]) -> bool:
    """Whether ``arg`` (``--abc`` or ``--abc=value``) may mean one of the long ``names``.

    ``getopt_long`` and git's parser take any unique prefix of a long option
    (``--outp=x`` is ``--output=x``), so ``--abc`` names every option that
    starts with ``abc``.  ``names`` are written without the leading ``--``.
    """
    if not arg.startswith("--"):
        return False
    given = arg[2:].partition("=")[0]
    return bool(given) and any(name.startswith(given) for name in names)


def _forbid(*, long: Sequence[str] = (), short: str = "") -> ArgCheck:
    """Refuse options: ``long`` names (``--name``, ``--name=x``, unique prefixes of
    them) and the letters of ``short`` anywhere in a ``-abc`` cluster."""

    def check(args: Sequence[Word]) -> bool:
        for word in args:
            arg = word.text
            if word.expands or _names_long(arg, long):
                return False
            if short and _is_short_cluster(arg) and any(ch in short for ch in arg[1:]):
                return False
        return True

    return check


def _is_short_cluster(arg: str) -> bool:
    return len(arg) > 1 and arg[0] == "-" and arg[1] != "-"


def _max_operands(limit: int, *, valued: Sequence[str], forbidden: Sequence[str]) -> ArgCheck:
    """At most ``limit`` operands: ``uniq in out`` and ``xxd in out`` write ``out``.

    ``--`` ends the options (``uniq -- -f out`` writes ``out``).  An option
    starting with one of ``forbidden`` is refused (xxd matches options by
    prefix: ``-rev`` is ``-r``).  An option not known to take a value counts
    its value as an operand, which errs towards refusing.
    """

    def check(args: Sequence[Word]) -> bool:
        count = 0
        skip = False
        options = True
        for word in args:
            arg = word.text
            if word.expands:
                return False
            if skip:
                skip = False
            elif options and arg == "--":
                options = False
            elif options and arg.startswith("-") and arg != "-":
                if arg.startswith(tuple(forbidden)):
                    return False
                skip = arg in valued
            else:
                count += 1
        return count <= limit

    return check


_DATE_VALUED = frozenset({"-d", "-r", "-f"})
_DATE_VALUED_LONG = ("date", "reference", "file")


def _date(args: Sequence[Word]) -> bool:
    """``date`` showing a time; never ``-s`` / ``--set`` or BSD's ``date MMDDhhmm``."""
    skip = False
    for word in args:
        arg = word.text
        if word.expands or _names_long(arg, ("set",)):
            return False
        if skip:
            skip = False
        elif _is_short_cluster(arg):
            if "s" in arg[1:]:
                return False
            skip = arg in _DATE_VALUED
        elif arg.startswith("--"):
            skip = "=" not in arg and _names_long(arg, _DATE_VALUED_LONG)
        elif not arg.startswith("+"):
            return False
    return True


_SED_OPTIONS = frozenset(
    {"-n", "--quiet", "--silent", "-E", "-r", "--regexp-extended", "-u", "--unbuffered",
     "-z", "--null-data", "--posix", "-s", "--separate"}
)  # fmt: skip
_SED_ADDRESS = r"(?:(?:\d+|\$)(?:\s*,\s*(?:\d+|\$))?)?"
_SED_SUBST = r"s(?P<d>[^\\\s])(?:\\.|(?!(?P=d)).)*(?P=d)(?:\\.|(?!(?P=d)).)*(?P=d)[gpiI0-9]*"
_SED_SCRIPT = re.compile(
    rf"(?:\s*{_SED_ADDRESS}\s*(?:[pdq=]|{_SED_SUBST})\s*(?:[;\n]|\Z))+", re.DOTALL
)
"""Line-range printing/deleting/quitting and ``s///`` with flags g, p, i, I or a number
(never ``w`` or ``e``), separated by ``;`` or newlines."""


def _sed(args: Sequence[Word]) -> bool:
    """``sed`` printing line ranges or substituting to stdout; never ``-i``, ``w`` or ``e``."""
    scripts: list[str] = []
    expect_script = False
    have_e = False
    operands: list[str] = []
    for word in args:
        if word.expands:
            return False
        arg = word.text
        if expect_script:
            scripts.append(arg)
            expect_script = False
        elif arg in ("-e", "--expression"):
            expect_script = have_e = True
        elif arg.startswith("--expression="):
            scripts.append(arg.partition("=")[2])
            have_e = True
        elif arg.startswith("-") and arg != "-":
            if arg not in _SED_OPTIONS:
                return False  # -i, --in-place, -f, unknown options
        else:
            operands.append(arg)
    if expect_script:
        return False
    if not have_e:
        if not operands:
            return False
        scripts.append(operands[0])
    return all(_SED_SCRIPT.fullmatch(script) for script in scripts)


_GIT_GLOBAL_FLAGS = frozenset({"--no-pager", "-P", "--no-optional-locks", "--no-replace-objects"})
_GIT_FORBIDDEN = ("output", "ext-diff", "open-files-in-pager", "exec", "textconv", "filters",
                  "upload-pack", "receive-pack", "extcmd", "template", "config")  # fmt: skip
"""Long options (and so their unique prefixes) that write a file or run a program."""
_LISTING_FLAGS = ("-l", "--list", "--contains", "--no-contains", "--merged", "--no-merged",
                  "--points-at")  # fmt: skip


def _git_no_forbidden(args: Sequence[Word]) -> bool:
    for word in args:
        arg = word.text
        if word.expands or _names_long(arg, _GIT_FORBIDDEN):
            return False
        if arg.startswith("-O") and not arg.startswith("--"):
            return False
    return True


def _git_grep(args: Sequence[Word]) -> bool:
    """``git grep``: never ``-O`` (opens the files in a pager program), in a cluster too.

    git's option parser takes ``-iO'cmd'`` as ``-i -O cmd``; a cluster whose
    ``O`` is really a value (``-eO``) is refused as well, which errs towards asking.
    """
    return not any(_is_short_cluster(w.text) and "O" in w.text[1:] for w in args)


def _git_listing(write_flags: Sequence[str], write_short: str) -> ArgCheck:
    """``git branch`` / ``git tag``: read-only when listing, never when naming a new ref."""

    def check(args: Sequence[Word]) -> bool:
        listing = any(w.text in _LISTING_FLAGS or w.text.startswith("--list") for w in args)
        longs = [flag[2:] for flag in write_flags if flag.startswith("--")]
        for word in args:
            arg = word.text
            if arg in write_flags or _names_long(arg, longs):
                return False  # git takes a unique prefix: `--unset-up`, `--set-upstream-t=x`
            if _is_short_cluster(arg) and any(ch in write_short for ch in arg[1:]):
                return False
            if not arg.startswith("-") and not listing:
                return False
        return True

    return check


def _git_subcommand_words(*allowed: str, options_only: bool = False) -> ArgCheck:
    """The first argument itself must be one of ``allowed`` (``""``: no argument at all).

    Not the first operand: ``git stash -- list`` is ``git stash push -- list``.
    With ``options_only``, arguments that are all options (no ``--``, no
    operand, so no subcommand word) are fine too.
    """

    def check(args: Sequence[Word]) -> bool:
        if not args:
            return "" in allowed
        if args[0].text in allowed:
            return True
        return options_only and all(w.text.startswith("-") and w.text != "--" for w in args)

    return check


_BRANCH_WRITES = ("-d", "-D", "--delete", "-m", "-M", "--move", "-c", "-C", "--copy", "-f",
                  "--force", "-u", "--set-upstream-to", "--unset-upstream", "--edit-description",
                  "--track", "--no-track", "-t", "--set-upstream", "--create-reflog",
                  "--recurse-submodules")  # fmt: skip
_TAG_WRITES = ("-d", "--delete", "-a", "--annotate", "-s", "--sign", "-u", "--local-user", "-f",
               "--force", "-m", "--message", "-F", "--file", "-e", "--edit", "--create-reflog",
               "--cleanup", "--no-sign", "--trailer")  # fmt: skip

_GIT_SUBCOMMANDS: dict[str, ArgCheck] = {
    "status": _any_args,
    "log": _any_args,
    "diff": _any_args,
    "show": _any_args,
    "blame": _any_args,
    "annotate": _any_args,
    "shortlog": _any_args,
    "describe": _any_args,
    "rev-parse": _any_args,
    "rev-list": _any_args,
    "ls-files": _any_args,
    "ls-tree": _any_args,
    "cat-file": _any_args,
    "show-ref": _any_args,
    "merge-base": _any_args,
    "grep": _git_grep,
    "whatchanged": _any_args,
    "name-rev": _any_args,
    "count-objects": _any_args,
    "branch": _git_listing(_BRANCH_WRITES, "dDmMcCfut"),
    "tag": _git_listing(_TAG_WRITES, "dasufmFe"),
    "remote": lambda args: (
        all(w.text in ("-v", "--verbose") for w in args)
        or (bool(args) and args[0].text in ("get-url", "show"))
    ),
    "stash": _git_subcommand_words("list", "show"),
    "reflog": _git_subcommand_words("", "show", options_only=True),
    "worktree": _git_subcommand_words("list"),
}


def _git(args: Sequence[Word]) -> bool:
    i = 0
    while i < len(args):
        arg = args[i].text
        if args[i].expands:
            return False
        if arg in _GIT_GLOBAL_FLAGS:
            i += 1
        elif arg.startswith("-"):
            return False  # -C, -c key=value, --exec-path, --git-dir... can run configured programs
        else:
            break
    if i >= len(args):
        return False
    check = _GIT_SUBCOMMANDS.get(args[i].text)
    rest = args[i + 1 :]
    return check is not None and _git_no_forbidden(rest) and check(rest)


_FIND_ACTIONS = ("-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0",
                 "-fprintf", "-fls")  # fmt: skip


def _find(args: Sequence[Word]) -> bool:
    return all(not w.expands and w.text not in _FIND_ACTIONS for w in args)


_PLAIN_COMMANDS = (
    "ls", "cat", "head", "tail", "wc", "grep", "egrep", "fgrep", "pwd", "echo", "printf",
    "true", "false", "which", "whoami", "id", "uname", "basename", "dirname", "realpath",
    "readlink", "stat", "du", "df", "diff", "cmp", "comm", "cut", "tr", "nl", "od",
    "hexdump", "strings", "md5sum", "sha1sum", "sha256sum", "sha512sum", "cksum",
    "column", "fold", "rev", "tac", "paste", "expand", "unexpand", "jq",
    "test", "[", "seq", "sleep", "cd", "nproc", "uptime", "ps", "groups", "locale",
    "type", "look", "fmt", "numfmt", "join",
)  # fmt: skip
"""Commands with no option that writes a file or runs a program: any arguments, globs too."""

_COMMANDS: dict[str, ArgCheck] = {
    **dict.fromkeys(_PLAIN_COMMANDS, _any_args),
    # `test -v 'a[$(cmd)]'` and `printf -v 'a[$(cmd)]'` evaluate an array subscript.
    "test": _forbid(short="vR"),
    "[": _forbid(short="vR"),
    "printf": _forbid(short="v"),
    "find": _find,
    "sort": _forbid(long=("output", "compress-program"), short="o"),
    "uniq": _max_operands(1, valued=("-f", "-s", "-w"), forbidden=()),
    "xxd": _max_operands(
        1,
        valued=("-c", "-g", "-l", "-o", "-s", "-n", "-cols", "-len", "-seek"),
        forbidden=("-r",),
    ),
    "rg": _forbid(long=("pre", "hostname-bin", "search-zip"), short="z"),
    "tree": _forbid(short="oR"),
    "file": _forbid(long=("compile",), short="C"),
    "date": _date,
    "sed": _sed,
    "git": _git,
}


def _subcommand_is_read_only(words: Sequence[Word]) -> bool:
    head = words[0]
    if head.expands:
        return False
    check = _COMMANDS.get(head.text)
    return check is not None and check(words[1:])
