"""The turn: one assistant message's worth of tool calls, and what can stop them."""

from __future__ import annotations

from typing import Protocol

import trio
from trio.lowlevel import enable_ki_protection

from ._cancel import cancel_at_end_of_instant

__all__ = ["Turn"]


class _TurnRun(Protocol):
    """What a run (``run_tools`` call or streaming executor) shows its turn."""

    @property
    def turn_scope(self) -> trio.CancelScope:
        """The run's turn scope: the outermost scope around its calls."""
        ...

    @property
    def in_progress(self) -> set[str]:
        """Ids of the run's calls that started and are not released yet."""
        ...

    def on_interrupt(self) -> None:
        """Stop the run's ``"cancel"`` calls; start nothing new."""

    def on_abort(self) -> None:
        """Record that every unfinished call of the run is being cancelled."""


class Turn:
    """Owns the cancellation of one turn: :meth:`interrupt` and :meth:`abort`.

    Every run started with ``turn=`` is attached to it for its lifetime;
    :meth:`abort` cancels each run's turn scope.  Sibling cancellation lives in
    a child scope of the turn scope, so a failing shell command never cancels
    the turn.  Both methods are synchronous and safe to call from any task of
    the same trio run (a key-press handler, a task reading the user's next
    message) at any time, also before a run starts or after it ended.

    Cancellation takes effect at the end of the current scheduler instant:
    a call that finishes in that same instant keeps its real result.
    """

    __slots__ = ("_runs", "aborted", "interrupted")

    def __init__(self) -> None:
        self.interrupted = False
        self.aborted = False
        self._runs: dict[_TurnRun, None] = {}  # insertion-ordered set

    @enable_ki_protection
    def interrupt(self) -> None:
        """The user typed a new message: stop ``"cancel"`` tools, start nothing new.

        ``"block"`` tools run to completion and keep their real results.
        """
        if self.interrupted or self.aborted:
            return
        self.interrupted = True
        for run in list(self._runs):
            run.on_interrupt()

    @enable_ki_protection
    def abort(self) -> None:
        """Hard stop: cancel every call of the turn, ``"block"`` tools included."""
        if self.aborted:
            return
        self.aborted = True
        self.interrupted = True
        now = trio.current_time()
        for run in list(self._runs):
            cancel_at_end_of_instant(run.turn_scope, now)
            run.on_abort()

    @property
    def in_progress_ids(self) -> frozenset[str]:
        """Ids of calls of this turn's runs that started and are not released yet."""
        return frozenset(i for run in self._runs for i in run.in_progress)

    def _attach(self, run: _TurnRun) -> None:
        """Register a run for its lifetime (its turn scope is cancelled at once if aborted)."""
        self._runs[run] = None
        if self.aborted:
            run.turn_scope.cancel(reason="user_interrupted")

    def _detach(self, run: _TurnRun) -> None:
        """Forget a run once it is over."""
        self._runs.pop(run, None)

    def __repr__(self) -> str:
        state = "aborted" if self.aborted else "interrupted" if self.interrupted else "running"
        return f"<Turn {state}>"
