"""The start rule (SPEC §3): which call may start beside the calls executing now.

A safe call may start while only safe calls execute; an unsafe call starts
only when nothing executes; never more than the concurrency limit at once.
:class:`ExecutingSet` is the set of executing calls with the counts the rule
and the run's other questions read in O(1): is an unsafe call running (the
ordered gate holds results behind it), is everything executing interruptible.

Pure: no trio, nothing awaits.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator

    from ._call import Call

__all__ = ["ExecutingSet"]


class ExecutingSet:
    """The calls of one run executing now.

    Attributes:
        limit: how many calls may execute at once.
        unsafe_running: the index of the executing unsafe call, if one is.
    """

    __slots__ = ("_blocking", "_calls", "_unsafe", "limit", "unsafe_running")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.unsafe_running: int | None = None
        self._calls: set[Call] = set()
        self._unsafe = 0
        self._blocking = 0  # executing calls that do not stop on an interrupt

    def may_start(self, call: Call) -> bool:
        """SPEC §3 start rule plus the concurrency limit."""
        if len(self._calls) >= self.limit:
            return False
        if not self._calls:
            return True
        return call.admission.safe and self._unsafe == 0

    def add(self, call: Call) -> None:
        """``call`` started (its scope, if it has one, is set already)."""
        self._calls.add(call)
        if not call.admission.safe:
            self._unsafe += 1
            self.unsafe_running = call.index
        if call.scope is None:  # only an interruptible ("cancel") call has a scope
            self._blocking += 1

    def remove(self, call: Call) -> None:
        """``call`` is answered (it was executing)."""
        self._calls.discard(call)
        if not call.admission.safe:
            self._unsafe -= 1
            self.unsafe_running = None
        if call.scope is None:
            self._blocking -= 1

    @property
    def interruptible(self) -> bool:
        """Something executes, and all of it stops on an interrupt."""
        return bool(self._calls) and self._blocking == 0

    def __len__(self) -> int:
        return len(self._calls)

    def __iter__(self) -> Iterator[Call]:
        return iter(self._calls)
