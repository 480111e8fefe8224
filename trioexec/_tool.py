"""What a tool is: the :class:`Tool` base class, :func:`function_tool`, and what a call sees.

A tool is an object with a name, a JSON Schema for its input, optional attrs
``input_type`` for typed input, and an async ``call``.  Everything else has a
safe default: not concurrency-safe, ``"block"`` on interrupt, no sibling
cascade, results over 100,000 characters persisted, permission allowed.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any, Generic, Literal, Protocol, TypeAlias, TypeVar

import attrs

from ._errors import ToolDefinitionError
from ._models import Content, JSONObject, JSONValue, ToolUse
from ._permission_context import PermissionContext
from ._rules import RuleBehavior

__all__ = [
    "CallContext",
    "ContextModifier",
    "ContextState",
    "InterruptBehavior",
    "PermissionResult",
    "ProgressSender",
    "Tool",
    "ToolOutput",
    "function_tool",
    "is_mcp_tool",
]

InputT = TypeVar("InputT")
InterruptBehavior: TypeAlias = Literal["cancel", "block"]
ContextState: TypeAlias = Mapping[str, object]
"""The shared context a turn's tools see; context modifiers map it to a new one."""
ContextModifier: TypeAlias = Callable[[ContextState], ContextState]


@attrs.frozen
class ToolOutput:
    """What ``Tool.call`` may return to attach a context modifier to its output."""

    value: object
    context_modifier: ContextModifier | None = None


PermissionBehavior: TypeAlias = Literal["allow", "deny", "ask", "passthrough"]


@attrs.frozen
class PermissionResult:
    """A permission answer: allow, deny (with a message), ask, or passthrough (no opinion)."""

    behavior: PermissionBehavior
    message: str | None = None
    updated_input: Mapping[str, JSONValue] | None = None

    @classmethod
    def allow(cls, updated_input: Mapping[str, JSONValue] | None = None) -> PermissionResult:
        """Allow the call, optionally with a replaced input."""
        return cls("allow", None, updated_input)

    @classmethod
    def deny(cls, message: str) -> PermissionResult:
        """Deny the call; ``message`` becomes the error tool_result."""
        return cls("deny", message)

    @classmethod
    def ask(cls, message: str | None = None) -> PermissionResult:
        """Ask the application (``can_use_tool``) whether the call may go ahead."""
        return cls("ask", message)

    @classmethod
    def passthrough(cls) -> PermissionResult:
        """Give no opinion; the permission chain decides."""
        return cls("passthrough")


_ALLOW = PermissionResult("allow")


class ProgressSender(Protocol):
    """Sends one progress item; synchronous, never blocks, may be called at any time."""

    def __call__(self, data: object, /) -> None: ...


@attrs.frozen
class CallContext:
    """What one call sees besides its input.

    Attributes:
        tool_use: the call as the model sent it.
        state: the turn's shared context as of the moment the call started.
        cwd: the working directory tools should resolve relative paths against.
        session_dir: where oversized results are persisted (None: not persisted).
        permissions: the permission rules in force (None: no rules).
    """

    tool_use: ToolUse
    state: ContextState = attrs.field(factory=dict)
    cwd: Path = attrs.field(factory=Path.cwd)
    session_dir: Path | None = None
    permissions: PermissionContext | None = None


