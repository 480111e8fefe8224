"""trio against asyncio, side by side: trioexec, its asyncio twin, both loops' floors, the peers.

One command measures every workload on every runtime in one process and
writes the report with its plot::

    python benchmarks/compare.py                 # full run, into docs/
    python benchmarks/compare.py --quick         # seconds, small sizes (for CI)
    python benchmarks/compare.py --sizes 10 1000 --no-peers --out /tmp/report.md

The runtimes, each on the same workloads:

* ``trioexec`` (``run_tools`` and the streaming executor) and raw ``trio``;
* the asyncio twin (``benchmarks/asyncio_twin/``, where importable) and raw
  ``asyncio``;
* the asyncio agent frameworks of ``benchmarks/peers.py`` where installed
  (``pip install -e '.[bench]'``), on the tool phase only.

The workloads: tool-phase cost per call at N = 1 ... 10,000; add -> start and
progress latency; time to answer every sibling after a cascading error
(N = 100, 1,000); memory per in-flight call (tracemalloc); lines of
cancellation and teardown code.  Times are the process's CPU time by default
(``--clock cpu``: a loaded machine does not inflate them; ``--clock wall`` for
wall time); every row of every table is on that one clock, and each table says
which, with the machine's load average while it was measured.  A ratio whose
repeated runs disagree by more than 20% is flagged.  Writes the report and its
plot (cost per call against N, log-log) to ``--out``: a file ``FILE.md`` (the
plot beside it as ``FILE.svg``) or a directory (``trio-vs-asyncio.md`` and
``.svg``), and with ``--json FILE`` the raw figures.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import gc
import json
import math
import os
import platform
import statistics
import sys
import time
import types
from collections.abc import Awaitable, Callable, Iterable
from importlib import metadata
from pathlib import Path
from typing import Any, TypeVar

ROOT = Path(__file__).resolve().parent.parent
for _entry in (ROOT / "benchmarks", ROOT):
    if str(_entry) not in sys.path:
        sys.path.insert(0, str(_entry))

import _compare_asyncio  # noqa: E402
import _compare_lines  # noqa: E402
import _compare_trio  # noqa: E402
import _compare_twin  # noqa: E402
import attrs  # noqa: E402
import bench_streaming  # noqa: E402
import bench_tool_phase  # noqa: E402
import peers  # noqa: E402
import trio  # noqa: E402
from _compare_doc import Latency, Results, render  # noqa: E402
from _compare_svg import log_log_plot  # noqa: E402
from bench_tool_phase import assistant_content  # noqa: E402

T = TypeVar("T")

WORKLOADS = tuple(
    getattr(module, table)
    for module in (_compare_trio, _compare_twin, _compare_asyncio)
    for table in ("TOOL_PHASE", "ADD_TO_START", "PROGRESS", "CASCADE", "MEMORY")
)
"""Every timed function, by table, of every runtime."""

SIZES = (1, 10, 100, 1_000, 10_000)
QUICK_SIZES = (1, 10, 100)
CASCADE_RUNS = {100: 40, 1_000: 10}
QUICK_CASCADE_RUNS = {100: 3, 1_000: 1}


CLOCKS = {
    "cpu": (
        time.process_time,
        "the process's CPU time (`time.process_time`), which other processes' load does not"
        " inflate; no workload here waits on I/O or a timer, so on a quiet machine it is the"
        " wall time",
    ),
    "wall": (time.perf_counter, "wall time (`time.perf_counter`)"),
}


MEASURING_MODULES = (
    _compare_trio,
    _compare_asyncio,
    _compare_twin,
    bench_streaming,
    bench_tool_phase,
    peers,
)
"""Every module whose functions read the clock for a table (the workloads' own and the
ones they import theirs from: trioexec's latency and cascade rows come from
``bench_streaming``)."""


def use_clock(name: str) -> str:
    """Time every workload with clock ``name`` ("cpu" or "wall"); returns its description.

    The measuring modules read ``time.perf_counter()``; for "cpu" each of them gets a
    ``time`` whose ``perf_counter`` is ``time.process_time``, so every row of every table
    is on the one clock the report names.

    Raises:
        RuntimeError: a workload comes from a module not in :data:`MEASURING_MODULES`,
            or a measuring module holds its own ``perf_counter`` (it would keep the
            wall clock and mix two clocks in one table).
    """
    clock, description = CLOCKS[name]
    shim = types.SimpleNamespace(perf_counter=clock)
    for module in MEASURING_MODULES:
        if getattr(module, "perf_counter", None) is not None:
            raise RuntimeError(
                f"{module.__name__} reads perf_counter directly; use time.perf_counter"
            )
        module.time = shim  # type: ignore[attr-defined]
    for table in WORKLOADS:
        for run in table.values():
            home = sys.modules.get(run.__module__)
            if home not in MEASURING_MODULES:
                raise RuntimeError(
                    f"{run.__module__}.{run.__name__} is timed but its module is not shimmed"
                )
    return description


@attrs.frozen
class Way:
    """One runtime's function for one workload, and the loop it runs on."""

    name: str
    loop: str  # "trio" or "asyncio"
    run: Callable[..., Awaitable[Any]]


