"""Progress sent from another thread: handed to the run's thread, in order.

A tool working in ``trio.to_thread.run_sync`` (or in a thread of its own) may
send progress.  :func:`hand_over` gives each item to the run's thread through
the run's :class:`~trio.lowlevel.TrioToken` (``run_sync_soon``: thread-safe, in
order), where the core delivers it as it delivers its own; once the trio run
has ended the item is dropped, as progress after a call's answer always is.
"""

from __future__ import annotations

import contextlib
import logging
from typing import TYPE_CHECKING

import trio

if TYPE_CHECKING:
    from collections.abc import Callable

    from ._call import Call

__all__ = ["current_token", "hand_over"]

logger = logging.getLogger("trioexec")


def current_token() -> trio.lowlevel.TrioToken | None:
    """This trio run's token (None outside one: the asyncio twin builds a core too)."""
    try:
        return trio.lowlevel.current_trio_token()
    except RuntimeError:
        return None


def hand_over(
    token: trio.lowlevel.TrioToken | None,
    deliver: Callable[[Call, object], None],
    call: Call,
    data: object,
) -> None:
    """From another thread: have ``deliver(call, data)`` run in the run's thread.

    Raises:
        RuntimeError: the core was built outside a trio run (it has no token).
    """
    if token is None:
        raise RuntimeError("progress() from another thread needs the run's trio token")
    with contextlib.suppress(trio.RunFinishedError):  # the run is over: answered long ago
        token.run_sync_soon(_deliver, deliver, call, data)


def _deliver(deliver: Callable[[Call, object], None], call: Call, data: object) -> None:
    """In the run's thread (nothing escapes: an exception here would end the trio run)."""
    try:
        deliver(call, data)
    except Exception:
        logger.exception("progress of tool call %s failed", call.tool_use.id)
