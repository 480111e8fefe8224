"""Cancel scopes for asyncio: the part of trio the orchestration cannot do without.

asyncio cancels *tasks* (``Task.cancel()``), one at a time, and a
``CancelledError`` carries no reliable reason (a ``TaskGroup`` cancelling its
children passes none).  trioexec's core thinks in *scopes*: a cascade cancels
the sibling scope, an abort the turn scope, an interrupt one call's scope, and
every stopped call must say which of them stopped it.  This module rebuilds
that much:

- a :class:`Scope` is entered with ``with``; scopes nest through a context
  variable (a scope entered in a task a TaskGroup started inside another
  scope is nested in that one);
- :meth:`Scope.cancel` (or setting :attr:`Scope.deadline` to *now*, which is
  what trioexec's ``cancel_at_end_of_instant`` does) cancels, at the end of
  the instant, every task that entered the scope or a scope nested in it, with
  the reason as the ``CancelledError`` message.  A task a TaskGroup started
  inside the scope without entering a scope of its own is stopped by its
  group, when the group's owner is cancelled (as a nursery's children are);
- leaving the scope swallows the ``CancelledError`` it caused (after
  ``Task.uncancel()``, so asyncio's own counting stays right) and sets
  :attr:`Scope.cancelled_caught`;
- :func:`cancelling_scope` says which scope around the current task was
  cancelled, which is how a stopped call learns its reason.

What it does not rebuild: trio's cancellation is level-triggered (every
checkpoint inside a cancelled scope raises again); asyncio's is edge-triggered
(one ``CancelledError`` per ``cancel()``), so code that swallows it keeps
running.  There is no shielding either (``asyncio.shield`` protects an
awaitable, not a block of code).
"""

from __future__ import annotations

import asyncio
import contextvars
import math
from typing import TYPE_CHECKING, Self

from ._loop import at_end_of_instant

if TYPE_CHECKING:
    from types import TracebackType

__all__ = ["Scope", "cancelling_scope", "current_scope"]

_CURRENT: contextvars.ContextVar[Scope | None] = contextvars.ContextVar(
    "asyncio_twin_scope", default=None
)


class Scope:
    """A block of code that can be cancelled as one (see the module docstring).

    Attributes:
        reason: why it was cancelled (the ``reason=`` given to :meth:`cancel`).
        cancel_called: :meth:`cancel` was called (or the deadline passed).
        cancelled_caught: leaving it swallowed the cancellation it caused.
    """

    __slots__ = (
        "_children",
        "_delivered",
        "_parent",
        "_pending",
        "_tasks",
        "_tokens",
        "cancel_called",
        "cancelled_caught",
        "reason",
    )

    def __init__(self) -> None:
        self._parent: Scope | None = None
        self._children: dict[Scope, None] = {}
        self._tasks: dict[asyncio.Task[object], None] = {}
        self._delivered: dict[asyncio.Task[object], int] = {}
        self._tokens: dict[asyncio.Task[object], contextvars.Token[Scope | None]] = {}
        self._pending = False
        self.cancel_called = False
        self.cancelled_caught = False
        self.reason: str | None = None

    # trio's CancelScope.deadline, as far as trioexec's cancel_at_end_of_instant uses it
    @property
    def deadline(self) -> float:
        """``-inf`` once cancelled, else ``inf`` (only "now" deadlines are supported)."""
        return -math.inf if self.cancel_called else math.inf

    @deadline.setter
    def deadline(self, value: float) -> None:
        if value < math.inf:
            self.cancel()

    def cancel(self, reason: str | None = None) -> None:
        """Cancel every task inside this scope at the end of the current instant."""
        if self.cancel_called:
            return
        self.cancel_called = True
        self.reason = reason
        try:
            at_end_of_instant(self._deliver)
        except RuntimeError:  # no running loop: nothing can be inside the scope yet
            return
        self._pending = True

    def _deliver(self) -> None:
        self._pending = False
        for scope in self._walk():
            for task in list(scope._tasks):
                if task.done() or task in self._delivered:
                    continue
                self._delivered[task] = 1
                task.cancel(msg=self.reason)

    def _walk(self) -> list[Scope]:
        found, todo = [], [self]
        while todo:
            scope = todo.pop()
            found.append(scope)
            todo.extend(scope._children)
        return found

    @property
    def parent(self) -> Scope | None:
        """The scope this one was entered in."""
        return self._parent

    def __enter__(self) -> Self:
        task = asyncio.current_task()
        assert task is not None, "a Scope is entered inside a task"
        self._parent = _CURRENT.get()
        if self._parent is not None:
            self._parent._children[self] = None
        self._tasks[task] = None
        self._tokens[task] = _CURRENT.set(self)
        if self.cancel_called and not self._pending:  # cancelled before it was entered
            self._delivered[task] = 1
            task.cancel(msg=self.reason)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool:
        task = asyncio.current_task()
        assert task is not None
        _CURRENT.reset(self._tokens.pop(task))
        self._tasks.pop(task, None)
        if self._parent is not None and not self._tasks:
            self._parent._children.pop(self, None)
        delivered = self._delivered.pop(task, 0)
        if not delivered:
            return False
        for _ in range(delivered):
            task.uncancel()
        if isinstance(exc, asyncio.CancelledError) and task.cancelling() == 0:
            self.cancelled_caught = True
            return True  # our own cancellation ends here, as trio's scope catches it
        return False


def current_scope() -> Scope | None:
    """The innermost scope the current task is in."""
    return _CURRENT.get()


def cancelling_scope() -> Scope | None:
    """The outermost cancelled scope around the current task (None: none is cancelled)."""
    found = None
    scope = _CURRENT.get()
    while scope is not None:
        if scope.cancel_called:
            found = scope
        scope = scope._parent
    return found