def _ways(*tables: tuple[str, dict[str, Callable[..., Awaitable[Any]]]]) -> list[Way]:
    return [Way(name, loop, run) for loop, table in tables for name, run in table.items()]


def on_loop(loop: str, run: Callable[..., Awaitable[T]], *args: object) -> T:
    """Run ``run(*args)`` in a fresh trio or asyncio event loop and return its value."""
    if loop == "trio":
        return trio.run(run, *args)
    return asyncio.run(run(*args))  # type: ignore[arg-type]


def _by_loop(ways: Iterable[Way], flip: bool) -> list[tuple[str, list[Way]]]:
    groups: dict[str, list[Way]] = {}
    for way in ways:
        groups.setdefault(way.loop, []).append(way)
    order = sorted(groups, reverse=flip)
    return [(loop, groups[loop]) for loop in order]


async def _repeat(ways: list[Way], text: str, times: int, blocks: bool) -> dict[str, list[float]]:
    """``times`` timed runs of each way: alternating run by run, or (``blocks``) each way
    back to back after one untimed run, so that it pays the cycle collector for its own
    garbage and nobody else's (see ``bench_tool_phase``)."""
    samples: dict[str, list[float]] = {way.name: [] for way in ways}
    if not blocks:
        for _ in range(times):
            for way in ways:
                samples[way.name].append(await way.run(text))
        return samples
    for way in ways:
        await way.run(text)
        for _ in range(times):
            samples[way.name].append(await way.run(text))
    return samples


ROUNDS: dict[str, list[float]] = {}
"""``table|row|way`` -> the figure of each repeated run (round), for the spread flags."""


def _rounds(key: str, values: Iterable[float]) -> None:
    ROUNDS.setdefault(key, []).extend(values)


def tool_phase(
    ways: list[Way], sizes: tuple[int, ...], budget: float
) -> dict[int, dict[str, float]]:
    """N -> way -> median µs per call; the loops alternate, round by round.

    Each round's median goes to :data:`ROUNDS` (``tool_phase|N|way``).
    """
    figures: dict[int, dict[str, float]] = {}
    for count in sizes:
        text = assistant_content(count)
        per_round = 0.0
        for loop, group in _by_loop(ways, flip=False):
            on_loop(loop, _repeat, group, text, 1, False)  # warm-up
            first = on_loop(loop, _repeat, group, text, 1, False)
            per_round += sum(values[0] for values in first.values())
        repeats = max(5, min(2_000, int(budget / max(per_round, 1e-6))))
        rounds = min(repeats, 10)
        times = math.ceil(repeats / rounds)
        samples: dict[str, list[float]] = {way.name: [] for way in ways}
        for index in range(rounds):
            for loop, group in _by_loop(ways, flip=index % 2 == 1):
                got = on_loop(loop, _repeat, group, text, times, count >= 1_000)
                for name, values in got.items():
                    samples[name].extend(values)
                    _rounds(f"tool_phase|{count}|{name}", [statistics.median(values) / count * 1e6])
        figures[count] = {
            name: statistics.median(values) / count * 1e6 for name, values in samples.items()
        }
        print(
            f"  tool phase N={count:,}: {repeats} repeats in {rounds} rounds,"
            f" load {os.getloadavg()[0]:.2f}",
            file=sys.stderr,
        )
    return figures


