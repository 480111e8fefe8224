"""The ordered gate: which completed calls may leave the run now (SPEC §3 "Release").

Progress is never held; results are.  With ``result_order="arrival"`` a
completed result waits until every earlier call has been released.  With
``"completion"`` (Claude Code's order) results leave as they complete, except
behind an executing unsafe call, and a sibling-error answer waits for every
earlier call (an earlier call failing later in the same instant still names
the error).  The gate also decides when a released call's context modifier
applies: at release, or (a safe batch of the batch path) after the batch, in
tool_use order.

Pure: no trio, nothing awaits.  The gate only says *which* calls go; the run
core releases them (emits, delivers, records the stop reason).
"""

from __future__ import annotations

import heapq
from typing import TYPE_CHECKING, Literal, TypeAlias

from ._call import CallOutcome

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from .._contract._tool import ContextModifier
    from ._call import Call

__all__ = ["OrderedGate", "ResultOrder"]

ResultOrder: TypeAlias = Literal["arrival", "completion"]


class OrderedGate:
    """Release order for the calls of one run.

    The run tells the gate each completion (:meth:`completed`), then releases
    what :meth:`releasable` yields, marking each yielded call ``released``
    before asking for the next.

    Attributes:
        order: ``"arrival"`` or ``"completion"``.
        defer_modifiers: hold context modifiers until :meth:`take_deferred`
            (a safe batch of the batch path) instead of applying them at release.
    """

    __slots__ = (
        "_completed_heap",
        "_deferred",
        "_first_unanswered",
        "_next_release",
        "defer_modifiers",
        "order",
    )

    def __init__(self, order: ResultOrder, *, defer_modifiers: bool = False) -> None:
        self.order = order
        self.defer_modifiers = defer_modifiers
        self._next_release = 0  # arrival order: the first call not yet released
        self._completed_heap: list[int] = []  # completion order: completed, not released
        self._first_unanswered = 0  # completion order: no call before it is unanswered
        self._deferred: list[tuple[int, ContextModifier]] = []

    def completed(self, call: Call) -> None:
        """``call`` has its answer (call once per call)."""
        if self.order == "completion":
            heapq.heappush(self._completed_heap, call.index)

    def releasable(self, calls: Sequence[Call], *, unsafe_running: int | None) -> Iterator[Call]:
        """The calls that may be released now, in release order.

        In arrival order the head call is also yielded while it is still
        ``queued``: the run answers it if it can never start (then releases
        it) or stops iterating.  The gate moves past a yielded call only once
        it is ``released``; stopping early loses nothing.

        Args:
            calls: every call of the run, in arrival order (``calls[i].index == i``).
            unsafe_running: the index of the executing unsafe call, if any.
        """
        if self.order == "completion":
            return self._in_completion_order(calls, unsafe_running)
        head = self._next_release
        if head >= len(calls) or calls[head].state not in _AT_HEAD:
            return _NOTHING  # the head is still executing: nothing moves (the common case)
        return self._in_arrival_order(calls)

    def head(self, calls: Sequence[Call]) -> Call | None:
        """Arrival order: the first unreleased call if it may leave now, else None.

        It is offered while ``completed``, and also while still ``queued`` (the
        run answers it if it can never start, or stops).  Tell the gate with
        :meth:`passed` once it is released; :meth:`releasable` does the same
        as a loop.
        """
        head = self._next_release
        if head < len(calls) and calls[head].state in _AT_HEAD:
            return calls[head]
        return None

    def passed(self, call: Call) -> None:
        """Arrival order: ``call``, offered by :meth:`head`, was released; move past it."""
        if call.index == self._next_release and call.state == "released":
            self._next_release += 1

    def _in_arrival_order(self, calls: Sequence[Call]) -> Iterator[Call]:
        # The run's own release loop is this one, written out with the same
        # two steps (head, passed): one rule, whichever form reads it.
        while (call := self.head(calls)) is not None:
            yield call
            if not _is_released(call):
                return
            self.passed(call)

    def _in_completion_order(
        self, calls: Sequence[Call], unsafe_running: int | None
    ) -> Iterator[Call]:
        # Work is proportional to what is released: completed-but-held indices
        # wait in a heap, so a slow call at the head costs nothing per event.
        while self._first_unanswered < len(calls) and calls[self._first_unanswered].state in (
            "completed",
            "released",
        ):
            self._first_unanswered += 1
        blocker = len(calls) if unsafe_running is None else unsafe_running
        heap = self._completed_heap
        held: list[int] = []
        offered: Call | None = None
        try:
            while heap and heap[0] < blocker:
                index = heapq.heappop(heap)
                call = calls[index]
                if _is_sibling_cancelled(call) and self._first_unanswered < index:
                    held.append(index)
                    continue
                offered = call
                yield call
                offered = None
                if not _is_released(call):
                    held.append(index)
                    return
        finally:
            # Whatever was not released goes back, also when the run stops early.
            if offered is not None and not _is_released(offered):
                held.append(offered.index)
            for index in held:
                heapq.heappush(heap, index)

    def at_release(self, index: int, modifier: ContextModifier) -> ContextModifier | None:
        """A released call's modifier: returned to apply now, or kept (deferred) and None."""
        if self.defer_modifiers:
            self._deferred.append((index, modifier))
            return None
        return modifier

    def take_deferred(self) -> list[tuple[int, ContextModifier]]:
        """The deferred modifiers in tool_use order (never completion order), forgotten here."""
        if not self._deferred:
            return []
        deferred = sorted(self._deferred, key=lambda item: item[0])
        self._deferred.clear()
        return deferred


_AT_HEAD = frozenset({"completed", "queued"})
"""The states in which the head call is offered in arrival order."""

_NOTHING: Iterator[Call] = iter(())


def _is_released(call: Call) -> bool:
    """Whether the run released ``call`` (read after a yield: the run changed it meanwhile)."""
    return call.state == "released"


def _is_sibling_cancelled(call: Call) -> bool:
    outcome = call.outcome
    return isinstance(outcome, CallOutcome) and outcome.cancel_reason == "sibling_error"
