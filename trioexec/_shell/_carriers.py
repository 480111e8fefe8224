"""Options that carry a program or a shell command, and how git reads its own options.

Many programs run another program named in one of their options: ``rg --pre
CMD``, ``sort --compress-program=CMD``, ``tar --to-command=CMD``,
``ssh -o ProxyCommand=CMD``, ``git rebase -x CMD``...  :func:`carried` reads one
command's words (a view of :mod:`._views`) and says what they carry:
a shell script (``("script", word)``), a program run with arguments the line
does not show (``("program", word)``), words that are themselves a command
(``("words", words)``), code this module cannot read (``("unsure", word)``), or a
name bound to a command (``("bind", (Word("git p"), *target))``: a git alias).
The caller turns each into views, so a deny rule for the carried program
matches, and no such command is ever read-only.

Long options are read as ``getopt_long`` and git's parse-options read them: a
unique prefix names the option (``--compress-prog=x``), its value follows
``=`` or is the next word; a short option's value is the rest of its cluster
or the next word.  A prefix that could name a carrying option counts as naming
it (erring towards a match).  Pure data and functions, no parser.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

import attrs

from ._words import Word

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

__all__ = [
    "CARRIERS",
    "GIT_CARRIERS",
    "GIT_PROGRAM_CONFIG",
    "Carried",
    "carried",
    "git_carried",
    "git_subcommand",
    "long_option_value",
]

Kind = Literal["script", "program", "words", "unsure", "bind"]
Carried = tuple[Kind, tuple[Word, ...]]

_ANY = Word("\0", "\0", static=False)


@attrs.frozen
class Carrier:
    """The options of one program whose value is run."""

    long: dict[str, Kind] = attrs.field(factory=dict)
    """Long option name (without ``--``) -> what its value is."""
    short: dict[str, Kind] = attrs.field(factory=dict)
    """Short option letter -> what its value is."""
    exact: dict[str, Kind] = attrs.field(factory=dict)
    """Options matched as written only (``zip -TT``, ``vim +cmd`` as ``+``)."""
    prefixes: dict[str, Kind] = attrs.field(factory=dict)
    """Word prefixes whose remainder is run (``socat exec:CMD``; case-insensitive)."""
    long_with_one_dash: bool = False
    """Long options may be spelt with one dash too (``gdb -eval-command=X``)."""


def _c(long: str, *, kind: Kind = "script") -> Carrier:
    return Carrier(dict.fromkeys(long.split(), kind))


_VIM = Carrier({"cmd": "unsure"}, {"c": "unsure", "S": "unsure", "u": "unsure"}, {"+": "unsure"})
"""vim's: ``-c``/``--cmd``/``+cmd`` run an Ex command, ``-S``/``-u`` read a file of them."""

CARRIERS: dict[str, Carrier] = {
    "rg": _c("pre hostname-bin", kind="program"),
    "sort": _c("compress-program", kind="program"),
    "tar": Carrier(
        {"to-command": "script", "info-script": "script", "new-volume-script": "script",
         "rsh-command": "program", "use-compress-program": "program",
         "checkpoint-action": "script"},
        {"F": "script", "I": "program"},
    ),
    "zip": Carrier({"unzip-command": "script"}, {}, {"-TT": "script"}),
    "man": Carrier({"pager": "script", "html": "program", "preprocessor": "unsure"},
                   {"P": "script", "H": "program"}),
    "split": _c("filter"),
    "rsync": Carrier({"rsh": "script"}, {"e": "script"}),
    "scp": Carrier({}, {"S": "program", "o": "unsure", "F": "unsure"}),
    "sftp": Carrier({}, {"S": "program", "D": "program", "o": "unsure", "F": "unsure"}),
    "ssh": Carrier({}, {"o": "unsure", "F": "unsure"}),
    "socat": Carrier(prefixes={"exec:": "script", "system:": "script"}),
    "vim": _VIM,
    "vi": _VIM,
    "nvim": _VIM,
    "ex": _VIM,
    "gdb": Carrier({"ex": "unsure", "eval-command": "unsure", "x": "unsure",
                    "command": "unsure", "init-eval-command": "unsure",
                    "init-command": "unsure", "iex": "unsure", "ix": "unsure"}, {},
                   {"-ex": "unsure", "-iex": "unsure", "-x": "unsure", "-ix": "unsure"},
                   long_with_one_dash=True),
    "tcpdump": Carrier({}, {"z": "program"}),
    "less": Carrier({}, {}, {"+!": "unsure"}),
    "hash": Carrier(),  # read by _views: `hash -p PATH NAME` binds NAME
}  # fmt: skip
"""Programs whose options carry a program or a shell command."""

