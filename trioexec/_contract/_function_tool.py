"""Tools made from plain functions: :func:`function_tool` and :class:`FunctionTool`.

The function's type hints give the input schema (see ``_signature``), its docstring the
description; every definition mistake is a :class:`ToolDefinitionError` at definition.
An ``async def`` runs in the call's task; a plain ``def`` runs in a worker thread.  A
structured return value (dict, list, attrs, dataclass, pydantic model) reaches the model
as JSON text.  The tool stays callable as the function it was made from.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import json
import math
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeAlias, TypeVar, overload

import attrs
import trio

from .._errors import ToolDefinitionError
from ._pydantic import is_pydantic_model
from ._rules import RuleBehavior
from ._signature import FunctionSignature, read_signature
from ._tool import CallContext, ProgressSender, Tool, _is_block, check_tool_name, tool_schema
from ._validation import is_time_limit

if TYPE_CHECKING:
    from .._models import Content, JSONObject
    from ._path_access import PathAccess
    from ._tool import InterruptBehavior

__all__ = ["FunctionTool", "ToolDecorator", "function_tool", "to_json_text"]

InputT = TypeVar("InputT")
R_co = TypeVar("R_co", covariant=True)
R = TypeVar("R")
T = TypeVar("T")

ToolFunction: TypeAlias = Callable[..., object]
"""A function :func:`function_tool` can make a tool of: ``async def`` or plain ``def``."""
RuleMatcher: TypeAlias = Callable[[str, InputT, RuleBehavior], bool]
"""``(content, input, behavior) -> bool``: whether a ``name(content)`` rule applies."""


_CONTEXT_TYPES: Mapping[object, str] = {CallContext: "ctx", ProgressSender: "progress"}
"""The annotations that mark a function's context and progress parameters."""


