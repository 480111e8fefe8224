"""A lone call of the batch path runs in its batch nursery's body, in a context of its own.

``run_taskless`` drives a coroutine in the current task, each step in one copy
of the context; ``run_tools`` runs a one-call batch (a one-call turn, every
unsafe call) that way.  What a task of its own would guarantee must still hold:
context variables set by the tool stay with the tool, cancellation reaches it,
and what it raises propagates as raised.
"""

from __future__ import annotations

import contextvars
import signal

import attrs
import pytest
import trio
import trio.testing

from trioexec import CallContext, CallEvent, Observer, ProgressSender, Tool, ToolUse, run_tools
from trioexec._core._taskless import run_taskless

SEEN: contextvars.ContextVar[str] = contextvars.ContextVar("seen", default="caller's")


async def _set_then_read(value: str) -> str:
    SEEN.set(value)
    await trio.sleep(1)  # a real trap: trio suspends and resumes the coroutine
    return SEEN.get()


async def test_each_step_runs_in_one_copy_and_the_caller_keeps_its_value(
    autojump_clock: trio.testing.MockClock,
) -> None:
    assert await run_taskless(_set_then_read("tool's")) == "tool's"
    assert SEEN.get() == "caller's"


async def test_the_copy_starts_from_the_callers_value(
    autojump_clock: trio.testing.MockClock,
) -> None:
    token = SEEN.set("outer")
    try:

        async def read() -> str:
            await trio.lowlevel.checkpoint()
            return SEEN.get()

        assert await run_taskless(read()) == "outer"
    finally:
        SEEN.reset(token)


async def test_cancellation_reaches_the_coroutine_and_propagates(
    autojump_clock: trio.testing.MockClock,
) -> None:
    reached: list[str] = []

    async def sleeper() -> None:
        try:
            await trio.sleep_forever()
        except trio.Cancelled:
            reached.append(SEEN.get())
            raise

    async def in_a_copy() -> None:
        SEEN.set("tool's")
        await sleeper()

    with trio.move_on_after(1) as scope:
        await run_taskless(in_a_copy())
    assert scope.cancelled_caught
    assert reached == ["tool's"]
    assert trio.current_time() == 1


async def test_an_exception_propagates_as_raised() -> None:
    error = KeyError("k")

    async def fails() -> None:
        await trio.lowlevel.checkpoint()
        raise error

    with pytest.raises(KeyError) as caught:
        await run_taskless(fails())
    assert caught.value is error


@attrs.frozen
class _SetterInput:
    to: str


class _Setter(Tool[_SetterInput]):
    """Sets the context variable to its input's ``to`` and reports what it then reads."""

    name = "Setter"
    input_type = _SetterInput

    def __init__(self, *, safe: bool) -> None:
        self._safe = safe

    def is_concurrency_safe(self, payload: _SetterInput) -> bool:
        return self._safe

    async def call(
        self, payload: _SetterInput, ctx: CallContext, progress: ProgressSender
    ) -> object:
        before = SEEN.get()
        SEEN.set(payload.to)
        await trio.sleep(1)
        return f"{before} -> {SEEN.get()}"


@pytest.mark.parametrize("safe", [True, False])
async def test_a_lone_calls_context_change_stays_with_the_call(
    autojump_clock: trio.testing.MockClock, safe: bool
) -> None:
    outcome = await run_tools([ToolUse("a", "Setter", {"to": "a"})], [_Setter(safe=safe)])
    assert [r.content for r in outcome.results] == ["caller's -> a"]
    assert SEEN.get() == "caller's"


async def test_each_unsafe_call_starts_from_the_callers_context(
    autojump_clock: trio.testing.MockClock,
) -> None:
    uses = [ToolUse(i, "Setter", {"to": i}) for i in ("a", "b", "c")]
    outcome = await run_tools(uses, [_Setter(safe=False)])
    assert [r.content for r in outcome.results] == [
        "caller's -> a",
        "caller's -> b",
        "caller's -> c",
    ]
    assert SEEN.get() == "caller's"


async def test_a_lone_call_is_stopped_by_a_cancelled_enclosing_scope(
    autojump_clock: trio.testing.MockClock,
) -> None:
    with trio.move_on_after(0.5) as scope:
        await run_tools([ToolUse("a", "Setter", {"to": "a"})], [_Setter(safe=False)])
    assert scope.cancelled_caught
    assert trio.current_time() == 0.5
    assert SEEN.get() == "caller's"


class _Waiter(Tool[dict[str, object]]):
    """Waits until cancelled; records what reached it."""

    name = "Waiter"

    def __init__(self) -> None:
        self.input_schema = {"type": "object"}
        self.reached: list[str] = []

    async def call(
        self, payload: dict[str, object], ctx: CallContext, progress: ProgressSender
    ) -> object:
        try:
            await trio.sleep_forever()
        except BaseException as exc:
            self.reached.append(type(exc).__name__)
            raise
        return "never"


def test_a_ctrl_c_in_the_main_task_reaches_a_lone_call_as_a_cancellation() -> None:
    """trio delivers a KeyboardInterrupt to the main task: a lone call run from the main
    task still runs in a task of its own, so the tool is cancelled (and answered so) and
    run_tools raises the KeyboardInterrupt itself, as for calls run in tasks."""
    tool = _Waiter()
    answers: list[str] = []

    class Answers(Observer):
        def call_event(self, event: CallEvent) -> None:
            if event.kind in ("completed", "failed", "cancelled"):
                answers.append(event.kind)

    @trio.lowlevel.enable_ki_protection
    async def press_ctrl_c() -> None:
        await trio.testing.wait_all_tasks_blocked()
        signal.raise_signal(signal.SIGINT)  # protected here: trio hands it to the main task

    async def main() -> None:
        trio.lowlevel.spawn_system_task(press_ctrl_c)
        await run_tools([ToolUse("a", "Waiter", {})], [tool], observers=[Answers()])

    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        pytest.skip("SIGINT is not Python's default handler here: trio would not take it")
    with pytest.raises(KeyboardInterrupt):
        trio.run(main)
    assert tool.reached == ["Cancelled"]
    assert answers == ["cancelled"]


class _Ran(Tool[dict[str, object]]):
    """Records that its body ran; returns without a checkpoint."""

    name = "Ran"

    def __init__(self) -> None:
        self.input_schema = {"type": "object"}
        self.ran: list[str] = []

    async def call(
        self, payload: dict[str, object], ctx: CallContext, progress: ProgressSender
    ) -> object:
        self.ran.append(ctx.tool_use.id)
        return "ran"


class _InterruptsOnStart(Observer):
    def call_event(self, event: CallEvent) -> None:
        if event.kind == "started":
            raise KeyboardInterrupt


async def test_a_lone_call_whose_start_an_observer_interrupts_never_runs_its_tool() -> None:
    """As for a call run in a task of its own: the run stops before the tool's first step."""
    tool = _Ran()
    with pytest.raises(KeyboardInterrupt):
        await run_tools([ToolUse("a", "Ran", {})], [tool], observers=[_InterruptsOnStart()])
    assert tool.ran == []
