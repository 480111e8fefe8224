"""Per-call time limits: a total ``timeout`` and an ``idle_timeout`` that progress resets.

A limit covers the tool's ``call`` step only (SPEC §4 step 8): waiting for a
hook or for the user's permission answer never counts.  When a limit runs
out, only that call's limit scope is cancelled, with the end-of-instant rule
every cancellation here follows: a tool that returns in the same instant
keeps its real result.

```
call step   |==== running ==== progress ====== progress =============X        timeout = 10 s
            0                   3               6          idle 4 s -> 10       idle_timeout = 4 s
                                                                     ^ limit scope cancelled at
                                                                       the end of that instant
```

One watch per run, and no task at all while no call with a limit is running:
the watch task starts (in the run's nursery, or in the calls' nursery of a
run that has none of its own, shielded either way) when the first limited
call enters its call step and ends when none is left.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import attrs
import trio
from trio.lowlevel import enable_ki_protection

from .._contract._validation import is_time_limit
from .._errors import ConfigurationError
from ._call import Expiry, LimitKind
from ._cancel import cancel_at_end_of_instant

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["TimeoutWatch", "ToolTimeouts", "resolve_limits"]


def _limit(value: float | None) -> float | None:
    if value is None:
        return None
    if not is_time_limit(value):
        raise ConfigurationError(f"a time limit must be a number of seconds > 0, not {value!r}")
    return float(value)


@attrs.frozen
class ToolTimeouts:
    """A run's override of one tool's time limits (seconds; None: no limit).

    Attributes:
        timeout: the most the call step may take in all.
        idle_timeout: the most it may go without a progress update.
    """

    timeout: float | None = attrs.field(default=None, converter=_limit)
    idle_timeout: float | None = attrs.field(default=None, converter=_limit)


def resolve_limits(
    name: str, timeout: object, idle_timeout: object, overrides: Mapping[str, ToolTimeouts]
) -> ToolTimeouts | None:
    """The limits a call of tool ``name`` runs under, or None when it has none.

    A run's override (by tool name) replaces the tool's own attributes, which
    were checked when the tool was compiled.
    """
    override = overrides.get(name)
    if override is not None:
        limits = override
    elif timeout is None and idle_timeout is None:
        return None
    else:  # checked when the tool was compiled (ToolDefinitionError)
        limits = ToolTimeouts(timeout, idle_timeout)  # type: ignore[arg-type]
    if limits.timeout is None and limits.idle_timeout is None:
        return None
    return limits


@attrs.define(eq=False)
class _Armed:
    """One call step under a limit."""

    scope: trio.CancelScope
    limits: ToolTimeouts
    began: float
    last_progress: float
    fired: LimitKind | None = None
    fired_at: float = 0.0

    def due(self) -> tuple[float, LimitKind]:
        """When the first limit runs out, and which."""
        total = math.inf if self.limits.timeout is None else self.began + self.limits.timeout
        idle = (
            math.inf
            if self.limits.idle_timeout is None
            else self.last_progress + self.limits.idle_timeout
        )
        return (idle, "idle_timeout") if idle < total else (total, "timeout")


class TimeoutWatch:
    """Cancels the limit scope of every call step that overruns, for one run.

    Attributes:
        nursery: where the watch task runs; set by the run while one is open
            (:meth:`~trioexec._core._run.RunCore.host_watches`).
    """

    __slots__ = ("_armed", "_running", "_scope", "nursery")

    def __init__(self) -> None:
        self.nursery: trio.Nursery | None = None
        self._armed: dict[str, _Armed] = {}
        self._running = False
        self._scope: trio.CancelScope | None = None

    @enable_ki_protection
    def arm(self, tool_use_id: str, scope: trio.CancelScope, limits: ToolTimeouts) -> None:
        """The call step of ``tool_use_id`` begins now, under ``limits``, in ``scope``."""
        now = trio.current_time()
        self._armed[tool_use_id] = _Armed(scope, limits, now, now)
        self._reschedule()

    @enable_ki_protection
    def touch(self, tool_use_id: str) -> None:
        """A progress update arrived: the idle limit starts again."""
        armed = self._armed.get(tool_use_id)
        if armed is not None and armed.fired is None:
            armed.last_progress = trio.current_time()

    @enable_ki_protection
    def disarm(self, tool_use_id: str) -> Expiry | None:
        """The call step ended; which limit stopped it, if one did."""
        armed = self._armed.pop(tool_use_id, None)
        if not self._armed and self._scope is not None:
            self._scope.cancel(reason="no limited call step left")
        if armed is None or armed.fired is None:
            return None
        limit = armed.limits.timeout if armed.fired == "timeout" else armed.limits.idle_timeout
        assert limit is not None
        return Expiry(armed.fired, limit, armed.fired_at - armed.began)

    @enable_ki_protection
    def _reschedule(self) -> None:
        if self.nursery is None:
            return
        if not self._running:
            self._running = True
            self.nursery.start_soon(self._watch)
        elif self._scope is not None:
            self._scope.deadline = min(self._scope.deadline, self._next_due())

    def _next_due(self) -> float:
        pending = [a.due()[0] for a in self._armed.values() if a.fired is None]
        return min(pending, default=math.inf)

    @enable_ki_protection
    async def _watch(self) -> None:
        # Shielded: the watch may run in the calls' own nursery, and a call
        # that ignores its cancellation still has its limits.  It ends as soon
        # as no limited call step is left (every step disarms as it ends).
        try:
            with trio.CancelScope(shield=True):
                while any(a.fired is None for a in self._armed.values()):
                    with trio.CancelScope(deadline=self._next_due()) as scope:
                        self._scope = scope
                        await trio.sleep_forever()
                    self._scope = None
                    now = trio.current_time()
                    for armed in self._armed.values():
                        due, kind = armed.due()
                        if armed.fired is None and due <= now:
                            armed.fired, armed.fired_at = kind, now
                            cancel_at_end_of_instant(armed.scope, now)
        finally:
            self._scope = None
            self._running = False