class FunctionTool(Tool[Any], Generic[R_co]):
    """A tool made from a function by :func:`function_tool`; calling it calls the function.

    ``weather("Oslo")`` is ``original_weather("Oslo")`` (a coroutine for an
    ``async def``), so the function stays unit-testable as it was.  The
    function itself is :attr:`function`.  ``R_co`` is the function's return
    type; the parameters are not part of the type, so tools made from
    functions of different signatures still share one list type.

    ``rule_matcher(content, input, behavior)`` (None: the tool cannot
    interpret ``Tool(content)`` permission rules) answers
    :meth:`match_rule_content`.
    """

    function: Callable[..., R_co]
    """The decorated function, unchanged."""
    __name__: str
    """The function's name (its ``__doc__``, ``__module__`` and ``__qualname__`` are copied too)."""

    def __init__(
        self,
        func: Callable[..., R_co],
        *,
        name: str,
        input_type: type[Any] | None,
        input_schema: JSONObject | None,
        description: str,
        concurrency_safe: bool | Callable[[Any], bool],
        interrupt_behavior: InterruptBehavior,
        cancels_siblings_on_error: bool,
        max_result_size_chars: float,
        aliases: tuple[str, ...],
        rule_matcher: RuleMatcher[Any] | None = None,
        signature: FunctionSignature | None = None,
        path_access: PathAccess | None = None,
        timeout: float | None = None,
        idle_timeout: float | None = None,
    ) -> None:
        self.function = func
        self._threaded = not inspect.iscoroutinefunction(func)
        self.path_access = path_access
        self.timeout = timeout
        self.idle_timeout = idle_timeout
        functools.update_wrapper(self, func, updated=())
        self._signature = signature or read_signature(
            func,
            tool_name=name,
            input_type=input_type,
            input_schema=input_schema,
            context_types=_CONTEXT_TYPES,
        )
        self.rule_matcher = rule_matcher
        self._concurrency_safe = concurrency_safe
        self.name = name
        self.input_type = self._signature.input_type
        self.input_schema = self._signature.input_schema
        self.description = description
        self.interrupt_behavior = interrupt_behavior
        self.cancels_siblings_on_error = cancels_siblings_on_error
        self.max_result_size_chars = max_result_size_chars
        self.aliases = aliases

    def __call__(self, *args: Any, **kwargs: Any) -> R_co:  # noqa: ANN401
        """Call the function itself (no validation, no guard rails: a plain call)."""
        return self.function(*args, **kwargs)

    def is_concurrency_safe(self, input: Any) -> bool:  # noqa: A002, ANN401
        if callable(self._concurrency_safe):
            return self._concurrency_safe(input)
        return self._concurrency_safe

    def match_rule_content(
        self,
        content: str,
        input: Any,  # noqa: A002, ANN401
        ctx: CallContext,
        *,
        behavior: RuleBehavior,
    ) -> bool | None:
        """``rule_matcher(content, input, behavior)``; None without a matcher."""
        if self.rule_matcher is None:
            return None
        return self.rule_matcher(content, input, behavior)

    async def call(self, input: Any, ctx: CallContext, progress: ProgressSender) -> object:  # noqa: A002, ANN401
        """Call the function with the validated input.

        A plain ``def`` runs in a worker thread (``trio.to_thread.run_sync``);
        its ``progress`` sends from the thread, and the thread is never
        abandoned: a cancellation is delivered when the function returns, or
        at once where it calls ``trio.from_thread.check_cancelled()``.
        """
        if not self._threaded:
            args, kwargs = self._signature.arguments(input, ctx, progress)
            return await self.function(*args, **kwargs)  # type: ignore[misc]
        args, kwargs = self._signature.arguments(input, ctx, _from_thread(progress))
        return await trio.to_thread.run_sync(functools.partial(self.function, *args, **kwargs))

    def map_result(self, output: object) -> Content:
        """Strings and content blocks as they are; structured values as JSON text.

        A ``dict``, ``list``, ``tuple``, attrs instance, dataclass instance or
        pydantic model reaches the model as JSON (``{"city": "Oslo"}``), never
        as its Python ``repr``; a value JSON cannot hold is written with ``str``.
        """
        if isinstance(output, str) or output is None:
            return super().map_result(output)
        if isinstance(output, (list, tuple)) and output and all(_is_block(b) for b in output):
            return tuple(output)  # content blocks
        if _is_structured(output):
            return to_json_text(output)
        return super().map_result(output)


def _from_thread(progress: ProgressSender) -> ProgressSender:
    """A progress sender a worker thread may call (it runs ``progress`` in trio's thread)."""

    def send(data: object, /) -> None:
        trio.from_thread.run_sync(progress, data)

    return send


def _is_structured(value: object) -> bool:
    kind = type(value)
    return (
        isinstance(value, (dict, list, tuple))
        or attrs.has(kind)
        or dataclasses.is_dataclass(kind)
        or is_pydantic_model(kind)
    )


def to_json_text(value: object) -> str:
    """``value`` as JSON text: dicts, lists, attrs and dataclass instances, pydantic models.

    Non-ASCII characters stay as they are (the model reads text); a value JSON
    has no form for (a ``datetime``, a ``Path``) is written with ``str``.
    """
    return json.dumps(value, default=_json_default, ensure_ascii=False)


def _json_default(value: object) -> object:
    kind = type(value)
    if is_pydantic_model(kind):
        return value.model_dump(mode="json")  # type: ignore[attr-defined]
    if attrs.has(kind):
        return attrs.asdict(value, recurse=False)  # type: ignore[arg-type]
    if dataclasses.is_dataclass(kind):
        return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}  # type: ignore[arg-type]
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=repr)
    return str(value)


class ToolDecorator(Protocol):
    """What ``function_tool(...)`` with options returns: it makes a tool of a function."""

    def __call__(self, func: Callable[..., R], /) -> FunctionTool[R]: ...


@overload
def function_tool(func: Callable[..., R], /) -> FunctionTool[R]: ...


