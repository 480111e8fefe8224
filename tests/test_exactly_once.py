"""I1 under faulty user code: every tool_use gets exactly one tool_result, whatever raised.

User code runs at many points of a call: the tool, its ``__str__`` when the
error is formatted, its context modifier, the observers.  The answer is
produced before user code that can raise runs, or guarded so that it survives.
"""

from __future__ import annotations

import logging
import math
from typing import Any

import pytest
import trio
import trio.testing
from helpers import REJECT, Recorder, results_of

from trioexec import (
    CallContext,
    CallEvent,
    Observer,
    ProgressSender,
    ToolOutput,
    ToolResult,
    ToolUse,
    Turn,
    Update,
    function_tool,
    open_streaming_executor,
    run_tools,
)


class Custom(BaseException):
    """A BaseException of the application's own (not an Exception)."""


def raising_modifier(state: object) -> dict[str, object]:
    raise Custom("raised by a context modifier")


@function_tool(name="Modify")
async def modify(job: dict[str, Any], ctx: CallContext, progress: ProgressSender) -> object:
    return ToolOutput("modified", raising_modifier)


@function_tool(name="Read", concurrency_safe=True)
async def read(job: dict[str, Any], ctx: CallContext, progress: ProgressSender) -> object:
    await trio.sleep(job.get("sleep", 0.0))
    return "read"


async def run_collecting(
    path: str, uses: list[ToolUse], tools: list[Any], **options: Any
) -> tuple[list[Update], BaseException | None]:
    """Run ``uses`` on ``path``; every update delivered, and what propagated (None: returned)."""
    updates: list[Update] = []
    raised: BaseException | None = None
    if path == "batch":
        send, receive = trio.open_memory_channel[Update](math.inf)
        try:
            await run_tools(uses, tools, updates=send, **options)
        except BaseException as exc:  # what propagates is the subject here
            raised = exc
        while True:
            try:
                updates.append(receive.receive_nowait())
            except trio.WouldBlock:
                return updates, raised
    executor = None
    try:
        async with open_streaming_executor(tools, **options) as executor:
            for tool_use in uses:
                executor.add_tool(tool_use)
            async for update in executor.remaining():
                updates.append(update)  # noqa: PERF401 - keep what arrived if cancelled
    except BaseException as exc:  # what propagates is the subject here
        raised = exc
    if executor is not None:
        updates.extend(executor.drain_nowait())
    return updates, raised


async def test_a_context_modifier_raising_a_base_exception_still_releases_the_result_batch(
    recorder: Recorder,
) -> None:
    updates, raised = await run_collecting(
        "batch", [ToolUse("m", "Modify", {})], [modify], observers=[recorder]
    )
    assert [u.result for u in results_of(updates)] == [ToolResult("m", "modified")]
    assert "released" in recorder.kinds("m")
    assert type(raised) is Custom


async def test_a_context_modifier_raising_a_base_exception_still_releases_the_result_streaming(
    recorder: Recorder,
) -> None:
    updates, raised = await run_collecting(
        "stream", [ToolUse("m", "Modify", {})], [modify], observers=[recorder]
    )
    assert [u.result for u in results_of(updates)] == [ToolResult("m", "modified")]
    assert "released" in recorder.kinds("m")
    assert type(raised) is Custom  # alone: unwrapped


class Unprintable(Exception):
    def __str__(self) -> str:
        raise ValueError("__str__ is broken")


class BrokenExitCode(Exception):
    @property
    def exit_code(self) -> int:
        raise ValueError("exit_code is broken")


@function_tool(name="Unprintable")
async def unprintable(job: dict[str, Any], ctx: CallContext, progress: ProgressSender) -> object:
    if job.get("exit_code"):
        raise BrokenExitCode("exit code unreadable")
    raise Unprintable


@pytest.mark.parametrize("path", ["batch", "stream"])
@pytest.mark.parametrize("job", [{}, {"exit_code": True}])
async def test_an_exception_whose_str_fails_becomes_an_error_result(
    path: str, job: dict[str, Any]
) -> None:
    updates, raised = await run_collecting(
        path, [ToolUse("u", "Unprintable", job), ToolUse("r", "Read", {})], [unprintable, read]
    )
    assert raised is None
    first, second = (u.result for u in results_of(updates))
    assert first.is_error
    assert isinstance(first.content, str)
    name = "BrokenExitCode" if job else "Unprintable"
    assert name in first.content
    assert second == ToolResult("r", "read")


class RaisesOn(Observer):
    """An observer that raises ``exc`` on the first event of ``kind``."""

    def __init__(self, kind: str, exc: BaseException) -> None:
        self.kind = kind
        self.exc: BaseException | None = exc

    def call_event(self, event: CallEvent) -> None:
        if event.kind == self.kind and self.exc is not None:
            exc, self.exc = self.exc, None
            raise exc


@pytest.mark.parametrize("path", ["batch", "stream"])
async def test_an_observer_raising_a_base_exception_never_leaves_a_call_unanswered(
    autojump_clock: trio.testing.MockClock,
    path: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    uses = [ToolUse("a", "Read", {"sleep": 1.0}), ToolUse("b", "Read", {})]
    with caplog.at_level(logging.ERROR, logger="trioexec"):
        updates, raised = await run_collecting(
            path, uses, [read], observers=[RaisesOn("started", Custom("observer"))]
        )
    # The answer survives the observer; the BaseException is not swallowed.
    assert [u.result.tool_use_id for u in results_of(updates)] == ["a", "b"]
    assert type(raised) is Custom
    assert "observer" in caplog.text


@pytest.mark.parametrize("path", ["batch", "stream"])
async def test_an_observer_raising_an_exception_is_removed_and_the_turn_goes_on(
    autojump_clock: trio.testing.MockClock,
    path: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    uses = [ToolUse("a", "Read", {"sleep": 1.0}), ToolUse("b", "Read", {})]
    with caplog.at_level(logging.ERROR, logger="trioexec"):
        updates, raised = await run_collecting(
            path, uses, [read], observers=[RaisesOn("started", RuntimeError("observer"))]
        )
    assert raised is None
    expected = [ToolResult("a", "read"), ToolResult("b", "read")]
    assert [u.result for u in results_of(updates)] == expected
    assert "removing it" in caplog.text


@function_tool(name="Stubborn", interrupt_behavior="cancel")
async def stubborn(job: dict[str, Any], ctx: CallContext, progress: ProgressSender) -> object:
    """Ignores cancellation until t=2.5, then returns its real result."""
    with trio.CancelScope(shield=True):
        await trio.sleep_until(2.5)
    return "real result"


def one_run_at_the_grace_expiry() -> ToolResult:
    async def main() -> ToolResult:
        turn = Turn()

        async def abort_at() -> None:
            await trio.sleep_until(1.5)
            turn.abort()

        async with trio.open_nursery() as nursery:
            nursery.start_soon(abort_at)
            outcome = await run_tools(
                [ToolUse("s", "Stubborn", {})], [stubborn], turn=turn, grace_period=1.0
            )
        (result,) = outcome.results
        return result

    return trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


def test_a_call_returning_as_its_grace_period_ends_keeps_its_real_result() -> None:
    # The abort at 1.5 plus the grace period of 1.0 ends at 2.5, the very instant
    # the call returns: the end-of-instant rule says it keeps its real result.
    # trio shuffles each batch of woken tasks, so run it many times.
    answers = {one_run_at_the_grace_expiry().content for _ in range(40)}
    assert answers == {"real result"}
    assert REJECT not in answers
