"""``run_assistant_turn``'s invariants over generated streams, on trio's virtual clock.

A stand-in client replays event scripts (the same shapes the SDK yields) so
that hypothesis can try many of them quickly: whatever the blocks (text,
known and unknown tools, broken JSON) and wherever the first attempt breaks
off, every sealed tool_use is answered exactly once, in order: under
trioexec's ``stream_failure="continue"`` the broken attempt's own calls (the
turn ends with them), under ``"retry"`` the calls of the attempt that
succeeded and nothing of the broken one.
"""

from __future__ import annotations

import functools
import json
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, Self

import attrs
import pytest
import trio
import trio.testing
from hypothesis import given, settings
from hypothesis import strategies as st

from trioexec import CallContext, ConfigurationError, Policy, ToolRegistry, Turn, function_tool
from trioexec.anthropic import FailedAttempt, run_assistant_turn

if TYPE_CHECKING:
    from collections.abc import AsyncIterator


def _obj(value: Any) -> Any:
    """Dicts as attribute objects, as the SDK's event models read."""
    if isinstance(value, dict):
        return SimpleNamespace(**{k: _obj(v) for k, v in value.items()})
    return value


class _Stream:
    def __init__(self, events: list[dict[str, Any]]) -> None:
        self._events = events

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None

    def __aiter__(self) -> AsyncIterator[Any]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[Any]:
        for event in self._events:
            await trio.sleep(0.01)  # the model takes a little time per event
            yield _obj(event)


class FakeClient:
    """``client.messages.stream(**params)`` replaying one script per request."""

    def __init__(self, scripts: list[list[dict[str, Any]]]) -> None:
        self.scripts = list(scripts)
        self.requests: list[dict[str, Any]] = []
        self.messages = self

    def stream(self, **params: Any) -> _Stream:
        self.requests.append(params)
        return _Stream(self.scripts.pop(0))


started: list[str] = []


@function_tool(concurrency_safe=True, interrupt_behavior="cancel")
async def sleep(seconds: float, ctx: CallContext) -> str:
    started.append(ctx.tool_use.id)
    await trio.sleep(seconds)
    return f"slept {seconds}"


@function_tool
async def note(text: str) -> str:
    return f"noted {text}"


TOOLS = ToolRegistry([sleep, note])
RETRY = attrs.evolve(Policy(), stream_failure="retry")

block = st.one_of(
    st.tuples(st.just("text"), st.text(min_size=1, max_size=5)),
    st.tuples(st.just("sleep"), st.floats(0, 0.5)),
    st.tuples(st.just("note"), st.text(max_size=5)),
    st.tuples(st.just("unknown"), st.none()),
    st.tuples(st.just("broken"), st.none()),
)


def _events(blocks: list[tuple[str, Any]], prefix: str) -> tuple[list[dict[str, Any]], list[str]]:
    events: list[dict[str, Any]] = [{"type": "message_start", "message": {}}]
    ids = []
    for index, (kind, arg) in enumerate(blocks):
        if kind == "text":
            events += [
                {"type": "content_block_start", "index": index, "content_block": {"type": "text"}},
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "text_delta", "text": arg},
                },
            ]
        else:
            tool_id = f"{prefix}{index}"
            ids.append(tool_id)
            name = {"sleep": "sleep", "note": "note", "unknown": "nope", "broken": "note"}[kind]
            raw = {
                "sleep": json.dumps({"seconds": arg}),
                "note": json.dumps({"text": arg}),
                "unknown": "{}",
                "broken": '{"text": ',
            }[kind]
            events += [
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {"type": "tool_use", "id": tool_id, "name": name, "input": {}},
                },
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "input_json_delta", "partial_json": raw},
                },
            ]
        events.append({"type": "content_block_stop", "index": index})
    events += [
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}},
        {"type": "message_stop"},
    ]
    return events, ids


def _sealed_ids(events: list[dict[str, Any]]) -> list[str]:
    """The ids of the tool_use blocks whose content_block_stop is among ``events``."""
    open_blocks: dict[int, str] = {}
    sealed = []
    for event in events:
        if event["type"] == "content_block_start" and event["content_block"]["type"] == "tool_use":
            open_blocks[event["index"]] = event["content_block"]["id"]
        elif event["type"] == "content_block_stop" and event["index"] in open_blocks:
            sealed.append(open_blocks.pop(event["index"]))
    return sealed


