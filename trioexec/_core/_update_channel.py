"""The streaming executor's update channel: one unbounded buffer, handed over a burst at a time.

The run core is the only sender (:class:`UpdateQueue`: ``send_nowait`` and
``close``, the two things a run does to its output); the application holds
the receive side, :class:`UpdateReceiveChannel`, which
:meth:`StreamingExecutor.remaining() <trioexec.StreamingExecutor.remaining>`
returns.

Why not a :func:`trio.open_memory_channel`: every ``receive`` of a buffered
item from a trio memory channel is a full checkpoint, a scheduler round trip
per update.  When a hundred calls finish in the same scheduler batch the
consumer would pay a hundred round trips for updates that were all ready at
once.  Iterating an :class:`UpdateReceiveChannel` instead hands over every
buffered update in one go, the way a byte stream's ``receive_some`` returns
everything buffered: each item is a cancellation point, and the iteration
yields to the scheduler whenever it has to wait for the next burst.
"""

from __future__ import annotations

from collections import deque
from typing import Protocol

import trio
from trio.lowlevel import enable_ki_protection

from .._models import Update

__all__ = ["UpdateQueue", "UpdateReceiveChannel", "UpdateSink", "open_update_channel"]


class UpdateSink(Protocol):
    """What a run does to its output: an :class:`UpdateQueue` or a trio memory send channel."""

    @enable_ki_protection
    def send_nowait(self, value: Update, /) -> None:
        """Deliver ``value`` now; never blocks."""

    @enable_ki_protection
    def close(self) -> None:
        """Nothing more will be sent."""


class UpdateQueue:
    """The sending side: an unbounded buffer and the one task waiting on it (if any)."""

    __slots__ = ("buffer", "receive_closed", "send_closed", "waiting")

    def __init__(self) -> None:
        self.buffer: deque[Update] = deque()
        self.waiting: trio.lowlevel.Task | None = None
        self.send_closed = False
        self.receive_closed = False

    @enable_ki_protection
    def send_nowait(self, update: Update) -> None:
        """Buffer ``update`` and wake the waiting receiver; never blocks.

        Raises:
            trio.ClosedResourceError: this side was closed.
            trio.BrokenResourceError: the receiving side was closed.
        """
        if self.send_closed:
            raise trio.ClosedResourceError
        if self.receive_closed:
            raise trio.BrokenResourceError
        self.buffer.append(update)
        task = self.waiting
        if task is not None:
            self.waiting = None
            trio.lowlevel.reschedule(task)

    @enable_ki_protection
    def close(self) -> None:
        """Nothing more will be sent: the receiver ends once the buffer is empty (idempotent)."""
        self.send_closed = True
        task = self.waiting
        if task is not None:
            self.waiting = None
            trio.lowlevel.reschedule(task)

    @enable_ki_protection
    def _abort(self, _: object) -> trio.lowlevel.Abort:
        self.waiting = None
        return trio.lowlevel.Abort.SUCCEEDED


