"""The scripted tool: a :class:`~trioexec.Tool` whose every behaviour is data.

Its input says what one call does (SPEC §8): sleep, then run ``steps``
(sleeps, progress reports, context updates) in order, then return ``output``
(or ``output_size`` characters of generated text), or raise ``error``.  How
the tool itself behaves (concurrency safety, interrupt behaviour, sibling
cascade, result-size limit, aliases, its own permission answer) is given once,
when the tool is made.  All waiting is ``trio.sleep``, so on a
``trio.testing.MockClock`` a whole turn runs in virtual time.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Literal, TypeAlias

import trio

from .._contract._tool import PermissionResult, Tool, ToolOutput
from .._guard._bash_rules import match_bash_rule
from .._guard._path_rules import match_path_rule

if TYPE_CHECKING:
    from collections.abc import Mapping

    from .._contract._rules import RuleBehavior
    from .._contract._tool import CallContext, ContextState, InterruptBehavior, ProgressSender
    from .._models import JSONObject, JSONValue

__all__ = [
    "SCRIPTED_INPUT_SCHEMA",
    "ScriptedInput",
    "ScriptedTool",
    "ScriptedToolError",
    "generated_output",
]

ScriptedInput: TypeAlias = "Mapping[str, JSONValue]"
PermissionAnswer: TypeAlias = Literal["allow", "ask", "deny"]

_TIME: JSONObject = {"type": "number", "minimum": 0}
SCRIPTED_INPUT_SCHEMA: JSONObject = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "sleep": _TIME,
        "steps": {
            "type": "array",
            "items": {
                "type": "object",
                "minProperties": 1,
                "maxProperties": 1,
                "additionalProperties": False,
                "properties": {"sleep": _TIME, "progress": {}, "context": {"type": "object"}},
            },
        },
        "output": {"type": "string"},
        "output_size": {"type": "integer", "minimum": 0},
        "error": {"type": "string"},
        "concurrency_safe": {"type": "boolean"},
        "command": {"type": "string"},
        "file_path": {"type": "string"},
        "pattern": {"type": "string"},
    },
}
"""The input every scripted tool accepts; any other key is a layer-1 error."""

_LINE = ("Scripted output for result-size scenarios; every line is the same. " * 2)[:79] + "\n"


def generated_output(size: int) -> str:
    """Exactly ``size`` characters: a 79-character line plus newline, repeated and cut."""
    if size < 0:
        raise ValueError("size must be >= 0")
    repeats = size // len(_LINE) + 1
    return (_LINE * repeats)[:size]


class ScriptedToolError(Exception):
    """What a scripted tool raises when its input gives ``error``."""


class ScriptedTool(Tool["ScriptedInput"]):
    """A tool that does what its input says, for tests and scenario files.

    Input keys (all optional): ``sleep`` (seconds, before any step);
    ``steps``, a list of ``{"sleep": s}`` / ``{"progress": data}`` /
    ``{"context": {k: v}}``; ``output`` (string) or ``output_size`` (generated
    text of that length); ``error`` (raise with this message after the
    steps); ``concurrency_safe`` (read when the tool was made with
    ``concurrency_safe="input"``); ``command`` / ``file_path`` / ``pattern``
    (only for descriptions, e.g. in sibling-error texts).

    ``{"context": ...}`` steps are merged, in step order, into one context
    modifier attached to the output.  Progress goes out through the progress
    sender the moment its step runs.

    ``timeout`` / ``idle_timeout`` are the tool's time limits (seconds).

    On cancellation: the call is cancelled at its next ``sleep``; a call
    whose input has no sleep at all never checks for cancellation, which is
    itself a case worth scripting.
    """

    input_schema = SCRIPTED_INPUT_SCHEMA

    def __init__(
        self,
        name: str,
        *,
        concurrency_safe: bool | Literal["input"] = False,
        interrupt_behavior: InterruptBehavior = "block",
        cancels_siblings_on_error: bool = False,
        max_result_size_chars: float = 100_000,
        aliases: tuple[str, ...] = (),
        permission: PermissionAnswer = "allow",
        description: str = "",
        timeout: float | None = None,
        idle_timeout: float | None = None,
    ) -> None:
        if concurrency_safe not in (True, False, "input"):
            raise ValueError("concurrency_safe must be True, False or 'input'")
        if interrupt_behavior not in ("cancel", "block"):
            raise ValueError("interrupt_behavior must be 'cancel' or 'block'")
        if permission not in ("allow", "ask", "deny"):
            raise ValueError("permission must be 'allow', 'ask' or 'deny'")
        if not (max_result_size_chars == math.inf or max_result_size_chars >= 0):
            raise ValueError("max_result_size_chars must be >= 0 or math.inf")
        self.name = name
        self.description = description or f"Scripted tool {name}"
        self.concurrency_safe = concurrency_safe
        self.interrupt_behavior = interrupt_behavior
        self.cancels_siblings_on_error = cancels_siblings_on_error
        self.max_result_size_chars = max_result_size_chars
        self.aliases = tuple(aliases)
        self.permission: PermissionAnswer = permission
        self.timeout = timeout
        self.idle_timeout = idle_timeout

    def is_concurrency_safe(self, input: ScriptedInput) -> bool:  # noqa: A002
        """The fixed answer, or the input's ``concurrency_safe`` (default false)."""
        if self.concurrency_safe == "input":
            return input.get("concurrency_safe") is True
        return self.concurrency_safe

    async def validate_input(self, input: ScriptedInput, ctx: CallContext) -> str | None:  # noqa: A002
        """Layer 2b: ``output`` and ``output_size`` exclude each other."""
        if "output" in input and "output_size" in input:
            return "Give either output or output_size, not both"
        return None

    async def check_permissions(
        self,
        input: ScriptedInput,  # noqa: A002
        ctx: CallContext,
    ) -> PermissionResult:
        """The configured answer: allow, ask, or deny with a fixed message."""
        if self.permission == "deny":
            return PermissionResult.deny(f"{self.name} denied this call (its own permission check)")
        if self.permission == "ask":
            return PermissionResult.ask()
        return PermissionResult.allow()

    def match_rule_content(
        self,
        content: str,
        input: ScriptedInput,  # noqa: A002
        ctx: CallContext,
        *,
        behavior: RuleBehavior,
    ) -> bool:
        """``Tool(content)`` rules: shell-style for ``command``, path-style for ``file_path``.

        ``command`` is matched like the Bash tool's rules (``npm test:*``
        prefixes, ``*`` wildcards, compound commands split); ``file_path`` like
        file tools' gitignore-style patterns (relative to ``ctx.cwd``);
        ``pattern`` like a command.  An input with none of them matches nothing.
        """
        command = input.get("command")
        if isinstance(command, str):
            return match_bash_rule(content, command, behavior=behavior)
        file_path = input.get("file_path")
        if isinstance(file_path, str):
            return match_path_rule(content, file_path, cwd=ctx.cwd)
        pattern = input.get("pattern")
        if isinstance(pattern, str):
            return match_bash_rule(content, pattern, behavior=behavior)
        return False

    async def wait(self, seconds: float) -> None:
        """How the script waits: ``trio.sleep`` (a subclass may wait on another event loop)."""
        await trio.sleep(seconds)

    async def call(
        self,
        input: ScriptedInput,  # noqa: A002
        ctx: CallContext,
        progress: ProgressSender,
    ) -> object:
        """Run the script: sleep, steps in order, then output or error."""
        sleep = input.get("sleep")
        if isinstance(sleep, (int, float)):
            await self.wait(sleep)
        updates: dict[str, object] = {}
        steps = input.get("steps")
        for step in steps if isinstance(steps, list) else ():
            if not isinstance(step, dict):
                continue
            if "sleep" in step and isinstance(step["sleep"], (int, float)):
                await self.wait(step["sleep"])
            elif "progress" in step:
                progress(step["progress"])
            elif "context" in step and isinstance(step["context"], dict):
                updates.update(step["context"])
        error = input.get("error")
        if isinstance(error, str):
            raise ScriptedToolError(error)
        size = input.get("output_size")
        output = input.get("output", "")
        text = generated_output(size) if isinstance(size, int) else str(output)
        if updates:
            return ToolOutput(text, _merge(updates))
        return text


def _merge(updates: Mapping[str, object]) -> _ContextMerge:
    return _ContextMerge(dict(updates))


class _ContextMerge:
    """A context modifier that merges fixed keys into the context."""

    __slots__ = ("_updates",)

    def __init__(self, updates: dict[str, object]) -> None:
        self._updates = updates

    def __call__(self, state: ContextState) -> ContextState:
        return {**state, **self._updates}

    def __repr__(self) -> str:
        return f"<merge context {self._updates!r}>"
