"""``benchmarks/bench_collector.py`` prints a row per size and way, and restores the collector.

Its figures are timings and are never asserted.  What is: the table has a row
for every way at every size, with both collector states; bad arguments are
refused; and a measurement leaves the process's collector as it found it (no
frozen heap, no callback left behind), even when a way fails.  The subprocess
timeout bounds a hung run; it is not a timing assertion.
"""

from __future__ import annotations

import gc
import subprocess
import sys
from typing import TYPE_CHECKING, Any

import pytest
import trio
from helpers import BENCHMARKS, import_benchmark

pytestmark = pytest.mark.twin  # the benchmark lane: python -m pytest -m twin

if TYPE_CHECKING:
    from types import ModuleType

ROOT = BENCHMARKS.parent


@pytest.fixture
def bench(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    return import_benchmark(monkeypatch, "bench_collector")


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(BENCHMARKS / "bench_collector.py"), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_prints_a_row_per_way_and_size_with_both_collector_states() -> None:
    done = _run("--sizes", "2", "3", "--rounds", "1", "--runs", "1")
    assert done.returncode == 0, done.stderr
    rows = [line.split() for line in done.stdout.splitlines() if line[:6].strip().isdigit()]
    assert [(row[0], row[1]) for row in rows] == [
        (size, way) for size in ("2", "3") for way in ("run_tools", "streaming", "floor")
    ]
    for row in rows:
        assert row[6] == "|"
        assert row[7] == "frozen:"
        assert len(row) == 12


@pytest.mark.parametrize(
    "args", [("--rounds", "0"), ("--runs", "-1"), ("--sizes", "0")], ids=lambda a: a[0]
)
def test_refuses_a_count_below_one(args: tuple[str, str]) -> None:
    done = _run(*args)
    assert done.returncode == 2
    assert "must be positive" in done.stderr


def test_measurement_leaves_the_collector_as_it_found_it(bench: ModuleType) -> None:
    callbacks = list(gc.callbacks)
    samples = trio.run(bench.measure, (2,), 1, 2)
    assert gc.get_freeze_count() == 0
    assert gc.callbacks == callbacks
    assert sorted(samples) == sorted(
        (2, way, frozen) for way in bench.SHOWN for frozen in (False, True)
    )
    assert all(len(runs) == 2 for runs in samples.values())


def test_a_failing_way_still_unfreezes_and_removes_its_callback(
    bench: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def broken(text: str, registry: Any) -> float:
        if gc.get_freeze_count():
            raise RuntimeError("broken while frozen")
        return 0.0

    monkeypatch.setitem(bench.WAYS, "floor", broken)
    callbacks = list(gc.callbacks)
    with pytest.raises(RuntimeError, match="broken while frozen"):
        trio.run(bench.measure, (2,), 1, 1)
    assert gc.get_freeze_count() == 0
    assert gc.callbacks == callbacks
