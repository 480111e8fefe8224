"""Why calls are stopped and what they are answered (``_core._cancel``), and the grace watchdog.

End-to-end cascade, interrupt, abort and discard behaviour is in
``test_cancellation.py``; this file checks the pieces on their own.
"""

from __future__ import annotations

import trio
import trio.testing
from helpers import REJECT, make_tool, use

from trioexec import ToolResult, ToolUse, Turn, open_streaming_executor, run_tools
from trioexec._core._call import Admission, Call, CallOutcome
from trioexec._core._cancel import (
    NEVER_STARTED_BATCH,
    Cancellation,
    GraceWatchdog,
    cancel_at_end_of_instant,
)

READ = make_tool("Read", interrupt="cancel")


def call(index: int, name: str = "Bash", **tool_input: str) -> Call:
    return Call(index, ToolUse(f"t{index}", name, dict(tool_input)), None, Admission(safe=True))


def test_a_discard_outranks_an_interrupt_which_outranks_a_cascade() -> None:
    cancellation = Cancellation(NEVER_STARTED_BATCH)
    assert cancellation.blocked_reason(turn_interrupted=False) is None
    cancellation.start_cascade(call(0), 1.0)
    assert cancellation.blocked_reason(turn_interrupted=False) == "sibling_error"
    assert cancellation.blocked_reason(turn_interrupted=True) == "user_interrupted"
    assert cancellation.discard(1.0)
    assert not cancellation.discard(2.0)  # once only
    assert cancellation.blocked_reason(turn_interrupted=True) == "streaming_fallback"


def test_the_earliest_cascading_failure_names_the_text_ties_broken_by_arrival() -> None:
    cancellation = Cancellation(NEVER_STARTED_BATCH)
    cancellation.start_cascade(call(2, command="late"), 5.0)
    cancellation.start_cascade(call(1, command="earlier arrival"), 5.0)
    cancellation.start_cascade(call(0, command="later in time"), 6.0)
    answer = cancellation.synthetic(call(3), "sibling_error", started=True)
    assert answer.result.content == (
        "<tool_use_error>Cancelled: parallel tool call Bash(earlier arrival) errored"
        "</tool_use_error>"
    )
    assert answer.cancel_reason == "sibling_error"
    assert cancellation.cause == "sibling_error"


def test_a_stopped_call_is_answered_by_its_reason_and_whether_it_started() -> None:
    cancellation = Cancellation(NEVER_STARTED_BATCH)
    started = cancellation.synthetic(call(0), "user_interrupted", started=True)
    never = cancellation.synthetic(call(0), "user_interrupted", started=False)
    fallback = cancellation.synthetic(call(0), "streaming_fallback", started=False)
    assert started.result.content == REJECT
    assert never.result.content == NEVER_STARTED_BATCH
    assert fallback.result.content == (
        "<tool_use_error>Error: Streaming fallback - tool execution discarded</tool_use_error>"
    )
    assert all(a.result.is_error for a in (started, never, fallback))


def test_a_calls_own_reason_comes_before_the_runs() -> None:
    cancellation = Cancellation(NEVER_STARTED_BATCH)
    assert cancellation.reason_for(call(0)) == "user_interrupted"  # nothing recorded yet
    cancellation.record_cause("sibling_error")
    cancellation.record_cause("streaming_fallback")  # the first cause stays
    assert cancellation.reason_for(call(0)) == "sibling_error"
    own = call(1)
    own.cancel_reason = "user_interrupted"
    assert cancellation.reason_for(own) == "user_interrupted"


async def test_cancel_at_end_of_instant_only_ever_brings_the_deadline_forward() -> None:
    soon = trio.current_time() + 60
    scope = trio.CancelScope()
    cancel_at_end_of_instant(scope, soon)
    cancel_at_end_of_instant(scope, soon + 2)
    assert scope.deadline == soon
    assert not scope.cancel_called  # a deadline, not a cancel(): it fires at a deadline check


class _Spawned(trio.abc.Instrument):
    def __init__(self) -> None:
        self.names: list[str] = []

    def task_spawned(self, task: trio.lowlevel.Task) -> None:
        self.names.append(task.name)


async def test_a_run_without_cancellation_starts_no_task_but_its_calls() -> None:
    spawned = _Spawned()
    trio.lowlevel.add_instrument(spawned)
    try:
        outcome = await run_tools([use(f"r{i}", "Read") for i in range(3)], [READ])
    finally:
        trio.lowlevel.remove_instrument(spawned)
    assert len(outcome.results) == 3
    assert len(spawned.names) == 3
    assert not [name for name in spawned.names if "watch" in name]


async def test_the_watchdog_starts_at_a_cancellation_and_ends_with_the_cancelled_calls(
    autojump_clock: trio.testing.MockClock,
) -> None:
    spawned = _Spawned()
    turn = Turn()
    trio.lowlevel.add_instrument(spawned)
    try:
        async with open_streaming_executor([READ], turn=turn, grace_period=30.0) as executor:
            executor.add_tool(use("r", "Read", sleep=100.0))
            await trio.sleep(1.0)
            assert not [name for name in spawned.names if "watch" in name]
            turn.interrupt()
            results = [update async for update in executor.remaining()]
    finally:
        trio.lowlevel.remove_instrument(spawned)
    assert [name for name in spawned.names if "watch" in name] != []
    # The call stopped at once: the run does not wait out the 30 s grace period.
    assert trio.current_time() == 1.0
    assert len(results) == 1


class _Answers:
    """The watchdog's ``answer``: records when each call was answered on its behalf."""

    def __init__(self, watchdog: GraceWatchdog) -> None:
        self.watchdog = watchdog
        self.at: dict[str, float] = {}

    def __call__(self, stuck: Call) -> None:
        self.at[stuck.tool_use.id] = trio.current_time()
        stuck.outcome = CallOutcome(ToolResult(stuck.tool_use.id, "answered", is_error=True))
        self.watchdog.answered(stuck)


async def test_a_miscount_to_zero_does_not_end_the_watch_while_a_call_is_unanswered(
    autojump_clock: trio.testing.MockClock,
) -> None:
    watchdog = GraceWatchdog(2.0)
    answers = _Answers(watchdog)
    stuck, unwatched = call(0), call(1)
    async with trio.open_nursery() as nursery:
        watchdog.request(unwatched, trio.current_time())  # before the run lent its nursery
        watchdog.open(nursery, answers)
        watchdog.request(stuck, trio.current_time())
        await trio.sleep(1.0)
        watchdog.answered(unwatched)  # counted nowhere: the count reaches 0 with "t0" waiting
    watchdog.close()
    assert answers.at == {"t0": 2.0}


async def test_a_call_answered_behind_the_watchdogs_back_does_not_keep_the_watch_alive(
    autojump_clock: trio.testing.MockClock,
) -> None:
    watchdog = GraceWatchdog(2.0)
    answers = _Answers(watchdog)
    quiet = call(0)
    with trio.fail_after(60.0):  # a watch sleeping forever would hang the run
        async with trio.open_nursery() as nursery:
            watchdog.open(nursery, answers)
            watchdog.request(quiet, trio.current_time())
            await trio.sleep(1.0)
            quiet.outcome = CallOutcome(ToolResult("t0", "done"))  # never reported
    watchdog.close()
    assert answers.at == {}
    assert trio.current_time() <= 2.0
