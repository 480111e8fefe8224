"""The batch path, ``run_tools`` (SPEC §2 and the error texts of §4)."""

from __future__ import annotations

import math
from typing import Any

import pytest
import trio
import trio.testing
from helpers import Recorder, assert_no_new_tasks, drain, make_tool, results_of, use

from trioexec import (
    CallContext,
    ConfigurationError,
    ProgressSender,
    ProgressUpdate,
    ResultUpdate,
    ToolResult,
    Update,
    function_tool,
    run_tools,
)
from trioexec.testing import SCRIPTED_INPUT_SCHEMA

READ = make_tool("Read")
GREP = make_tool("Grep")
EDIT = make_tool("Edit", safe=False)
BASH = make_tool("Bash", safe="input")
TOOLS = [READ, GREP, EDIT, BASH]


# -- concurrency --------------------------------------------------------------------------------


async def test_three_safe_one_second_calls_finish_at_one_second(
    autojump_clock: trio.testing.MockClock, recorder: Recorder
) -> None:
    uses = [use(f"r{i}", "Read", sleep=1.0, output=f"out{i}") for i in range(3)]
    outcome = await run_tools(uses, TOOLS, observers=[recorder])
    assert trio.current_time() == 1.0
    assert outcome.results == tuple(ToolResult(f"r{i}", f"out{i}") for i in range(3))
    assert recorder.times("started") == {"r0": 0.0, "r1": 0.0, "r2": 0.0}
    assert recorder.times("completed") == {"r0": 1.0, "r1": 1.0, "r2": 1.0}


async def test_max_concurrency_two_with_five_calls(
    autojump_clock: trio.testing.MockClock, recorder: Recorder
) -> None:
    uses = [use(f"r{i}", "Read", sleep=1.0) for i in range(5)]
    outcome = await run_tools(uses, TOOLS, max_concurrency=2, observers=[recorder])
    assert trio.current_time() == 3.0
    assert [r.tool_use_id for r in outcome.results] == [f"r{i}" for i in range(5)]
    # Slots are filled in tool_use order.
    started = recorder.times("started")
    assert [started[f"r{i}"] for i in range(5)] == [0.0, 0.0, 1.0, 1.0, 2.0]


async def _finish_time(count: int, **kwargs: object) -> float:
    start = trio.current_time()
    uses = [use(f"r{i}", "Read", sleep=1.0) for i in range(count)]
    outcome = await run_tools(uses, TOOLS, **kwargs)  # type: ignore[arg-type]
    assert len(outcome.results) == count
    return trio.current_time() - start


@pytest.mark.parametrize(
    ("trioexec_var", "claude_var", "limit"),
    [
        (None, None, 10),
        ("4", None, 4),
        (None, "4", 4),
        ("0", None, 10),
        ("abc", None, 10),
        ("-3", None, 10),
        (" 6 ", None, 6),
        ("3", "5", 3),
        ("abc", "5", 10),
        ("0", "5", 10),
    ],
)
async def test_environment_variables(
    autojump_clock: trio.testing.MockClock,
    monkeypatch: pytest.MonkeyPatch,
    trioexec_var: str | None,
    claude_var: str | None,
    limit: int,
) -> None:
    for name, value in (
        ("TRIOEXEC_MAX_TOOL_USE_CONCURRENCY", trioexec_var),
        ("CLAUDE_CODE_MAX_TOOL_USE_CONCURRENCY", claude_var),
    ):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    count = 12
    assert await _finish_time(count) == math.ceil(count / limit)
    # An explicit argument overrides both variables.
    assert await _finish_time(count, max_concurrency=12) == 1.0


@pytest.mark.parametrize("bad", [0, -1, True, 2.0])
async def test_invalid_max_concurrency_is_refused(bad: object) -> None:
    with pytest.raises(ConfigurationError):
        await run_tools([use("a", "Read")], TOOLS, max_concurrency=bad)  # type: ignore[arg-type]


async def test_bounded_updates_channel_is_refused() -> None:
    send, _receive = trio.open_memory_channel[Update](5)
    with pytest.raises(ConfigurationError):
        await run_tools([use("a", "Read")], TOOLS, updates=send)


# -- batches and order --------------------------------------------------------------------------


async def test_six_call_example_runs_batch_by_batch(
    autojump_clock: trio.testing.MockClock, recorder: Recorder
) -> None:
    uses = [
        use("A", "Read", sleep=1.0),
        use("B", "Read", sleep=2.0),
        use("C", "Grep", sleep=1.0),
        use("D", "Bash", sleep=1.0, command="make", safe=False),
        use("E", "Read", sleep=1.0),
        use("F", "Edit", sleep=1.0),
    ]
    outcome = await run_tools(uses, TOOLS, observers=[recorder])
    assert [r.tool_use_id for r in outcome.results] == list("ABCDEF")
    assert recorder.times("started") == {
        "A": 0.0,
        "B": 0.0,
        "C": 0.0,
        "D": 2.0,
        "E": 3.0,
        "F": 4.0,
    }
    assert trio.current_time() == 5.0
    # In batch mode every call is queued at t=0, before anything starts.
    queued = recorder.of_kind("queued")
    assert [e.tool_use_id for e in queued] == list("ABCDEF")
    assert {e.time for e in queued} == {0.0}
    assert recorder.events.index(queued[-1]) < recorder.events.index(recorder.of_kind("started")[0])


async def test_results_in_tool_use_order_and_progress_at_once(
    autojump_clock: trio.testing.MockClock,
) -> None:
    send, receive = trio.open_memory_channel[Update](math.inf)
    seen: list[tuple[float, Update]] = []

    async def watch() -> None:
        seen.extend([(trio.current_time(), update) async for update in receive])

    async with trio.open_nursery() as nursery:
        nursery.start_soon(watch)
        uses = [
            use("slow", "Read", sleep=3.0, output="S"),
            use("fast", "Read", steps=[{"sleep": 1.0, "progress": "half"}], output="F"),
        ]
        outcome = await run_tools(uses, TOOLS, updates=send)
        send.close()
    assert outcome.results == (ToolResult("slow", "S"), ToolResult("fast", "F"))
    assert seen == [
        (1.0, ProgressUpdate("fast", "half")),
        (3.0, ResultUpdate(ToolResult("slow", "S"))),
        (3.0, ResultUpdate(ToolResult("fast", "F"))),
    ]
    assert outcome.updates == tuple(u for _, u in seen if isinstance(u, ResultUpdate))


async def test_empty_turn() -> None:
    outcome = await run_tools([], TOOLS, context={"k": 1})
    assert outcome.updates == ()
    assert outcome.context == {"k": 1}
    assert not outcome.stopped_continuation


# -- context modifiers --------------------------------------------------------------------------


async def test_safe_batch_modifiers_apply_in_tool_use_order(
    autojump_clock: trio.testing.MockClock,
) -> None:
    uses = [
        use("a", "Read", sleep=3.0, append="a"),
        use("b", "Read", sleep=1.0, append="b"),
        use("c", "Read", sleep=2.0, append="c", echo_trail=True),
        use("d", "Edit", echo_trail=True),
    ]
    outcome = await run_tools(uses, TOOLS, context={"trail": ("start",)})
    assert outcome.context == {"trail": ("start", "a", "b", "c")}
    # A safe call never sees a sibling's modifier; the next batch sees all of them in order.
    assert outcome.results[2] == ToolResult("c", "trail:start")
    assert outcome.results[3] == ToolResult("d", "trail:start,a,b,c")


async def test_serial_batch_modifiers_apply_immediately() -> None:
    uses = [
        use("e1", "Edit", append="x"),
        use("e2", "Edit", append="y", echo_trail=True),
        use("r1", "Read", echo_trail=True),
        use("r2", "Read", echo_trail=True, append="z"),
        use("e3", "Edit", echo_trail=True),
    ]
    outcome = await run_tools(uses, TOOLS)
    assert [r.content for r in outcome.results] == [
        "ok",
        "trail:x",
        "trail:x,y",
        "trail:x,y",
        "trail:x,y,z",
    ]
    assert outcome.context == {"trail": ("x", "y", "z")}


async def test_context_passed_in_is_not_mutated() -> None:
    original = {"trail": ("s",)}
    outcome = await run_tools([use("e", "Edit", append="x")], TOOLS, context=original)
    assert original == {"trail": ("s",)}
    assert outcome.context == {"trail": ("s", "x")}


# -- tool errors --------------------------------------------------------------------------------


async def test_tool_raising_value_error_is_a_plain_error_result() -> None:
    @function_tool(name="Bad", input_schema=SCRIPTED_INPUT_SCHEMA)
    async def bad(job: dict[str, Any], ctx: CallContext, progress: ProgressSender) -> object:
        raise ValueError("bad input file")

    outcome = await run_tools([use("a", "Bad"), use("b", "Read")], [bad, READ])
    assert outcome.results == (
        ToolResult("a", "bad input file", is_error=True),
        ToolResult("b", "ok"),
    )


class ShellError(Exception):
    def __init__(self, exit_code: int, stderr: str, stdout: str) -> None:
        super().__init__("shell failed")
        self.exit_code = exit_code
        self.stderr = stderr
        self.stdout = stdout


def raising(exc: Exception) -> object:
    @function_tool(name="Sh", input_schema=SCRIPTED_INPUT_SCHEMA)
    async def sh(job: dict[str, Any], ctx: CallContext, progress: ProgressSender) -> object:
        raise exc

    return sh


@pytest.mark.parametrize(
    ("exc", "text"),
    [
        (ShellError(2, "no such file", "partial"), "Exit code 2\nno such file\npartial"),
        (ShellError(1, "", "only stdout"), "Exit code 1\nonly stdout"),
        (ShellError(127, "cmd: not found", ""), "Exit code 127\ncmd: not found"),
        (ShellError(1, "", ""), "Exit code 1"),
        (ValueError(""), "ValueError (raised with no message)"),
        (RuntimeError("  \n "), "RuntimeError (raised with no message)"),
        (trio.TooSlowError(), "TooSlowError (raised with no message)"),
    ],
)
async def test_shell_errors_read_as_formatError_and_empty_errors_name_their_type(
    exc: Exception, text: str
) -> None:
    outcome = await run_tools([use("a", "Sh")], [raising(exc)])  # type: ignore[list-item]
    assert outcome.results == (ToolResult("a", text, is_error=True),)


async def test_long_error_is_truncated_in_the_middle() -> None:
    message = "".join(chr(ord("a") + i % 26) for i in range(12_000))
    outcome = await run_tools([use("a", "Sh")], [raising(ValueError(message))])  # type: ignore[list-item]
    (result,) = outcome.results
    assert result.is_error
    assert result.content == (
        message[:5000] + "\n\n... [2000 characters truncated] ...\n\n" + message[-5000:]
    )


async def test_error_of_exactly_ten_thousand_chars_is_kept() -> None:
    message = "x" * 10_000
    outcome = await run_tools([use("a", "Sh")], [raising(ValueError(message))])  # type: ignore[list-item]
    assert outcome.results[0].content == message


class Fatal(BaseException):
    """Not an Exception: a tool raising it is a bug, and it must propagate."""


@function_tool(name="Fatal", input_schema=SCRIPTED_INPUT_SCHEMA, concurrency_safe=True)
async def fatal(job: dict[str, Any], ctx: CallContext, progress: ProgressSender) -> object:
    await trio.sleep(job.get("sleep", 0.0))
    raise Fatal("boom")


async def test_base_exception_propagates_answers_started_calls_and_leaves_no_task(
    autojump_clock: trio.testing.MockClock,
) -> None:
    send, receive = trio.open_memory_channel[Update](math.inf)
    uses = [use("slow", "Read", sleep=5.0), use("f", "Fatal", sleep=1.0), use("done", "Read")]
    with (
        assert_no_new_tasks(),
        pytest.RaisesGroup(Fatal, allow_unwrapped=True, flatten_subgroups=True),
    ):
        await run_tools(uses, [READ, fatal], updates=send)
    assert trio.current_time() == 1.0
    answered = {u.result.tool_use_id: u.result for u in results_of(drain(receive))}
    assert sorted(answered) == ["done", "f", "slow"]
    assert all(r.is_error for key, r in answered.items() if key != "done")
    assert answered["done"] == ToolResult("done", "ok")


async def test_base_exception_still_answers_calls_of_later_batches(
    autojump_clock: trio.testing.MockClock,
) -> None:
    send, receive = trio.open_memory_channel[Update](math.inf)
    uses = [use("f", "Fatal", sleep=1.0), use("later", "Edit"), use("last", "Read")]
    with pytest.RaisesGroup(Fatal, allow_unwrapped=True, flatten_subgroups=True):
        await run_tools(uses, [READ, EDIT, fatal], updates=send)
    answered = [u.result.tool_use_id for u in results_of(drain(receive))]
    assert answered == ["f", "later", "last"]


async def test_cancelled_from_outside_propagates_and_leaves_no_task(
    autojump_clock: trio.testing.MockClock,
) -> None:
    with assert_no_new_tasks(), trio.move_on_after(1.5) as scope:
        await run_tools([use("a", "Read", sleep=5.0), use("b", "Edit")], TOOLS)
    assert scope.cancelled_caught
    assert trio.current_time() == 1.5


async def test_observer_that_raises_is_dropped_and_the_run_goes_on(
    recorder: Recorder, caplog: pytest.LogCaptureFixture
) -> None:
    class Broken(Recorder):
        def call_event(self, event: object) -> None:
            raise RuntimeError("observer bug")

    broken = Broken()
    outcome = await run_tools(
        [use("a", "Read"), use("b", "Edit")], TOOLS, observers=[broken, recorder]
    )
    assert outcome.results == (ToolResult("a", "ok"), ToolResult("b", "ok"))
    assert [e.kind for e in recorder.events if e.kind == "released"] == ["released"] * 2
    assert any("observer" in r.getMessage() for r in caplog.records)


async def test_event_sequence_of_a_call(recorder: Recorder) -> None:
    await run_tools([use("a", "Read", steps=[{"progress": "p"}])], TOOLS, observers=[recorder])
    assert recorder.kinds("a") == [
        "queued",
        "started",
        "call_began",
        "progress",
        "call_ended",
        "completed",
        "released",
    ]
    completed = recorder.of_kind("completed")[0]
    assert completed.data == ToolResult("a", "ok")
    assert recorder.of_kind("progress")[0].data == "p"