def latencies(
    ways: list[Way], count: int, rounds: int = 4, *, table: str = "latency"
) -> dict[str, Latency]:
    """way -> latency summary of ``count`` samples, taken in alternating rounds.

    Each round's median goes to :data:`ROUNDS` (``{table}|way``).
    """
    samples: dict[str, list[float]] = {way.name: [] for way in ways}
    for way in ways:  # warm-up
        on_loop(way.loop, way.run, max(1, count // 10))
    for index in range(rounds):
        for way in ways if index % 2 == 0 else reversed(ways):
            gc.collect()
            got = on_loop(way.loop, way.run, max(1, count // rounds))
            samples[way.name].extend(got)
            _rounds(f"{table}|{way.name}", [statistics.median(got)])
    return {name: Latency.of(values) for name, values in samples.items()}


def cascades(ways: list[Way], runs: dict[int, int]) -> dict[int, dict[str, float]]:
    """N -> way -> median ms to answer (or join) every sibling after a cascading error."""
    figures: dict[int, dict[str, float]] = {}
    for count, times in runs.items():
        samples: dict[str, list[float]] = {way.name: [] for way in ways}
        for way in ways:
            on_loop(way.loop, way.run, count)  # warm-up
        for index in range(times):
            for way in ways if index % 2 == 0 else reversed(ways):
                gc.collect()
                value = on_loop(way.loop, way.run, count)
                samples[way.name].append(value)
                _rounds(f"cascade|{count}|{way.name}", [value])
        figures[count] = {name: statistics.median(values) for name, values in samples.items()}
    return figures


def memory(ways: list[Way], count: int, runs: int = 3) -> dict[str, float]:
    """way -> median bytes traced per in-flight call."""
    figures: dict[str, float] = {}
    for way in ways:
        values = []
        for _ in range(runs):
            gc.collect()
            values.append(on_loop(way.loop, way.run, count))
        figures[way.name] = statistics.median(values)
    return figures


def line_counts() -> dict[str, dict[str, _compare_lines.LineCount]]:
    """runtime -> file -> counts, by the rule of ``_compare_lines``."""
    counts = {"trioexec": _compare_lines.count_files(ROOT, _compare_lines.TRIOEXEC_FILES)}
    if _compare_twin.AVAILABLE:
        counts["twin"] = _compare_lines.count_files(ROOT, _compare_twin.FILES)
        shared = _compare_lines.shared_parts(
            ROOT, _compare_twin.FILES, _compare_lines.TRIOEXEC_FILES
        )
        counts["twin"].update({f"{name} {SHARED}": count for name, count in shared.items()})
    return counts


SHARED = "(shared)"

LINES_RULE = (
    "Counted by `benchmarks/_compare_lines.py` over each runtime's orchestrator files (the"
    " pure parts both runtimes share, such as partitioning, validation, the gate's ordering"
    " rules, permission rules and result handling, are counted for neither). A **code line**"
    " is a physical line with a token that is not a comment, a line break or indentation and"
    " not part of a docstring. A **cancellation/teardown line** is a code line with a name"
    " token (identifier or keyword; never text inside a string) matching, case-insensitive,"
    " `cancel|shield|move_on|fail_after|fail_at|deadline|timeout|grace|watchdog|nursery|"
    "taskgroup|task_group|exceptiongroup|finally|aclose|teardown|uncancel`. The twin"
    " subclasses or imports some of trioexec's orchestrator: those parts count for it too"
    " (marked *shared*): each top-level class or function of trioexec's files the twin"
    " imports at run time, less the methods its subclasses override, plus the top-level"
    " functions of the same file they name, transitively."
)


CLOCK_NAMES = {"cpu": "CPU time (`time.process_time`)", "wall": "wall time (`time.perf_counter`)"}


def machine(
    load_before: float, load_after: float, clock: str, clock_name: str = ""
) -> dict[str, str]:
    """What the report says about where it ran."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    installed = []
    for dist in ("pydantic-ai-slim", "openai-agents", "langgraph"):
        try:
            installed.append(f"{dist} {metadata.version(dist)}")
        except metadata.PackageNotFoundError:
            continue
    cores = os.cpu_count() or 1
    busiest = max(load_before, load_after)
    if busiest < 1.5:  # the run itself keeps one core busy
        note = f"a quiet machine (a load of {busiest:.1f} on {cores} cores, this run included)"
    else:
        note = (
            f"the machine was shared (a load of {busiest:.1f} on {cores} cores): other"
            " processes competed for the cores and their caches, so the figures are noisier"
            " than on a quiet machine, and the ratios are what to read"
        )
    return {
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu": cpu,
        "cores": str(cores),
        "platform": platform.platform(),
        "python": platform.python_version(),
        **_compare_trio.versions(),
        "peers": "peers: " + (", ".join(installed) if installed else "none installed"),
        "load_before": f"{load_before:.2f}",
        "load_after": f"{load_after:.2f}",
        "load_note": note,
        "clock": clock,
        "clock_name": clock_name,
    }


def plot(results: Results) -> str:
    """The SVG of tool-phase cost per call against N."""
    series: dict[str, list[tuple[float, float]]] = {}
    for count, row in sorted(results.tool_phase.items()):
        for name, value in row.items():
            series.setdefault(name, []).append((count, value))
    for name, row in results.peers.items():
        series[name] = sorted(row.items())
    asyncio_side = ("twin", "raw asyncio", *results.peers)
    return log_log_plot(
        series,
        title="Tool-phase cost per call (medians, one run)",
        x_label="calls in the turn (N)",
        y_label="µs per call",
        dashed_prefixes=asyncio_side,
        note="solid: trio; dashed: asyncio",
        colours={
            "trioexec run_tools": "#1f77b4",
            "twin run_tools": "#1f77b4",
            "trioexec streaming": "#d62728",
            "twin streaming": "#d62728",
            "raw trio": "#2ca02c",
            "raw asyncio": "#2ca02c",
        },
    )


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes and few runs")
    parser.add_argument("--sizes", type=int, nargs="+", help="tool-phase N (default 1 ... 10,000)")
    parser.add_argument(
        "--peer-sizes", type=int, nargs="+", help="N for the peers (default: --sizes)"
    )
    parser.add_argument("--no-peers", action="store_true", help="leave the peers out")
    parser.add_argument("--cascade-sizes", type=int, nargs="+", help="default 100 1000")
    parser.add_argument("--memory-calls", type=int, help="in-flight calls (default 1,000)")
    parser.add_argument("--samples", type=int, help="latency samples per runtime (default 2,000)")
    parser.add_argument("--budget", type=float, help="seconds per tool-phase size (default 1.2)")
    parser.add_argument(
        "--clock", choices=sorted(CLOCKS), default="cpu", help="what times are (default cpu)"
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=ROOT / "docs",
        help="the report's file (FILE.md; the plot goes beside it as FILE.svg) or a directory"
        " (default docs/: trio-vs-asyncio.md and .svg)",
    )
    parser.add_argument("--json", type=Path, help="also write the raw figures here")
    return parser.parse_args(argv)


def run(args: argparse.Namespace, command: str) -> Results:
    """Measure everything ``args`` asks for."""
    quick = args.quick
    sizes = tuple(args.sizes or (QUICK_SIZES if quick else SIZES))
    default_runs = QUICK_CASCADE_RUNS if quick else CASCADE_RUNS
    cascade_runs = (
        {n: default_runs.get(n, 3 if quick else 10) for n in args.cascade_sizes}
        if args.cascade_sizes
        else default_runs
    )
    memory_calls = args.memory_calls or (200 if quick else 1_000)
    samples = args.samples or (200 if quick else 2_000)
    budget = args.budget or (0.15 if quick else 1.2)
    clock = use_clock(args.clock)
    started = time.perf_counter()
    load_before = os.getloadavg()[0]
    say = lambda what: print(what, file=sys.stderr)  # noqa: E731
    loads: dict[str, tuple[float, float]] = {}
    ROUNDS.clear()

    def section(name: str) -> None:
        """Close the previous table's load window and open ``name``'s."""
        now = os.getloadavg()[0]
        for key, (before, after) in list(loads.items()):
            if math.isnan(after):
                loads[key] = (before, now)
        if name:
            loads[name] = (now, math.nan)
            say(f"{name} ... (load average {now:.2f})")

    section("tool phase")
    phase = tool_phase(
        _ways(
            ("trio", _compare_trio.TOOL_PHASE),
            ("asyncio", _compare_twin.TOOL_PHASE),
            ("asyncio", _compare_asyncio.TOOL_PHASE),
        ),
        sizes,
        budget,
    )
    section("latencies")
    add_to_start = latencies(
        _ways(
            ("trio", _compare_trio.ADD_TO_START),
            ("asyncio", _compare_twin.ADD_TO_START),
            ("asyncio", _compare_asyncio.ADD_TO_START),
        ),
        samples,
        table="add_to_start",
    )
    progress = latencies(
        _ways(
            ("trio", _compare_trio.PROGRESS),
            ("asyncio", _compare_twin.PROGRESS),
            ("asyncio", _compare_asyncio.PROGRESS),
        ),
        samples,
        table="progress",
    )
    section("cascades")
    cascade = cascades(
        _ways(
            ("trio", _compare_trio.CASCADE),
            ("asyncio", _compare_twin.CASCADE),
            ("asyncio", _compare_asyncio.CASCADE),
        ),
        cascade_runs,
    )
    section("memory")
    held = memory(
        _ways(
            ("trio", _compare_trio.MEMORY),
            ("asyncio", _compare_twin.MEMORY),
            ("asyncio", _compare_asyncio.MEMORY),
        ),
        memory_calls,
    )
    peer_figures: dict[str, dict[int, float]] = {}
    if not args.no_peers:
        section("peers")
        peer_figures = peers.measure(tuple(args.peer_sizes or sizes))
    section("")
    load_after = os.getloadavg()[0]
    return Results(
        machine=machine(load_before, load_after, clock, CLOCK_NAMES[args.clock]),
        command=command,
        twin=_compare_twin.AVAILABLE,
        tool_phase=phase,
        peers=peer_figures,
        add_to_start=add_to_start,
        progress=progress,
        cascade=cascade,
        cascade_runs=cascade_runs,
        memory=held,
        memory_calls=memory_calls,
        lines=line_counts(),
        elapsed=time.perf_counter() - started,
        rounds={key: list(values) for key, values in ROUNDS.items()},
        loads=loads,
    )


def report_paths(out: Path) -> tuple[Path, Path]:
    """Where the report and its plot go: ``out`` is a file (``.md``: the plot beside it,
    ``.svg``) or a directory (``trio-vs-asyncio.md`` and ``.svg`` in it).

    A path ending in ``.md`` is always a file; an existing directory, or a path with
    no suffix, is a directory.
    """
    if out.suffix == ".md" or (out.suffix and not out.is_dir()):
        return out, out.with_suffix(".svg")
    return out / "trio-vs-asyncio.md", out / "trio-vs-asyncio.svg"


def main(argv: list[str] | None = None) -> None:
    """Measure, then write the report, the plot and (with ``--json``) the raw figures."""
    args = parse_args(argv)
    shown = " ".join(sys.argv[1:] if argv is None else argv)
    command = f"python benchmarks/compare.py {shown}".rstrip()
    doc, svg = report_paths(args.out)
    results = run(args, command)
    doc.parent.mkdir(parents=True, exist_ok=True)
    doc.write_text(render(results, lines_rule=LINES_RULE, plot_name=svg.name), encoding="utf-8")
    svg.write_text(plot(results), encoding="utf-8")
    if args.json:
        args.json.write_text(
            json.dumps(attrs.asdict(results), indent=2, default=str), encoding="utf-8"
        )
    print(f"wrote {doc} and {svg}")


if __name__ == "__main__":
    main()
