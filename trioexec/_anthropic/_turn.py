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
connection, a transport error, a malformed event) is handled by the policy's
``stream_failure`` rule:

* ``"continue"`` (trioexec): when the failed attempt had sealed at least one
  tool_use, the message ends at the failure.  Every sealed call runs once to
  its answer (those already executing are not cancelled, those queued start
  as usual), and the cut-off assistant message, the answers and a note that
  the stream failed join the conversation; the agent loop asks the model
  again from there.  A call that ran is never run again by a retry, and the
  model is never left unaware of it: exactly once across stream failures.
* ``"retry"`` (Claude Code's streaming fallback): the attempt's executor is
  :meth:`~trioexec.StreamingExecutor.discard`-ed and the request is sent
  again with a fresh executor, so no tool_use id of the failed attempt
  reaches the conversation (and whatever its calls did is not told).

A failure before any tool_use was sealed is retried under both rules (only
text was lost), at most ``max_attempts`` requests with exponential backoff.
``on_stream_failure`` is told, for every failed attempt, what happened to
each of its calls (:class:`FailedAttempt`).

This module imports the ``anthropic`` SDK; it is reached only through
:mod:`trioexec.anthropic`, never from ``import trioexec``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

import anthropic
import attrs
import trio

from .._contract._registry import ToolRegistry
from .._core._events import Observer
from .._core._policy import resolve_policy
from .._core._streaming import StreamingExecutor, open_streaming_executor
from .._core._turn import Turn
from .._errors import ConfigurationError, TrioexecError
from .._models import JSONObject, JSONValue, ResultUpdate, ToolUse, Update
from .._results._budget import DEFAULT_MESSAGE_BUDGET, ContentReplacementState
from .._results._message import UserMessage, build_user_message
from .._texts import stream_cut_note
from ._assembler import ToolUseAssembler

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence
    from pathlib import Path

    from .._contract._tool import Tool
    from .._core._events import CallEvent
    from .._core._policy import Policy
    from .._guard._rails import GuardRails

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "AttemptCallFate",
    "FailedAttempt",
    "MalformedStreamError",
    "ModelStreamError",
    "TurnOutcome",
    "run_assistant_turn",
]

DEFAULT_MAX_TOKENS = 8192
"""``max_tokens`` of each request unless the caller gives another."""

_RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
_MALFORMED = (ValueError, LookupError, TypeError, AttributeError)
"""What the SDK raises reading an event that is not JSON or not an event's shape
(``json.JSONDecodeError`` and pydantic's errors are ``ValueError``; accumulating a
delta for a block that never started is a ``LookupError``)."""
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


class MalformedStreamError(TrioexecError):
    """The stream sent an event the SDK could not read (not JSON, or not an event's shape).

    A stream failure like a dropped connection: retried, then reported as the
    cause of :class:`ModelStreamError`; the SDK's exception is the ``__cause__``.
    """


AttemptCallFate: TypeAlias = Literal["kept", "not_started", "cancelled", "discarded"]
"""What happened to one call of a failed attempt: ``"kept"`` (it runs or ran once and
its answer joins the conversation: ``stream_failure="continue"``); under ``"retry"``,
``"not_started"`` (it never ran), ``"cancelled"`` (it was stopped while running, so
it may have done part of its work) or ``"discarded"`` (it ran to its end and its
result was thrown away: the model is not told it ran)."""


