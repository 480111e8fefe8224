"""Await a coroutine in this task, in a copy of the current context.

trio gives every task a copy of its spawner's :mod:`contextvars` context, so
a tool that sets a context variable never changes it for the code that ran the
tool.  The batch path runs a lone call (a one-call turn, every unsafe call) in
the body of its batch's nursery instead of a task of its own: the same scopes
around it, without spawning and scheduling a task.  :func:`run_taskless`
keeps the isolation a task would give: every step of the coroutine runs in
its own copy of the context, taken when it starts.

Cancellation and every other trap pass through untouched: what the coroutine
yields goes to trio as is, and what trio sends back (or throws in) goes to the
coroutine as is.
"""

from __future__ import annotations

import contextvars
import types
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from collections.abc import Coroutine, Generator

__all__ = ["run_taskless"]

T = TypeVar("T")


@types.coroutine
def run_taskless(coro: Coroutine[object, object, T]) -> Generator[object, object, T]:
    """Drive ``coro`` to its end in this task, each step in a copy of the current context.

    Returns:
        What ``coro`` returns.

    Raises:
        BaseException: whatever ``coro`` raises, as raised (``trio.Cancelled``
            included: cancellation reaches it exactly as it would reach a task).
    """
    context = contextvars.copy_context()
    sent: object = None
    thrown: BaseException | None = None
    while True:
        try:
            if thrown is None:
                trap = context.run(coro.send, sent)
            else:
                trap = context.run(coro.throw, thrown)
        except StopIteration as stop:
            result: T = stop.value
            return result
        thrown = None
        try:
            sent = yield trap
        except BaseException as exc:  # thrown into this frame: it belongs to ``coro``
            thrown = exc
