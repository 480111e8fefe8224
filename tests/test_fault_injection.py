"""Fault injection on both paths: faulty tools, hooks, callbacks and observers (issue 17).

Hypothesis generates whole turns from :mod:`faults` (tools that raise
``Exception`` and ``BaseException`` subclasses, ignore cancellation, block in
worker threads, return garbage or huge output, raise from every hook point;
Python hooks and ``can_use_tool`` callbacks that hang or raise; observers that
raise; interrupt, abort, discard and enclosing deadlines at random instants),
runs each on a MockClock, and checks I1-I5, the task tree and what propagated.
A few examples run real command hooks on the real clock and check /proc.

``benchmarks/soak.py --examples N`` runs the same harness for long soaks.
"""

from __future__ import annotations

import math
import os
import sys
from typing import TYPE_CHECKING, Any

import attrs
import faults
import hypothesis
import pytest
import trio
from helpers import import_benchmark
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import trioexec
from trioexec import GuardRails, ResultUpdate, ToolResult
from trioexec.hooks import HookSet

if TYPE_CHECKING:
    from collections.abc import Iterator

EXAMPLES_TURNS = 1700
EXAMPLES_SESSIONS = 300
EXAMPLES_PROCESSES = 5


@pytest.fixture(autouse=True)
def _quiet() -> Iterator[None]:
    with faults.quiet_logs():
        yield


