"""``async: true`` hooks: run in the background, heard on a later call, never outliving the run.

Claude Code's hooks reference ("Run hooks in the background"): "Claude Code
starts the hook process and immediately continues without waiting for the
hook to finish"; "Async hooks cannot block tool calls or return decisions";
"After the background process exits, if the hook produced a JSON response
with a systemMessage or additionalContext field, that content is delivered to
Claude as context on the next conversation turn."  The one deliberate
difference: no hook outlives its run (a grace period, then it is killed).
"""

from __future__ import annotations

import json
import os
import sys
from typing import TYPE_CHECKING

import pytest
import trio
import trio.testing
from helpers import alive, reaping
from hypothesis import given, settings
from hypothesis import strategies as st

from trioexec import (
    CallContext,
    GuardRails,
    ResultUpdate,
    ToolUse,
    function_tool,
    open_streaming_executor,
    run_tools,
)
from trioexec.hooks import CommandHook, HookEntry, HookInput, HookOutput, HookSet
from trioexec.lowlevel import authorize_call
from trioexec.permissions import PermissionContext
from trioexec.tools import default_tools

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable
    from pathlib import Path

    from trioexec import RunOutcome, Tool

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
RUN_LIMIT = 60


def async_entry(event: str, hook: object) -> HookEntry:
    return HookEntry(event, "", hook, run_async=True)  # type: ignore[arg-type]


def probe(body: Callable[[dict[str, object]], Awaitable[str]] | None = None) -> Tool[object]:
    """A tool named ``Probe`` running ``body(input)`` (default: answers ``x``)."""

    @function_tool(name="Probe")
    async def run(args: dict[str, object]) -> str:
        return "x" if body is None else await body(args)

    return run


def guarded(*entries: HookEntry, grace: float = 5.0) -> GuardRails:
    """Guard rails with ``entries`` that let every ``Probe`` call run."""
    allow = PermissionContext(allow=["Probe"])
    return GuardRails(allow, HookSet(entries), async_hook_grace=grace)


async def test_the_call_does_not_wait_for_an_async_hook(autojump_clock: object) -> None:
    """ "starts the hook process and immediately continues without waiting": the hook
    waits for the tool to have run, so a call that waited for it would never finish."""
    tool_ran = trio.Event()
    finished: list[str] = []

    async def waits_for_the_tool(data: HookInput) -> HookOutput:
        await tool_ran.wait()
        finished.append(data.tool_use_id)
        return HookOutput()

    async def body(_input: object) -> str:
        tool_ran.set()
        return "done"

    guard = guarded(async_entry("PreToolUse", waits_for_the_tool))
    with trio.fail_after(RUN_LIMIT):
        outcome = await run_tools([ToolUse("toolu_1", "Probe", {})], [probe(body)], guard=guard)
    assert outcome.results[0].content == "done"
    assert finished == ["toolu_1"]  # and it did finish, inside the run


async def test_the_streaming_executor_releases_the_result_while_the_hook_runs(
    autojump_clock: object,
) -> None:
    """In the streaming executor the result goes out while the async PostToolUse hook is
    still running; the hook ends (here within the grace) when the executor closes."""
    hook_done = trio.Event()

    async def slow_logger(data: HookInput) -> None:
        await trio.sleep(3)
        hook_done.set()

    guard = guarded(async_entry("PostToolUse", slow_logger))
    async with open_streaming_executor([probe()], guard=guard) as executor:
        executor.add_tool(ToolUse("toolu_1", "Probe", {}))
        updates = [u async for u in executor.remaining()]
        assert [u.result.content for u in updates if isinstance(u, ResultUpdate)] == ["x"]
        assert not hook_done.is_set()
    assert hook_done.is_set()  # the executor's exit waited for it (3 s < the 5 s grace)