_SSH_OPTIONS = frozenset(
    ["proxycommand", "localcommand", "knownhostscommand", "pkcs11provider",
     "securitykeyprovider", "include"]
)  # fmt: skip
"""``ssh -o Key=Value`` keys that run a program, load code or read more configuration."""


def long_option_value(
    words: Sequence[Word], index: int, names: Sequence[str]
) -> tuple[str, Word] | None:
    """The long option ``words[index]`` names among ``names`` (a unique prefix counts;
    any prefix of one counts here) and its value: ``(name, value)``, or None."""
    text = words[index].text
    if not text.startswith("--") or len(text) == 2:
        return None
    given, eq, value = text[2:].partition("=")
    if given in names:
        name = given
    else:
        matching = [n for n in names if n.startswith(given)]
        if not matching:
            return None
        name = matching[0]
    if eq:
        return name, Word(value, static=words[index].static)
    return name, words[index + 1] if index + 1 < len(words) else _ANY


def carried(name: str, view: Sequence[Word]) -> Iterator[Carried]:
    """What the options of ``view`` (a command named ``name``) carry (see the module)."""
    carrier = CARRIERS.get(name)
    if carrier is None:
        return
    if name in ("ssh", "scp", "sftp"):
        yield from _ssh(view)
    if name == "tar" and len(view) > 1 and view[1].static and view[1].text[:1] not in ("-", ""):
        yield from _tar_old_style(view, carrier)
    for index in range(1, len(view)):
        word = view[index]
        text = word.text
        if not word.static:
            continue
        if text == "--":
            break
        if word.expands and text[:1] in ("-", "+"):
            yield "unsure", (word,)  # `--p*` may be any option once expanded
            continue
        if carrier.long_with_one_dash and text[:1] == "-" and text[1:2] != "-" and len(text) > 2:
            text = "-" + text  # `-eval-command=X` read as `--eval-command=X`
            view = (*view[:index], Word(text, static=True), *view[index + 1 :])
        kind = carrier.exact.get(text)
        if kind is not None:
            yield kind, (view[index + 1] if index + 1 < len(view) else _ANY,)
            continue
        for exact, kind in carrier.exact.items():
            if exact in ("+", "+!") and text.startswith(exact) and len(text) > len(exact):
                yield kind, (Word(text[len(exact) :]),)
        lowered = text.lower()
        for prefix, kind in carrier.prefixes.items():
            if lowered.startswith(prefix):
                yield kind, (Word(text[len(prefix) :]),)
        if carrier.long:
            found = long_option_value(view, index, tuple(carrier.long))
            if found is not None:
                option, value = found
                kind = carrier.long[option]
                if option == "checkpoint-action":
                    if not value.static:
                        yield "unsure", (value,)
                    elif value.text.startswith("exec="):
                        yield "script", (Word(value.text[5:]),)
                    continue
                yield kind, (value,)
                continue
        if carrier.short and text[:1] == "-" and text[1:2] not in ("", "-"):
            for k, letter in enumerate(text[1:], start=1):
                kind = carrier.short.get(letter)
                if kind is not None:
                    rest = text[k + 1 :]
                    value = Word(rest) if rest else (
                        view[index + 1] if index + 1 < len(view) else _ANY
                    )  # fmt: skip
                    yield kind, (value,)
                    break


_TAR_VALUED = frozenset("bCfFgHIKLNTVX")
"""GNU tar's short options that take a value."""