@attrs.frozen
class FailedAttempt:
    """One request whose stream failed, and what happened to each of its calls.

    Attributes:
        attempt: the request's number in this turn (1 for the first).
        error: the failure (:class:`MalformedStreamError` for a bad event).
        kept: the sealed calls were kept and the conversation continues from
            them (``stream_failure="continue"``); False: the attempt was
            discarded.
        calls: every sealed tool_use of the attempt with its fate, in order.
    """

    attempt: int
    error: BaseException
    kept: bool
    calls: tuple[tuple[ToolUse, AttemptCallFate], ...]


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
        stream_error: the failure that cut the message short when its sealed
            calls were kept (``stream_failure="continue"``); the assistant
            message is what had arrived, and the user message ends with a
            note saying so.  None when the stream ended normally.
        resumable: after a ``stream_error``, whether asking the model again
            is worth it (the failure is one a retry could cure).
    """

    assistant: JSONObject
    tool_uses: tuple[ToolUse, ...]
    user_message: UserMessage | None
    stop_reason: str | None
    attempts: int = 1
    interrupted: bool = False
    aborted: bool = False
    stream_error: BaseException | None = None
    resumable: bool = True

    @property
    def continues(self) -> bool:
        """Whether the agent loop should ask the model again.

        True iff a tool_use arrived, the turn was not interrupted, no hook
        asked to stop continuation, and a stream failure that cut the message
        short (if any) is one a new request could cure.
        """
        return (
            bool(self.tool_uses)
            and not self.interrupted
            and (self.stream_error is None or self.resumable)
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


class _CallLog(Observer):
    """Which calls of one attempt started, and how each ended (for :class:`FailedAttempt`)."""

    def __init__(self) -> None:
        self.started: set[str] = set()
        self.cancelled: set[str] = set()

    def call_event(self, event: CallEvent) -> None:
        if event.kind == "started":
            self.started.add(event.tool_use_id)
        elif event.kind == "cancelled":
            self.cancelled.add(event.tool_use_id)

    def fates(
        self, tool_uses: Iterable[ToolUse], *, kept: bool
    ) -> tuple[tuple[ToolUse, AttemptCallFate], ...]:
        out: list[tuple[ToolUse, AttemptCallFate]] = []
        for tool_use in tool_uses:
            fate: AttemptCallFate
            if kept:
                fate = "kept"
            elif tool_use.id not in self.started:
                fate = "not_started"
            elif tool_use.id in self.cancelled:
                fate = "cancelled"
            else:
                fate = "discarded"
            out.append((tool_use, fate))
        return tuple(out)


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
    on_stream_failure: Callable[[FailedAttempt], None] | None = None,
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
        guard / cwd / session_dir / observers / max_concurrency / policy: as
            for :func:`~trioexec.open_streaming_executor`; the policy's
            ``stream_failure`` also decides what a failed stream does (see
            the module docstring).
        replacement_state / budget: the message budget (SPEC §7); pass one
            state for a whole conversation so decisions stay byte-stable.
        max_attempts: requests sent at most when a stream fails before
            ``message_stop`` and the attempt is not kept (>= 1).
        retry_backoff: seconds before the first retry, doubled each time.
        on_text: called with each text delta as it streams.
        on_tool_use: called with each sealed tool_use, just before it goes to
            the executor (a UI's cue to show the call).
        on_update: called with each progress update and released result.
        on_retry: called with (attempt number, failure) before a retry.
        on_stream_failure: called with a :class:`FailedAttempt` once a failed
            attempt's calls are settled (kept, or discarded before a retry).

    Returns:
        The :class:`TurnOutcome`.

    Raises:
        ModelStreamError: every attempt failed, or the request was refused
            with an error that is not worth retrying (a 4xx such as an invalid
            key); the SDK's exception is the ``__cause__``.  Never once a
            failed attempt's calls were kept: the outcome says so instead
            (``stream_error``).
        ConfigurationError: ``max_attempts`` is below 1, or a bad ``policy``.

    On cancellation (from outside) the executor's calls are cancelled and
    awaited; nothing is returned.
    """
    if max_attempts < 1:
        raise ConfigurationError(f"max_attempts must be >= 1, not {max_attempts}")
    registry = ToolRegistry.coerce(tools)
    run_policy = resolve_policy(policy)
    keeps = run_policy.stream_failure == "continue"
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
    kept: BaseException | None = None  # the failure of an attempt whose calls were kept
    while True:
        attempt_number += 1
        watch = _StreamWatch()
        attempt = _Attempt()
        failure: BaseException | None = None
        limits: dict[str, float] = {}
        log = _CallLog()
        turn._attach(watch)
        try:
            async with open_streaming_executor(
                registry,
                turn=turn,
                guard=guard,
                policy=run_policy,
                cwd=cwd,
                session_dir=session_dir,
                observers=(*observers, log),
                max_concurrency=max_concurrency,
            ) as executor:
                deliver = _Deliver(attempt, on_update, on_tool_use)
                with watch.turn_scope:
                    if turn.interrupted:
                        watch.turn_scope.cancel(reason="user_interrupted")
                    try:
                        await _read_stream(client, params, attempt, executor, deliver, on_text)
                    except Exception as exc:
                        failure = exc
                if failure is not None and not (keeps and attempt.tool_uses):
                    executor.discard()
                else:  # the message ended, or ends here: every sealed call is answered
                    async for update in executor.remaining():
                        deliver([update])
                    limits = executor.result_limits
        finally:
            turn._detach(watch)
        if failure is None:
            break
        keep = keeps and bool(attempt.tool_uses)
        if on_stream_failure is not None:
            calls = log.fates(attempt.tool_uses, kept=keep)
            on_stream_failure(FailedAttempt(attempt_number, failure, keep, calls))
        if keep:
            kept = failure
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

    interrupted = turn.interrupted or (not attempt.finished and kept is None)
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
        if kept is not None:
            note = stream_cut_note(_describe_failure(kept), len(attempt.tool_uses))
            user_message = attrs.evolve(user_message, notes=(*user_message.notes, note))
    return TurnOutcome(
        assistant={"role": "assistant", "content": attempt.content},
        tool_uses=tuple(attempt.tool_uses),
        user_message=user_message,
        stop_reason=None if interrupted or kept is not None else attempt.stop_reason,
        attempts=attempt_number,
        interrupted=interrupted,
        aborted=turn.aborted,
        stream_error=kept,
        resumable=kept is None or _retryable(kept, attempt),
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
        events = stream.__aiter__()
        while True:
            try:
                event: Any = await events.__anext__()  # the SDK's event union, read by its type
            except StopAsyncIteration:
                break
            except _MALFORMED as exc:  # the SDK could not parse or accumulate an event
                raise MalformedStreamError(
                    f"the stream sent a malformed event ({type(exc).__name__}: {exc})"
                ) from exc
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


def _describe_failure(failure: BaseException) -> str:
    """What cut a message short, in words for the model."""
    if isinstance(failure, IncompleteStreamError):
        return "the connection closed before the message ended"
    if isinstance(failure, MalformedStreamError):
        return "the stream sent an event that could not be read"
    if isinstance(failure, anthropic.APIStatusError):
        body = failure.body
        error = body.get("error") if isinstance(body, dict) else None
        kind = error.get("type") if isinstance(error, dict) else None
        return f"the stream reported an error ({kind or failure.status_code})"
    return f"the stream failed ({type(failure).__name__})"


def _retryable(failure: BaseException, attempt: _Attempt) -> bool:
    """A failure mid-stream is always worth a retry; before it, only a transient one."""
    if isinstance(failure, (IncompleteStreamError, MalformedStreamError)):
        return True
    if isinstance(failure, anthropic.APIConnectionError):
        return True
    if isinstance(failure, anthropic.APIStatusError):
        return attempt.began or failure.status_code in _RETRYABLE_STATUS
    transport = type(failure).__module__.split(".")[0] in _TRANSPORT_PACKAGES
    return attempt.began and (transport or isinstance(failure, (anthropic.APIError, OSError)))
