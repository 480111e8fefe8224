"""Code an arithmetic context may run, hidden where the line shows only data.

bash evaluates a variable's value as an expression in an arithmetic context,
and ``a[$(cmd)]`` there runs ``cmd``; :func:`hides_code_in_strings` says when a
line may do that with code it shows only as a string or a value it does not
show.  Pure functions over :mod:`._words` values.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ._programs import ARITHMETIC_COMMANDS

if TYPE_CHECKING:
    from ._words import ShellAnalysis

__all__ = ["hides_code_in_strings"]


_ARITHMETIC_CONTEXTS = frozenset(["arithmetic", "subscript", "conditional expression"])
_CODE = re.compile(r"\$\((?!\()|`|\$\{")
"""A command substitution (not ``$((``, arithmetic), a backtick or a parameter expansion."""
_ARITHMETIC_ONLY = re.compile(r"\$\(\([^`$]*\)\)")
"""A value that is one arithmetic expansion over names and numbers: a number."""
_READS_VALUES = frozenset(["read", "mapfile", "readarray", "getopts"])
"""Commands that give a variable a value the line does not show."""


def hides_code_in_strings(analysis: ShellAnalysis) -> bool:
    """Code the shell may run through arithmetic evaluation, where the line shows it only
    as data.  An arithmetic context (``(( ))``, ``$(( ))``, ``for ((...))``, ``[[ -eq ]]``,
    an array subscript, ``${!x}``, ``${s:i}``, ``let``, ``test -v``...) evaluates a
    variable's value as an expression, and ``a[$(cmd)]`` in it runs ``cmd``: so a quoted
    ``$(...)``, backtick or ``${`` anywhere in the line, or a value the line does not show
    (``read``, ``mapfile``, a substitution, a computed assignment), is unsure."""
    unmodelled = analysis.unmodelled
    if not unmodelled or _ARITHMETIC_CONTEXTS.isdisjoint(unmodelled):
        for c in analysis.commands:
            if c.words and c.words[0].text in ARITHMETIC_COMMANDS:
                break
        else:
            return False
    if "substitution" in unmodelled:
        return True  # its output may be a variable's value, or evaluated in place
    for c in analysis.commands:
        if c.words and c.words[0].text in _READS_VALUES:
            return True
        for w in c.assignments:
            if _CODE.search(w.text):
                return True
            if not w.static and not _ARITHMETIC_ONLY.fullmatch(w.raw.partition("=")[2]):
                return True  # `n=$((n+1))` holds a number; any other computed value may not
        for w in c.words:
            if _CODE.search(w.text) or ("=" in w.text and not w.static):
                return True
    return False
