"""What a tool is: the :class:`Tool` base class and what a call sees.

A tool is an object with a name, a JSON Schema for its input, optional attrs
``input_type`` for typed input, and an async ``call``.  Everything else has a
safe default: not concurrency-safe, ``"block"`` on interrupt, no sibling
cascade, results over 100,000 characters persisted, permission allowed.
"""

from __future__ import annotations

import inspect
import os
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Literal, Protocol, TypeAlias, TypeVar

import attrs

from .._errors import ToolDefinitionError
from .._models import Content, JSONObject, JSONValue, ToolUse
from ._permission_context import PermissionContext
from ._schema import schema_for_input_type

if TYPE_CHECKING:
    from ._path_access import PathAccess
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
    "check_tool_name",
    "is_mcp_tool",
    "tool_schema",
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
    """A permission answer: allow, deny (with a message), ask, or passthrough (no opinion).

    ``safety_check`` marks an ask that nothing but the application may answer:
    neither bypass mode nor an allow rule nor a hook's allow skips it (a write
    to a protected path such as ``.git/config``), and with no ``can_use_tool``
    callback its ``message`` is the denial the model reads.
    """

    behavior: PermissionBehavior
    message: str | None = None
    updated_input: Mapping[str, JSONValue] | None = None
    safety_check: bool = False

    @classmethod
    def allow(cls, updated_input: Mapping[str, JSONValue] | None = None) -> PermissionResult:
        """Allow the call, optionally with a replaced input."""
        return cls("allow", None, updated_input)

    @classmethod
    def deny(cls, message: str) -> PermissionResult:
        """Deny the call; ``message`` becomes the error tool_result."""
        return cls("deny", message)

    @classmethod
    def ask(cls, message: str | None = None, *, safety_check: bool = False) -> PermissionResult:
        """Ask the application (``can_use_tool``) whether the call may go ahead.

        With ``safety_check=True`` (a tool's own check may answer so) the ask
        holds in every mode and against every allow rule and hook, as for a
        protected path; ``message`` then tells the model why when nobody can
        answer.
        """
        return cls("ask", message, None, safety_check)

    @classmethod
    def passthrough(cls, message: str | None = None) -> PermissionResult:
        """Give no opinion; the permission chain decides.  ``message``: what the
        model reads if the chain ends in an ask nobody answers."""
        return cls("passthrough", message)


_ALLOW = PermissionResult("allow")


