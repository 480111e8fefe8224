"""The parsed form of a scenario file (SPEC §8): frozen value types, no I/O.

:func:`~trioexec._scenario._load.parse_scenario` builds these from the JSON
document after it passed the schema and the cross-field checks, so every
field here already holds a valid value.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, TypeAlias

import attrs

from .._core._policy import DEFAULT_POLICY, Policy
from .._models import JSONValue, ToolUse

__all__ = [
    "ActionKind",
    "ActionSpec",
    "CallSpec",
    "HookEvent",
    "HookSpec",
    "Mode",
    "Scenario",
    "ToolSpec",
]

Mode: TypeAlias = Literal["stream", "batch"]
ActionKind: TypeAlias = Literal["interrupt", "abort", "discard", "deadline"]
"""``deadline``: the application's enclosing scope is cancelled (with ``reason``)."""
HookEvent: TypeAlias = Literal["PreToolUse", "PostToolUse", "PostToolUseFailure"]

DEFAULT_MAX_CONCURRENCY = 10
"""Used when the file gives none, so that the environment never changes a run."""
DEFAULT_MESSAGE_BUDGET = 200_000
DEFAULT_MAX_RESULT_SIZE_CHARS = 100_000
"""The :class:`~trioexec.Tool` default, used when a tool entry leaves the key out."""


@attrs.frozen
class ToolSpec:
    """One ``tools`` entry: how a scripted tool behaves."""

    name: str
    description: str = ""
    concurrency_safe: bool | Literal["input"] = False
    interrupt_behavior: Literal["cancel", "block"] = "block"
    cancels_siblings_on_error: bool = False
    max_result_size_chars: float = DEFAULT_MAX_RESULT_SIZE_CHARS
    """``math.inf`` when the file says ``null``: never persisted."""
    aliases: tuple[str, ...] = ()
    permission: Literal["allow", "ask", "deny"] = "allow"
    timeout: float | None = None
    idle_timeout: float | None = None


@attrs.frozen
class CallSpec:
    """One ``calls`` entry: a tool_use and the virtual time it arrives."""

    id: str
    name: str
    at: float = 0.0
    input: Mapping[str, JSONValue] = attrs.field(factory=dict)

    def tool_use(self) -> ToolUse:
        """The tool_use block the model would have sent."""
        return ToolUse(id=self.id, name=self.name, input=dict(self.input))


@attrs.frozen
class ActionSpec:
    """One ``actions`` entry: something the user (or the caller) does at a time."""

    at: float
    do: ActionKind
    reason: str | None = None


@attrs.frozen
class HookSpec:
    """One ``hooks`` entry: a scripted in-process hook (see ``trioexec.testing``)."""

    event: HookEvent
    matcher: str | None = None
    sleep: float = 0.0
    decision: Literal["allow", "deny", "ask"] | None = None
    reason: str | None = None
    updated_input: Mapping[str, JSONValue] | None = None
    additional_context: str | None = None
    continue_: bool = True
    stop_reason: str | None = None
    error: str | None = None
    blocking: bool = False


@attrs.frozen
class Scenario:
    """A whole scenario file: one turn of scripted tool calls."""

    name: str = ""
    description: str = ""
    mode: Mode = "stream"
    max_concurrency: int = DEFAULT_MAX_CONCURRENCY
    policy: Policy = DEFAULT_POLICY
    """The file's ``"policy"`` with its ``result_order`` / ``synthetic_texts`` fields applied."""
    tools: tuple[ToolSpec, ...] = ()
    calls: tuple[CallSpec, ...] = ()
    actions: tuple[ActionSpec, ...] = ()
    permissions: Mapping[str, tuple[str, ...]] | None = None
    """``{"allow": (...), "ask": (...), "deny": (...)}`` or None when absent."""
    permission_mode: Literal["default", "bypass"] = "default"
    can_use_tool: Literal["allow", "deny"] | None = None
    hooks: tuple[HookSpec, ...] = ()
    message_budget: int = DEFAULT_MESSAGE_BUDGET

    @property
    def result_order(self) -> Literal["arrival", "completion"]:
        """The policy's result order (the file's ``result_order`` field is a shorthand)."""
        return self.policy.result_order

    @property
    def synthetic_texts(self) -> Literal["claude-code", "trioexec"]:
        """The policy's texts (the file's ``synthetic_texts`` field is a shorthand)."""
        return self.policy.synthetic_texts

    @property
    def uses_guard_rails(self) -> bool:
        """Whether any permission, hook or ``can_use_tool`` setting is present."""
        return (
            self.permissions is not None
            or self.permission_mode != "default"
            or self.can_use_tool is not None
            or bool(self.hooks)
        )

    @property
    def end_time(self) -> float:
        """The last scripted instant (a call's arrival or an action)."""
        times = [call.at for call in self.calls] if self.mode == "stream" else []
        times += [action.at for action in self.actions]
        return max(times, default=0.0)
