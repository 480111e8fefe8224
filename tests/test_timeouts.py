"""Per-tool time limits, outer cancellation, and what a stopped call's answer says.

Everything here runs on the autojump clock, except the one test with a real
Bash process (whose bounded wait is not a timing assertion).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import pytest
import trio
import trio.testing

from trioexec import (
    CallEvent,
    Observer,
    ResultUpdate,
    ToolResult,
    ToolUse,
    Turn,
    Update,
    open_streaming_executor,
    run_tools,
)
from trioexec._texts import REJECT_MESSAGE, sibling_error_message
from trioexec.lowlevel import ToolTimeouts
from trioexec.testing import ScriptedTool

if TYPE_CHECKING:
    from collections.abc import Sequence

    from trioexec._texts import SyntheticTexts


class Events(Observer):
    """Records every call event."""

    def __init__(self) -> None:
        self.events: list[CallEvent] = []

    def call_event(self, event: CallEvent) -> None:
        self.events.append(event)

    def cancelled(self) -> dict[str, tuple[str | None, str | None]]:
        """id -> (reason, detail) of every ``cancelled`` event."""
        return {e.tool_use_id: (e.reason, e.detail) for e in self.events if e.kind == "cancelled"}


def slow(name: str = "Slow", **options: Any) -> ScriptedTool:
    return ScriptedTool(name, concurrency_safe=True, interrupt_behavior="cancel", **options)


def sleeping(tool_id: str, seconds: float, name: str = "Slow", **extra: Any) -> ToolUse:
    return ToolUse(tool_id, name, {"sleep": seconds, "output": f"{tool_id} done", **extra})


# --- total and idle limits ------------------------------------------------------------------


async def test_a_call_that_overruns_its_timeout_is_stopped_and_says_so(
    autojump_clock: trio.testing.MockClock,
) -> None:
    events = Events()
    start = trio.current_time()
    outcome = await run_tools([sleeping("a", 5.0)], [slow(timeout=2.0)], observers=[events])
    (result,) = outcome.results
    assert result.is_error
    assert result.text == (
        "<tool_use_error>Timed out: Slow ran for 2 s and was stopped by its timeout of 2 s, "
        "so it may have done part of its work (check before you retry).</tool_use_error>"
    )
    assert trio.current_time() - start == pytest.approx(2.0)
    assert events.cancelled() == {"a": ("timeout", "timeout of 2 s after 2 s")}


async def test_only_the_call_that_overran_is_stopped(
    autojump_clock: trio.testing.MockClock,
) -> None:
    tools = [slow("Slow", timeout=1.0), slow("Other")]
    outcome = await run_tools([sleeping("a", 3.0), sleeping("b", 2.0, "Other")], tools)
    assert [r.is_error for r in outcome.results] == [True, False]
    assert outcome.results[1].text == "b done"


async def test_progress_resets_the_idle_timeout(autojump_clock: trio.testing.MockClock) -> None:
    steps = [{"sleep": 0.8}, {"progress": "tick"}] * 4  # never 1 s without progress
    outcome = await run_tools(
        [ToolUse("a", "Slow", {"steps": steps, "output": "finished"})],
        [slow(idle_timeout=1.0)],
    )
    assert outcome.results[0].text == "finished"


async def test_silence_past_the_idle_timeout_stops_the_call_with_its_output_so_far(
    autojump_clock: trio.testing.MockClock,
) -> None:
    steps = [{"progress": "first line"}, {"sleep": 0.5}, {"progress": "second line"}, {"sleep": 9}]
    events = Events()
    outcome = await run_tools(
        [ToolUse("a", "Slow", {"steps": steps})], [slow(idle_timeout=1.0)], observers=[events]
    )
    (result,) = outcome.results
    assert result.text == (
        "<tool_use_error>Timed out: Slow ran for 1.5 s and was stopped by its idle timeout "
        "(no progress for 1 s), so it may have done part of its work (check before you retry)."
        "\n\nOutput so far:\nfirst line\nsecond line</tool_use_error>"
    )
    assert events.cancelled() == {"a": ("timeout", "idle_timeout of 1 s after 1.5 s")}


async def test_a_tool_returning_in_the_instant_its_timeout_runs_out_keeps_its_result(
    autojump_clock: trio.testing.MockClock,
) -> None:
    outcome = await run_tools([sleeping("a", 2.0)], [slow(timeout=2.0)])
    assert outcome.results[0].text == "a done"
    assert not outcome.results[0].is_error


async def test_a_run_overrides_a_tools_limits_by_name(
    autojump_clock: trio.testing.MockClock,
) -> None:
    tools = [slow(timeout=10.0)]
    shorter = await run_tools(
        [sleeping("a", 5.0)], tools, tool_timeouts={"Slow": ToolTimeouts(timeout=1.0)}
    )
    lifted = await run_tools([sleeping("b", 5.0)], tools, tool_timeouts={"Slow": ToolTimeouts()})
    assert shorter.results[0].text.startswith("<tool_use_error>Timed out: Slow ran for 1 s")
    assert lifted.results[0].text == "b done"


async def test_the_limit_covers_the_call_step_only(autojump_clock: trio.testing.MockClock) -> None:
    """A slow PreToolUse hook (or a user deciding) never eats into the tool's time."""
    from trioexec import GuardRails
    from trioexec.hooks import HookSet
    from trioexec.testing import ScriptedHook

    hooks = HookSet().with_python_hook("PreToolUse", "", ScriptedHook(sleep=5.0))
    outcome = await run_tools(
        [sleeping("a", 1.5)], [slow(timeout=2.0)], guard=GuardRails(hooks=hooks)
    )
    assert outcome.results[0].text == "a done"


