"""The agent loop: assistant turns until the model stops asking for tools.

::

    agent = Agent(client, tools=default_tools(cwd), model="claude-sonnet-4-5")
    result = await agent.run("Fix the failing test")
    result.stop_reason          # "end_turn", "max_turns", "interrupted", "aborted", "hook_stopped"

Each turn is :func:`~trioexec.anthropic.run_assistant_turn` with a fresh
:class:`~trioexec.Turn`; :meth:`Agent.interrupt` and :meth:`Agent.abort` act
on the turn in progress (and stop the loop after it).  The conversation in
:attr:`Agent.messages` always answers every tool_use it contains, whatever
stopped the loop, so it can be resumed with another :meth:`Agent.run`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

import attrs

from .._contract._registry import ToolRegistry
from .._core._turn import Turn
from .._errors import ConfigurationError
from .._guard._rails import GuardRails
from .._models import JSONObject
from .._results._budget import DEFAULT_MESSAGE_BUDGET, ContentReplacementState
from ._turn import DEFAULT_MAX_TOKENS, TurnOutcome, run_assistant_turn

if TYPE_CHECKING:
    from pathlib import Path

    import anthropic

    from .._contract._tool import Tool
    from .._core._events import Observer
    from .._core._policy import Policy
    from .._models import JSONValue, ToolUse, Update
    from ._transcript import Transcript

__all__ = ["Agent", "AgentResult", "AgentStopReason", "StopHook"]

AgentStopReason: TypeAlias = Literal[
    "end_turn", "max_turns", "interrupted", "aborted", "hook_stopped"
]
"""Why :meth:`Agent.run` returned."""

StopHook: TypeAlias = Callable[[Sequence[JSONObject]], Awaitable[str | None]]
"""``async (messages) -> str | None``: called when the model ends its turn without a
tool_use; a string is sent as the next user message and the loop goes on, None stops."""


@attrs.frozen
class AgentResult:
    """What :meth:`Agent.run` ended with.

    Attributes:
        messages: the whole conversation, API shape (every message sent and received).
        turns: assistant turns run by this call.
        stop_reason: why the loop stopped.
        last: the last turn's outcome (None when no turn ran).
    """

    messages: tuple[JSONObject, ...]
    turns: int
    stop_reason: AgentStopReason
    last: TurnOutcome | None = None

    def to_json(self) -> JSONObject:
        """``{"messages": [...], "turns": N, "stop_reason": ...}``."""
        messages: list[JSONValue] = list(self.messages)
        return {"messages": messages, "turns": self.turns, "stop_reason": self.stop_reason}


class Agent:
    """An agent loop over the Anthropic Messages API with trioexec running the tools.

    Args:
        client: an ``anthropic.AsyncAnthropic``.
        tools: the tools offered and run (compiled once, here).
        model / max_tokens / request: as for ``run_assistant_turn``.
        max_turns: assistant turns per :meth:`run` at most (None: no limit).
        stop_hook: asked when the model ends its turn; may make it continue.
        messages: a conversation to continue (API shape).
        guard / cwd / session_dir / observers / max_concurrency / policy / budget /
        max_attempts / retry_backoff / on_text / on_tool_use / on_update /
        on_retry: passed
            to every turn.
        on_turn: called with (turn number, outcome) after each turn.
        transcript: where each message is written as it is added (the
            prompt, every assistant message, every tool-result user message,
            a stop hook's follow-up; not the ``messages`` given to continue).
            The guard rails then pass its path and session id to hooks
            (``transcript_path``, ``session_id``), replacing theirs.

    Raises:
        ToolDefinitionError: a tool is ill-defined (two share a name, ...).
        ConfigurationError: ``max_turns`` is below 1.
    """

    def __init__(
        self,
        client: anthropic.AsyncAnthropic,
        *,
        tools: ToolRegistry | Iterable[Tool[Any]],
        model: str,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        request: Mapping[str, object] | None = None,
        max_turns: int | None = None,
        stop_hook: StopHook | None = None,
        messages: Iterable[JSONObject] = (),
        guard: GuardRails | None = None,
        cwd: Path | None = None,
        session_dir: Path | None = None,
        observers: Iterable[Observer] = (),
        max_concurrency: int | None = None,
        policy: Policy | None = None,
        budget: int = DEFAULT_MESSAGE_BUDGET,
        max_attempts: int = 3,
        retry_backoff: float = 0.5,
        on_text: Callable[[str], None] | None = None,
        on_tool_use: Callable[[ToolUse], None] | None = None,
        on_update: Callable[[Update], None] | None = None,
        on_retry: Callable[[int, BaseException], None] | None = None,
        on_turn: Callable[[int, TurnOutcome], None] | None = None,
        transcript: Transcript | None = None,
    ) -> None:
        if max_turns is not None and max_turns < 1:
            raise ConfigurationError(f"max_turns must be >= 1 or None, not {max_turns}")
        self.client = client
        self.tools = ToolRegistry.coerce(tools)
        self.model = model
        self.max_turns = max_turns
        self.stop_hook = stop_hook
        self.messages: list[JSONObject] = list(messages)
        self.replacement_state = ContentReplacementState()
        self.on_turn = on_turn
        self.transcript = transcript
        if transcript is not None:
            guard = attrs.evolve(
                guard if guard is not None else GuardRails(),
                session_id=transcript.session_id,
                transcript_path=str(transcript.path),
            )
        self.guard = guard
        self._turn_options: dict[str, Any] = {
            "max_tokens": max_tokens,
            "request": request,
            "guard": guard,
            "cwd": cwd,
            "session_dir": session_dir,
            "observers": tuple(observers),
            "max_concurrency": max_concurrency,
            "policy": policy,
            "budget": budget,
            "max_attempts": max_attempts,
            "retry_backoff": retry_backoff,
            "on_text": on_text,
            "on_tool_use": on_tool_use,
            "on_update": on_update,
            "on_retry": on_retry,
        }
        self._turn: Turn | None = None
        self._stop: Literal["interrupted", "aborted"] | None = None

    def interrupt(self) -> None:
        """The user wants to stop: interrupt the turn in progress and end the loop after it.

        Reading the model's stream stops; ``"cancel"`` tools are cancelled,
        ``"block"`` tools finish.  Synchronous; safe from any task of the run.
        """
        if self._stop is None:
            self._stop = "interrupted"
        if self._turn is not None:
            self._turn.interrupt()

    def abort(self) -> None:
        """Hard stop: abort the turn in progress (every tool cancelled) and end the loop."""
        self._stop = "aborted"
        if self._turn is not None:
            self._turn.abort()

    async def run(self, prompt: str | Sequence[JSONValue] | None = None) -> AgentResult:
        """Add ``prompt`` as a user message (if given) and run turns until the loop stops.

        The loop stops when a turn ends without a tool_use (and the stop hook
        lets it), a hook asked to stop continuation (``"hook_stopped"``),
        ``max_turns`` turns ran while the model still wanted tools
        (``"max_turns"``), or :meth:`interrupt` / :meth:`abort` was called.

        Raises:
            ModelStreamError: a request failed for good; :attr:`messages`
                holds the conversation up to the failed request.

        On cancellation the turn in progress is cancelled (its tools too) and
        its messages are not added.
        """
        self._stop = None
        if prompt is not None:
            content: JSONValue = prompt if isinstance(prompt, str) else list(prompt)
            self._add({"role": "user", "content": content})
        turns = 0
        outcome: TurnOutcome | None = None
        while True:
            stop = self._stop_requested()
            if stop is not None:
                return self._result(turns, stop, outcome)
            if self.max_turns is not None and turns >= self.max_turns:
                return self._result(turns, "max_turns", outcome)
            self._turn = Turn()
            try:
                outcome = await run_assistant_turn(
                    self.client,
                    tools=self.tools,
                    messages=self.messages,
                    model=self.model,
                    turn=self._turn,
                    replacement_state=self.replacement_state,
                    **self._turn_options,
                )
            finally:
                self._turn = None
            turns += 1
            self._add(*outcome.messages())
            if self.on_turn is not None:
                self.on_turn(turns, outcome)
            if outcome.aborted:
                return self._result(turns, "aborted", outcome)
            if outcome.interrupted:
                return self._result(turns, "interrupted", outcome)
            if outcome.user_message is not None and outcome.user_message.stopped_continuation:
                return self._result(turns, "hook_stopped", outcome)
            if outcome.continues:
                continue
            follow_up = await self.stop_hook(self.messages) if self.stop_hook else None
            stop = self._stop_requested()
            if follow_up is None or stop is not None:
                return self._result(turns, stop or "end_turn", outcome)
            self._add({"role": "user", "content": follow_up})

    def _add(self, *messages: JSONObject) -> None:
        # The conversation first: a failed transcript write never leaves a tool_use unanswered.
        self.messages.extend(messages)
        if self.transcript is not None:
            for message in messages:
                self.transcript.append(message)

    def _stop_requested(self) -> Literal["interrupted", "aborted"] | None:
        return self._stop

    def _result(
        self, turns: int, reason: AgentStopReason, outcome: TurnOutcome | None
    ) -> AgentResult:
        return AgentResult(tuple(self.messages), turns, reason, outcome)
