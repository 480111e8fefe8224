"""A virtual-time asyncio event loop: the counterpart of trio's ``MockClock(autojump_threshold=0)``.

asyncio has no pluggable clock, so the loop is a :class:`asyncio.SelectorEventLoop`
whose ``time()`` is a number the loop owns, over a selector that never blocks.
asyncio asks its selector to wait only when no callback is ready; that moment
is "every task is blocked", and the selector uses it, in this order:

1. callbacks registered with :meth:`VirtualClockLoop.at_end_of_instant` run
   (the asyncio counterpart of trio processing a scope whose deadline is
   *now*: cancellations requested during an instant land once every task woken
   in it has reached its next blocking point);
2. tasks waiting in :func:`wait_all_tasks_blocked` are woken (trio's
   ``trio.testing.wait_all_tasks_blocked``);
3. otherwise virtual time jumps to the next timer.

With no timer and nothing else to do, the run is deadlocked: the loop raises
instead of hanging.  Only sockets nobody writes to are registered (the loop's
self-pipe), so nothing real is ever waited for: this loop is for scripted
runs, not for I/O.
"""

from __future__ import annotations

import asyncio
import selectors
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["VirtualClockLoop", "at_end_of_instant", "wait_all_tasks_blocked"]


class _NeverWaits(selectors.SelectSelector):
    """The selector: a pass through the loop with nothing ready is the idle point."""

    def __init__(self) -> None:
        super().__init__()
        self.loop: VirtualClockLoop | None = None

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        loop = self.loop
        if timeout == 0 or loop is None:  # a callback or a timer is due now: not idle
            return []
        loop._idle(timeout)
        return []


class VirtualClockLoop(asyncio.SelectorEventLoop):
    """An event loop whose clock only moves when every task waits (see the module docstring)."""

    def __init__(self) -> None:
        selector = _NeverWaits()
        super().__init__(selector)
        selector.loop = self
        self._virtual_now = 0.0
        self._end_of_instant: list[Callable[[], None]] = []
        self._idle_waiters: list[asyncio.Future[None]] = []

    def time(self) -> float:
        """The virtual time, in seconds."""
        return self._virtual_now

    def at_end_of_instant(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` once every task is blocked, before time moves on."""
        self._end_of_instant.append(callback)

    def _wait_idle(self) -> asyncio.Future[None]:
        future: asyncio.Future[None] = self.create_future()
        self._idle_waiters.append(future)
        return future

    def _idle(self, timeout: float | None) -> None:
        if self._end_of_instant:
            pending, self._end_of_instant = self._end_of_instant, []
            for callback in pending:
                callback()
            return
        waiters = [f for f in self._idle_waiters if not f.done()]
        self._idle_waiters.clear()
        if waiters:
            for future in waiters:
                future.set_result(None)
            return
        # The loop dropped cancelled timers from the head of its heap just before.
        scheduled: list[Any] = self._scheduled  # type: ignore[attr-defined]
        if not scheduled:
            raise RuntimeError("deadlock: every task is waiting and no timer is set")
        self._virtual_now = max(self._virtual_now, scheduled[0].when())


def at_end_of_instant(callback: Callable[[], None]) -> None:
    """Run ``callback`` at the end of the current instant.

    On a :class:`VirtualClockLoop`: once every task is blocked.  On any other
    loop (real time has no instants): at the next pass of the loop.
    """
    loop = asyncio.get_running_loop()
    if isinstance(loop, VirtualClockLoop):
        loop.at_end_of_instant(callback)
    else:
        loop.call_soon(callback)


async def wait_all_tasks_blocked() -> None:
    """Return once every other task is blocked (a :class:`VirtualClockLoop` only)."""
    loop = asyncio.get_running_loop()
    if not isinstance(loop, VirtualClockLoop):
        raise RuntimeError("wait_all_tasks_blocked needs a VirtualClockLoop")
    await loop._wait_idle()