async def test_an_async_hook_cannot_deny_ask_or_rewrite_the_call(autojump_clock: object) -> None:
    """ "Async hooks cannot block tool calls or return decisions": by the time the hook
    completes, the triggering action has already proceeded."""

    async def denies(data: HookInput) -> HookOutput:
        return HookOutput(
            permission_decision="deny",
            permission_decision_reason="no",
            updated_input={"command": "rm -rf /"},
            continue_=False,
        )

    seen: list[object] = []

    async def body(tool_input: object) -> str:
        seen.append(tool_input)
        return "ran"

    guard = guarded(async_entry("PreToolUse", denies))
    outcome = await run_tools(
        [ToolUse("toolu_1", "Probe", {"command": "ls"})], [probe(body)], guard=guard
    )
    assert outcome.results[0].content == "ran"
    assert seen == [{"command": "ls"}]
    assert outcome.stop_reason is None
    assert outcome.attachments == ()


async def test_an_async_hooks_message_reaches_the_model_with_the_next_call(
    autojump_clock: object,
) -> None:
    """ "that content is delivered to Claude as context on the next conversation turn":
    what a finished async hook says rides with the next call the same guard rails
    decide, as records the model reads with that call's result."""
    release = trio.Event()

    async def reports(data: HookInput) -> HookOutput:
        await release.wait()
        return HookOutput(system_message="tests passed", additional_context="3 files linted")

    async def body(_input: object) -> str:
        release.set()
        return "ok"

    guard = guarded(async_entry("PostToolUse", reports))
    tools = [probe(body)]
    first = await run_tools([ToolUse("toolu_1", "Probe", {})], tools, guard=guard)
    assert first.attachments == ()  # the hook had not finished when the call was answered
    second = await run_tools([ToolUse("toolu_2", "Probe", {})], tools, guard=guard)
    assert [(a.tool_use_id, a.kind, a.text, a.hook_name) for a in second.attachments] == [
        ("toolu_2", "additional_context", "tests passed", "PostToolUse:Probe"),
        ("toolu_2", "additional_context", "3 files linted", "PostToolUse:Probe"),
    ]
    third = await run_tools([ToolUse("toolu_3", "Probe", {})], tools, guard=guard)
    assert all(a.tool_use_id == "toolu_3" for a in third.attachments)  # each said once


async def test_an_async_hook_runs_once_per_firing_without_deduplication(
    autojump_clock: object,
) -> None:
    """ "Each execution creates a separate background process. There is no deduplication
    across multiple firings of the same async hook.\""""
    fired: list[str] = []

    async def counts(data: HookInput) -> None:
        fired.append(data.tool_use_id)

    guard = guarded(async_entry("PreToolUse", counts))
    uses = [ToolUse(f"toolu_{n}", "Probe", {}) for n in range(3)]
    await run_tools(uses, [probe()], guard=guard)
    assert sorted(fired) == ["toolu_0", "toolu_1", "toolu_2"]


async def test_the_run_waits_the_grace_period_then_stops_an_async_hook(
    autojump_clock: object,
) -> None:
    """trioexec's deliberate difference: no hook outlives its run.  A hook still
    running when the calls are done gets ``async_hook_grace`` seconds, then is
    cancelled; the run returns with nothing left behind."""
    state: list[str] = []

    async def slow(data: HookInput) -> HookOutput:
        try:
            await trio.sleep(3600)
        except trio.Cancelled:
            state.append("stopped")
            raise
        return HookOutput(additional_context="never")

    guard = guarded(async_entry("PostToolUse", slow), grace=2.0)
    started = trio.current_time()
    with trio.fail_after(RUN_LIMIT):
        await run_tools([ToolUse("toolu_1", "Probe", {})], [probe()], guard=guard)
    assert state == ["stopped"]
    assert trio.current_time() - started == pytest.approx(2.0)  # the mock clock's time
    assert not guard.async_hook_messages


def test_async_hook_grace_must_be_a_finite_number_of_seconds() -> None:
    for bad in (-1, float("inf"), float("nan"), True, "5"):
        with pytest.raises(ValueError, match="async_hook_grace"):
            GuardRails(async_hook_grace=bad)  # type: ignore[arg-type]
    assert GuardRails(async_hook_grace=0).async_hook_grace == 0


def write_hook(directory: Path, body: str) -> str:
    path = directory / "background.sh"
    path.write_text("#!/bin/sh\n" + body, encoding="utf-8")
    path.chmod(0o755)
    return str(path)


