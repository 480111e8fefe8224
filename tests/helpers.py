"""Shared test helpers: scripted tools, an event recorder, a no-orphan check.

The scripted tools are the shipped :class:`trioexec.testing.ScriptedTool`, so
the suite dogfoods the kit users test with.  :func:`make_tool` adds three
test-only input keys the scenario language does not need: ``wait`` (wait on a
named :class:`trio.Event` after the sleep and steps), ``append`` (return a
context modifier appending the value to the ``trail`` key) and ``echo_trail``
(output ``trail:`` plus the ``trail`` the call saw when it started); and it can
log ``("begin" | "end", tool_use_id, time)`` around each call.  Without those
keys a call does exactly what a plain ``ScriptedTool`` does, except that its
default output is ``"ok"``.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import shutil
import signal
import sys
from contextlib import contextmanager
from pathlib import Path
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
    ToolOutput,
    ToolUse,
    function_tool,
)
from trioexec.testing import SCRIPTED_INPUT_SCHEMA, ScriptedTool, ScriptedToolError
from trioexec.tools import BashInput, BashTool

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping
    from types import ModuleType

    from trioexec import (
        ContextModifier,
        ContextState,
        JSONObject,
        JSONValue,
        ProgressSender,
        Update,
    )

__all__ = [
    "GIT_ENV",
    "NOT_NOW",
    "REJECT",
    "Recorder",
    "Step",
    "alive",
    "assert_no_new_tasks",
    "bash_auto_allowed",
    "call_context",
    "ignore_progress",
    "linux_only",
    "live_tasks",
    "make_tool",
    "needs",
    "proves",
    "real_bash",
    "reaping",
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
    """One step of a scripted call: sleep, then (optionally) send progress."""

    sleep: float = 0.0
    progress: str | None = None


_TEST_KEYS = ("wait", "append", "echo_trail")
_TEST_INPUT_SCHEMA: JSONObject = {
    **SCRIPTED_INPUT_SCHEMA,
    "properties": {
        **SCRIPTED_INPUT_SCHEMA["properties"],  # type: ignore[dict-item]
        "wait": {"type": "string"},
        "append": {"type": "string"},
        "echo_trail": {"type": "boolean"},
    },
}


class _TestTool(ScriptedTool):
    """A ScriptedTool that also understands ``wait``, ``append`` and ``echo_trail``."""

    input_schema = _TEST_INPUT_SCHEMA

    def __init__(
        self,
        name: str,
        *,
        events: Mapping[str, trio.Event],
        log: list[tuple[str, str, float]] | None,
        **options: Any,
    ) -> None:
        super().__init__(name, **options)
        self.events = events
        self.log = log

    async def call(
        self,
        input: Mapping[str, JSONValue],  # noqa: A002
        ctx: CallContext,
        progress: ProgressSender,
    ) -> object:
        tool_id = ctx.tool_use.id
        if self.log is not None:
            self.log.append(("begin", tool_id, trio.current_time()))
        trail_seen = _trail(ctx.state)
        script = {k: v for k, v in input.items() if k not in (*_TEST_KEYS, "error")}
        script.setdefault("output", "ok")
        if not script.get("sleep"):
            script.pop("sleep", None)  # no sleep at all: the call never checkpoints
        done = await super().call(script, ctx, progress)  # the sleep, the steps, the output
        wait = input.get("wait")
        if isinstance(wait, str):
            await self.events[wait].wait()
        if self.log is not None:
            self.log.append(("end", tool_id, trio.current_time()))
        error = input.get("error")
        if isinstance(error, str):
            raise ScriptedToolError(error)
        output, modifier = (
            (done.value, done.context_modifier) if isinstance(done, ToolOutput) else (done, None)
        )
        if input.get("echo_trail") is True:
            output = "trail:" + ",".join(trail_seen)
        append = input.get("append")
        if isinstance(append, str):
            modifier = _then_append(modifier, append)
        return ToolOutput(output, modifier) if modifier is not None else output


def _then_append(first: ContextModifier | None, value: str) -> ContextModifier:
    def modify(state: ContextState) -> ContextState:
        state = first(state) if first is not None else state
        return {**state, "trail": (*_trail(state), value)}

    return modify


def _trail(state: Mapping[str, object]) -> tuple[str, ...]:
    trail = state.get("trail", ())
    assert isinstance(trail, tuple)
    return tuple(str(item) for item in trail)


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
) -> ScriptedTool:
    """A scripted tool named ``name``; each call's input (see :func:`use`) decides what it does.

    ``safe="input"`` lets the input's ``safe`` decide concurrency safety per call.
    ``events`` are the :class:`trio.Event` objects a ``wait`` key names.
    """
    return _TestTool(
        name,
        events=events if events is not None else {},
        log=log,
        concurrency_safe=safe,
        interrupt_behavior=interrupt,
        cancels_siblings_on_error=cascades,
        aliases=aliases,
    )


def use(tool_id: str, name: str, **job: Any) -> ToolUse:
    """A tool_use for a scripted tool, as the model would send it.

    ``job`` is the scripted input; ``safe`` stands for ``concurrency_safe``, and
    a step may sleep and then report (a :class:`Step`, or a dict with both keys).
    """
    if "safe" in job:
        job["concurrency_safe"] = job.pop("safe")
    steps = job.get("steps")
    if isinstance(steps, list):
        job["steps"] = [part for step in steps for part in _step_parts(step)]
    return ToolUse(tool_id, name, job)


def _step_parts(step: object) -> list[object]:
    """A step that sleeps then reports becomes the two one-key steps ScriptedTool reads."""
    if isinstance(step, Step):
        sleep, report = step.sleep, step.progress
    elif isinstance(step, dict) and set(step) == {"sleep", "progress"}:
        sleep, report = step["sleep"], step["progress"]
    else:
        return [step]
    parts: list[object] = []
    if sleep:
        parts.append({"sleep": sleep})
    if report is not None:
        parts.append({"progress": report})
    return parts


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


def drain(receive: trio.MemoryReceiveChannel[Update]) -> list[Update]:
    """Every update buffered in ``receive`` now, in order."""
    out: list[Update] = []
    while True:
        try:
            out.append(receive.receive_nowait())
        except trio.WouldBlock:
            return out


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


# -- real processes: proving an effect before asserting the guard stops it ------------------


linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
GIT_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_AUTHOR_NAME": "r",
    "GIT_AUTHOR_EMAIL": "r@example.com",
    "GIT_COMMITTER_NAME": "r",
    "GIT_COMMITTER_EMAIL": "r@example.com",
}


def needs(*programs: str) -> pytest.MarkDecorator:
    """Skip unless every program is on PATH."""
    missing = [p for p in programs if shutil.which(p) is None]
    return pytest.mark.skipif(bool(missing), reason=f"needs {', '.join(missing)}")


def call_context(name: str, cwd: Path) -> CallContext:
    """A call context for tool ``name`` in ``cwd``."""
    return CallContext(tool_use=ToolUse("toolu_1", name, {}), cwd=cwd)


def ignore_progress(_: object) -> None:
    """A progress sender that drops everything."""


async def real_bash(command: str, cwd: Path) -> str:
    """Run ``command`` with bash in ``cwd`` (bounded); its stdout."""
    with trio.fail_after(30):
        done = await trio.run_process(
            ["bash", "-c", command],
            cwd=cwd,
            env={**os.environ, **GIT_ENV},
            check=False,
            capture_stdout=True,
            capture_stderr=True,
        )
    return done.stdout.decode(errors="replace")


async def bash_auto_allowed(command: str, cwd: Path) -> bool:
    """Whether Bash's own check allows ``command`` without asking anyone."""
    result = await BashTool().check_permissions(BashInput(command), call_context("Bash", cwd))
    return result.behavior == "allow"


def proves(effect: bool, what: str) -> None:
    """Fail (not skip) when the real effect a test relies on did not happen."""
    if not effect:
        pytest.fail(f"precondition: {what}")


def alive(pid: int) -> bool:
    """Whether ``pid`` is a live (not zombie) process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2 :].split()[0] not in (b"Z", b"X")


@contextmanager
def reaping(pids: list[int]) -> Iterator[None]:
    """Kill (by group) whatever of ``pids`` the test left alive: its own processes."""
    try:
        yield
    finally:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)


@function_tool(
    name="Stubborn",
    input_schema=SCRIPTED_INPUT_SCHEMA,
    concurrency_safe=True,
    interrupt_behavior="cancel",
)
async def stubborn(job: dict[str, Any], ctx: CallContext, progress: ProgressSender) -> object:
    """Shields itself from cancellation for ``sleep`` seconds: it cannot be stopped, only
    waited for (the grace watchdog answers it on its behalf)."""
    with trio.CancelScope(shield=True):
        await trio.sleep(job.get("sleep", 0.0))
    return "finished anyway"


BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"
"""The repository's benchmarks folder (its scripts import each other by name)."""


def import_benchmark(monkeypatch: pytest.MonkeyPatch, name: str) -> ModuleType:
    """``benchmarks/<name>.py`` as a module, its folder on ``sys.path`` for this test."""
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    return importlib.import_module(name)