@settings(max_examples=25, deadline=None)
@given(
    first=st.lists(block, max_size=6),
    cut=st.integers(min_value=1),
    second=st.lists(block, max_size=6),
)
def test_a_retried_attempt_leaves_nothing_and_the_next_is_answered_once_in_order(
    first: list[tuple[str, Any]], cut: int, second: list[tuple[str, Any]]
) -> None:
    """Under ``stream_failure="retry"`` (Claude Code's) nothing of the broken attempt stays."""
    broken, stale_ids = _events(first, "stale_")
    broken = broken[: 1 + cut % (len(broken) - 1)]  # ends before message_stop
    good, ids = _events(second, "toolu_")
    client = FakeClient([broken, good])
    started.clear()

    async def main() -> None:
        outcome = await run_assistant_turn(
            client,  # type: ignore[arg-type]
            tools=TOOLS,
            messages=[{"role": "user", "content": "go"}],
            model="m",
            policy=RETRY,
            retry_backoff=0.0,
        )
        assert outcome.attempts == 2
        assert outcome.stream_error is None
        assert [u.id for u in outcome.tool_uses] == ids
        assert outcome.continues == bool(ids)
        if not ids:
            assert outcome.user_message is None
            return
        assert outcome.user_message is not None
        assert [r.tool_use_id for r in outcome.user_message.results] == ids
        content = outcome.assistant["content"]
        assert isinstance(content, list)
        sent_ids = [b["id"] for b in content if isinstance(b, dict) and b["type"] == "tool_use"]
        assert sent_ids == ids
        assert not set(stale_ids) & {r.tool_use_id for r in outcome.user_message.results}

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    assert [r["tools"] for r in client.requests] == [TOOLS.to_api(), TOOLS.to_api()]


@settings(max_examples=25, deadline=None)
@given(
    first=st.lists(block, max_size=6),
    cut=st.integers(min_value=1),
    second=st.lists(block, max_size=6),
)
def test_a_failed_attempt_with_sealed_calls_is_kept_and_each_call_answered_once(
    first: list[tuple[str, Any]], cut: int, second: list[tuple[str, Any]]
) -> None:
    """Under trioexec's rule a sealed call of a failed attempt is never re-asked nor hidden.

    When the broken stream sealed a tool_use, the turn ends with it: every
    sealed call answered once, in order, followed by a note; no second request.
    When it sealed none, the request is sent again as before.
    """
    broken, _ = _events(first, "early_")
    broken = broken[: 1 + cut % (len(broken) - 1)]  # ends before message_stop
    sealed = _sealed_ids(broken)
    good, ids = _events(second, "toolu_")
    client = FakeClient([broken, good])
    started.clear()
    failures: list[FailedAttempt] = []

    async def main() -> None:
        outcome = await run_assistant_turn(
            client,  # type: ignore[arg-type]
            tools=TOOLS,
            messages=[{"role": "user", "content": "go"}],
            model="m",
            retry_backoff=0.0,
            on_stream_failure=failures.append,
        )
        expected = sealed or ids
        assert outcome.attempts == (1 if sealed else 2)
        assert [u.id for u in outcome.tool_uses] == expected
        assert (outcome.stream_error is not None) == bool(sealed)
        assert not outcome.interrupted
        assert outcome.continues == bool(expected)
        assert len(failures) == 1
        assert failures[0].kept == bool(sealed)
        assert [(u.id, fate) for u, fate in failures[0].calls] == [(i, "kept") for i in sealed]
        if not expected:
            assert outcome.user_message is None
            return
        assert outcome.user_message is not None
        assert [r.tool_use_id for r in outcome.user_message.results] == expected
        api = outcome.user_message.to_api()["content"]
        assert isinstance(api, list)
        notes = [b for b in api if isinstance(b, dict) and b["type"] == "text"]
        assert len(notes) == (1 if sealed else 0)
        if sealed:
            assert "cut off" in str(notes[0]["text"])

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    assert len(client.requests) == (1 if sealed else 2)


async def test_an_interrupt_during_the_backoff_ends_the_turn_with_nothing_stale(
    autojump_clock: trio.testing.MockClock,
) -> None:
    broken, _ = _events([("note", "x")], "stale_")
    client = FakeClient([broken[:-2], []])  # cut before message_delta / message_stop
    turn = Turn()
    retried: list[int] = []

    async def interrupt_later() -> None:
        await trio.sleep(5)  # the first attempt failed at t<1; the backoff lasts 10 s
        turn.interrupt()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(interrupt_later)
        outcome = await run_assistant_turn(
            client,  # type: ignore[arg-type]
            tools=TOOLS,
            messages=[{"role": "user", "content": "go"}],
            model="m",
            turn=turn,
            policy=RETRY,  # the broken attempt sealed a call: only "retry" sends it again
            retry_backoff=10.0,
            on_retry=lambda n, exc: retried.append(n),
        )
    assert retried == [1]
    assert trio.current_time() < 10
    assert outcome.interrupted
    assert outcome.tool_uses == ()
    assert outcome.user_message is None
    assert outcome.messages() == []
    assert len(client.requests) == 1


def test_max_attempts_below_one_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match="max_attempts must be >= 1"):
        trio.run(
            functools.partial(
                run_assistant_turn,
                FakeClient([]),  # type: ignore[arg-type]
                tools=TOOLS,
                messages=[],
                model="m",
                max_attempts=0,
            )
        )
