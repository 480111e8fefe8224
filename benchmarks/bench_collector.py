"""Where a large turn's time goes: the tool phase, and the cycle collector's share of it.

The ways and the workload are ``bench_tool_phase.py``'s (``run_tools``, the
streaming executor, and trio's floor: a nursery, ``json.loads`` and one dict
per call).  For each way and N this prints the µs per call, how much of it the
cycle collector took (timed through ``gc.callbacks``), how much of that went
to full collections, and how many full collections one turn triggered.

Each figure is printed twice: for the collector as a program finds it once
everything is imported, and after ``gc.freeze()`` has moved that startup heap
out of the collector's reach, which an application may choose to do once it
has imported what it needs (trioexec itself never touches the collector).  A
full collection walks every object the collector tracks: the turn's own and
every module's, so the second figure shows what the modules' part costs.  The
two states alternate in blocks in one process (``gc.unfreeze()`` in between),
as the ways alternate within each block, so that drift hits all of them alike::

    python benchmarks/bench_collector.py                 # N = 1,000 and 10,000
    python benchmarks/bench_collector.py --sizes 10000 --rounds 5
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from typing import Any

import trio
from bench_tool_phase import WAYS, Echo, assistant_content

from trioexec import ToolRegistry

SIZES = (1_000, 10_000)
"""How many calls one turn carries."""

SHOWN = ("run_tools", "streaming", "floor")
"""Which of bench_tool_phase's ways are measured."""

ROUNDS = 3
"""How many times the two collector states take turns."""

RUNS = 5
"""Timed runs per way, state and round (after one untimed run)."""


class CollectorClock:
    """Time spent in the cycle collector, read through ``gc.callbacks``."""

    def __init__(self) -> None:
        self.total = 0.0
        self.full = 0.0
        self.full_collections = 0
        self._began = 0.0

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._began = time.perf_counter()
            return
        spent = time.perf_counter() - self._began
        self.total += spent
        if info["generation"] == 2:
            self.full += spent
            self.full_collections += 1

    def reset(self) -> None:
        self.total = self.full = 0.0
        self.full_collections = 0


Sample = tuple[float, float, float, int]
"""One run: seconds in all, in the collector, in full collections; full collections."""


def set_state(frozen: bool) -> None:
    """Start a block from a collected heap, frozen or not."""
    gc.unfreeze()
    gc.collect()
    if frozen:
        gc.freeze()


async def measure(
    sizes: tuple[int, ...], rounds: int, runs: int
) -> dict[tuple[int, str, bool], list[Sample]]:
    """(N, way, frozen) -> the samples of its timed runs."""
    registry = ToolRegistry([Echo()])
    clock = CollectorClock()
    gc.callbacks.append(clock)
    samples: dict[tuple[int, str, bool], list[Sample]] = {}
    try:
        for count in sizes:
            text = assistant_content(count)
            for _ in range(rounds):
                for frozen in (False, True):
                    set_state(frozen)
                    for name in SHOWN:
                        way = WAYS[name]
                        await way(text, registry)  # not timed: the block starts in this state
                        for _ in range(runs):
                            clock.reset()
                            elapsed = await way(text, registry)
                            samples.setdefault((count, name, frozen), []).append(
                                (elapsed, clock.total, clock.full, clock.full_collections)
                            )
    finally:
        gc.callbacks.remove(clock)
        gc.unfreeze()
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    parser.add_argument("--runs", type=int, default=RUNS)
    args = parser.parse_args()
    if args.rounds < 1 or args.runs < 1 or min(args.sizes) < 1:
        parser.error("--sizes, --rounds and --runs must be positive")
    print(f"python {sys.version.split()[0]}, trio {trio.__version__}")
    samples = trio.run(measure, tuple(args.sizes), args.rounds, args.runs)
    print(
        f"{'N':>6}  {'way':<10}  {'µs/call':>8}  {'collector':>9}  {'full':>6}  {'full/run':>8}"
        f"  |  frozen: {'µs/call':>8}  {'collector':>9}  {'full':>6}  {'full/run':>8}"
    )
    for count in args.sizes:
        for name in SHOWN:
            cells = []
            for frozen in (False, True):
                rows = samples[count, name, frozen]
                total, collector, full = (
                    statistics.median(row[i] for row in rows) / count * 1e6 for i in (0, 1, 2)
                )
                per_run = statistics.mean(row[3] for row in rows)
                cells.append(f"{total:>8.1f}  {collector:>9.1f}  {full:>6.1f}  {per_run:>8.2f}")
            print(f"{count:>6}  {name:<10}  {cells[0]}  |  frozen: {cells[1]}")
    print(
        "(µs per call, medians; collector: time in the cycle collector, full: of it in full"
        " collections; full/run: full collections per turn, mean)"
    )


if __name__ == "__main__":
    main()
