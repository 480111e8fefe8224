"""Every rule about exception groups, in one place.

Trio's nurseries wrap what their tasks raise in ``BaseExceptionGroup``.  The
runtime reads those groups in a few fixed ways, each a function here:

- :func:`leaves`: the plain exceptions inside a group, nested groups flattened.
- :func:`is_cancellation`: nothing but ``Cancelled`` (a tool's own nursery being
  cancelled is still just a cancellation).
- :func:`split_cancelled`: ``Cancelled`` plus ordinary failures (a tool's nursery
  failed while being cancelled: the cancellation wins, the failures are logged).
- :func:`single_exception`: the one exception of a group that holds only one, so
  a front end can raise it unwrapped (a tool's ``KeyboardInterrupt``).
- :func:`unwrap_single`: a group of a single exception, raised from a block,
  becomes that exception (the batch path's own nurseries).
- :func:`is_only`: whether a nursery's group carries nothing but a given
  exception (the body of an ``async with`` re-raises its own error as raised).
- :func:`as_one_await`: a nursery of side-by-side steps raises what one await
  would: one plain ``Cancelled``, a lone other exception unwrapped, several grouped.
- :func:`exception_name`: the type names a group stands for, for a message.

Pure apart from naming ``trio.Cancelled``; nothing here awaits.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

import trio

if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = [
    "as_one_await",
    "exception_name",
    "first_cancelled",
    "is_cancellation",
    "is_only",
    "leaves",
    "single_exception",
    "split_cancelled",
    "unwrap_single",
]


def leaves(group: BaseExceptionGroup[BaseException]) -> list[BaseException]:
    """The exceptions inside ``group``, nested groups flattened, in order."""
    found: list[BaseException] = []
    for exc in group.exceptions:
        found.extend(leaves(exc) if isinstance(exc, BaseExceptionGroup) else [exc])
    return found


def is_cancellation(exc: BaseException) -> bool:
    """``Cancelled``, or a group holding nothing but ``Cancelled`` (a tool's own nursery)."""
    if isinstance(exc, trio.Cancelled):
        return True
    if isinstance(exc, BaseExceptionGroup):
        _, rest = exc.split(trio.Cancelled)
        return rest is None
    return False


def split_cancelled(
    exc: BaseException,
) -> tuple[BaseExceptionGroup[trio.Cancelled] | None, ExceptionGroup[Exception] | None]:
    """Split a group into its ``Cancelled`` part and its ``Exception`` part.

    Both are None unless the group holds Cancelled and otherwise only
    Exceptions (a BaseException other than Cancelled must propagate).
    """
    if not isinstance(exc, BaseExceptionGroup):
        return None, None
    cancelled, rest = exc.split(trio.Cancelled)
    if cancelled is None or rest is None or not isinstance(rest, ExceptionGroup):
        return None, None
    return cancelled, rest


def single_exception(group: BaseExceptionGroup[BaseException]) -> BaseException | None:
    """The one exception inside ``group`` (nested groups flattened), or None if several."""
    found = leaves(group)
    return found[0] if len(found) == 1 else None


@contextlib.contextmanager
def unwrap_single() -> Iterator[None]:
    """Raise the one exception of a group that holds only one, unwrapped.

    For a block whose groups come from the runtime's own nurseries: the
    caller sees a tool's ``KeyboardInterrupt`` as it was raised.
    """
    try:
        yield
    except BaseExceptionGroup as group:
        only = single_exception(group)
        if only is None:
            raise
        raise only from None


def is_only(exc: BaseException, group: BaseExceptionGroup[BaseException]) -> bool:
    """Whether ``group`` (a nursery's) carries nothing but ``exc``.

    trio may hand a body's own group back as a derived copy, so leaves are
    compared by identity rather than the group object itself.
    """
    if len(group.exceptions) != 1:
        return False
    (inner,) = group.exceptions
    if inner is exc:
        return True
    if isinstance(inner, BaseExceptionGroup) and isinstance(exc, BaseExceptionGroup):
        return [id(leaf) for leaf in leaves(inner)] == [id(leaf) for leaf in leaves(exc)]
    return False


@contextlib.contextmanager
def as_one_await() -> Iterator[None]:
    """What a nursery of side-by-side steps raises, as a single await would raise it.

    For nurseries whose tasks are one step of a call (the hooks of one event,
    a command's output pumps): nothing but ``Cancelled`` becomes one plain
    ``Cancelled``; a lone other exception leaves unwrapped, as raised (a
    ``Cancelled`` beside it is dropped: cancellation is level-triggered and
    reaches the caller again at its next checkpoint); several stay one group.
    So the propagation rules for a tool's ``BaseException`` (one unwrapped,
    several grouped) hold for these steps too.
    """
    try:
        yield
    except BaseExceptionGroup as group:
        cancelled, rest = group.split(trio.Cancelled)
        if rest is None and cancelled is not None:
            raise first_cancelled(cancelled) from None
        if rest is not None:
            only = single_exception(rest)
            if only is not None:
                raise only from None
        raise


def exception_name(exc: BaseException) -> str:
    """The type name of ``exc``; for a group, its non-``Cancelled`` leaves' names, sorted."""
    if isinstance(exc, BaseExceptionGroup):
        _, rest = exc.split(trio.Cancelled)
        members = rest.exceptions if rest is not None else exc.exceptions
        return ", ".join(sorted({type(leaf).__name__ for leaf in members}))
    return type(exc).__name__


def first_cancelled(exc: BaseException) -> BaseException:
    """The first ``Cancelled`` of a group of cancellations (``exc`` itself if plain)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc
