"""``trioexec.anthropic`` on the real SDK against a local server replaying recorded streams.

Every test checks what the server received: the ``tools`` definitions, and a
next user message with exactly one tool_result per tool_use, in order.
These tests use real sockets and therefore real time (a few milliseconds).
"""

from __future__ import annotations

import subprocess
import sys
import threading
from typing import TYPE_CHECKING, Any

import anthropic
import attrs
import pytest
import trio
from messages_server import (
    Drop,
    MessagesServer,
    Raw,
    Status,
    WaitFor,
    message_start,
    response,
    stream_error,
    text,
    tool_use,
)

from trioexec import CallContext, Policy, ToolRegistry, function_tool
from trioexec.anthropic import (
    Agent,
    FailedAttempt,
    MalformedStreamError,
    ModelStreamError,
    run_assistant_turn,
)

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

PROMPT = [{"role": "user", "content": "go"}]

# When a stream fails mid-message, the SDK leaves its inner SSE async generators
# unexhausted and trio's finalizer warns as they are collected; that is the SDK's,
# not ours (our executor and its calls are closed deterministically).
pytestmark = pytest.mark.filterwarnings(
    "ignore:Async generator '(anthropic|httpx|httpcore):ResourceWarning"
)


def client_for(server: MessagesServer) -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(api_key="test-key", base_url=server.url, max_retries=0)


def results_of(message: dict[str, Any]) -> list[tuple[str, bool, str]]:
    """(tool_use_id, is_error, content) of each tool_result block of a user message."""
    assert message["role"] == "user"
    return [
        (b["tool_use_id"], bool(b.get("is_error")), b["content"])
        for b in message["content"]
        if b["type"] == "tool_result"
    ]


class Probe:
    """Tools that record what ran, and a thread-safe flag set when ``lookup`` starts."""

    def __init__(self) -> None:
        self.started = threading.Event()
        self.ran: list[str] = []
        self.cancelled: list[str] = []
        self.waiting = trio.Event()
        probe = self

        @function_tool(concurrency_safe=True)
        async def lookup(key: str, ctx: CallContext) -> str:
            """Look a key up."""
            probe.started.set()
            probe.ran.append(ctx.tool_use.id)
            return f"value of {key}"

        @function_tool(concurrency_safe=True, interrupt_behavior="cancel")
        async def wait(seconds: float, ctx: CallContext) -> str:
            """Wait a while."""
            probe.ran.append(ctx.tool_use.id)
            probe.waiting.set()
            try:
                await trio.sleep(seconds)
            except trio.Cancelled:
                probe.cancelled.append(ctx.tool_use.id)
                raise
            return "waited"

        self.tools = ToolRegistry([lookup, wait])


@pytest.fixture
def probe() -> Probe:
    return Probe()


@pytest.fixture
def serve() -> Iterator[Any]:
    servers: list[MessagesServer] = []

    def start(*scripts: list[Any]) -> MessagesServer:
        server = MessagesServer(list(scripts))
        server.__enter__()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.__exit__(None, None, None)


async def test_tools_start_before_message_stop_and_results_come_back_in_order(
    probe: Probe, serve: Any
) -> None:
    turn_1 = response(
        text(0, "Let me look."),
        tool_use(1, "toolu_a", "lookup", {"key": "a"}),
        text(2, "And also"),
        tool_use(3, "toolu_b", "wait", {"seconds": 0.05}),
        tool_use(4, "toolu_c", "lookup", {"key": "c"}),
        [WaitFor(probe.started)],  # the stream is held until a tool has started
        stop_reason="tool_use",
    )
    server = serve(turn_1, response(text(0, "Done.")))
    texts: list[str] = []
    agent = Agent(client_for(server), tools=probe.tools, model="m", on_text=texts.append)
    result = await agent.run("look things up")

    assert "wait:set" in server.sent
    assert server.sent.index("wait:set") < server.sent.index("message_stop")
    assert result.stop_reason == "end_turn"
    assert result.turns == 2
    assert "".join(texts) == "Let me look.And alsoDone."
    assert len(server.requests) == 2
    for body in server.requests:
        assert body["tools"] == probe.tools.to_api()
    second = server.requests[1]["messages"]
    assert second[0] == {"role": "user", "content": "look things up"}
    assert second[1] == {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Let me look."},
            {"type": "tool_use", "id": "toolu_a", "name": "lookup", "input": {"key": "a"}},
            {"type": "text", "text": "And also"},
            {"type": "tool_use", "id": "toolu_b", "name": "wait", "input": {"seconds": 0.05}},
            {"type": "tool_use", "id": "toolu_c", "name": "lookup", "input": {"key": "c"}},
        ],
    }
    assert results_of(second[2]) == [
        ("toolu_a", False, "value of a"),
        ("toolu_b", False, "waited"),
        ("toolu_c", False, "value of c"),
    ]
    assert list(result.messages) == [*second, {"role": "assistant", "content": [
        {"type": "text", "text": "Done."}]}]  # fmt: skip


async def test_an_unknown_tool_and_a_malformed_input_are_answered_in_place(
    probe: Probe, serve: Any
) -> None:
    turn_1 = response(
        tool_use(0, "toolu_1", "lookup", {"key": "x"}),
        tool_use(1, "toolu_2", "missing_tool", {"q": 1}),
        tool_use(2, "toolu_3", "lookup", '{"key": "broken'),
        tool_use(3, "toolu_4", "lookup", {"kee": "typo"}),
        stop_reason="tool_use",
    )
    server = serve(turn_1, response(text(0, "ok")))
    await Agent(client_for(server), tools=probe.tools, model="m").run("go")

    answers = results_of(server.requests[1]["messages"][-1])
    assert [a[0] for a in answers] == ["toolu_1", "toolu_2", "toolu_3", "toolu_4"]
    assert answers[0] == ("toolu_1", False, "value of x")
    assert answers[1] == (
        "toolu_2",
        True,
        "<tool_use_error>Error: No such tool available: missing_tool</tool_use_error>",
    )
    assert answers[2][1] is True
    assert "InputValidationError: lookup failed" in answers[2][2]
    assert answers[3][1] is True
    assert "An unexpected parameter `kee` was provided" in answers[3][2]
    assert probe.ran == ["toolu_1"]


RETRY = attrs.evolve(Policy(), stream_failure="retry")


@pytest.mark.parametrize("failure", [stream_error(), Drop()], ids=["error-event", "dropped"])
async def test_under_the_retry_rule_a_failed_stream_is_retried_with_a_fresh_executor(
    probe: Probe, serve: Any, failure: Any
) -> None:
    failed = [
        message_start("msg_stale"),
        *tool_use(0, "toolu_stale", "wait", {"seconds": 30}),
        *tool_use(1, "toolu_stale_2", "lookup", {"key": "s"}),
        failure,
    ]
    retried = response(tool_use(0, "toolu_fresh", "lookup", {"key": "f"}), stop_reason="tool_use")
    server = serve(failed, retried, response(text(0, "ok")))
    retries: list[int] = []
    failures: list[FailedAttempt] = []
    agent = Agent(
        client_for(server),
        tools=probe.tools,
        model="m",
        policy=RETRY,
        retry_backoff=0.0,
        on_retry=lambda n, exc: retries.append(n),
        on_stream_failure=failures.append,
    )
    with trio.fail_after(20):
        result = await agent.run("go")

    assert retries == [1]
    (failed,) = failures
    assert not failed.kept
    assert failed.calls[0][0].id == "toolu_stale"
    assert failed.calls[0][1] == "cancelled"  # stopped while running
    assert result.stop_reason == "end_turn"
    assert result.last is not None
    assert "toolu_stale" in probe.cancelled  # discard() cancelled the executing call
    assert len(server.requests) == 3
    assert server.requests[1]["messages"] == PROMPT_WITH("go")
    sent = server.requests[2]["messages"]
    ids = [b.get("id") or b.get("tool_use_id") for m in sent for b in _blocks(m)]
    assert "toolu_stale" not in ids
    assert "toolu_stale_2" not in ids
    assert results_of(sent[-1]) == [("toolu_fresh", False, "value of f")]


@pytest.mark.parametrize(
    ("failure", "said"),
    [
        (stream_error(), "the stream reported an error (overloaded_error)"),
        (Drop(), "the connection closed before the message ended"),
        (Raw("event: content_block_delta\ndata: {not json\n\n"), "could not be read"),
    ],
    ids=["error-event", "dropped", "malformed"],
)
async def test_a_failed_stream_keeps_its_sealed_calls_and_the_model_continues_from_them(
    probe: Probe, serve: Any, failure: Any, said: str
) -> None:
    failed = [
        message_start("msg_cut"),
        *text(0, "Looking it up."),
        *tool_use(1, "toolu_kept", "lookup", {"key": "k"}),
        {"type": "content_block_start", "index": 2,
         "content_block": {"type": "tool_use", "id": "toolu_half", "name": "lookup", "input": {}}},
        failure,
    ]  # fmt: skip
    server = serve(failed, response(text(0, "ok")))
    failures: list[FailedAttempt] = []
    agent = Agent(
        client_for(server),
        tools=probe.tools,
        model="m",
        retry_backoff=0.0,
        on_stream_failure=failures.append,
    )
    with trio.fail_after(20):
        result = await agent.run("go")

    assert result.stop_reason == "end_turn"
    assert probe.ran == ["toolu_kept"]  # once: the next request is not a re-ask
    assert len(server.requests) == 2
    (failed_attempt,) = failures
    assert failed_attempt.kept
    assert [(u.id, fate) for u, fate in failed_attempt.calls] == [("toolu_kept", "kept")]
    sent = server.requests[1]["messages"]
    assert sent[1] == {"role": "assistant", "content": [
        {"type": "text", "text": "Looking it up."},
        {"type": "tool_use", "id": "toolu_kept", "name": "lookup", "input": {"key": "k"}},
    ]}  # fmt: skip
    assert results_of(sent[2]) == [("toolu_kept", False, "value of k")]
    note = sent[2]["content"][-1]
    assert note["type"] == "text"
    assert note["text"].startswith("<system-reminder>\nYour previous message was cut off: ")
    assert said in note["text"]
    assert "it ran once; its result is above" in note["text"]


@pytest.mark.parametrize("preset", ["claude-code-2.1.88", "claude-code-2.1.161"])
async def test_claude_code_presets_keep_the_streaming_fallback_that_repeats_a_side_effect(
    serve: Any, preset: str
) -> None:
    """Claude Code's flaw, kept under its presets: the retry asks again and it runs twice."""
    written: list[str] = []
    wrote = threading.Event()

    @function_tool
    async def append(line: str) -> str:
        """Append a line to the log (not concurrency-safe: a side effect)."""
        written.append(line)
        wrote.set()
        return "appended"

    cut = [
        message_start(),
        *tool_use(0, "toolu_first", "append", {"line": "ran"}),
        WaitFor(wrote),
        Drop(),
    ]
    again = response(tool_use(0, "toolu_again", "append", {"line": "ran"}), stop_reason="tool_use")
    server = serve(cut, again, response(text(0, "ok")))
    failures: list[FailedAttempt] = []
    agent = Agent(
        client_for(server),
        tools=[append],
        model="m",
        policy=Policy.preset(preset),
        retry_backoff=0.0,
        on_stream_failure=failures.append,
    )
    with trio.fail_after(20):
        result = await agent.run("go")

    assert result.stop_reason == "end_turn"
    assert written == ["ran", "ran"]
    (failed,) = failures
    assert not failed.kept
    assert [(u.id, fate) for u, fate in failed.calls] == [("toolu_first", "discarded")]
    sent = server.requests[1]["messages"]
    assert sent == PROMPT_WITH("go")  # the model is not told the first one ran


async def test_a_malformed_event_before_any_call_is_retried_then_reported_as_such(
    probe: Probe, serve: Any
) -> None:
    broken = [message_start(), Raw("event: message_delta\ndata: {oops\n\n")]
    server = serve(broken, broken)
    with pytest.raises(ModelStreamError, match="after 2 attempt") as caught:
        await run_assistant_turn(
            client_for(server),
            tools=probe.tools,
            messages=PROMPT,
            model="m",
            max_attempts=2,
            retry_backoff=0.0,
        )
    assert isinstance(caught.value.__cause__, MalformedStreamError)
    assert "malformed event" in str(caught.value)
    assert len(server.requests) == 2


async def test_a_stream_failing_on_every_attempt_raises_after_the_last(
    probe: Probe, serve: Any
) -> None:
    broken = [message_start(), *text(0, "hm"), stream_error()]
    server = serve(broken, broken)
    with pytest.raises(ModelStreamError, match="after 2 attempt") as caught:
        await run_assistant_turn(
            client_for(server),
            tools=probe.tools,
            messages=PROMPT,
            model="m",
            max_attempts=2,
            retry_backoff=0.0,
        )
    assert caught.value.attempts == 2
    assert isinstance(caught.value.__cause__, anthropic.APIStatusError)


async def test_a_refused_request_is_not_retried(probe: Probe, serve: Any) -> None:
    server = serve([Status(401, "authentication_error", "invalid x-api-key")])
    with pytest.raises(ModelStreamError, match="after 1 attempt") as caught:
        await run_assistant_turn(client_for(server), tools=probe.tools, messages=PROMPT, model="m")
    assert isinstance(caught.value.__cause__, anthropic.AuthenticationError)
    assert len(server.requests) == 1


