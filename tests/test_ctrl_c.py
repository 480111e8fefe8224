"""Ctrl-C landing inside trioexec's own bookkeeping: every call answered, a plain KeyboardInterrupt.

trio raises a KeyboardInterrupt at whatever line runs when SIGINT arrives,
unless that code is KeyboardInterrupt-protected; then trio hands it to the
main task at its next checkpoint.  Each test below makes the signal land on
one line of trioexec's own code (a patched function it calls raises SIGINT
in the process, and Python runs the handler right there) and asserts what a
run promises whatever ends it: every call answered exactly once, then a
plain ``KeyboardInterrupt``, nothing left running.  The runs use ``trio.run``
directly (trio installs its SIGINT handler only there, in the main thread),
on a ``MockClock`` that jumps while every task waits.
"""

from __future__ import annotations

import os
import signal
from typing import TYPE_CHECKING, Any

import pytest
import trio
import trio.lowlevel
import trio.testing
from helpers import alive, make_tool, reaping, use

from trioexec import (
    CallContext,
    ProgressSender,
    ResultUpdate,
    Tool,
    ToolUse,
    Update,
    _process,
    open_streaming_executor,
    run_tools,
)
from trioexec._core import _run as _core
from trioexec._core import _streaming

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Coroutine

pytestmark = pytest.mark.skipif(
    signal.getsignal(signal.SIGINT) is not signal.default_int_handler,
    reason="SIGINT is not Python's default handler here: trio would not take it",
)


def _press_ctrl_c() -> None:
    """SIGINT to this process; Python runs the handler before this returns."""
    signal.raise_signal(signal.SIGINT)


def _once(hook: Callable[..., Any]) -> Callable[..., Any]:
    """``hook`` with a Ctrl-C pressed in it the first time it is called."""
    pressed = [False]

    def pressing(*args: Any, **kwargs: Any) -> Any:
        if not pressed[0]:
            pressed[0] = True
            _press_ctrl_c()
        return hook(*args, **kwargs)

    return pressing


def _run(main: Callable[[], Awaitable[None]]) -> None:
    """``main`` in a fresh trio run on a jumping MockClock, bounded in virtual time."""

    async def bounded() -> None:
        with trio.fail_after(3600):  # a call left unanswered fails here, never hangs
            await main()

    trio.run(bounded, clock=trio.testing.MockClock(autojump_threshold=0))


def _in_child_task(body: Callable[[], Awaitable[None]]) -> Callable[[], Awaitable[None]]:
    """``body`` run in a task other than trio's main one (Ctrl-C goes to the main task).

    The main task's nursery groups what it raises: a lone exception is unwrapped.
    """

    async def main() -> None:
        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(body)
        except BaseExceptionGroup as group:
            if len(group.exceptions) == 1:
                raise group.exceptions[0] from None
            raise

    return main


def _answered_once(updates: list[Update], ids: list[str]) -> None:
    results = [u.result.tool_use_id for u in updates if isinstance(u, ResultUpdate)]
    assert sorted(results) == sorted(ids), results


# ---------------------------------------------------------------- the run core's release


