"""Observing a run: every state change of every call, in the spirit of trio's Instruments.

An :class:`Observer` sees ``queued``, ``started``, ``progress``, ``completed``,
``cancelled`` (with the reason), ``released``, plus ``call_began`` /
``call_ended`` around ``Tool.call`` itself (for idle detection), and each change
of whether everything executing can be interrupted.  An observer that raises
is logged and removed; it never breaks a turn.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Literal, TypeAlias

import attrs

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

__all__ = ["CallEvent", "CallEventKind", "CancelReason", "Observer", "ObserverSet"]

logger = logging.getLogger("trioexec")

CallEventKind: TypeAlias = Literal[
    "queued",
    "started",
    "progress",
    "completed",
    "cancelled",
    "released",
    "call_began",
    "call_ended",
]
CancelReason: TypeAlias = Literal[
    "sibling_error", "user_interrupted", "streaming_fallback", "timeout", "cancelled"
]
"""Why a call was stopped: a cascading sibling's error; the user (an interrupt or an
abort); a discarded streaming attempt; the call's own time limit; or the application
(an enclosing scope or deadline cancelled the run: trio's own reason is the event's
``detail``)."""


@attrs.frozen
class CallEvent:
    """One state change of one call, stamped with ``trio.current_time()``.

    ``data`` is the progress item for ``progress``, and the call's
    :class:`ToolResult` for ``completed``, ``cancelled`` and ``released`` (for a
    ``sibling_error`` cancellation it is None: which failure names the error
    is settled only when the answer is released).  ``reason`` says why a call
    was ``cancelled``; ``detail`` adds what the reason alone does not say: which
    limit stopped a ``timeout`` and after how long, or trio's cancel reason for
    ``cancelled``.
    """

    time: float
    tool_use_id: str
    kind: CallEventKind
    data: object = None
    reason: CancelReason | None = None
    detail: str | None = None


class Observer:
    """Base class for observers: override the hooks you need (each is synchronous)."""

    def call_event(self, event: CallEvent) -> None:
        """Called for every state change of every call."""

    def interruptible_changed(self, interruptible: bool) -> None:
        """Called when "everything executing is interruptible" flips."""


class ObserverSet:
    """Fans events out to observers; one that raises is logged and dropped.

    An observer's ``Exception`` ends there.  A ``BaseException``
    (``KeyboardInterrupt``, ``SystemExit``...) is never swallowed: the observer
    is dropped, the event still reaches the other observers, and the exception
    goes to ``on_fault`` (the run core sets it: the run stops, every call is
    still answered, and the exception propagates when the run ends), or is
    raised once every observer had the event when there is no ``on_fault``.
    """

    __slots__ = ("_observers", "on_fault")

    def __init__(self, observers: Iterable[Observer] = ()) -> None:
        self._observers = list(observers)
        self.on_fault: Callable[[BaseException], None] | None = None

    def __bool__(self) -> bool:
        return bool(self._observers)

    def call_event(self, event: CallEvent) -> None:
        """Deliver ``event`` to every observer."""
        fault: BaseException | None = None
        for observer in list(self._observers):
            try:
                observer.call_event(event)
            except Exception:
                self._drop(observer)
            except BaseException as exc:
                self._drop(observer)
                fault = fault or exc
        if fault is not None:
            self._fault(fault)

    def interruptible_changed(self, interruptible: bool) -> None:
        """Deliver an interruptible-state change to every observer."""
        fault: BaseException | None = None
        for observer in list(self._observers):
            try:
                observer.interruptible_changed(interruptible)
            except Exception:
                self._drop(observer)
            except BaseException as exc:
                self._drop(observer)
                fault = fault or exc
        if fault is not None:
            self._fault(fault)

    def _fault(self, exc: BaseException) -> None:
        if self.on_fault is None:
            raise exc
        self.on_fault(exc)

    def _drop(self, observer: Observer) -> None:
        logger.exception("trioexec observer %r raised; removing it", observer)
        if observer in self._observers:
            self._observers.remove(observer)
