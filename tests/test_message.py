"""Building the next user message from released results and their records."""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING

import attrs
import pytest

from trioexec import Attachment, ImageBlock, ResultUpdate, TextBlock, ToolResult
from trioexec._results._budget import ContentReplacementState
from trioexec._results._message import UserMessage, build_user_message, record_text
from trioexec._results._persist import plan_persistence

if TYPE_CHECKING:
    from pathlib import Path


def text(n: int) -> str:
    return (("y" * 79 + "\n") * (n // 80 + 1))[:n]


async def test_results_then_records_in_api_shape(tmp_path: Path) -> None:
    image = ImageBlock({"type": "base64", "media_type": "image/png", "data": "AAAA"})
    updates = [
        ResultUpdate(
            ToolResult("toolu_1", "file body"),
            (Attachment("toolu_1", "additional_context", "The file is generated."),),
        ),
        ResultUpdate(ToolResult("toolu_2", "boom", is_error=True)),
        ResultUpdate(
            ToolResult("toolu_3", (TextBlock("see"), image)),
            (
                Attachment("toolu_3", "hook_blocking_error", "[lint.sh]: No stderr output"),
                Attachment("toolu_3", "hook_stopped_continuation", "Execution stopped by hook"),
            ),
        ),
    ]
    message = await build_user_message(
        updates, state=ContentReplacementState(), session_dir=tmp_path
    )
    assert message.to_api() == {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "file body"},
            {"type": "tool_result", "tool_use_id": "toolu_2", "content": "boom", "is_error": True},
            {
                "type": "tool_result",
                "tool_use_id": "toolu_3",
                "content": [
                    {"type": "text", "text": "see"},
                    {"type": "image", "source": dict(image.source)},
                ],
            },
            {
                "type": "text",
                "text": "<system-reminder>\nHook additional context: The file is generated.\n"
                "</system-reminder>",
            },
            {
                "type": "text",
                "text": "<system-reminder>\nHook blocking error: [lint.sh]: No stderr output\n"
                "</system-reminder>",
            },
            {
                "type": "text",
                "text": "<system-reminder>\nHook stopped continuation: Execution stopped by hook\n"
                "</system-reminder>",
            },
        ],
    }
    assert message.stopped_continuation
    assert message.stop_reason == "Execution stopped by hook"
    assert json.loads(json.dumps(message.to_api())) == message.to_api()


async def test_no_stop_without_a_stop_record() -> None:
    message = await build_user_message(
        [ResultUpdate(ToolResult("a", "x"), (Attachment("a", "additional_context", "c"),))],
        state=ContentReplacementState(),
        session_dir=None,
    )
    assert not message.stopped_continuation
    assert message.stop_reason is None


async def test_first_stop_reason_wins() -> None:
    updates = [
        ResultUpdate(ToolResult("a", "x"), (Attachment("a", "hook_stopped_continuation", "one"),)),
        ResultUpdate(ToolResult("b", "y"), (Attachment("b", "hook_stopped_continuation", "two"),)),
    ]
    message = await build_user_message(updates, state=ContentReplacementState(), session_dir=None)
    assert message.stop_reason == "one"
    assert [a.text for a in message.attachments] == ["one", "two"]


async def test_blank_additional_context_adds_no_block() -> None:
    blank = Attachment("a", "additional_context", "  \n")
    message = await build_user_message(
        [ResultUpdate(ToolResult("a", "x"), (blank,))],
        state=ContentReplacementState(),
        session_dir=None,
    )
    assert message.attachments == (blank,)
    content = message.to_api()["content"]
    assert isinstance(content, list)
    assert len(content) == 1
    assert record_text(blank) is None


async def test_budget_is_applied_and_state_updated(tmp_path: Path) -> None:
    sizes = [25_000, 29_000, 22_000, 27_000, 24_000, 28_000, 23_000, 26_000]
    updates = [ResultUpdate(ToolResult(f"t{n}", text(n))) for n in sizes]
    state = ContentReplacementState()
    message = await build_user_message(updates, state=state, session_dir=tmp_path)
    expected = plan_persistence(text(29_000), "t29000", tmp_path).replacement
    assert message.results[1] == ToolResult("t29000", expected)
    assert [r for i, r in enumerate(message.results) if i != 1] == [
        u.result for i, u in enumerate(updates) if i != 1
    ]
    assert set(state.replacements) == {"t29000"}
    # Building again from the same updates reproduces the same bytes.
    again = await build_user_message(updates, state=state, session_dir=tmp_path)
    assert json.dumps(again.to_api()) == json.dumps(message.to_api())


async def test_budget_and_limits_are_passed_on(tmp_path: Path) -> None:
    updates = [
        ResultUpdate(ToolResult("read", text(5_000))),
        ResultUpdate(ToolResult("b", text(5_000))),
    ]
    state = ContentReplacementState()
    message = await build_user_message(
        updates, state=state, session_dir=tmp_path, budget=6_000, limits={"read": math.inf}
    )
    assert message.results[0] == updates[0].result
    assert isinstance(message.results[1].content, str)
    assert message.results[1].content.startswith("<persisted-output>")


async def test_empty_turn_gives_empty_content() -> None:
    message = await build_user_message([], state=ContentReplacementState(), session_dir=None)
    assert message == UserMessage(results=())
    assert message.to_api() == {"role": "user", "content": []}


def test_user_message_is_frozen() -> None:
    message = UserMessage(results=(ToolResult("a", "x"),))
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        message.stopped_continuation = True  # type: ignore[misc]