@overload
def function_tool(
    func: None = None,
    /,
    *,
    name: str | None = None,
    input_type: type[Any] | None = None,
    input_schema: JSONObject | None = None,
    description: str | None = None,
    concurrency_safe: bool | Callable[[Any], bool] = False,
    interrupt_behavior: InterruptBehavior = "block",
    cancels_siblings_on_error: bool = False,
    max_result_size_chars: float = 100_000,
    aliases: tuple[str, ...] = (),
    rule_matcher: RuleMatcher[Any] | None = None,
    path_access: PathAccess | None = None,
    timeout: float | None = None,
    idle_timeout: float | None = None,
) -> ToolDecorator: ...


def function_tool(
    func: Callable[..., R] | None = None,
    /,
    *,
    name: str | None = None,
    input_type: type[Any] | None = None,
    input_schema: JSONObject | None = None,
    description: str | None = None,
    concurrency_safe: bool | Callable[[Any], bool] = False,
    interrupt_behavior: InterruptBehavior = "block",
    cancels_siblings_on_error: bool = False,
    max_result_size_chars: float = 100_000,
    aliases: tuple[str, ...] = (),
    rule_matcher: RuleMatcher[Any] | None = None,
    path_access: PathAccess | None = None,
    timeout: float | None = None,
    idle_timeout: float | None = None,
) -> FunctionTool[R] | ToolDecorator:
    """Make a :class:`Tool` of a function; use bare (``@function_tool``) or with options.

    ::

        @function_tool
        async def weather(city: str, unit: Literal["C", "F"] = "C") -> str:
            \"\"\"Today's weather in a city.\"\"\"

    The input: with ``input_type`` (an attrs class, a dataclass or a pydantic
    model) or ``input_schema`` the function takes it as one parameter; without
    either, a single parameter annotated with such a class is the input type, a
    single ``dict`` parameter gets the whole object, and otherwise each
    parameter is one input property whose JSON Schema comes from its
    annotation (``Annotated[T, "text"]`` adds a description; a default makes
    it optional).  A pydantic model (used only when the application has
    pydantic installed; trioexec does not depend on it) gives its own
    ``model_json_schema()`` and validates with its own ``model_validate``, so
    its validators are layer 2.  A parameter annotated ``CallContext`` (or
    named ``ctx``) gets the call's context, one annotated ``ProgressSender``
    (or named ``progress``) the progress sender.  The name defaults to the
    function's name, the description to its docstring.

    The function may be ``async def`` (it runs in the call's task) or plain
    ``def`` (it runs in a worker thread, ``trio.to_thread.run_sync``, so it
    never blocks the event loop).  A thread cannot be interrupted: a plain
    function's call is stopped when it returns, or at once where it calls
    ``trio.from_thread.check_cancelled()``; the thread is never abandoned
    (no work outlives the run).  Its ``progress`` may be called from the thread.

    What the function returns becomes the result: a string as it is; a
    ``dict``, ``list``, ``tuple``, attrs or dataclass instance or pydantic
    model as JSON text; ``None`` as an empty result; anything else as ``str``.

    The returned :class:`FunctionTool` is a ``Tool[Any]`` (tools of different
    inputs mix in one list) and stays callable as the function: in a unit
    test, ``await weather("Oslo")``.

    ``timeout`` and ``idle_timeout`` (seconds, None: no limit) bound the call
    step as :attr:`Tool.timeout` / :attr:`Tool.idle_timeout` do: a call that
    runs longer in all, or sends no progress for ``idle_timeout``, is stopped
    and answered with a timeout text.

    ``rule_matcher(content, input, behavior)`` says whether a
    ``name(content)`` permission rule of ``behavior`` (``"allow"``, ``"ask"``
    or ``"deny"``) applies to a call (e.g.
    ``match_bash_rule(content, input["command"], behavior=behavior)``).
    Without one, the tool cannot interpret rule content: a deny or ask rule
    with content then applies to every call of the tool, and an allow rule with
    content never matches.

    ``path_access`` declares the input field naming a path the tool reads or
    writes (``PathAccess("path", writes=True)``): ``Read`` or ``Edit`` rules
    then govern the tool as they govern the standard file tools, its rule
    content is a path pattern (no ``rule_matcher`` needed), and a write to a
    protected path always asks.

    Raises:
        ToolDefinitionError: at definition time, naming the tool and the fix:
            an invalid name, an async generator or a non-callable, parameters
            that cannot take the input, an input type without a JSON Schema
            equivalent, an out-of-range ``interrupt_behavior``,
            ``max_result_size_chars``, ``timeout`` or ``idle_timeout``, or a
            ``rule_matcher`` that cannot be called with ``(content, input, behavior)``.
    """
    if interrupt_behavior not in ("cancel", "block"):
        raise ToolDefinitionError(
            f"interrupt_behavior must be 'cancel' or 'block', not {interrupt_behavior!r}"
        )
    if not (max_result_size_chars == math.inf or max_result_size_chars >= 0):
        raise ToolDefinitionError("max_result_size_chars must be >= 0 or math.inf")
    for limit, value in (("timeout", timeout), ("idle_timeout", idle_timeout)):
        if value is not None and not is_time_limit(value):
            raise ToolDefinitionError(
                f"{limit} must be a number of seconds > 0 or None, not {value!r}"
            )
    if rule_matcher is not None:
        _check_rule_matcher(rule_matcher)

    def decorate(func: Callable[..., T]) -> FunctionTool[T]:
        label = name or getattr(func, "__name__", None) or repr(func)
        if not callable(func) or isinstance(func, type):
            raise ToolDefinitionError(
                f"@function_tool decorates a function, not {type(func).__name__} {func!r}"
            )
        if inspect.isasyncgenfunction(func) or inspect.isgeneratorfunction(func):
            raise ToolDefinitionError(
                f"@function_tool needs a function that returns its result; {label!r} is a "
                "generator (send partial output with a `progress: ProgressSender` parameter "
                "and return the result)"
            )
        if isinstance(func, FunctionTool):
            raise ToolDefinitionError(f"{label!r} is already a tool; decorate it once")
        given = name if name is not None else getattr(func, "__name__", None)
        tool_name = check_tool_name(given, f"tool {label!r}")
        signature = read_signature(
            func,
            tool_name=tool_name,
            input_type=input_type,
            input_schema=input_schema,
            context_types=_CONTEXT_TYPES,
        )
        doc = inspect.cleandoc(func.__doc__ or "")
        tool = FunctionTool(
            func,
            name=tool_name,
            input_type=input_type,
            input_schema=input_schema,
            description=description if description is not None else doc,
            concurrency_safe=concurrency_safe,
            interrupt_behavior=interrupt_behavior,
            cancels_siblings_on_error=cancels_siblings_on_error,
            max_result_size_chars=max_result_size_chars,
            aliases=tuple(aliases),
            rule_matcher=rule_matcher,
            signature=signature,
            path_access=path_access,
            timeout=timeout,
            idle_timeout=idle_timeout,
        )
        tool_schema(tool)  # an input type without a JSON Schema equivalent fails here, not later
        return tool

    if func is not None:
        return decorate(func)
    return decorate


def _check_rule_matcher(matcher: Callable[..., bool]) -> None:
    """Refuse a ``rule_matcher`` that cannot take ``(content, input, behavior)``.

    A two-argument matcher would not know whether it matches a deny rule (any
    part of a command) or an allow rule (every part), so it is refused when the
    tool is defined rather than guessed at when a rule is matched.
    """
    try:
        signature = inspect.signature(matcher)
    except (TypeError, ValueError):  # a builtin without a signature: trust it
        return
    try:
        signature.bind("content", None, "allow")
    except TypeError:
        raise ToolDefinitionError(
            f"rule_matcher {getattr(matcher, '__name__', matcher)!r} must take "
            "(content, input, behavior); behavior is 'allow', 'ask' or 'deny'"
        ) from None