def pid_reporting_hook(directory: Path) -> tuple[str, Path]:
    """A hook that starts a child, reports both pids through a FIFO, then waits a minute.

    Returns the hook's command and the FIFO; opening the FIFO for reading waits
    for the hook to write, so a test knows the hook runs without polling.
    """
    fifo = directory / "pids"
    os.mkfifo(fifo)
    done = directory / "finished"
    body = f'cat > /dev/null\nsleep 60 &\necho "$$ $!" > "{fifo}"\nwait\ntouch "{done}"\n'
    return write_hook(directory, body), fifo


async def read_pids(fifo: Path) -> list[int]:
    """The two pids the hook writes to ``fifo`` (waits for the hook to write them)."""
    text = await trio.to_thread.run_sync(fifo.read_text, abandon_on_cancel=True)
    return [int(n) for n in text.split()]


@linux_only
async def test_a_real_async_hook_process_and_its_children_are_gone_when_the_run_returns(
    tmp_path: Path,
) -> None:
    """A real ``async: true`` command hook that starts a child and would run for a
    minute: the call is answered without waiting for it, the run gives it the grace
    period once the call is done, then kills its process group; /proc shows neither
    the hook's shell nor its child alive, and the hook never got to finish."""
    command, fifo = pid_reporting_hook(tmp_path)
    guard = guarded(HookEntry("PreToolUse", "", CommandHook(command), run_async=True), grace=0.5)
    started: list[int] = []

    async def body(_input: object) -> str:
        started.extend(await read_pids(fifo))  # the hook runs while the call does
        return "answered"

    try:
        with trio.fail_after(RUN_LIMIT):
            outcome: RunOutcome = await run_tools(
                [ToolUse("toolu_1", "Probe", {})], [probe(body)], cwd=tmp_path, guard=guard
            )
        assert outcome.results[0].content == "answered"
        assert len(started) == 2, "the hook reported itself and its child"
        assert [pid for pid in started if alive(pid)] == []
        assert not (tmp_path / "finished").exists()
    finally:
        with reaping(started):
            pass


@linux_only
async def test_a_run_cancelled_from_outside_kills_its_async_hooks_at_once(
    tmp_path: Path,
) -> None:
    """Cancellation from an enclosing scope gives no grace (here a minute): the hook's
    process group is killed and reaped before the cancelled run returns."""
    command, fifo = pid_reporting_hook(tmp_path)
    guard = guarded(HookEntry("PreToolUse", "", CommandHook(command), run_async=True), grace=60)
    started: list[int] = []
    try:
        with trio.fail_after(RUN_LIMIT), trio.CancelScope() as outer:

            async def body(_input: object) -> str:
                started.extend(await read_pids(fifo))
                outer.cancel(reason="the application stops the run")
                await trio.sleep_forever()
                return "never"

            await run_tools([ToolUse("toolu_1", "Probe", {})], [probe(body)], guard=guard)
        assert outer.cancelled_caught
        assert len(started) == 2
        assert [pid for pid in started if alive(pid)] == []
    finally:
        with reaping(started):
            pass


async def test_outside_a_run_an_async_hook_runs_in_line_and_is_not_obeyed(
    tmp_path: Path,
) -> None:
    """Guard rails used directly (``authorize_call`` with no run around it) have no
    background to start the hook in: it runs with the others, its answer ignored."""
    ran: list[str] = []

    async def denies(data: HookInput) -> HookOutput:
        ran.append(data.tool_use_id)
        return HookOutput(permission_decision="deny")

    guard = guarded(async_entry("PreToolUse", denies))
    use = ToolUse("toolu_1", "Probe", {})
    verdict = await authorize_call(guard, probe(), use, {}, CallContext(use))
    assert verdict.allowed
    assert ran == ["toolu_1"]