@pytest.mark.parametrize("bad", [0, -1.0, "2", True, math.nan])
async def test_a_tool_with_a_bad_time_limit_is_refused_at_definition(bad: object) -> None:
    from trioexec import ToolDefinitionError, ToolRegistry

    with pytest.raises(ToolDefinitionError, match="timeout must be a number of seconds > 0"):
        ToolRegistry([slow(timeout=bad)])  # type: ignore[arg-type]


def test_a_run_override_with_a_bad_limit_is_refused() -> None:
    from trioexec import ConfigurationError

    with pytest.raises(ConfigurationError, match="a time limit must be a number of seconds"):
        ToolTimeouts(idle_timeout=-3)


# --- an enclosing scope is the application, not the user ------------------------------------


async def _collect_with_outer_cancel(
    uses: Sequence[ToolUse], tools: Sequence[ScriptedTool], *, texts: SyntheticTexts, stream: bool
) -> tuple[dict[str, str], Events, bool]:
    send, receive = trio.open_memory_channel[Update](math.inf)
    events = Events()
    with trio.CancelScope() as outer:

        async def cancel_later() -> None:
            await trio.sleep(1.0)
            outer.cancel(reason="turn deadline")

        async with trio.open_nursery() as nursery:
            nursery.start_soon(cancel_later)
            if stream:
                async with open_streaming_executor(
                    tools, observers=[events], synthetic_texts=texts, max_concurrency=1
                ) as executor:
                    for use in uses:
                        executor.add_tool(use)
                    async for update in executor.remaining():
                        send.send_nowait(update)
            else:
                await run_tools(
                    uses,
                    tools,
                    observers=[events],
                    updates=send,
                    synthetic_texts=texts,
                    max_concurrency=1,
                )
    send.close()
    # What each call was answered with (the streaming executor's block is cancelled, so
    # its answers are read from the events, which every run emits).
    answers = {
        e.tool_use_id: e.data.text
        for e in events.events
        if e.kind in ("completed", "cancelled") and isinstance(e.data, ToolResult)
    }
    released = [u.result.tool_use_id async for u in receive if isinstance(u, ResultUpdate)]
    if not stream:
        assert released == [use.id for use in uses]  # every call answered and released
    return answers, events, outer.cancelled_caught


@pytest.mark.parametrize("stream", [False, True], ids=["run_tools", "streaming"])
async def test_an_outer_deadline_is_recorded_as_cancelled_with_trios_reason(
    autojump_clock: trio.testing.MockClock, stream: bool
) -> None:
    uses = [
        ToolUse("a", "Slow", {"steps": [{"progress": "half"}, {"sleep": 5}]}),
        sleeping("b", 1.0),
    ]
    results, events, caught = await _collect_with_outer_cancel(
        uses, [slow()], texts="trioexec", stream=stream
    )
    assert caught
    assert events.cancelled()["a"] == ("cancelled", "turn deadline")
    assert results["a"] == (
        "Stopped by the application (turn deadline) while running: Slow had started and was "
        "stopped before it finished, so it may have done part of its work (check before you "
        "retry); the user did not stop it.\n\nOutput so far:\nhalf"
    )
    assert results["b"] == (
        "Not run: the application stopped the turn (turn deadline) before Slow started, "
        "so it did nothing; the user did not stop it."
    )


async def test_an_outer_deadline_keeps_claude_codes_bytes_in_that_variant(
    autojump_clock: trio.testing.MockClock,
) -> None:
    uses = [ToolUse("a", "Slow", {"sleep": 5})]
    results, events, _ = await _collect_with_outer_cancel(
        uses, [slow()], texts="claude-code", stream=False
    )
    assert results["a"] == REJECT_MESSAGE
    assert events.cancelled()["a"] == ("cancelled", "turn deadline")


async def test_move_on_after_around_run_tools_names_the_deadline(
    autojump_clock: trio.testing.MockClock,
) -> None:
    events = Events()
    with trio.move_on_after(1.0):
        await run_tools([sleeping("a", 5.0)], [slow()], observers=[events])
    assert events.cancelled() == {"a": ("cancelled", "deadline cancellation")}


# --- every stopped call's answer, in both variants --------------------------------------------


def _sibling_tools() -> list[ScriptedTool]:
    return [
        ScriptedTool("Bash", concurrency_safe=True, cancels_siblings_on_error=True),
        ScriptedTool("Read", concurrency_safe=True, interrupt_behavior="cancel"),
        ScriptedTool("Edit"),
    ]


@pytest.mark.parametrize("texts", ["claude-code", "trioexec"])
async def test_a_sibling_error_answer_in_each_variant(
    autojump_clock: trio.testing.MockClock, texts: SyntheticTexts
) -> None:
    uses = [
        ToolUse("r", "Read", {"steps": [{"progress": "line 1"}, {"sleep": 5}]}),
        ToolUse("b", "Bash", {"command": "ls deploy", "sleep": 1, "error": "no deploy"}),
        ToolUse("e", "Edit", {"file_path": "x"}),
    ]
    outcome = await run_tools(uses, _sibling_tools(), synthetic_texts=texts)
    read, bash, edit = (r.text for r in outcome.results)
    assert bash == "no deploy"
    if texts == "claude-code":
        assert read == edit == sibling_error_message("Bash(ls deploy)")
        return
    assert read == (
        "<tool_use_error>Cancelled: parallel tool call Bash(ls deploy) errored. Read had started "
        "and was stopped before it finished, so it may have done part of its work (check before "
        "you retry); the user did not stop it.\n\nOutput so far:\nline 1</tool_use_error>"
    )
    assert edit == (
        "<tool_use_error>Cancelled: parallel tool call Bash(ls deploy) errored. Edit was not "
        "started, so it did nothing; the user did not stop it.</tool_use_error>"
    )


@pytest.mark.parametrize("texts", ["claude-code", "trioexec"])
@pytest.mark.parametrize("how", ["interrupt", "abort"])
async def test_a_user_stop_answer_in_each_variant(
    autojump_clock: trio.testing.MockClock, texts: SyntheticTexts, how: str
) -> None:
    turn = Turn()
    uses = [
        ToolUse("r", "Read", {"steps": [{"progress": "p"}, {"sleep": 5}]}),
        ToolUse("e", "Edit", {}),
    ]
    async with trio.open_nursery() as nursery:

        async def stop() -> None:
            await trio.sleep(1)
            turn.interrupt() if how == "interrupt" else turn.abort()

        nursery.start_soon(stop)
        async with open_streaming_executor(
            _sibling_tools(), turn=turn, synthetic_texts=texts
        ) as executor:
            for use in uses:
                executor.add_tool(use)
            updates = [u async for u in executor.remaining() if isinstance(u, ResultUpdate)]
    read, edit = (u.result.text for u in updates)
    if texts == "claude-code":
        assert read == edit == REJECT_MESSAGE
        return
    assert read == (
        "Interrupted by the user while running: Read had started and was stopped before it "
        "finished, so it may have done part of its work (check before you retry). STOP what you "
        "are doing and wait for the user to tell you how to proceed.\n\nOutput so far:\np"
    )
    assert edit == (
        "Not run: the user interrupted the turn before Edit started, so it did nothing. STOP "
        "what you are doing and wait for the user to tell you how to proceed."
    )


@pytest.mark.parametrize("texts", ["claude-code", "trioexec"])
async def test_a_timeout_answer_is_explained_in_both_variants(
    autojump_clock: trio.testing.MockClock, texts: SyntheticTexts
) -> None:
    outcome = await run_tools([sleeping("a", 5.0)], [slow(timeout=1.0)], synthetic_texts=texts)
    assert outcome.results[0].text.startswith("<tool_use_error>Timed out: Slow ran for 1 s")


# --- a real process: what Bash printed before it was stopped ----------------------------------


async def test_a_timed_out_bash_call_answers_with_what_it_printed(tmp_path: Any) -> None:
    from trioexec.tools import BashTool as Bash

    with trio.fail_after(30):
        outcome = await run_tools(
            [ToolUse("a", "Bash", {"command": "echo started; echo warn >&2; sleep 30"})],
            [Bash()],
            cwd=tmp_path,
            tool_timeouts={"Bash": ToolTimeouts(timeout=1.0)},
        )
    (result,) = outcome.results
    assert result.is_error
    assert result.text.startswith("<tool_use_error>Timed out: Bash ran for 1 s")
    output = result.text.split("Output so far:\n", 1)[1]
    assert "started" in output
    assert "warn" in output
