"""The exception-group rules (``trioexec._groups``), each on hand-built groups."""

from __future__ import annotations

import pytest
import trio

from trioexec._groups import (
    as_one_await,
    exception_name,
    is_cancellation,
    is_only,
    leaves,
    single_exception,
    split_cancelled,
)


async def cancelled() -> trio.Cancelled:
    """A real Cancelled (it has no public constructor), caught from a cancelled scope."""
    with trio.CancelScope() as scope:
        scope.cancel()
        try:
            await trio.lowlevel.checkpoint()
        except trio.Cancelled as exc:
            return exc
    raise AssertionError("no Cancelled raised")  # pragma: no cover


def test_leaves_flattens_nested_groups_in_order() -> None:
    a, b, c = ValueError("a"), KeyError("b"), OSError("c")
    group = BaseExceptionGroup("outer", [a, BaseExceptionGroup("inner", [b, c])])
    assert leaves(group) == [a, b, c]


async def test_only_cancelled_leaves_count_as_a_cancellation() -> None:
    one, two = await cancelled(), await cancelled()
    assert is_cancellation(one)
    assert is_cancellation(BaseExceptionGroup("g", [one, BaseExceptionGroup("h", [two])]))
    assert not is_cancellation(BaseExceptionGroup("g", [one, ValueError()]))
    assert not is_cancellation(ValueError())


async def test_split_cancelled_separates_cancellation_from_ordinary_failures() -> None:
    failure = ValueError("tool bug")
    group = BaseExceptionGroup("g", [await cancelled(), failure])
    cancelled_part, failures = split_cancelled(group)
    assert cancelled_part is not None
    assert isinstance(cancelled_part.exceptions[0], trio.Cancelled)
    assert failures is not None
    assert failures.exceptions == (failure,)


async def test_split_cancelled_refuses_a_group_with_a_base_exception_beside_cancelled() -> None:
    group = BaseExceptionGroup("g", [await cancelled(), KeyboardInterrupt()])
    assert split_cancelled(group) == (None, None)
    assert split_cancelled(ValueError()) == (None, None)
    assert split_cancelled(BaseExceptionGroup("g", [await cancelled()])) == (None, None)


def test_single_exception_unwraps_only_a_group_of_one() -> None:
    interrupt = KeyboardInterrupt()
    assert single_exception(BaseExceptionGroup("g", [BaseExceptionGroup("h", [interrupt])])) is (
        interrupt
    )
    assert single_exception(ExceptionGroup("g", [ValueError(), ValueError()])) is None


def test_is_only_compares_a_body_group_by_its_leaves() -> None:
    a, b = ValueError("a"), ValueError("b")
    body = ExceptionGroup("body", [a, b])
    assert is_only(body, BaseExceptionGroup("nursery", [body]))
    assert is_only(body, BaseExceptionGroup("nursery", [ExceptionGroup("copy", [a, b])]))
    assert not is_only(body, BaseExceptionGroup("nursery", [ExceptionGroup("other", [a])]))
    assert is_only(a, BaseExceptionGroup("nursery", [a]))
    assert not is_only(a, BaseExceptionGroup("nursery", [a, b]))


async def test_as_one_await_raises_one_plain_cancelled() -> None:
    one, two = await cancelled(), await cancelled()
    with pytest.raises(trio.Cancelled) as info, as_one_await():
        raise BaseExceptionGroup("g", [BaseExceptionGroup("h", [one]), two])
    assert info.value is one


async def test_as_one_await_unwraps_a_lone_other_exception_beside_cancellations() -> None:
    interrupt = KeyboardInterrupt()
    with pytest.raises(KeyboardInterrupt) as info, as_one_await():
        raise BaseExceptionGroup("x", [await cancelled(), BaseExceptionGroup("y", [interrupt])])
    assert info.value is interrupt


def test_as_one_await_keeps_several_exceptions_in_their_group() -> None:
    group = BaseExceptionGroup("x", [KeyboardInterrupt(), SystemExit()])
    with pytest.raises(BaseExceptionGroup) as info, as_one_await():
        raise group
    assert info.value is group


async def test_exception_name_names_a_groups_non_cancelled_members() -> None:
    group = BaseExceptionGroup("g", [await cancelled(), KeyboardInterrupt(), ValueError()])
    assert exception_name(group) == "KeyboardInterrupt, ValueError"
    assert exception_name(SystemExit()) == "SystemExit"
