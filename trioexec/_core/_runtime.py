"""The runtime seam: the clock a run reads and the cancel scopes its calls run in.

A :class:`RunCore` asks its runtime, and nothing else, for the time and for a
fresh scope per call.  trioexec runs on :data:`TRIO_RUNTIME`; the asyncio twin
in ``benchmarks/asyncio_twin`` gives its own (its loop's clock, its own scope
type), which is how the same kernel runs on both.  Nothing else in the kernel
knows which runtime it is on.
"""

from __future__ import annotations

from typing import Protocol

import attrs
import trio

__all__ = ["TRIO_RUNTIME", "Runtime", "TrioRuntime"]


class Runtime(Protocol):
    """What the kernel needs of an async runtime beyond what its front ends do."""

    def now(self) -> float:
        """The run's clock, in seconds (events, deadlines, the grace period)."""
        ...

    def new_scope(self) -> trio.CancelScope:
        """A fresh, unentered cancel scope for one call."""
        ...


@attrs.frozen
class TrioRuntime:
    """trio's clock and trio's cancel scopes."""

    def now(self) -> float:
        """``trio.current_time()``."""
        return trio.current_time()

    def new_scope(self) -> trio.CancelScope:
        """``trio.CancelScope()``."""
        return trio.CancelScope()


TRIO_RUNTIME: Runtime = TrioRuntime()
"""The runtime every run of trioexec itself is on."""
