"""``run_assistant_turn``'s invariants over generated streams, on trio's virtual clock.

A stand-in client replays event scripts (the same shapes the SDK yields) so
that hypothesis can try many of them quickly: whatever the blocks (text,
known and unknown tools, broken JSON) and wherever the first attempt breaks
off, the next user message answers every tool_use of the attempt that
succeeded exactly once, in order, and nothing of the broken attempt.
"""

from __future__ import annotations

import functools
import json
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, Self

import pytest
import trio
import trio.testing
from hypothesis import given, settings
from hypothesis import strategies as st

from trioexec import CallContext, ConfigurationError, ToolRegistry, Turn, function_tool
from trioexec.anthropic import run_assistant_turn

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


@settings(max_examples=25, deadline=None)
@given(
    first=st.lists(block, max_size=6),
    cut=st.integers(min_value=1),
    second=st.lists(block, max_size=6),
)
def test_every_tool_use_of_the_successful_attempt_is_answered_once_in_order(
    first: list[tuple[str, Any]], cut: int, second: list[tuple[str, Any]]
) -> None:
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
            retry_backoff=0.0,
        )
        assert outcome.attempts == 2
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
