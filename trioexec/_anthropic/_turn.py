"""One assistant turn from the Anthropic SDK's message stream, run through the streaming executor.

::

    outcome = await run_assistant_turn(client, tools=registry, messages=messages, model=model)
    messages += outcome.messages()        # the assistant message, then the tool_results
    if outcome.continues: ...             # a tool_use arrived: ask the model again

Each ``tool_use`` block goes to the executor the moment it is sealed (its
``content_block_stop``) while the model keeps streaming; after every event
the releasable progress and results are drained.  Whether the loop continues
is decided by whether a tool_use block arrived, never by ``stop_reason``.

A stream that fails before ``message_stop`` (an ``error`` event, a dropped
connection, a transport error) is an abandoned attempt: its executor is
:meth:`~trioexec.StreamingExecutor.discard`-ed (executing calls cancelled,
nothing released) and the request is sent again with a fresh executor, at
most ``max_attempts`` times with exponential backoff, so no tool_use id of a
failed attempt can reach the conversation.

This module imports the ``anthropic`` SDK; it is reached only through
:mod:`trioexec.anthropic`, never from ``import trioexec``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anthropic
import attrs
import trio

from .._contract._registry import ToolRegistry
from .._core._streaming import StreamingExecutor, open_streaming_executor
from .._core._turn import Turn
from .._errors import ConfigurationError, TrioexecError
from .._models import JSONObject, JSONValue, ResultUpdate, ToolUse, Update
from .._results._budget import DEFAULT_MESSAGE_BUDGET, ContentReplacementState
from .._results._message import UserMessage, build_user_message
from ._assembler import ToolUseAssembler

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence
    from pathlib import Path

    from .._contract._tool import Tool
    from .._core._events import Observer
    from .._core._policy import Policy
    from .._guard._rails import GuardRails

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "ModelStreamError",
    "TurnOutcome",
    "run_assistant_turn",
]

DEFAULT_MAX_TOKENS = 8192
"""``max_tokens`` of each request unless the caller gives another."""

_RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
_TRANSPORT_PACKAGES = frozenset({"httpx", "httpx2", "httpcore", "httpcore2", "h11", "anyio"})
"""Where a transport failure the SDK did not wrap comes from (a read cut mid-stream)."""


class ModelStreamError(TrioexecError):
    """The model's stream failed on every attempt (or with an error not worth retrying).

    ``attempts`` is how many requests were sent; the last failure is the
    ``__cause__``.
    """

    def __init__(self, message: str, *, attempts: int) -> None:
        super().__init__(message)
        self.attempts = attempts


class IncompleteStreamError(Exception):
    """The stream ended without ``message_stop`` (the connection closed early)."""


@attrs.frozen
class TurnOutcome:
    """What one assistant turn produced.

    Attributes:
        assistant: the assistant message, API shape (``{"role": "assistant",
            "content": [...]}``); after an interrupt, only what had arrived
            (complete tool_use blocks, the text so far).
        tool_uses: the sealed tool_use blocks, in arrival order.
        user_message: the next user message, one tool_result per tool_use in
            order, after the message budget (None when no tool_use arrived).
        stop_reason: the model's ``stop_reason`` (informational only; None
            when the stream was interrupted).
        attempts: requests sent (1 unless a stream failed and was retried).
        interrupted: the turn was interrupted or aborted while streaming or
            while its tools ran.
        aborted: the turn was aborted.
    """

    assistant: JSONObject
    tool_uses: tuple[ToolUse, ...]
    user_message: UserMessage | None
    stop_reason: str | None
    attempts: int = 1
    interrupted: bool = False
    aborted: bool = False

    @property
    def continues(self) -> bool:
        """Whether the agent loop should ask the model again.

        True iff a tool_use arrived, the turn was not interrupted and no hook
        asked to stop continuation.
        """
        return (
            bool(self.tool_uses)
            and not self.interrupted
            and self.user_message is not None
            and not self.user_message.stopped_continuation
        )

    def messages(self) -> list[JSONObject]:
        """The messages to append to the conversation: the assistant's, then the results.

        An assistant message with no content (interrupted before anything
        arrived) is left out, as the API refuses empty messages.
        """
        out: list[JSONObject] = []
        if self.assistant["content"]:
            out.append(self.assistant)
        if self.user_message is not None:
            out.append(self.user_message.to_api())
        return out


@attrs.define(eq=False)
class _StreamWatch:
    """Attaches the model stream to the :class:`Turn`: interrupt and abort stop reading it."""

    turn_scope: trio.CancelScope = attrs.field(factory=trio.CancelScope)
    in_progress: set[str] = attrs.field(factory=set)

    def on_interrupt(self) -> None:
        self.turn_scope.cancel(reason="user_interrupted")

    def on_abort(self) -> None:
        pass  # the Turn cancels turn_scope itself


@attrs.define(eq=False)
class _Attempt:
    """What one request's stream produced so far."""

    content: list[JSONValue] = attrs.Factory(list)
    tool_uses: list[ToolUse] = attrs.Factory(list)
    results: list[ResultUpdate] = attrs.Factory(list)
    texts: dict[int, list[str]] = attrs.Factory(dict)
    stop_reason: str | None = None
    began: bool = False
    finished: bool = False


