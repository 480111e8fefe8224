"""``benchmarks/bench_tool_phase.py`` and ``bench_instructions.py``: every way answers every call.

Their figures are timings or instruction counts and are never asserted.  What
is: each way (trioexec's two paths and the three trio floors) turns N
tool_use blocks into N tool_results, the host floor hands results to its
caller a burst at a time through a host task, the table has a row per size
with every column, and the instruction counter's child runs and its parent
refuses clearly without valgrind.  Subprocess timeouts bound a hung run; they
are not timing assertions.
"""

from __future__ import annotations

import subprocess
import sys
from typing import TYPE_CHECKING

import pytest
import trio
import trio.testing
from helpers import BENCHMARKS, import_benchmark

from trioexec import ToolRegistry

pytestmark = pytest.mark.twin  # the benchmark lane: python -m pytest -m twin

if TYPE_CHECKING:
    from types import ModuleType

ROOT = BENCHMARKS.parent


@pytest.fixture
def phase(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    return import_benchmark(monkeypatch, "bench_tool_phase")


@pytest.fixture
def counter(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    return import_benchmark(monkeypatch, "bench_instructions")


@pytest.mark.parametrize("count", [1, 2, 3, 129])
def test_every_way_turns_each_tool_use_into_one_tool_result(phase: ModuleType, count: int) -> None:
    registry = ToolRegistry([phase.Echo()])
    text = phase.assistant_content(count)

    async def main() -> None:
        for way in phase.WAYS.values():  # each asserts the count of tool_results it built
            elapsed = await way(text, registry)
            assert elapsed >= 0

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


def test_the_host_floor_runs_its_calls_in_a_host_task_and_its_caller_waits_once_per_burst(
    phase: ModuleType,
) -> None:
    registry = ToolRegistry([phase.Echo()])
    text = phase.assistant_content(10)
    names: list[str] = []
    caller: list[trio.lowlevel.Task] = []

    class Steps(trio.abc.Instrument):
        def before_task_step(self, task: trio.lowlevel.Task) -> None:
            names.append("caller" if task in caller else task.name)

    async def main() -> None:
        await phase.host_floor(text, registry)  # warm-up
        caller.append(trio.lowlevel.current_task())
        instrument = Steps()
        trio.lowlevel.add_instrument(instrument)  # from here on: this step is not counted
        await phase.host_floor(text, registry)
        trio.lowlevel.remove_instrument(instrument)

    trio.run(main)
    hosts = [name for name in names if name.endswith(".host")]
    calls = [name for name in names if name.endswith(".one")]
    assert len(hosts) == 3  # starts the others, runs the first, leaves its nursery
    assert len(calls) == 9  # the first call ran in the host's own body
    # The caller, once it waits: a step to take the burst, one past the block's exit.
    assert names.count("caller") == 2
    assert len(names) == len(hosts) + len(calls) + 2


def test_the_table_has_a_row_per_size_with_every_column() -> None:
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / "bench_tool_phase.py"), "--sizes", "1", "3"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    header = next(line.split() for line in lines if line.split()[:1] == ["N"])
    assert "host" in header
    assert header[-1] == "host/floor"
    rows = [line.split() for line in lines if line[:6].strip().isdigit()]
    assert [row[0] for row in rows] == ["1", "3"]
    assert all(len(row) == 11 for row in rows)


@pytest.mark.parametrize("count", [1, 10, 1_000, 10_000])
def test_the_instruction_counter_differences_at_least_two_turns(
    counter: ModuleType, count: int
) -> None:
    first, second = counter.turns(count)
    assert first >= 1
    assert second - first >= 2
    assert (second - first) * count >= min(counter.CALLS_COUNTED, 2 * count)


def test_the_instruction_counters_child_runs_the_turns_it_is_given() -> None:
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / "bench_instructions.py"), "--child", "host", "3", "2"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr


def test_the_instruction_counter_says_it_needs_valgrind_when_there_is_none(
    counter: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(counter.shutil, "which", lambda name: None)
    monkeypatch.setattr(sys, "argv", ["bench_instructions.py", "--sizes", "1"])
    with pytest.raises(SystemExit, match="needs valgrind on the PATH"):
        counter.main()
