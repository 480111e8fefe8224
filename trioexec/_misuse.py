"""Clear errors for the application's own mistakes, raised where they are made.

A mistake in the code that calls trioexec (a dict where a :class:`ToolUse`
belongs, a sync ``can_use_tool``, ``asyncio.run``) must fail at once with a
message that says what to write instead; it must never travel to the model as
a tool_result, nor surface as an ``AttributeError`` from deep inside.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

import trio

from ._models import ToolUse

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["check_callback", "check_tool_use", "checked_tool_uses", "require_trio"]


def require_trio(what: str) -> None:
    """Raise one clear ``RuntimeError`` when ``what`` is called outside a trio run.

    Raises:
        RuntimeError: not inside ``trio.run`` (for example under ``asyncio.run``).
    """
    try:
        trio.lowlevel.current_task()
    except RuntimeError:
        raise RuntimeError(
            f"{what} needs trio: call it from code run by trio.run() (trioexec is "
            "trio-native; under asyncio, run it on trio-asyncio or in a trio thread)"
        ) from None


def _shown(item: object) -> str:
    text = repr(item)
    return text if len(text) <= 80 else text[:77] + "..."


def check_tool_use(item: object, *, where: str) -> ToolUse:
    """``item`` itself when it is a :class:`ToolUse`.

    Raises:
        TypeError: it is not; the message names ``where`` (the item and its
            index), its type, and how to build a ``ToolUse``.
    """
    if isinstance(item, ToolUse):
        return item
    hint = (
        "ToolUse.from_api(block) reads a Messages API dict"
        if isinstance(item, Mapping)
        else "build one with ToolUse(id, name, input)"
    )
    raise TypeError(f"{where} is a {type(item).__name__}, not a ToolUse ({hint}): {_shown(item)}")


def checked_tool_uses(tool_uses: object, *, what: str = "run_tools") -> Sequence[ToolUse]:
    """The calls as a sequence, every item checked before anything runs.

    Raises:
        TypeError: a single :class:`ToolUse` (not in a list), something that
            is no sequence, or an item that is not a ``ToolUse`` (named with
            its index).
    """
    if type(tool_uses) is list or type(tool_uses) is tuple:  # the usual call: checked at once
        for item in tool_uses:
            if type(item) is not ToolUse:
                break
        else:
            return tool_uses
    if isinstance(tool_uses, ToolUse):
        raise TypeError(
            f"{what} takes a sequence of ToolUse, not a single ToolUse: "
            f"pass [tool_use] ({_shown(tool_uses)})"
        )
    if isinstance(tool_uses, (str, bytes, Mapping)) or not isinstance(tool_uses, Iterable):
        raise TypeError(
            f"{what} takes a sequence of ToolUse, not a {type(tool_uses).__name__}: "
            f"{_shown(tool_uses)}"
        )
    items = tool_uses if isinstance(tool_uses, Sequence) else tuple(tool_uses)
    for index, item in enumerate(items):
        check_tool_use(item, where=f"{what}: tool_uses[{index}]")
    return items


def check_callback(callback: object, *, what: str, params: Sequence[str]) -> None:
    """Check that ``callback`` is an async callable taking ``params`` positionally.

    Raises:
        TypeError: it is not callable, not async (``def`` instead of ``async
            def``), or cannot be called with ``len(params)`` arguments.
    """
    shape = f"async def {what.split()[-1]}({', '.join(params)})"
    if not callable(callback):
        raise TypeError(f"{what} must be an async function ({shape}), not {_shown(callback)}")
    if not _is_async(callback):
        raise TypeError(
            f"{what} must be an async function ({shape}); {_name(callback)} is a plain function"
        )
    try:
        signature = inspect.signature(callback)
    except (TypeError, ValueError):
        return  # a builtin or C callable: nothing to check
    try:
        signature.bind(*params)
    except TypeError:
        raise TypeError(
            f"{what} is called with {len(params)} arguments ({', '.join(params)}); "
            f"{_name(callback)}({', '.join(signature.parameters)}) cannot take them"
        ) from None


def _is_async(callback: Callable[..., object]) -> bool:
    if inspect.iscoroutinefunction(callback):
        return True
    call = getattr(type(callback), "__call__", None)  # noqa: B004 - an instance's method
    return call is not None and inspect.iscoroutinefunction(call)


def _name(callback: object) -> str:
    return str(getattr(callback, "__qualname__", type(callback).__qualname__))