async def test_the_stop_reason_is_not_trusted(probe: Probe, serve: Any) -> None:
    says_end_but_calls = response(tool_use(0, "toolu_1", "lookup", {"key": "k"}))
    says_tool_use_but_none = response(text(0, "nothing to do"), stop_reason="tool_use")
    server = serve(says_end_but_calls, says_tool_use_but_none)
    result = await Agent(client_for(server), tools=probe.tools, model="m").run("go")
    assert result.turns == 2
    assert result.stop_reason == "end_turn"
    assert results_of(server.requests[1]["messages"][-1]) == [("toolu_1", False, "value of k")]


async def test_an_interrupt_stops_the_stream_and_answers_every_sealed_call(
    probe: Probe, serve: Any
) -> None:
    release = threading.Event()
    script = [
        message_start(),
        *text(0, "Waiting"),
        *tool_use(1, "toolu_w", "wait", {"seconds": 30}),
        WaitFor(release, timeout=20),
        *tool_use(2, "toolu_never", "lookup", {"key": "n"}),
        {"type": "message_stop"},
    ]
    server = serve(script)
    agent = Agent(client_for(server), tools=probe.tools, model="m")
    outcome: list[Any] = []

    async def run() -> None:
        outcome.append(await agent.run("go"))

    try:
        with trio.fail_after(15):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(run)
                await probe.waiting.wait()
                agent.interrupt()
    finally:
        release.set()
    (result,) = outcome
    assert result.stop_reason == "interrupted"
    assert probe.cancelled == ["toolu_w"]
    assert len(server.requests) == 1
    assistant, answers = result.messages[-2:]
    assert assistant["content"] == [
        {"type": "text", "text": "Waiting"},
        {"type": "tool_use", "id": "toolu_w", "name": "wait", "input": {"seconds": 30}},
    ]
    ((tool_id, is_error, content),) = results_of(answers)
    assert (tool_id, is_error) == ("toolu_w", True)
    assert content.startswith("Interrupted by the user while running: wait had started")


async def test_max_turns_stops_a_model_that_keeps_calling_tools(probe: Probe, serve: Any) -> None:
    again = response(tool_use(0, "toolu_1", "lookup", {"key": "k"}), stop_reason="tool_use")
    again_2 = response(tool_use(0, "toolu_2", "lookup", {"key": "k"}), stop_reason="tool_use")
    server = serve(again, again_2)
    result = await Agent(client_for(server), tools=probe.tools, model="m", max_turns=2).run("go")
    assert result.stop_reason == "max_turns"
    assert result.turns == 2
    assert result.messages[-1]["role"] == "user"  # the last tool_use is answered
    assert len(server.requests) == 2


async def test_a_stop_hook_can_make_the_model_continue(probe: Probe, serve: Any) -> None:
    server = serve(response(text(0, "first")), response(text(0, "second")))
    asked: list[int] = []

    async def stop_hook(messages: Any) -> str | None:
        asked.append(len(messages))
        return "keep going" if len(asked) == 1 else None

    agent = Agent(client_for(server), tools=probe.tools, model="m", stop_hook=stop_hook)
    result = await agent.run("go")
    assert result.turns == 2
    assert server.requests[1]["messages"][-1] == {"role": "user", "content": "keep going"}


async def test_the_next_user_message_is_within_the_message_budget(
    serve: Any, tmp_path: Path
) -> None:
    @function_tool(concurrency_safe=True)
    async def dump(size: int) -> str:
        return "x" * size

    script = response(
        tool_use(0, "toolu_1", "dump", {"size": 3000}),
        tool_use(1, "toolu_2", "dump", {"size": 10}),
        stop_reason="tool_use",
    )
    server = serve(script)
    outcome = await run_assistant_turn(
        client_for(server), tools=[dump], messages=PROMPT, model="m",
        budget=1000, session_dir=tmp_path,
    )  # fmt: skip
    assert outcome.continues
    assert outcome.user_message is not None
    first, second = outcome.user_message.results
    assert first.text.startswith("<persisted-output>")
    assert second.text == "x" * 10
    assert (tmp_path / "tool-results" / "toolu_1.txt").read_text() == "x" * 3000


def test_import_trioexec_does_not_import_the_sdk() -> None:
    code = "import sys, trioexec, trioexec.tools; sys.exit('anthropic' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


def PROMPT_WITH(text: str) -> list[dict[str, Any]]:
    return [{"role": "user", "content": text}]


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message["content"]
    return content if isinstance(content, list) else []
