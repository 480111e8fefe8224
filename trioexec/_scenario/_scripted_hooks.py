"""The scripted hook: a Python hook whose answer is data (SPEC §8 ``hooks`` entries).

A :class:`ScriptedHook` is an ``async (HookInput) -> HookOutput | None``
callable, so it goes wherever a Python hook goes
(``HookSet().with_python_hook("PreToolUse", "Bash", ScriptedHook(decision="deny"))``).
It sleeps (virtual time under a MockClock), then fails or answers with the
fields it was given.  No subprocess, so runs stay deterministic.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Literal

import attrs
import trio

from .._hooks._output import HookBlockingError, HookOutput
from .._models import JSONValue

if TYPE_CHECKING:
    from .._hooks._config import HookInput

__all__ = ["ScriptedHook", "ScriptedHookError"]


class ScriptedHookError(Exception):
    """What a scripted hook raises for a non-blocking failure (``error`` without ``blocking``)."""


def _frozen_input(value: Mapping[str, JSONValue] | None) -> Mapping[str, JSONValue] | None:
    return None if value is None else dict(value)


@attrs.frozen(eq=False)
class ScriptedHook:
    """A hook that answers as configured.

    Attributes:
        sleep: seconds to wait first (a hook runs under its own timeout).
        decision: PreToolUse ``permissionDecision``: ``allow``, ``deny`` or ``ask``.
        reason: ``permissionDecisionReason`` (a denial's message to the model).
        updated_input: PreToolUse ``updatedInput``: the whole replacement input.
        additional_context: text added for the model with the results.
        continue_: False asks the agent loop to stop after this batch.
        stop_reason: why it stops (the ``hook_stopped_continuation`` text).
        error: make the hook fail with this message instead of answering.
        blocking: with ``error``: fail like a command hook's exit code 2
            (:class:`HookBlockingError`: a PreToolUse hook then denies the call,
            a later one adds a ``hook_blocking_error`` record); without it the
            failure is non-blocking and gives no decision.

    Instances compare by identity, so two identical entries are two hooks
    (only the *same* Python hook registered twice runs once).

    On cancellation (the turn aborted while hooks run) the sleep is cancelled.
    """

    sleep: float = 0.0
    decision: Literal["allow", "deny", "ask"] | None = None
    reason: str | None = None
    updated_input: Mapping[str, JSONValue] | None = attrs.field(
        default=None, converter=_frozen_input
    )
    additional_context: str | None = None
    continue_: bool = True
    stop_reason: str | None = None
    error: str | None = None
    blocking: bool = False

    async def __call__(self, hook_input: HookInput) -> HookOutput | None:
        """Answer one hook event.

        Raises:
            HookBlockingError: ``error`` is set and ``blocking`` is true.
            ScriptedHookError: ``error`` is set and ``blocking`` is false.
        """
        await self.wait()
        if self.error is not None:
            if self.blocking:
                raise HookBlockingError(self.error)
            raise ScriptedHookError(self.error)
        output = HookOutput(
            continue_=self.continue_,
            stop_reason=self.stop_reason,
            permission_decision=self.decision,
            permission_decision_reason=self.reason,
            updated_input=self.updated_input,
            additional_context=self.additional_context,
        )
        return None if output == HookOutput() else output

    async def wait(self) -> None:
        """Sleep ``sleep`` seconds (a checkpoint when 0); a subclass may use another event loop."""
        if self.sleep > 0:
            await trio.sleep(self.sleep)
        else:
            await trio.lowlevel.checkpoint()

    def __repr__(self) -> str:
        fields = attrs.asdict(self, recurse=False)
        shown = ", ".join(
            f"{key}={value!r}" for key, value in fields.items() if value != _DEFAULTS[key]
        )
        return f"ScriptedHook({shown})"


_DEFAULTS = {field.name: field.default for field in attrs.fields(ScriptedHook)}