def _tar_old_style(view: Sequence[Word], carrier: Carrier) -> Iterator[Carried]:
    """``tar cIf PROG archive``: the first word's letters, whose values follow in order."""
    values = iter(view[2:])
    for letter in view[1].text:
        if letter in _TAR_VALUED:
            value = next(values, _ANY)
            kind = carrier.short.get(letter)
            if kind is not None:
                yield kind, (value,)


def _ssh(view: Sequence[Word]) -> Iterator[Carried]:
    """``ssh -o ProxyCommand=CMD`` (``-oKey=Value``, ``-o 'Key Value'``); keys case-insensitive."""
    for index in range(1, len(view)):
        text = view[index].text
        if not view[index].static:
            continue
        if text == "-o" and index + 1 < len(view):
            setting = view[index + 1]
        elif text.startswith("-o") and len(text) > 2:
            setting = Word(text[2:], static=view[index].static)
        else:
            continue
        if not setting.static:
            yield "unsure", (setting,)
            continue
        key, _, value = setting.text.replace("=", " ", 1).partition(" ")
        if key.strip().lower() in _SSH_OPTIONS:
            value = value.strip()
            if value.lower() != "none":
                yield "script", (Word(value),)


GIT_PROGRAM_CONFIG = (
    "core.pager", "core.editor", "core.sshcommand", "core.fsmonitor", "core.hookspath",
    "core.askpass", "core.gitproxy", "sequence.editor", "diff.external", "diff.tool",
    "merge.tool", "credential.helper", "gpg.program", "gpg.ssh.program", "gpg.x509.program",
    "pager.", "difftool.", "mergetool.", "filter.", "diff.", "merge.", "include",
    "includeif.", "alias.", "uploadpack.", "remote.", "url.", "sendemail.", "web.browser",
    "browser.", "man.", "instaweb.", "submodule.", "interactive.difffilter", "ssh.",
)  # fmt: skip
"""``git config`` keys (lower case, or their prefixes) whose value git may run, or that
bring more configuration in."""

GIT_CARRIERS: dict[str, dict[str, Kind]] = {
    "rebase": {"exec": "script", "x": "script"},
    "difftool": {"extcmd": "script", "x": "script"},
    "filter-branch": dict.fromkeys(
        ["env-filter", "tree-filter", "index-filter", "parent-filter", "msg-filter",
         "commit-filter", "tag-name-filter", "setup"], "script"),
    "fetch": {"upload-pack": "script"},
    "pull": {"upload-pack": "script"},
    "clone": {"upload-pack": "script", "u": "script", "template": "unsure"},
    "init": {"template": "unsure"},
    "ls-remote": {"upload-pack": "script", "u": "script"},
    "push": {"receive-pack": "script", "exec": "script"},
    "archive": {"exec": "script"},
    "grep": {"open-files-in-pager": "script", "O": "script"},
    "send-email": {"sendmail-cmd": "script", "smtp-server": "program", "to-cmd": "script",
                   "cc-cmd": "script", "header-cmd": "script"},
    "bisect": {},
    "submodule": {},
    "config": {},
    "log": {"ext-diff": "unsure", "textconv": "unsure"},
    "show": {"ext-diff": "unsure", "textconv": "unsure"},
    "diff": {"ext-diff": "unsure", "textconv": "unsure"},
    "cat-file": {"filters": "unsure", "textconv": "unsure"},
}  # fmt: skip
"""git subcommands whose options carry a program or a shell command (option name without
dashes -> what its value is; one letter: a short option)."""


def git_subcommand(view: Sequence[Word]) -> int | None:
    """The index of the subcommand in ``view`` (``git`` with its global options removed,
    as :mod:`._views` yields it), or None."""
    if (
        len(view) > 1
        and view[1].static
        and not view[1].expands
        and not view[1].text.startswith("-")
    ):
        return 1
    return None