@pytest.mark.parametrize("where", ["main task", "child task"])
def test_ctrl_c_during_a_release_still_answers_every_call(
    monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """Ctrl-C as the first result leaves the gate: the later results are released too."""
    monkeypatch.setattr(_core.RunCore, "_deliver", _once(_core.RunCore._deliver))
    tool = make_tool("T")
    ids = ["a", "b", "c"]
    send, receive = trio.open_memory_channel[Update](float("inf"))

    async def body() -> None:
        await run_tools([use(i, "T", sleep=1) for i in ids], [tool], updates=send)

    with pytest.raises(KeyboardInterrupt):
        _run(body if where == "main task" else _in_child_task(body))
    _answered_once(_drain(receive), ids)


def _drain(receive: trio.MemoryReceiveChannel[Update]) -> list[Update]:
    out: list[Update] = []
    while True:
        try:
            out.append(receive.receive_nowait())
        except (trio.WouldBlock, trio.EndOfChannel):
            return out


# ---------------------------------------------------------------- add_tool


@pytest.mark.parametrize("grace_period", [None, 5.0])
def test_ctrl_c_while_add_tool_starts_a_call_still_answers_it(
    monkeypatch: pytest.MonkeyPatch, grace_period: float | None
) -> None:
    """Ctrl-C between a call's start and its task's: the call gets its task, and its answer."""
    monkeypatch.setattr(_streaming, "_start_call", _once(_streaming._start_call))
    tool = make_tool("T")
    got: list[Update] = []
    ended_at: list[float] = []

    async def body() -> None:
        executor = None
        try:
            async with open_streaming_executor([tool], grace_period=grace_period) as executor:
                await trio.testing.wait_all_tasks_blocked()  # the host opens the calls' nursery
                executor.add_tool(use("a", "T", sleep=10))
                got.extend([update async for update in executor.remaining()])
        finally:
            ended_at.append(trio.current_time())
            if executor is not None:  # what the stopped loop did not take
                got.extend(executor.drain_nowait())

    with pytest.raises(KeyboardInterrupt):
        _run(_in_child_task(body))
    _answered_once(got, ["a"])
    # The call is stopped, not waited for: its tool (10 s) and no grace period ran out.
    assert ended_at == [0.0]


# ---------------------------------------------------------------- the lone-call path


class _TornCoroutine:
    """A call's coroutine whose every step ends with Ctrl-C pressed once, after the
    coroutine has yielded to trio: the signal lands in whatever drives it."""

    def __init__(self, coro: Coroutine[Any, Any, Any]) -> None:
        self._coro = coro
        self._pressed = False

    def _after(self, trap: object) -> object:
        if not self._pressed:
            self._pressed = True
            _press_ctrl_c()
        return trap

    def send(self, value: object) -> object:
        return self._after(self._coro.send(value))

    def throw(self, exc: BaseException) -> object:
        return self._after(self._coro.throw(exc))

    def __await__(self) -> Any:
        return self._coro.__await__()


def test_ctrl_c_while_a_lone_call_steps_leaves_it_answered_and_trio_intact(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The lone call (run in its batch's body) is driven to its end, never abandoned
    mid-await: the run answers it and a plain KeyboardInterrupt propagates."""
    real_run_call = _core.RunCore.run_call

    def torn(self: _core.RunCore, call: Any) -> Any:
        return _TornCoroutine(real_run_call(self, call))

    monkeypatch.setattr(_core.RunCore, "run_call", torn)
    tool = make_tool("T", safe=False)
    send, receive = trio.open_memory_channel[Update](float("inf"))

    async def body() -> None:
        await run_tools([use("a", "T", sleep=10)], [tool], updates=send)

    with pytest.raises(KeyboardInterrupt):
        _run(_in_child_task(body))
    _answered_once(_drain(receive), ["a"])


# ---------------------------------------------------------------- tool code stays interruptible


class _Protection(Tool[dict[str, object]]):
    """Records whether Ctrl-C would interrupt its body at once (not deferred)."""

    name = "Protection"

    def __init__(self, *, safe: bool) -> None:
        self.input_schema = {"type": "object"}
        self.safe = safe
        self.seen: list[bool] = []

    def is_concurrency_safe(self, input: dict[str, object]) -> bool:  # noqa: A002
        return self.safe

    async def call(
        self, payload: dict[str, object], ctx: CallContext, progress: ProgressSender
    ) -> object:
        self.seen.append(trio.lowlevel.currently_ki_protected())
        await trio.lowlevel.checkpoint()
        self.seen.append(trio.lowlevel.currently_ki_protected())
        return "ok"


@pytest.mark.parametrize("safe", [True, False])
@pytest.mark.parametrize("where", ["main task", "child task"])
def test_a_tools_own_code_is_never_shielded_from_ctrl_c(safe: bool, where: str) -> None:
    """Protection covers trioexec's bookkeeping only: a tool stuck in a loop still stops."""
    tool = _Protection(safe=safe)

    async def body() -> None:
        await run_tools([ToolUse("a", "Protection", {})], [tool])
        async with open_streaming_executor([tool]) as executor:
            executor.add_tool(ToolUse("b", "Protection", {}))
        async with open_streaming_executor([tool]) as executor:
            await trio.testing.wait_all_tasks_blocked()
            executor.add_tool(ToolUse("c", "Protection", {}))

    _run(body if where == "main task" else _in_child_task(body))
    assert tool.seen == [False] * 6


# ---------------------------------------------------------------- process-group cleanup


def test_ctrl_c_between_sigterm_and_sigkill_still_kills_the_group(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A cancelled command that ignores SIGTERM gets SIGKILL even if Ctrl-C lands right
    after the SIGTERM: the cleanup finishes, then KeyboardInterrupt propagates."""
    real_signal_group = _process._signal_group
    pids: list[int] = []

    def signal_group(pgid: int, sig: signal.Signals) -> None:
        real_signal_group(pgid, sig)
        if sig == signal.SIGTERM and len(pids) == 1:
            pids.append(pgid)  # (once)
            _press_ctrl_c()

    monkeypatch.setattr(_process, "_signal_group", signal_group)

    async def body() -> None:
        started = trio.Event()

        def on_output(stream: str, text: str, total: int) -> None:
            started.set()

        with trio.CancelScope() as scope:
            async with trio.open_nursery() as nursery:

                async def command() -> None:
                    await _process.run_process_group(
                        ["sh", "-c", "trap '' TERM; echo ready; sleep 30"],
                        cwd=os.getcwd(),
                        on_start=pids.append,
                        on_output=on_output,
                        kill_grace=0.2,
                    )

                nursery.start_soon(command)
                await started.wait()
                scope.cancel()

    with reaping(pids), pytest.raises(KeyboardInterrupt):
        trio.run(_in_child_task(body))
    assert len(pids) == 2
    assert not alive(pids[0])
