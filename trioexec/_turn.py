"""The turn: one assistant message's worth of tool calls, and the scope that can stop them."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeAlias

import trio

__all__ = ["Turn", "cancel_at_end_of_instant"]

_Listener: TypeAlias = Callable[[], None]


class Turn:
    """Owns the cancellation of one turn: :meth:`interrupt` and :meth:`abort`.

    Each run (``run_tools`` call or streaming executor) opens its turn scope
    through :meth:`open_scope`; :meth:`abort` cancels every one of them.
    Sibling cancellation lives in a child scope of the turn scope, so a failing
    shell command never cancels the turn.  Both methods are synchronous and
    safe to call from any task of the same trio run (a key-press handler, a
    task reading the user's next message) at any time, also before a run
    starts or after it ended.

    Cancellation takes effect at the end of the current scheduler instant:
    a call that finishes in that same instant keeps its real result.
    """

    __slots__ = ("_abort_listeners", "_interrupt_listeners", "_scopes", "aborted", "interrupted")

    def __init__(self) -> None:
        self.interrupted = False
        self.aborted = False
        self._scopes: set[trio.CancelScope] = set()
        self._interrupt_listeners: list[_Listener] = []
        self._abort_listeners: list[_Listener] = []

    def interrupt(self) -> None:
        """The user typed a new message: stop ``"cancel"`` tools, start nothing new.

        ``"block"`` tools run to completion and keep their real results.
        """
        if self.interrupted or self.aborted:
            return
        self.interrupted = True
        for listener in list(self._interrupt_listeners):
            listener()

    def abort(self) -> None:
        """Hard stop: cancel every call of the turn, ``"block"`` tools included."""
        if self.aborted:
            return
        self.aborted = True
        self.interrupted = True
        now = trio.current_time()
        for scope in self._scopes:
            cancel_at_end_of_instant(scope, now)
        for listener in list(self._abort_listeners):
            listener()

    def open_scope(self) -> trio.CancelScope:
        """A fresh turn scope for one run; already cancelled if the turn was aborted."""
        scope = trio.CancelScope()
        if self.aborted:
            scope.cancel(reason="user_interrupted")
        self._scopes.add(scope)
        return scope

    def close_scope(self, scope: trio.CancelScope) -> None:
        """Forget a run's scope once the run is over."""
        self._scopes.discard(scope)

    def add_interrupt_listener(self, listener: _Listener) -> None:
        """Register a run's interrupt handler (called synchronously by :meth:`interrupt`)."""
        self._interrupt_listeners.append(listener)

    def remove_interrupt_listener(self, listener: _Listener) -> None:
        """Unregister a run's interrupt handler."""
        if listener in self._interrupt_listeners:
            self._interrupt_listeners.remove(listener)

    def add_abort_listener(self, listener: _Listener) -> None:
        """Register a run's abort handler (called synchronously by :meth:`abort`)."""
        self._abort_listeners.append(listener)

    def remove_abort_listener(self, listener: _Listener) -> None:
        """Unregister a run's abort handler."""
        if listener in self._abort_listeners:
            self._abort_listeners.remove(listener)

    def __repr__(self) -> str:
        state = "aborted" if self.aborted else "interrupted" if self.interrupted else "running"
        return f"<Turn {state}>"


def cancel_at_end_of_instant(scope: trio.CancelScope, now: float) -> None:
    """Cancel ``scope`` at the next scheduler tick rather than at once.

    Setting the deadline to *now* makes trio cancel the scope when it next
    processes deadlines, before it runs any task again.  Every task already
    woken in this instant therefore finishes its step first: a call whose
    work completed in the same (virtual) instant keeps its real result, and
    the outcome never depends on trio's randomised scheduling order.
    """
    if scope.deadline > now:
        scope.deadline = now