class Tool(Generic[InputT]):
    """Base class for tools.  Override class attributes and ``call``.

    ``input`` is the validated JSON object, or an ``input_type`` instance when
    the tool declares one (structured with cattrs after JSON Schema validation).
    """

    name: str
    aliases: tuple[str, ...] = ()
    description: str = ""
    input_schema: JSONObject | None = None
    input_type: type[InputT] | None = None
    interrupt_behavior: InterruptBehavior = "block"
    cancels_siblings_on_error: bool = False
    max_result_size_chars: float = 100_000
    is_deferred: bool = False
    """True when the tool's schema was not sent to the model (adds a hint to input errors)."""
    is_mcp: bool = False
    """True for a tool served by an MCP server (a name starting ``mcp__`` counts too):
    a PostToolUse hook's ``updatedMCPToolOutput`` then replaces its output."""

    def is_concurrency_safe(self, input: InputT) -> bool:  # noqa: A002
        """Whether this call may run beside other safe calls.  Default: no."""
        return False

    def is_read_only(self, input: InputT) -> bool:  # noqa: A002
        """Whether this call changes nothing (no file, no process, no remote state).

        ``plan`` mode runs only such calls.  Default: no, so a tool that does
        not say is treated as one that changes things (it fails closed).
        """
        return False

    async def validate_input(self, input: InputT, ctx: CallContext) -> str | None:  # noqa: A002
        """Semantic check (layer 2b).  Return an error message, or None when valid."""
        return None

    async def check_permissions(self, input: InputT, ctx: CallContext) -> PermissionResult:  # noqa: A002
        """The tool's own permission check.  Default: allow."""
        return _ALLOW

    def match_rule_content(
        self,
        content: str,
        input: InputT,  # noqa: A002
        ctx: CallContext,
        *,
        behavior: RuleBehavior,
    ) -> bool | None:
        """Whether a ``Tool(content)`` permission rule applies to this input.

        Args:
            content: the rule's content (``npm test:*`` of ``Bash(npm test:*)``).
            input: the validated input.
            ctx: the call's context (``ctx.cwd`` for relative path patterns).
            behavior: the kind of rule being matched.  A deny or ask rule
                should catch what any part of the input does (one subcommand of
                a compound command, a path behind a symlink); an allow rule must
                cover all of it.

        Returns:
            True or False; None when the tool cannot interpret rule content
            (the default).  The permission chain then fails closed: a deny or
            ask rule with content applies to every call, an allow rule with
            content never matches, and a warning is logged.
        """
        return None

    def rule_denial_message(self, input: InputT, ctx: CallContext) -> str | None:  # noqa: A002
        """The model's text when a ``Tool(content)`` deny rule matches this input.

        None (the default): ``Permission to use {name} has been denied.``  The
        standard tools name what was denied, as Claude Code does: ``Permission
        to use Bash with command {command} has been denied.``, ``Permission to
        read {path} has been denied.``, ``Permission to edit {path} has been denied.``
        """
        return None

    def observable_input(
        self,
        input: Mapping[str, JSONValue],  # noqa: A002
        cwd: Path,
    ) -> Mapping[str, JSONValue]:
        """The input as hooks and ``can_use_tool`` see it.  Default: unchanged.

        Claude Code's file tools make ``file_path`` absolute here (``~`` and
        relative paths against ``cwd``), so a hook that blocks ``/etc/*`` is
        not led around by ``../../etc/hostname``.  Return a new mapping, never
        change ``input``: the tool itself is called with the model's input
        unless a hook or the application replaced it.  Must be idempotent.
        """
        return input

    def tool_response(self, input: InputT, output: object) -> JSONValue:  # noqa: A002
        """The object PostToolUse hooks receive as ``tool_response``.

        ``output`` is what :meth:`call` returned (inside a :class:`ToolOutput`:
        its ``value``).  None (the default): hooks receive the result content
        as the API would (a string, or a list of blocks).  The standard tools
        return Claude Code's output objects (Bash: ``{stdout, stderr,
        interrupted, isImage}``; Write: ``{type, filePath, content,
        structuredPatch, originalFile}``; ...), so ``jq '.tool_response.stdout'``
        works as it does there.
        """
        return None

    async def call(
        self,
        input: InputT,  # noqa: A002
        ctx: CallContext,
        progress: ProgressSender,
    ) -> object:
        """Run the tool.  Return the output, or a :class:`ToolOutput` with a context modifier.

        Raising an :class:`Exception` makes an error tool_result; cancellation is
        delivered by trio (the call's scope) and must not be swallowed.
        """
        raise NotImplementedError(f"tool {self.name!r} does not implement call()")

    def map_result(self, output: object) -> Content:
        """Turn the output into tool_result content.  Default: strings and blocks as is."""
        if isinstance(output, str):
            return output
        if isinstance(output, (list, tuple)) and all(_is_block(b) for b in output):
            return tuple(output)
        if output is None:
            return ""
        return str(output)

    def __repr__(self) -> str:
        return f"<Tool {getattr(self, 'name', '?')!r}>"


