"""Which commands run only themselves: the short cut past the view walk.

:func:`runs_itself` says, from a command's words alone, that
:func:`~._views.command_views` would give that command and nothing else: a
plain name that hands nothing on, a program that could carry another one in an
option (``rg --pre``, ``ssh -o ProxyCommand``, ``git log --ext-diff``) none of
whose options here does, or ``git`` with no global option.  Read more broadly
than :mod:`._carriers` reads the options, so a command it passes has no other
view (a property test over carriers, git subcommands and their options checks
it).  Pure functions over :mod:`._words` values.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._carriers import CARRIERS, GIT_CARRIERS
from ._programs import (
    ALWAYS_UNSURE,
    DECLARATIONS,
    OPAQUE_WRAPPERS,
    SCRIPT_FIRST_OPERAND,
    SHELLS,
    WRAPPERS,
)

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ._words import Word

__all__ = ["runs_itself"]


_SPECIAL_NAMES = frozenset(
    [
        *DECLARATIONS,
        *ALWAYS_UNSURE,
        *SHELLS,
        *SCRIPT_FIRST_OPERAND,
        "find",
        "git",
        *OPAQUE_WRAPPERS,
        *WRAPPERS,
        *CARRIERS,
        "!",
    ]
)
"""Every command name the view walk (:mod:`._views`) reads further than its words."""


def runs_itself(words: tuple[Word, ...]) -> bool:
    """Whether the views of ``words`` (:mod:`._views`) are ``words`` alone: a plain
    command name (known, no ``/``) that hands nothing on, a carrier none of whose
    options carries a program, or ``git`` with no global option."""
    name = words[0]
    text = name.text
    if not name.static or name.expands or name.ansi_c or not text or "/" in text:
        return False
    if text not in _SPECIAL_NAMES:
        return True
    if text in _OPTION_CARRIERS:
        # a program whose options may carry one: none of its options does here
        long, short, exact = _OPTION_CARRIERS[text]
        return _carries_nothing(words, 1, long, short, exact)
    if text != "git":
        return False
    if len(words) == 1:
        return True
    following = words[1]
    if not following.static or following.expands or following.text.startswith("-"):
        return False
    sub = following.text
    if sub not in GIT_CARRIERS:
        return True
    options = _GIT_OPTIONS.get(sub)
    if options is None:  # it runs a program without an option, or reads `-c` settings
        return sub not in _GIT_RUNNING and all(
            w.static and not w.text.startswith("-") for w in words[2:]
        )
    return _carries_nothing(words, 2, options[0], options[1], {})


def _carries_nothing(
    words: tuple[Word, ...],
    start: int,
    long: tuple[str, ...],
    short: frozenset[str],
    exact: Mapping[str, object],
) -> bool:
    """Whether no word of ``words[start:]`` may be an option that carries a program (what
    :func:`~._carriers.carried` and :func:`~._carriers.git_carried` look for, read more
    broadly): every word static, none ``+...``, none an exact carrier, no long option
    a prefix of a carrying one (``--pr`` is ``--pre``), no short cluster holding a
    carrying letter."""
    for index in range(start, len(words)):
        word = words[index]
        if not word.static or word.expands:
            return False  # computed, or a glob that may expand to any option
        text = word.text
        if text[:1] == "+" or text in exact:
            return False
        if text[:2] == "--":
            given = text[2:].partition("=")[0]
            if len(text) > 2 and any(option.startswith(given) for option in long):
                return False
        elif text[:1] == "-" and len(text) > 1 and not short.isdisjoint(text[1:]):
            return False
    return True


_OPTION_CARRIERS = {
    name: (tuple(carrier.long), frozenset(carrier.short), carrier.exact)
    for name, carrier in CARRIERS.items()
    if name not in ("socat", "hash", "tar") and not carrier.long_with_one_dash
}
"""Programs that carry a program only in an option (``socat`` also in an address, ``tar``
in its old-style first word, ``gdb`` in long options spelt with one dash), with those
options (``ssh``'s ``-o`` among its letters)."""
_GIT_RUNNING = frozenset(["bisect", "submodule", "config", "filter-branch"])
"""git subcommands that may run a program without an option (``git bisect run``)."""
_GIT_OPTIONS = {
    sub: (tuple(k for k in table if len(k) > 1), frozenset(k for k in table if len(k) == 1))
    for sub, table in GIT_CARRIERS.items()
    if sub not in _GIT_RUNNING and sub not in ("clone", "init", "fetch", "pull")
}
"""git subcommands whose options alone carry a program, with those options (long, short);
``clone``, ``init``, ``fetch`` and ``pull`` also read ``-c`` settings."""