@settings(
    max_examples=EXAMPLES_TURNS,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(plan=faults.turn_plans())
def test_a_turn_of_faulty_tools_hooks_and_callbacks_keeps_every_invariant(
    plan: faults.TurnPlan,
) -> None:
    hypothesis.note(repr(plan.tool_uses()))
    observation = faults.run_virtual(plan)
    faults.check_observation(observation)


@settings(
    max_examples=EXAMPLES_SESSIONS,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(plans=faults.session_plans(max_turns=50), width=st.sampled_from([1, 3, 8]))
@example(  # an observer's interrupt racing a sibling's error in one instant
    plans=[
        faults.TurnPlan(
            path="batch",
            calls=(
                ("FaultC", (("safe", "yes"), ("validate", "error"))),
                ("FaultX", (("safe", "yes"), ("validate", "error"))),
                ("FaultC", ()),
            ),
            ops=(),
            guarded=False,
            observer=(7, "keyboard_interrupt"),
        )
    ],
    width=1,
)
def test_turns_sharing_a_process_each_answer_as_if_run_alone(
    plans: list[faults.TurnPlan], width: int
) -> None:
    hypothesis.note(repr([plan.tool_uses() for plan in plans]))
    faults.check_session(plans, width=width)


# -- the checker itself can fail ------------------------------------------------------------------


def _plain_plan(**changes: Any) -> faults.TurnPlan:
    calls = (("FaultB", ()), ("FaultC", (("safe", "yes"),)), ("FaultC", (("safe", "yes"),)))
    return attrs.evolve(faults.TurnPlan(path="batch", calls=calls, ops=()), **changes)


def test_the_checker_accepts_a_clean_run() -> None:
    faults.check_observation(faults.run_virtual(_plain_plan()))


def test_the_checker_sees_a_missing_answer() -> None:
    observation = faults.run_virtual(_plain_plan())
    observation.updates.pop()
    with pytest.raises(AssertionError, match=r"unanswered|disagree"):
        faults.check_observation(observation)


def test_the_checker_sees_results_out_of_order() -> None:
    observation = faults.run_virtual(_plain_plan())
    observation.updates.reverse()
    with pytest.raises(AssertionError):
        faults.check_observation(observation)


def test_the_checker_sees_a_wrong_real_answer() -> None:
    observation = faults.run_virtual(_plain_plan())
    observation.updates[0] = ResultUpdate(ToolResult("t0", "not what the tool returned"))
    with pytest.raises(AssertionError):
        faults.check_observation(observation)


def test_the_checker_sees_a_swallowed_base_exception() -> None:
    plan = _plain_plan(calls=(("FaultB", (("outcome", "system_exit"),)),))
    observation = faults.run_virtual(plan)
    assert isinstance(observation.propagated, SystemExit)
    observation.propagated = None
    with pytest.raises(AssertionError, match="swallowed"):
        faults.check_observation(observation)


def test_the_checker_sees_an_unsafe_call_beside_another() -> None:
    observation = faults.run_virtual(_plain_plan())
    began = [i for i, e in enumerate(observation.events) if e.kind == "call_began"]
    first_end = next(i for i, e in enumerate(observation.events) if e.kind == "call_ended")
    # Move the second call's start before the unsafe first call ended.
    event = observation.events.pop(began[1])
    observation.events.insert(first_end, event)
    with pytest.raises(AssertionError, match="beside"):
        faults.check_observation(observation)


def test_the_checker_sees_a_task_left_behind() -> None:
    observation = faults.run_virtual(_plain_plan())
    observation.leaked_tasks = ["a task"]
    with pytest.raises(AssertionError, match="left behind"):
        faults.check_observation(observation)


# -- real processes: command hooks that misbehave -----------------------------------------------

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

HOOK_SCRIPTS = {
    "hang": "echo $$ >> {pids}; sleep 30",
    "orphan": "sleep 30 & echo $! >> {pids}; echo $$ >> {pids}; exit 0",
    "exit2": "echo blocked >&2; exit 2",
    "exit1": "echo failed >&2; exit 1",
    "nonjson": "echo '{{not json'",
    "megabytes": "head -c 3000000 /dev/zero | tr '\\0' x",
}


@linux_only
@settings(max_examples=EXAMPLES_PROCESSES, deadline=None)
@given(
    pre=st.sampled_from(sorted(HOOK_SCRIPTS)),
    post=st.sampled_from(sorted(HOOK_SCRIPTS)),
    path=st.sampled_from(["batch", "stream"]),
    stop=st.sampled_from([None, "abort", "interrupt"]),
    at=st.sampled_from([0.0, 0.2]),
)
# The hook shell forks its orphan and exits while the abort's cleanup reads /proc.
@example(pre="orphan", post="nonjson", path="batch", stop="abort", at=0.0)
def test_command_hooks_that_hang_fail_or_flood_leave_no_process_behind(
    tmp_path_factory: pytest.TempPathFactory,
    pre: str,
    post: str,
    path: str,
    stop: str | None,
    at: float,
) -> None:
    pids = tmp_path_factory.mktemp("hooks") / "pids"
    hooks = (
        HookSet()
        .with_command_hook("PreToolUse", None, HOOK_SCRIPTS[pre].format(pids=pids), timeout=0.5)
        .with_command_hook("PostToolUse", None, HOOK_SCRIPTS[post].format(pids=pids), timeout=0.5)
    )
    calls = (
        ("FaultB", (("sleep", 0.1),)),
        ("FaultC", (("safe", "yes"), ("outcome", "error"))),
        ("FaultX", (("safe", "yes"), ("command", "ls"))),
    )
    ops: tuple[faults.Op, ...] = ((at, stop, 0),) if stop is not None else ()
    if path == "stream":
        ops = ((0.0, "add", 0), (0.0, "add", 1), (0.0, "add", 2), *ops)
    plan = faults.TurnPlan(path=path, calls=calls, ops=ops)  # type: ignore[arg-type]
    children_before = _children()

    async def main() -> faults.Observation:
        with trio.fail_after(20):
            return await faults.run_plan(plan, guard=GuardRails(hooks=hooks))

    observation = trio.run(main)
    faults.check_observation(observation)
    assert _children() <= children_before, "a hook's process outlived the run"
    started = [int(line) for line in pids.read_text().split()] if pids.exists() else []
    alive = faults.live_processes()
    assert not [pid for pid in started if pid in alive], "a hook's process outlived the run"


def _children() -> set[int]:
    me = os.getpid()
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as stat:
                    fields = stat.read().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == me and fields[0] != b"Z":
                found.add(int(entry))
    return found


def test_harness_sizes_add_up_to_the_ci_budget() -> None:
    assert EXAMPLES_TURNS + EXAMPLES_SESSIONS + EXAMPLES_PROCESSES >= 2000
    assert math.isfinite(faults.HOOK_TIMEOUT)


# -- Ctrl-C at a random line of trioexec's own code (a child process per example) ---------------


@pytest.mark.parametrize("seed", [0, 1, 2, 5], ids=["bash", "child-task", "batch", "streaming"])
def test_ctrl_c_at_a_random_line_of_trioexec_leaves_every_call_answered_and_nothing_running(
    monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    """The soak's SIGINT kind at CI size: one example per turn shape (``soak.py --sigint``)."""
    soak = import_benchmark(monkeypatch, "soak")
    report = soak.sigint_example(seed)
    assert report["violations"] == [], report
    assert report["ended"] in ("KeyboardInterrupt", "returned")


def test_the_sigint_checker_sees_an_unanswered_call(monkeypatch: pytest.MonkeyPatch) -> None:
    """A run that answers nothing is reported (the checker can fail)."""
    child = import_benchmark(monkeypatch, "_sigint_child")
    monkeypatch.setattr(child, "_uses", lambda shape: [trioexec.ToolUse("x", "Safe", {})])
    monkeypatch.setattr(child, "_run", lambda shape, press: ("returned", [], [], ["x"], 10))
    monkeypatch.setattr(sys, "argv", ["_sigint_child.py", "3"])
    printed: list[str] = []
    monkeypatch.setattr("builtins.print", lambda text: printed.append(text))
    child.main(3)
    assert "x answered 0 times" in printed[0]