def git_carried(view: Sequence[Word]) -> Iterator[Carried]:
    """What a ``git SUBCOMMAND ...`` view (global options removed) carries."""
    at = git_subcommand(view)
    if at is None:
        return
    sub = view[at].text
    table = GIT_CARRIERS.get(sub)
    if table is None:
        return
    args = list(view[at + 1 :])
    if sub == "bisect":
        if args and args[0].text == "run":
            yield "words", tuple(args[1:]) or (_ANY,)
        return
    if sub == "submodule":
        rest = [w for w in args if w.text not in ("--quiet", "-q", "--recursive")]
        if rest and rest[0].text == "foreach":
            body = [w for w in rest[1:] if w.text not in ("--recursive", "-q", "--quiet")]
            yield "script", (_join(body),)
        return
    if sub == "config":
        yield from _git_config_command(args)
        return
    if sub in ("clone", "init", "fetch", "pull"):
        for index, word in enumerate(args):
            if word.text in ("-c", "--config") and index + 1 < len(args):
                yield from git_setting(args[index + 1].text, args[index + 1].static)
            elif word.text.startswith("--config="):
                yield from git_setting(word.text.partition("=")[2], word.static)
    longs = tuple(k for k in table if len(k) > 1)
    shorts = {k: v for k, v in table.items() if len(k) == 1}
    words = [view[0], *args]
    for index in range(1, len(words)):
        word = words[index]
        text = word.text
        if text == "--":
            break
        if not word.static:
            continue
        found = long_option_value(words, index, longs) if longs else None
        if found is not None:
            option, value = found
            kind = table[option]
            if kind == "unsure" or "=" in text or not _flag_only(sub, option):
                yield kind, (value,)
            continue
        if shorts and text[:1] == "-" and text[1:2] not in ("", "-"):
            for k, letter in enumerate(text[1:], start=1):
                short = shorts.get(letter)
                if short is not None:
                    tail = text[k + 1 :]
                    if tail:
                        yield short, (Word(tail),)
                    else:
                        yield short, (words[index + 1] if index + 1 < len(words) else _ANY,)
                    break


def _flag_only(sub: str, option: str) -> bool:
    """Options of ``GIT_CARRIERS`` that take no value (``--ext-diff``): unsure themselves."""
    return option in ("ext-diff", "textconv", "filters")


def _join(words: Sequence[Word]) -> Word:
    return Word(" ".join(w.text for w in words), static=all(w.static for w in words))


_GIT_CONFIG_OPTIONS_WITH_VALUE = frozenset(
    ["-f", "--file", "--blob", "--type", "--default", "--comment", "--value", "--fixed-value"]
)


def _git_config_command(args: Sequence[Word]) -> Iterator[Carried]:
    """``git config [options] KEY VALUE`` (and ``git config set KEY VALUE``): setting a key
    whose value git runs is running it; an alias is its target."""
    operands: list[Word] = []
    skip = False
    for word in args:
        if skip:
            skip = False
            continue
        text = word.text
        if not word.static:
            operands.append(word)
            continue
        if text.startswith("-"):
            skip = text in _GIT_CONFIG_OPTIONS_WITH_VALUE
            continue
        operands.append(word)
    if operands and operands[0].text in ("set", "--add") and len(operands) > 1:
        operands = operands[1:]
    if len(operands) < 2:
        return
    key, value = operands[0], operands[1]
    if not key.static:
        yield "unsure", (key,)
        return
    yield from git_setting(f"{key.text}={value.text}", value.static)


def git_setting(setting: str, static: bool = True) -> Iterator[Carried]:
    """What ``KEY=VALUE`` (``git -c``, ``git config``) makes git run."""
    key, _, value = setting.partition("=")
    key = key.lower()
    if not key.startswith(GIT_PROGRAM_CONFIG):
        return
    if not static:
        yield "unsure", (Word(value, static=False),)
    elif key.startswith("alias."):
        if value.startswith("!"):
            yield "script", (Word(value[1:]),)
            yield "bind", (Word("git " + key[6:]), Word("sh"), Word("-c"), Word(value[1:]))
        else:
            target = (Word("git"), *(Word(part) for part in value.split()))
            yield "words", target
            yield "bind", (Word("git " + key[6:]), *target)
    elif key.startswith(("include", "core.hookspath", "core.fsmonitor")):
        yield "unsure", (Word(value),)
    else:  # `!cmd` is a shell command to git (credential helpers, aliases): so is `cmd`
        yield "script", (Word(value.removeprefix("!")),)
