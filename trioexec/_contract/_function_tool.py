"""Tools made from plain async functions: :func:`function_tool` and :class:`FunctionTool`.

The function's type hints give the input schema (see ``_signature``), its docstring the
description; every definition mistake is a :class:`ToolDefinitionError` at definition.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar, overload

from .._errors import ToolDefinitionError
from ._rules import RuleBehavior
from ._signature import FunctionSignature, read_signature
from ._tool import CallContext, ProgressSender, Tool, check_tool_name, tool_schema

if TYPE_CHECKING:
    from .._models import JSONObject
    from ._path_access import PathAccess
    from ._tool import InterruptBehavior

__all__ = ["FunctionTool", "function_tool"]

InputT = TypeVar("InputT")

ToolFunction: TypeAlias = Callable[..., Awaitable[object]]
"""An async function :func:`function_tool` can make a tool of (see ``_signature``)."""
RuleMatcher: TypeAlias = Callable[[str, InputT, RuleBehavior], bool]
"""``(content, input, behavior) -> bool``: whether a ``name(content)`` rule applies."""


_CONTEXT_TYPES: Mapping[object, str] = {CallContext: "ctx", ProgressSender: "progress"}
"""The annotations that mark a function's context and progress parameters."""


class FunctionTool(Tool[InputT]):
    """A tool made from an async function by :func:`function_tool`.

    ``rule_matcher(content, input, behavior)`` (None: the tool cannot
    interpret ``Tool(content)`` permission rules) answers
    :meth:`match_rule_content`.
    """

    def __init__(
        self,
        func: ToolFunction,
        *,
        name: str,
        input_type: type[InputT] | None,
        input_schema: JSONObject | None,
        description: str,
        concurrency_safe: bool | Callable[[InputT], bool],
        interrupt_behavior: InterruptBehavior,
        cancels_siblings_on_error: bool,
        max_result_size_chars: float,
        aliases: tuple[str, ...],
        rule_matcher: RuleMatcher[InputT] | None = None,
        signature: FunctionSignature | None = None,
        path_access: PathAccess | None = None,
    ) -> None:
        self._func = func
        self.path_access = path_access
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

    def is_concurrency_safe(self, input: InputT) -> bool:  # noqa: A002
        if callable(self._concurrency_safe):
            return self._concurrency_safe(input)
        return self._concurrency_safe

    def match_rule_content(
        self,
        content: str,
        input: InputT,  # noqa: A002
        ctx: CallContext,
        *,
        behavior: RuleBehavior,
    ) -> bool | None:
        """``rule_matcher(content, input, behavior)``; None without a matcher."""
        if self.rule_matcher is None:
            return None
        return self.rule_matcher(content, input, behavior)

    async def call(self, input: InputT, ctx: CallContext, progress: ProgressSender) -> object:  # noqa: A002
        args, kwargs = self._signature.arguments(input, ctx, progress)
        return await self._func(*args, **kwargs)


@overload
def function_tool(func: ToolFunction, /) -> Tool[Any]: ...


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
) -> Callable[[ToolFunction], Tool[Any]]: ...


def function_tool(
    func: ToolFunction | None = None,
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
) -> Tool[Any] | Callable[[ToolFunction], Tool[Any]]:
    """Make a :class:`Tool` of an async function; use bare (``@function_tool``) or with options.

    ::

        @function_tool
        async def weather(city: str, unit: Literal["C", "F"] = "C") -> str:
            \"\"\"Today's weather in a city.\"\"\"

    The input: with ``input_type`` (an attrs class or a dataclass) or
    ``input_schema`` the function takes it as one parameter; without either,
    a single parameter annotated with an attrs class or a dataclass is the
    input type, a single ``dict`` parameter gets the whole object, and
    otherwise each parameter is one input property whose JSON Schema comes
    from its annotation (``Annotated[T, "text"]`` adds a description; a
    default makes it optional).  A parameter annotated ``CallContext`` (or
    named ``ctx``) gets the call's context, one annotated ``ProgressSender``
    (or named ``progress``) the progress sender.  The name defaults to the
    function's name, the description to its docstring.  The result is typed
    ``Tool[Any]`` so tools of different input types mix in one list.

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
            an invalid name, a function that is not ``async def``, parameters
            that cannot take the input, an input type without a JSON Schema
            equivalent, an out-of-range ``interrupt_behavior`` or
            ``max_result_size_chars``, or a ``rule_matcher`` that cannot be
            called with ``(content, input, behavior)``.
    """
    if interrupt_behavior not in ("cancel", "block"):
        raise ToolDefinitionError(
            f"interrupt_behavior must be 'cancel' or 'block', not {interrupt_behavior!r}"
        )
    if not (max_result_size_chars == math.inf or max_result_size_chars >= 0):
        raise ToolDefinitionError("max_result_size_chars must be >= 0 or math.inf")
    if rule_matcher is not None:
        _check_rule_matcher(rule_matcher)

    def decorate(func: ToolFunction) -> Tool[Any]:
        label = name or getattr(func, "__name__", None) or repr(func)
        if not callable(func):
            raise ToolDefinitionError(
                f"@function_tool decorates an async function, not {type(func).__name__} {func!r}"
            )
        if not inspect.iscoroutinefunction(func):
            kind = "an async generator" if inspect.isasyncgenfunction(func) else "not"
            raise ToolDefinitionError(
                f"@function_tool needs an async function; {label!r} is {kind} "
                "(write `async def` and return the result)"
            )
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
        tool: Tool[Any] = FunctionTool(
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