def is_mcp_tool(tool: Tool[Any]) -> bool:
    """Whether ``tool`` is served by an MCP server (``is_mcp``, or a name starting ``mcp__``)."""
    return bool(getattr(tool, "is_mcp", False)) or tool.name.startswith("mcp__")


def _is_block(value: object) -> bool:
    from ._models import ImageBlock, TextBlock

    return isinstance(value, (TextBlock, ImageBlock))


ToolFunction: TypeAlias = Callable[[InputT, CallContext, ProgressSender], Awaitable[object]]
RuleMatcher: TypeAlias = Callable[[str, InputT, RuleBehavior], bool]
"""``(content, input, behavior) -> bool``: whether a ``name(content)`` rule applies."""


class FunctionTool(Tool[InputT]):
    """A tool made from an async function by :func:`function_tool`.

    ``rule_matcher(content, input, behavior)`` (None: the tool cannot
    interpret ``Tool(content)`` permission rules) answers
    :meth:`match_rule_content`.
    """

    def __init__(
        self,
        func: ToolFunction[InputT],
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
    ) -> None:
        self._func = func
        self.rule_matcher = rule_matcher
        self._concurrency_safe = concurrency_safe
        self.name = name
        self.input_type = input_type
        self.input_schema = input_schema
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
        return await self._func(input, ctx, progress)


def function_tool(
    *,
    name: str | None = None,
    input_type: type[InputT] | None = None,
    input_schema: JSONObject | None = None,
    description: str | None = None,
    concurrency_safe: bool | Callable[[InputT], bool] = False,
    interrupt_behavior: InterruptBehavior = "block",
    cancels_siblings_on_error: bool = False,
    max_result_size_chars: float = 100_000,
    aliases: tuple[str, ...] = (),
    rule_matcher: RuleMatcher[InputT] | None = None,
) -> Callable[[ToolFunction[InputT]], Tool[Any]]:
    """Decorate ``async def f(input, ctx, progress)`` to make a :class:`Tool`.

    The JSON Schema is derived from ``input_type`` (an attrs class) unless
    ``input_schema`` is given; with neither, any JSON object is accepted and the
    function receives the dict.  The name defaults to the function's name.  The
    result is typed ``Tool[Any]`` so tools of different input types mix in one list.

    ``rule_matcher(content, input, behavior)`` says whether a
    ``name(content)`` permission rule of ``behavior`` (``"allow"``, ``"ask"``
    or ``"deny"``) applies to a call (e.g.
    ``match_bash_rule(content, input["command"], behavior=behavior)``).
    Without one, the tool cannot interpret rule content: a deny or ask rule
    with content then applies to every call of the tool, and an allow rule with
    content never matches.

    Raises:
        ToolDefinitionError: ``interrupt_behavior`` or ``max_result_size_chars``
            is out of range, or ``rule_matcher`` cannot be called with
            ``(content, input, behavior)``.
    """
    if interrupt_behavior not in ("cancel", "block"):
        raise ToolDefinitionError(
            f"interrupt_behavior must be 'cancel' or 'block', not {interrupt_behavior!r}"
        )
    if not (max_result_size_chars == math.inf or max_result_size_chars >= 0):
        raise ToolDefinitionError("max_result_size_chars must be >= 0 or math.inf")
    if rule_matcher is not None:
        _check_rule_matcher(rule_matcher)

    def decorate(func: ToolFunction[InputT]) -> Tool[Any]:
        if not inspect.iscoroutinefunction(func):
            raise ToolDefinitionError(
                f"@function_tool needs an async function; {getattr(func, '__name__', func)!r} "
                "is not (write `async def`)"
            )
        return FunctionTool(
            func,
            name=name or func.__name__,
            input_type=input_type,
            input_schema=input_schema,
            description=description if description is not None else (func.__doc__ or "").strip(),
            concurrency_safe=concurrency_safe,
            interrupt_behavior=interrupt_behavior,
            cancels_siblings_on_error=cancels_siblings_on_error,
            max_result_size_chars=max_result_size_chars,
            aliases=tuple(aliases),
            rule_matcher=rule_matcher,
        )

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
