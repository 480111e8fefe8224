"""The files a shell command is known to write: ``tee F``, ``sort -o F``, ``sed -i``...

Pure functions over :mod:`._shell_syntax` words.  A target the analysis cannot
read is returned as a word that is not ``static``; callers treat it as any
path.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING

from ._syntax import Word

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["write_targets"]

_ANY = Word("\0", "\0", static=False)
_TARGET_LAST = frozenset(["cp", "mv", "install", "ln", "rsync", "scp"])
_TARGET_ALL = frozenset(["tee", "touch", "truncate", "mkdir", "rm", "rmdir", "shred", "unlink"])
_VALUED_TARGETS = {
    "sort": ("-o", "--output"),
    "curl": ("-o", "--output"),
    "wget": ("-O", "--output-document"),
}


_WRITERS = frozenset([*_TARGET_LAST, *_TARGET_ALL, *_VALUED_TARGETS, "dd", "uniq", "sed"])


def write_targets(words: Sequence[Word]) -> list[Word]:
    """The files ``words`` (one simple command) is known to write or remove.

    ``tee F``, ``touch F``, ``rm F``...: every operand; ``cp``/``mv``/``ln``/
    ``install``: the last operand or ``-t DIR``; ``sort -o F``; ``sed -i``: its
    operands; ``dd of=F``; ``curl -o F``, ``wget -O F``.  Commands not listed
    here are not known to write anything.
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
        targets = [after for w, after in itertools.pairwise(args) if w.text == "-t"]
        targets += [Word(w.text.partition("=")[2]) for w in args
                    if w.text.startswith("--target-directory=")]  # fmt: skip
        return targets or operands[-1:]
    if base == "dd":
        return [Word(w.text[3:], static=w.static) for w in args if w.text.startswith("of=")]
    valued = _VALUED_TARGETS.get(base)
    if valued:
        return _option_values(args, *valued)
    if base == "uniq":  # `uniq in out` writes out
        return operands[1:2]
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
            found.append(args[index + 1] if index + 1 < len(args) else _ANY)
        elif text.startswith(long + "="):
            found.append(Word(text.partition("=")[2], static=word.static))
        elif text.startswith(short) and len(text) > len(short) and not text.startswith("--"):
            found.append(Word(text[len(short) :], static=word.static))
    return found
