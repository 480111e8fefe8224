"""A call a hook made unsafe runs alone: the safe calls beside it step aside (invariant I3).

Admission decides a call's concurrency safety on the model's input, and a safe
call starts beside its safe siblings.  If a PreToolUse hook (or
``can_use_tool``) then replaces the input with one the tool cannot prove safe
(``git status`` -> ``rtk git status``), Claude Code runs it anyway; trioexec
runs it too, but alone, as if admission had partitioned it as unsafe.

:class:`SoloLock` is the run's gate in front of ``Tool.call`` for calls that
started as safe.  A safe call's body holds a shared place; a re-partitioned
call waits until no body holds one, then runs its body alone while every
other safe call waits at the gate (a waiting solo call goes first, so it is
never starved).  Nothing is held while waiting, so two re-partitioned calls
run one after the other, never deadlock.  Calls admitted as unsafe never come
here: the run's start rule already runs them alone.
"""

from __future__ import annotations

import trio
from trio.lowlevel import enable_ki_protection

__all__ = ["SoloLock"]


class SoloLock:
    """Shared places for the bodies of safe calls, or one solo place for a re-partitioned call."""

    def __init__(self) -> None:
        self._shared = 0
        self._solo = False
        self._waiting = 0  # re-partitioned calls waiting for the solo place
        self._lot = trio.lowlevel.ParkingLot()

    @property
    def shared(self) -> int:
        """How many safe bodies run now."""
        return self._shared

    @property
    def solo(self) -> bool:
        """Whether a re-partitioned call's body runs now."""
        return self._solo

    @enable_ki_protection
    def try_enter_shared(self) -> bool:
        """Take a shared place at once if nothing solo runs or waits (no checkpoint)."""
        if self._solo or self._waiting:
            return False
        self._shared += 1
        return True

    @enable_ki_protection
    async def enter_shared(self) -> None:
        """Wait until nothing solo runs or waits, then take a shared place.

        On cancellation nothing is taken and Cancelled propagates.
        """
        while not self.try_enter_shared():
            await self._lot.park()

    @enable_ki_protection
    def leave_shared(self) -> None:
        """Give the shared place back (the last one out lets a waiting solo call in)."""
        self._shared -= 1
        if not self._shared and self._waiting:
            self._lot.unpark_all()

    @enable_ki_protection
    async def enter_solo(self) -> None:
        """Wait until no body runs, then take the solo place.

        On cancellation nothing is taken, the calls it held back may go on,
        and Cancelled propagates.
        """
        self._waiting += 1
        try:
            while self._shared or self._solo:
                await self._lot.park()
        except BaseException:
            self._waiting -= 1
            self._lot.unpark_all()
            raise
        self._waiting -= 1
        self._solo = True

    @enable_ki_protection
    def leave_solo(self) -> None:
        """Give the solo place back; whoever waits tries again."""
        self._solo = False
        self._lot.unpark_all()