class ProgressSender(Protocol):
    """Sends one progress item; synchronous, never blocks, may be called at any time.

    Safe from any thread: from a worker thread the item is handed to the run's
    thread, in order, and delivered before the call's result (if the tool
    waits for its thread before returning).
    """

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
    timeout: float | None = None
    """Seconds the ``call`` step may take in all (None: no limit); a run may override it."""
    idle_timeout: float | None = None
    """Seconds the ``call`` step may go without a progress update (None: no limit)."""
    path_access: PathAccess | None = None
    """Which input field names a path the tool reads or writes (None: none).  A declaring
    tool is governed by ``Read`` rules (reads) or ``Edit`` rules (writes) besides its own,
    its rule content is a path pattern, and its writes to protected paths always ask."""

    def __init_subclass__(cls, **kwargs: Any) -> None:  # noqa: ANN401
        """Check what a subclass defines at class creation, so mistakes surface at once.

        Raises:
            ToolDefinitionError: an invalid ``name``, a synchronous ``call``, or
                an ``input_type`` without a JSON Schema equivalent.
        """
        super().__init_subclass__(**kwargs)
        label = cls.__dict__.get("name", cls.__name__)
        if "name" in cls.__dict__:
            check_tool_name(cls.__dict__["name"], f"{cls.__name__}.name")
        call = cls.__dict__.get("call")
        if call is not None and not inspect.iscoroutinefunction(call):
            raise ToolDefinitionError(
                f"tool {label!r}: {cls.__name__}.call must be a coroutine function "
                "(write `async def call(self, input, ctx, progress)`)"
            )
        input_type = cls.__dict__.get("input_type")
        if input_type is not None and cls.__dict__.get("input_schema", cls.input_schema) is None:
            try:
                schema_for_input_type(input_type)
            except ToolDefinitionError as exc:
                raise ToolDefinitionError(f"tool {label!r}: input_type: {exc}") from None

    def to_api(self) -> JSONObject:
        """The Messages API ``tools`` entry: ``{"name", "description", "input_schema"}``.

        The schema is ``input_schema``, else the one derived from ``input_type``,
        else any object (the same schema layer 1 validates against).

        Raises:
            ToolDefinitionError: the tool has no valid name, or its input type
                has no JSON Schema equivalent.
        """
        name = check_tool_name(getattr(self, "name", None), repr(self))
        return {
            "name": name,
            "description": self.description,
            "input_schema": api_schema(tool_schema(self)),
        }

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

    def match_rule_contents(
        self,
        contents: Sequence[str],
        input: InputT,  # noqa: A002
        ctx: CallContext,
        *,
        behavior: RuleBehavior,
    ) -> bool | None:
        """Whether one of several ``Tool(content)`` rules of one behavior applies to this input.

        The permission chain asks this once per behavior (deny, ask, allow)
        with every content of that behavior.  The default asks
        :meth:`match_rule_content` rule by rule; a tool that reads its input
        once for all rules overrides this (the Bash tool parses a command
        once, not once per rule).

        Returns:
            True when one of ``contents`` matches; else None when the tool
            could not interpret one of them (the chain fails closed, as for
            :meth:`match_rule_content`); else False.
        """
        unread = False
        for content in contents:
            matched = self.match_rule_content(content, input, ctx, behavior=behavior)
            if matched:
                return True
            if matched is None:
                unread = True
        return None if unread else False

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
        """The input as hooks see it: declared paths made absolute.

        As Claude Code's ``backfillObservableInput`` ("hooks.mdx documents
        file_path as absolute; expand so hook allowlists can't be bypassed via
        ~ or relative paths"): the field ``path_access`` declares (a path or a
        list of paths) gets ``~`` expanded and is joined to ``cwd``, so a hook
        that blocks ``/etc/*`` sees ``/etc/hostname``, never
        ``../../etc/hostname``.  The tool itself still runs with the model's
        input unless a hook or the application replaces it.  A tool without
        ``path_access``: the input unchanged.  Must return a new mapping and
        be idempotent.
        """
        access = self.path_access
        raw = input.get(access.field) if access is not None else None
        if access is None or raw is None:
            return input
        if isinstance(raw, str):
            return {**input, access.field: _absolute(raw, cwd)} if raw else input
        if isinstance(raw, list) and all(isinstance(item, str) for item in raw):
            return {**input, access.field: [_absolute(str(item), cwd) for item in raw]}
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

    def partial_output(self, progress: Sequence[object]) -> str:
        """The output a stopped call had produced, from the progress items it sent.

        Goes into the answer of a call that was stopped before it finished (a
        timeout, a sibling's error, the user, the application).  Default: the
        ``text`` of items that have one (a ``BashProgress`` chunk: output as it
        arrived), and items that are strings, one per line, in order.
        """
        parts: list[str] = []
        for item in progress:
            if isinstance(item, str):
                parts.append(item if item.endswith("\n") else item + "\n")
            else:
                text = getattr(item, "text", None)
                if isinstance(text, str):
                    parts.append(text)
        return "".join(parts).strip("\n")

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


def _absolute(raw: str, cwd: Path) -> str:
    """``raw`` with ``~`` expanded, joined to ``cwd``, normalised (no file system access)."""
    return os.path.normpath(os.path.join(cwd, os.path.expanduser(raw)))


def is_mcp_tool(tool: Tool[Any]) -> bool:
    """Whether ``tool`` is served by an MCP server (``is_mcp``, or a name starting ``mcp__``)."""
    return bool(getattr(tool, "is_mcp", False)) or tool.name.startswith("mcp__")


_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")


def check_tool_name(name: object, where: str) -> str:
    """Return ``name`` if the Messages API accepts it as a tool name.

    Raises:
        ToolDefinitionError: not a string of 1-64 letters, digits, ``_`` or ``-``.
    """
    if not isinstance(name, str) or not name:
        raise ToolDefinitionError(
            f"{where} has no name; give it one (a `name` class attribute, or "
            "@function_tool(name=...)) of 1-64 letters, digits, '_' or '-'"
        )
    if not _NAME.fullmatch(name):
        raise ToolDefinitionError(
            f"tool name {name!r} ({where}) is not valid for the Messages API; use 1-64 "
            "letters, digits, '_' or '-'"
        )
    return name


def tool_schema(tool: Tool[Any]) -> JSONObject:
    """The JSON Schema of a tool's input: ``input_schema``, else derived, else any object.

    Raises:
        ToolDefinitionError: ``input_type`` has no JSON Schema equivalent.
    """
    if tool.input_schema is not None:
        return tool.input_schema
    if tool.input_type is not None:
        try:
            return schema_for_input_type(tool.input_type)
        except ToolDefinitionError as exc:
            raise ToolDefinitionError(
                f"tool {getattr(tool, 'name', '?')!r}: input_type: {exc}"
            ) from None
    return {"type": "object"}


def api_schema(schema: JSONObject) -> JSONObject:
    """``schema`` as sent to the model: without the ``$schema`` marker (it costs tokens)."""
    return {k: v for k, v in schema.items() if k != "$schema"}


def _is_block(value: object) -> bool:
    from .._models import ImageBlock, TextBlock

    return isinstance(value, (TextBlock, ImageBlock))