async def test_a_command_async_hooks_json_message_is_delivered_later(tmp_path: Path) -> None:
    """The JSON ``systemMessage`` of a real async command hook reaches the next call."""
    answer = json.dumps({"systemMessage": "lint: 2 warnings"})
    command = write_hook(tmp_path, f"cat > /dev/null\necho '{answer}'\n")
    settings = {
        "hooks": {
            "PostToolUse": [{"hooks": [{"type": "command", "command": command, "async": True}]}]
        }
    }
    guard = GuardRails.from_settings(settings)
    with trio.fail_after(RUN_LIMIT):
        for use_id in ("toolu_1", "toolu_2"):
            later = await run_tools(
                [ToolUse(use_id, "Glob", {"pattern": "*"})],
                default_tools(),
                cwd=tmp_path,
                guard=guard,
            )
    texts = [(a.tool_use_id, a.text, a.hook_name) for a in later.attachments]
    assert ("toolu_2", "lint: 2 warnings", "PostToolUse:Glob") in texts


async def test_an_async_rewake_hooks_exit_2_stderr_reaches_the_model_later(
    tmp_path: Path,
) -> None:
    """``asyncRewake``: "If true, runs in the background and wakes Claude on exit code 2.
    Implies async."  The call is not blocked; the stderr rides with the next call."""
    command = write_hook(tmp_path, "cat > /dev/null\necho '3 tests failed' >&2\nexit 2\n")
    handler = {"type": "command", "command": command, "asyncRewake": True}
    settings = {"hooks": {"PostToolUse": [{"hooks": [handler]}]}}
    guard = GuardRails.from_settings(settings)
    (entry,) = guard.hooks.entries
    assert (entry.run_async, entry.rewake) == (True, True)
    with trio.fail_after(RUN_LIMIT):
        first = await run_tools(
            [ToolUse("toolu_1", "Glob", {"pattern": "*"})],
            default_tools(),
            cwd=tmp_path,
            guard=guard,
        )
        second = await run_tools(
            [ToolUse("toolu_2", "Glob", {"pattern": "*"})],
            default_tools(),
            cwd=tmp_path,
            guard=guard,
        )
    assert not first.results[0].is_error
    assert first.attachments == ()
    assert [(a.tool_use_id, a.text) for a in second.attachments] == [
        ("toolu_2", f"[{command}]: 3 tests failed\n")
    ]


@settings(max_examples=40, deadline=None)
@given(
    hooks=st.lists(st.sampled_from([0.5, 2.0, 7.0, "raises", "silent"]), min_size=1, max_size=5),
    grace=st.sampled_from([0.0, 1.0, 5.0]),
)
def test_async_hooks_end_with_their_run_and_each_message_arrives_once(
    hooks: list[float | str], grace: float
) -> None:
    """Whatever async hooks do (finish early or late, raise, say nothing): every call is
    answered, no hook is still running when its run returns, and what each hook that
    finished within the grace said arrives exactly once, with the next call."""
    running: list[int] = []

    async def hook(data: HookInput) -> HookOutput | None:
        index = int(data.tool_use_id.rpartition("_")[2])
        behaviour = hooks[index] if data.tool_use_id.startswith("first") else "silent"
        running.append(index)
        try:
            if behaviour == "raises":
                raise RuntimeError("the hook crashed")
            if behaviour == "silent":
                return None
            assert isinstance(behaviour, float)
            await trio.sleep(behaviour)
            return HookOutput(additional_context=f"done {index}")
        finally:
            running.remove(index)

    async def main() -> None:
        guard = guarded(async_entry("PostToolUse", hook), grace=grace)
        uses = [ToolUse(f"first_{n}", "Probe", {}) for n in range(len(hooks))]
        with trio.fail_after(600):
            first = await run_tools(uses, [probe()], guard=guard)
            assert [r.content for r in first.results] == ["x"] * len(hooks)
            assert running == []
            later = await run_tools([ToolUse("later_0", "Probe", {})], [probe()], guard=guard)
            again = await run_tools([ToolUse("again_0", "Probe", {})], [probe()], guard=guard)
        finished = [f"done {n}" for n, h in enumerate(hooks) if isinstance(h, float) and h < grace]
        assert sorted(a.text for a in later.attachments) == sorted(finished)
        assert again.attachments == ()

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