@attrs.define(eq=False)
class _Deliver:
    """Hands drained updates to the caller and keeps the attempt's results."""

    attempt: _Attempt
    on_update: Callable[[Update], None] | None
    on_tool_use: Callable[[ToolUse], None] | None

    def __call__(self, updates: list[Update]) -> None:
        for update in updates:
            if isinstance(update, ResultUpdate):
                self.attempt.results.append(update)
            if self.on_update is not None:
                self.on_update(update)


async def run_assistant_turn(
    client: anthropic.AsyncAnthropic,
    *,
    tools: ToolRegistry | Iterable[Tool[Any]],
    messages: Sequence[Mapping[str, object]],
    model: str,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    request: Mapping[str, object] | None = None,
    turn: Turn | None = None,
    guard: GuardRails | None = None,
    cwd: Path | None = None,
    session_dir: Path | None = None,
    observers: Iterable[Observer] = (),
    max_concurrency: int | None = None,
    policy: Policy | None = None,
    replacement_state: ContentReplacementState | None = None,
    budget: int = DEFAULT_MESSAGE_BUDGET,
    max_attempts: int = 3,
    retry_backoff: float = 0.5,
    on_text: Callable[[str], None] | None = None,
    on_tool_use: Callable[[ToolUse], None] | None = None,
    on_update: Callable[[Update], None] | None = None,
    on_retry: Callable[[int, BaseException], None] | None = None,
) -> TurnOutcome:
    """Stream one assistant message and run its tool calls while it streams.

    Args:
        client: an ``anthropic.AsyncAnthropic`` (it works under trio).
        tools: the tools offered to the model (their ``to_api()`` definitions
            are sent) and run.
        messages: the conversation so far, API shape.
        model / max_tokens: the request's model and token limit.
        request: further request parameters (``system``, ``temperature``,
            ``metadata``, ...), passed to ``messages.stream`` as they are.
        turn: interrupt/abort it to stop this turn (a fresh one by default):
            reading the stream stops, ``"cancel"`` tools are cancelled
            (abort: every tool), and every sealed tool_use is still answered.
        guard / cwd / session_dir / observers / max_concurrency: as for
            :func:`~trioexec.open_streaming_executor`.
        policy: the rules where trioexec and Claude Code differ (default
            ``Policy()``; ``Policy.preset("claude-code-2.1.88")`` for Claude
            Code's), as for :func:`~trioexec.open_streaming_executor`.
        replacement_state / budget: the message budget (SPEC §7); pass one
            state for a whole conversation so decisions stay byte-stable.
        max_attempts: requests sent at most when a stream fails before
            ``message_stop`` (>= 1).
        retry_backoff: seconds before the first retry, doubled each time.
        on_text: called with each text delta as it streams.
        on_tool_use: called with each sealed tool_use, just before it goes to
            the executor (a UI's cue to show the call).
        on_update: called with each progress update and released result.
        on_retry: called with (attempt number, failure) before a retry.

    Returns:
        The :class:`TurnOutcome`.

    Raises:
        ModelStreamError: every attempt failed, or the request was refused
            with an error that is not worth retrying (a 4xx such as an invalid
            key); the SDK's exception is the ``__cause__``.
        ConfigurationError: ``max_attempts`` is below 1.

    On cancellation (from outside) the executor's calls are cancelled and
    awaited; nothing is returned.
    """
    if max_attempts < 1:
        raise ConfigurationError(f"max_attempts must be >= 1, not {max_attempts}")
    registry = ToolRegistry.coerce(tools)
    observers = tuple(observers)
    turn = turn if turn is not None else Turn()
    state = replacement_state if replacement_state is not None else ContentReplacementState()
    params: dict[str, Any] = {
        "model": model,
        "max_tokens": max_tokens,
        "messages": list(messages),
        **(request or {}),
    }
    definitions = registry.to_api()
    if definitions:
        params["tools"] = definitions
    attempt_number = 0
    while True:
        attempt_number += 1
        watch = _StreamWatch()
        attempt = _Attempt()
        failure: BaseException | None = None
        limits: dict[str, float] = {}
        turn._attach(watch)
        try:
            async with open_streaming_executor(
                registry,
                turn=turn,
                guard=guard,
                cwd=cwd,
                session_dir=session_dir,
                observers=observers,
                max_concurrency=max_concurrency,
                policy=policy,
            ) as executor:
                deliver = _Deliver(attempt, on_update, on_tool_use)
                with watch.turn_scope:
                    if turn.interrupted:
                        watch.turn_scope.cancel(reason="user_interrupted")
                    try:
                        await _read_stream(client, params, attempt, executor, deliver, on_text)
                    except Exception as exc:
                        failure = exc
                if failure is not None:
                    executor.discard()
                else:
                    async for update in executor.remaining():
                        deliver([update])
                    limits = executor.result_limits
        finally:
            turn._detach(watch)
        if failure is None:
            break
        if not _retryable(failure, attempt) or attempt_number >= max_attempts:
            raise ModelStreamError(
                f"the model's stream failed after {attempt_number} attempt(s): "
                f"{type(failure).__name__}: {failure}",
                attempts=attempt_number,
            ) from failure
        if on_retry is not None:
            on_retry(attempt_number, failure)
        backoff = _StreamWatch()
        turn._attach(backoff)
        try:
            with backoff.turn_scope:
                if turn.interrupted:
                    backoff.turn_scope.cancel(reason="user_interrupted")
                await trio.sleep(retry_backoff * 2 ** (attempt_number - 1))
        finally:
            turn._detach(backoff)
        if turn.interrupted:  # stopped between attempts: nothing of the failed one survives
            attempt = _Attempt()
            break

    interrupted = turn.interrupted or not attempt.finished
    _flush_texts(attempt)
    user_message = None
    if attempt.tool_uses:
        user_message = await build_user_message(
            attempt.results,
            state=state,
            session_dir=session_dir,
            budget=budget,
            limits=limits,
        )
    return TurnOutcome(
        assistant={"role": "assistant", "content": attempt.content},
        tool_uses=tuple(attempt.tool_uses),
        user_message=user_message,
        stop_reason=None if interrupted else attempt.stop_reason,
        attempts=attempt_number,
        interrupted=interrupted,
        aborted=turn.aborted,
    )


