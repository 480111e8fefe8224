"""Shared test tools: a scripted ``Job`` tool factory, an event recorder, a no-orphan check.

A ``Job`` is the input of every scripted tool: how long to sleep, which
progress to send, what to return or raise, which context key to set.  The
tools are built with :func:`trioexec.function_tool` so the tests go through
the same path as user code.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Literal

import attrs
import pytest
import trio

from trioexec import (
    CallContext,
    CallEvent,
    Observer,
    ProgressSender,
    ResultUpdate,
    Tool,
    ToolOutput,
    ToolUse,
    Update,
    function_tool,
)

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping

__all__ = [
    "Job",
    "Recorder",
    "Step",
    "ToolFailure",
    "assert_no_new_tasks",
    "live_tasks",
    "make_tool",
    "results_of",
    "use",
]


# The exact model-facing texts, spelled out here (not imported from trioexec) so a
# change to them fails the tests.
REJECT = (
    "The user doesn't want to proceed with this tool use. The tool use was rejected "
    "(eg. if it was a file edit, the new_string was NOT written to the file). "
    "STOP what you are doing and wait for the user to tell you how to proceed."
)
NOT_NOW = (
    "The user doesn't want to take this action right now. "
    "STOP what you are doing and wait for the user to tell you how to proceed."
)


@attrs.frozen
class Step:
    """One step of a job: sleep, then (optionally) send progress."""

    sleep: float = 0.0
    progress: str | None = None


@attrs.frozen
class Job:
    """The input of a scripted tool.

    ``wait`` names a :class:`trio.Event` (from the factory's ``events``) the
    call waits on after its sleep and steps.  ``append`` makes the call return
    a context modifier that appends the value to the ``trail`` key.
    ``echo_trail`` makes the output ``trail:`` plus the ``trail`` the call saw
    when it started.
    """

    sleep: float = 0.0
    steps: list[Step] = attrs.field(factory=list)
    wait: str | None = None
    output: str = "ok"
    error: str | None = None
    safe: bool | None = None
    append: str | None = None
    echo_trail: bool = False
    command: str | None = None
    file_path: str | None = None
    pattern: str | None = None


class ToolFailure(Exception):
    """What a scripted tool raises for ``Job.error``."""


Safety = bool | Literal["input"]


def make_tool(
    name: str,
    *,
    safe: Safety = True,
    interrupt: Literal["cancel", "block"] = "block",
    cascades: bool = False,
    events: Mapping[str, trio.Event] | None = None,
    log: list[tuple[str, str, float]] | None = None,
    aliases: tuple[str, ...] = (),
) -> Tool[Job]:
    """A scripted tool named ``name`` whose behaviour each call's :class:`Job` input decides.

    ``safe="input"`` lets ``Job.safe`` decide concurrency safety per call.
    ``log`` receives ``("begin" | "end", tool_use_id, time)`` around the body.
    """
    waits = events if events is not None else {}

    def is_safe(job: Job) -> bool:
        if safe == "input":
            return bool(job.safe)
        return bool(safe)

    @function_tool(
        name=name,
        input_type=Job,
        concurrency_safe=is_safe,
        interrupt_behavior=interrupt,
        cancels_siblings_on_error=cascades,
        aliases=aliases,
    )
    async def scripted(job: Job, ctx: CallContext, progress: ProgressSender) -> object:
        tool_id = ctx.tool_use.id
        if log is not None:
            log.append(("begin", tool_id, trio.current_time()))
        if job.sleep:
            await trio.sleep(job.sleep)
        for step in job.steps:
            if step.sleep:
                await trio.sleep(step.sleep)
            if step.progress is not None:
                progress(step.progress)
        if job.wait is not None:
            await waits[job.wait].wait()
        if log is not None:
            log.append(("end", tool_id, trio.current_time()))
        if job.error is not None:
            raise ToolFailure(job.error)
        output: object = job.output
        if job.echo_trail:
            output = "trail:" + ",".join(_trail(ctx.state))
        if job.append is not None:
            value = job.append
            return ToolOutput(output, lambda state: {**state, "trail": (*_trail(state), value)})
        return output

    return scripted


def _trail(state: Mapping[str, object]) -> tuple[str, ...]:
    trail = state.get("trail", ())
    assert isinstance(trail, tuple)
    return tuple(str(item) for item in trail)


def use(tool_id: str, name: str, **job: Any) -> ToolUse:
    """A tool_use for a scripted tool; ``job`` is the input as the model would send it."""
    return ToolUse(tool_id, name, job)


class Recorder(Observer):
    """Records every call event and every interruptible-state change."""

    def __init__(self) -> None:
        self.events: list[CallEvent] = []
        self.interruptible: list[tuple[float, bool]] = []

    def call_event(self, event: CallEvent) -> None:
        self.events.append(event)

    def interruptible_changed(self, interruptible: bool) -> None:
        self.interruptible.append((trio.current_time(), interruptible))

    def kinds(self, tool_use_id: str) -> list[str]:
        """The kinds of one call's events, in order (progress and call spans included)."""
        return [e.kind for e in self.events if e.tool_use_id == tool_use_id]

    def times(self, kind: str) -> dict[str, float]:
        """tool_use id -> time of its (last) event of ``kind``."""
        return {e.tool_use_id: e.time for e in self.events if e.kind == kind}

    def of_kind(self, kind: str) -> list[CallEvent]:
        return [e for e in self.events if e.kind == kind]


def results_of(updates: list[Update]) -> list[ResultUpdate]:
    """The result updates among ``updates``, in order."""
    return [u for u in updates if isinstance(u, ResultUpdate)]


def live_tasks() -> set[trio.lowlevel.Task]:
    """Every task alive in the current trio run (walked from the root task)."""
    found: set[trio.lowlevel.Task] = set()
    pending = [trio.lowlevel.current_root_task()]
    while pending:
        task = pending.pop()
        if task is None or task in found:
            continue
        found.add(task)
        for nursery in task.child_nurseries:
            pending.extend(nursery.child_tasks)
    return found


@contextmanager
def assert_no_new_tasks() -> Iterator[None]:
    """Fail if a task started inside the block is still alive when the block ends."""
    before = live_tasks()
    yield
    leftover = live_tasks() - before
    assert not leftover, f"tasks left behind: {sorted(t.name for t in leftover)}"


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()