class UpdateReceiveChannel(trio.abc.ReceiveChannel[Update]):
    """The updates of one streaming run, for one consumer at a time.

    Made by :meth:`StreamingExecutor.remaining() <trioexec.StreamingExecutor.remaining>`.
    It ends (``async for`` stops, :meth:`receive` raises
    :exc:`trio.EndOfChannel`) once the run has released everything.

    How the two ways of receiving checkpoint:

    - ``async for update in channel`` is a cancellation point on every item
      (:func:`trio.lowlevel.checkpoint_if_cancelled`) and a schedule point
      whenever it has to wait: updates that became ready together (a burst:
      the calls that finished in one scheduler batch) are handed over one
      after the other without a scheduler round trip in between, as a byte
      stream's ``receive_some`` hands over everything buffered at once.  A
      loop body that never awaits therefore lets no other task run until the
      burst is consumed (a burst is finite: nothing is added to it while the
      consumer runs).
    - :meth:`receive` is a full checkpoint, as for any trio channel.

    Cancellation: a cancelled ``async for`` or :meth:`receive` takes nothing
    out of the buffer; the update is still there for the next receive.
    """

    __slots__ = ("_queue",)

    def __init__(self, queue: UpdateQueue) -> None:
        self._queue = queue

    @enable_ki_protection
    def receive_nowait(self) -> Update:
        """The next buffered update, without waiting.

        Raises:
            trio.WouldBlock: nothing is buffered yet.
            trio.EndOfChannel: the run has released everything and it was received.
            trio.ClosedResourceError: this channel was closed.
        """
        queue = self._queue
        if queue.receive_closed:
            raise trio.ClosedResourceError
        if queue.buffer:
            return queue.buffer.popleft()
        if queue.send_closed:
            raise trio.EndOfChannel
        raise trio.WouldBlock

    @enable_ki_protection
    def receive_all_nowait(self) -> list[Update]:
        """Every buffered update, without waiting (an empty list once closed or ended)."""
        queue = self._queue
        if queue.receive_closed or not queue.buffer:
            return []
        drained = list(queue.buffer)
        queue.buffer.clear()
        return drained

    @enable_ki_protection
    async def receive(self) -> Update:
        """The next update: a full checkpoint (cancellation and schedule point).

        Raises:
            trio.EndOfChannel: the run has released everything and it was received.
            trio.ClosedResourceError: this channel was closed (before or while waiting).
            trio.BusyResourceError: another task is already waiting on it.
            trio.Cancelled: nothing was taken out of the channel.
        """
        await trio.lowlevel.checkpoint_if_cancelled()
        queue = self._queue
        if queue.buffer and not queue.receive_closed:
            update = queue.buffer.popleft()
            await trio.lowlevel.cancel_shielded_checkpoint()
            return update
        return await self._wait()

    @enable_ki_protection
    async def __anext__(self) -> Update:
        """The next update: a cancellation point; a schedule point only when it waits."""
        await trio.lowlevel.checkpoint_if_cancelled()
        queue = self._queue
        while True:  # _wait, inlined (hot path: docs/performance.md#inlined)
            if queue.receive_closed:
                raise trio.ClosedResourceError
            if queue.buffer:
                return queue.buffer.popleft()
            if queue.send_closed:
                raise StopAsyncIteration
            if queue.waiting is not None:
                raise trio.BusyResourceError("another task is already receiving the updates")
            queue.waiting = trio.lowlevel.current_task()
            await trio.lowlevel.wait_task_rescheduled(queue._abort)

    @enable_ki_protection
    async def _wait(self) -> Update:
        queue = self._queue
        while True:
            if queue.receive_closed:
                raise trio.ClosedResourceError
            if queue.buffer:
                return queue.buffer.popleft()
            if queue.send_closed:
                raise trio.EndOfChannel
            if queue.waiting is not None:
                raise trio.BusyResourceError("another task is already receiving the updates")
            queue.waiting = trio.lowlevel.current_task()
            await trio.lowlevel.wait_task_rescheduled(queue._abort)

    @enable_ki_protection
    def close(self) -> None:
        """Stop receiving: the buffer is dropped and the run delivers nothing more here.

        A task waiting on the channel gets :exc:`trio.ClosedResourceError`.
        Idempotent.  The run itself goes on (it still answers every call).
        """
        queue = self._queue
        if queue.receive_closed:
            return
        queue.receive_closed = True
        queue.buffer.clear()
        task = queue.waiting
        if task is not None:
            queue.waiting = None
            trio.lowlevel.reschedule(task)  # it finds the channel closed

    async def aclose(self) -> None:
        """:meth:`close`, then a checkpoint."""
        self.close()
        await trio.lowlevel.checkpoint()


def open_update_channel() -> tuple[UpdateQueue, UpdateReceiveChannel]:
    """A new update channel: the run's sending side and the consumer's receiving side."""
    queue = UpdateQueue()
    return queue, UpdateReceiveChannel(queue)