async def _read_stream(
    client: anthropic.AsyncAnthropic,
    params: dict[str, Any],
    attempt: _Attempt,
    executor: StreamingExecutor,
    deliver: _Deliver,
    on_text: Callable[[str], None] | None,
) -> None:
    """Read one stream to its ``message_stop``, sealing blocks into ``attempt``.

    Raises:
        IncompleteStreamError: the stream ended without ``message_stop``.
    """
    assembler = ToolUseAssembler()
    async with client.messages.stream(**params) as stream:
        async for raw_event in stream:
            event: Any = raw_event  # the SDK's event union, read by its ``type``
            kind = event.type
            if kind == "message_start":
                attempt.began = True
            elif kind == "content_block_start":
                _flush_texts(attempt)
                block_type = getattr(event.content_block, "type", None)
                if block_type == "text":
                    attempt.texts[event.index] = []
            elif kind == "content_block_delta":
                delta = event.delta
                if delta.type == "text_delta" and event.index in attempt.texts:
                    attempt.texts[event.index].append(delta.text)
                    if on_text is not None:
                        on_text(delta.text)
            elif kind == "message_delta":
                attempt.stop_reason = event.delta.stop_reason
            elif kind == "message_stop":
                attempt.finished = True
            sealed = assembler.feed(event)
            if sealed is not None:
                attempt.tool_uses.append(sealed)
                attempt.content.append(sealed.to_api())
                if deliver.on_tool_use is not None:
                    deliver.on_tool_use(sealed)
                executor.add_tool(sealed)
            elif kind == "content_block_stop":
                _seal_other(attempt, event)
            deliver(executor.drain_nowait())
    if not attempt.finished:
        raise IncompleteStreamError("the stream ended before message_stop")


def _seal_other(attempt: _Attempt, event: Any) -> None:  # noqa: ANN401 - an SDK event
    """A non-tool_use block ended: keep text as text, other blocks as the SDK parsed them."""
    index = event.index
    if index in attempt.texts:
        text = "".join(attempt.texts.pop(index))
        if text:
            attempt.content.append({"type": "text", "text": text})
        return
    block = getattr(event, "content_block", None)
    if block is not None and getattr(block, "type", None) != "tool_use":
        dumped = block.model_dump(mode="json", exclude_none=True)
        dumped.pop("parsed_output", None)
        attempt.content.append(dumped)


def _flush_texts(attempt: _Attempt) -> None:
    """Keep text that was cut off (an interrupt) as it stood."""
    for index in sorted(attempt.texts):
        text = "".join(attempt.texts.pop(index))
        if text:
            attempt.content.append({"type": "text", "text": text})


def _retryable(failure: BaseException, attempt: _Attempt) -> bool:
    """A failure mid-stream is always worth a retry; before it, only a transient one."""
    if isinstance(failure, IncompleteStreamError):
        return True
    if isinstance(failure, anthropic.APIConnectionError):
        return True
    if isinstance(failure, anthropic.APIStatusError):
        return attempt.began or failure.status_code in _RETRYABLE_STATUS
    transport = type(failure).__module__.split(".")[0] in _TRANSPORT_PACKAGES
    return attempt.began and (transport or isinstance(failure, (anthropic.APIError, OSError)))
