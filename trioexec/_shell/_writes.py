"""The files a shell command is known to write: ``tee F``, ``sort -o F``, ``sed -i``...

Pure functions over :mod:`._syntax` words.  A target the analysis cannot
read is returned as a word that is not ``static``; callers treat it as any
path.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._syntax import Word

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["write_targets"]

_ANY = Word("\0", "\0", static=False)
_TARGET_LAST = frozenset(["cp", "mv", "install", "ln", "rsync", "scp"])
_TARGET_ALL = frozenset(["tee", "touch", "truncate", "mkdir", "rm", "rmdir", "shred", "unlink"])
_OPTION_TARGETS: dict[str, tuple[str, tuple[str, ...]]] = {
    "curl": ("oDc", ("output", "output-dir", "dump-header", "cookie-jar", "trace",
                      "trace-ascii", "stderr", "etag-save", "hsts", "alt-svc", "libcurl")),
    "wget": ("OPoa", ("output-document", "directory-prefix", "output-file", "append-output",
                      "save-cookies")),
    "unzip": ("d", ()),
    "tar": ("C", ("directory",)),
    "sort": ("o", ("output",)),
}  # fmt: skip
"""Options whose value a program writes, or a directory it writes into (short letters,
long names: a unique prefix counts)."""
_GIT_OUTPUT = frozenset(
    ["diff", "log", "show", "whatchanged", "diff-tree", "diff-index", "diff-files",
     "range-diff", "format-patch", "archive", "blame", "shortlog"]
)  # fmt: skip
_GIT_CONFIG_READS = frozenset(
    ["--get", "--get-all", "--get-regexp", "--get-urlmatch", "--get-color", "--get-colorbool",
     "-l", "--list", "get", "list", "--show-origin", "--show-scope"]
)  # fmt: skip
_GIT_CONFIG_WRITES = frozenset(
    ["set", "unset", "--unset", "--unset-all", "--add", "--replace-all", "--rename-section",
     "--remove-section", "rename-section", "remove-section", "edit", "-e", "--edit"]
)  # fmt: skip


_WRITERS = frozenset([*_TARGET_LAST, *_TARGET_ALL, *_OPTION_TARGETS, "dd", "uniq", "sed", "git"])


def write_targets(words: Sequence[Word]) -> list[Word]:
    """The files ``words`` (one simple command) is known to write or remove.

    ``tee F``, ``touch F``, ``rm F``...: every operand; ``cp``/``mv``/``ln``/
    ``install``: the last operand or ``-t DIR`` (``-st DIR`` too); ``sort -o F``;
    ``sed -i``: its operands; ``dd of=F``; ``curl -o F`` (and ``--output-dir``,
    ``-D``, ``-c``, ``--trace``...), ``wget -O F`` / ``-P DIR`` / ``-o LOG``;
    ``unzip -d DIR``; ``tar -C DIR`` and the archive it creates; git: ``--output``
    of the diff family, ``format-patch -o``, ``archive -o``, the paths of
    ``checkout`` / ``restore``, ``init`` / ``clone --template`` (the new hooks),
    and the file ``git config`` sets.  Long options are matched by unique prefix.
    Commands not listed here are not known to write anything.
    """
    if not words:
        return []
    base = words[0].text.rpartition("/")[2]  # os.path.basename
    if base not in _WRITERS:
        return []
    args = list(words[1:])
    operands = [w for w in args if not w.text.startswith("-") or w.text == "-"]
    if base in _TARGET_ALL:
        return operands
    if base in _TARGET_LAST:
        if base in ("rsync", "scp"):
            return operands[-1:]
        # `-t DIR`, `-st DIR`, `-tDIR`, `--target-directory=DIR` (or a unique prefix of it)
        targets = _values(args, "t", ("target-directory",))
        return targets or operands[-1:]
    if base == "git":
        return _git_targets(args)
    option_targets = _OPTION_TARGETS.get(base)
    if option_targets is not None:
        targets = _values(args, *option_targets)
        if base == "tar" and _tar_creates(args):
            targets += _values(args, "f", ("file",))
            if args and not args[0].text.startswith("-") and "f" in args[0].text:
                targets.append(args[1] if len(args) > 1 else _ANY)  # old style: `tar cf F`
        return targets
    if base == "dd":
        return [Word(w.text[3:], static=w.static) for w in args if w.text.startswith("of=")]
    if base == "uniq":  # `uniq in out` writes out
        return operands[1:2]
    if base == "sed" and any(
        w.text.startswith("--in-place") or (w.text[:2] != "--" and "i" in w.text[1:])
        for w in args
        if w.text.startswith("-")
    ):
        return operands
    return []


def _values(args: Sequence[Word], short: str, long: tuple[str, ...]) -> list[Word]:
    """The values of the options ``short`` (letters, also inside a ``-abc`` cluster: the
    rest of the cluster or the next word) and ``long`` (``--name=v``, ``--name v``, a
    prefix of the name counts) in ``args``."""
    found: list[Word] = []
    for index, word in enumerate(args):
        text = word.text
        if text == "--":
            break
        following = args[index + 1] if index + 1 < len(args) else _ANY
        if text.startswith("--") and len(text) > 2:
            given, eq, value = text[2:].partition("=")
            if any(name.startswith(given) for name in long):
                found.append(Word(value, static=word.static) if eq else following)
        elif text[:1] == "-" and len(text) > 1 and short:
            for k, letter in enumerate(text[1:], start=1):
                if letter in short:
                    rest = text[k + 1 :]
                    found.append(Word(rest, static=word.static) if rest else following)
                    break
    return found


def _tar_creates(args: Sequence[Word]) -> bool:
    """Whether tar writes its archive (``-c``, ``-r``, ``-u``, ``-A``, old style ``cf``)."""
    for index, word in enumerate(args):
        text = word.text
        if text.startswith("--"):
            if text[2:].startswith(("create", "append", "update", "catenate", "concatenate")):
                return True
        elif (text.startswith("-") or index == 0) and set(text.lstrip("-").partition("f")[0]) & set(
            "cruA"
        ):
            return True
    return False


def _git_targets(args: Sequence[Word]) -> list[Word]:
    """What ``git SUBCOMMAND ...`` (global options removed) is known to write."""
    if not args or args[0].text.startswith("-"):
        return []
    sub, rest = args[0].text, list(args[1:])
    targets: list[Word] = []
    if sub in _GIT_OUTPUT:
        targets += _values(rest, "", ("output",))
        if sub in ("format-patch", "archive"):
            targets += _values(rest, "o", ("output-directory",) if sub[0] == "f" else ())
    elif sub in ("checkout", "restore"):
        # the paths checked out (any operand may be one: `git checkout REV path`)
        after = False
        for word in rest:
            if word.text == "--":
                after = True
            elif after or not word.text.startswith("-"):
                targets.append(word)
    elif sub in ("init", "clone"):
        if _values(rest, "", ("template",)):
            targets.append(Word(".git/hooks"))  # the template's hooks land there
    elif sub == "config":
        texts = {w.text for w in rest}
        if not (texts & _GIT_CONFIG_READS) or texts & _GIT_CONFIG_WRITES:
            files = _values(rest, "f", ("file",))
            if "--global" in texts:
                files.append(Word("~/.gitconfig"))
            if "--system" in texts:
                files.append(Word("/etc/gitconfig"))
            targets += files or [Word(".git/config")]
    return targets
