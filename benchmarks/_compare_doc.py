"""The Markdown report ``compare.py`` writes: tables of one run's figures and their reading.

Every sentence that compares two figures is computed from them (the word
"slower" or "faster" comes from the ratio), so a regenerated report never
says what its own tables contradict.
"""

from __future__ import annotations

import statistics

import attrs
from _compare_lines import LineCount

TRIO_BATCH, TRIO_STREAM, RAW_TRIO = "trioexec run_tools", "trioexec streaming", "raw trio"
TWIN_BATCH, TWIN_STREAM, RAW_ASYNCIO = "twin run_tools", "twin streaming", "raw asyncio"


@attrs.frozen
class Latency:
    """Median and 90th percentile of a latency, in µs, over ``samples`` samples."""

    median: float
    p90: float
    samples: int

    @classmethod
    def of(cls, values: list[float]) -> Latency:
        """Summarise raw samples."""
        p90 = statistics.quantiles(values, n=10)[-1] if len(values) > 1 else values[0]
        return cls(statistics.median(values), p90, len(values))


@attrs.frozen
class Results:
    """Everything one run of ``compare.py`` measured."""

    machine: dict[str, str]
    command: str
    twin: bool
    tool_phase: dict[int, dict[str, float]]
    """N -> way -> median µs per call."""
    peers: dict[str, dict[int, float]]
    """framework -> N -> median µs per call."""
    add_to_start: dict[str, Latency]
    progress: dict[str, Latency]
    cascade: dict[int, dict[str, float]]
    """N -> way -> median ms."""
    cascade_runs: dict[int, int]
    memory: dict[str, float]
    """way -> bytes per in-flight call."""
    memory_calls: int
    lines: dict[str, dict[str, LineCount]]
    """runtime -> file -> counts."""
    elapsed: float
    rounds: dict[str, list[float]] = attrs.field(factory=dict)
    """``table|row|way`` -> the figure of each repeated run (for the spread flags)."""
    loads: dict[str, tuple[float, float]] = attrs.field(factory=dict)
    """section -> the 1-minute load average when it started and when it ended."""


SPREAD_LIMIT = 0.20
"""A ratio is flagged when its repeated runs' ratios differ by more than this (max/min - 1)."""

FLAG = "⚠"


def _flag(results: Results, top: str, bottom: str) -> str:
    """``FLAG`` when the per-run ratios of ``top`` over ``bottom`` (keys of ``rounds``)
    disagree by more than :data:`SPREAD_LIMIT`, else ``""``."""
    tops, bottoms = results.rounds.get(top), results.rounds.get(bottom)
    if not tops or not bottoms or len(tops) != len(bottoms) or len(tops) < 2:
        return ""
    ratios = [t / b for t, b in zip(tops, bottoms, strict=True) if b > 0]
    if len(ratios) < 2 or min(ratios) <= 0:
        return ""
    return f" {FLAG}" if max(ratios) / min(ratios) - 1 > SPREAD_LIMIT else ""


def _flagged_ratio(results: Results, table: str, top: str, bottom: str) -> str:
    """The ratio cell of ``top`` over ``bottom`` in ``table`` (``tool_phase|N``, ...)."""
    values = results.rounds
    top_values, bottom_values = values.get(f"{table}|{top}"), values.get(f"{table}|{bottom}")
    top_median = statistics.median(top_values) if top_values else None
    bottom_median = statistics.median(bottom_values) if bottom_values else None
    cell = _ratio(top_median, bottom_median)
    return cell + _flag(results, f"{table}|{top}", f"{table}|{bottom}") if cell != "–" else cell


def _clock_line(results: Results, *sections: str, runs: str) -> list[str]:
    """The sentence under a table: its clock, its repeated runs, the load while it ran."""
    loads = [results.loads[s] for s in sections if s in results.loads]
    load = ""
    if loads:
        start, end = loads[0][0], loads[-1][1]
        load = f"; load average {start:.2f} when these runs began, {end:.2f} when they ended"
    clock = results.machine.get("clock_name", "")
    flagged = (
        f" {FLAG}: the ratio's repeated runs disagree by more than {SPREAD_LIMIT:.0%}"
        " (max/min of the per-run ratios); read it with care."
    )
    return [f"Clock: {clock}. {runs[:1].upper()}{runs[1:]}{load}.{flagged}"]


def _ratio(top: float | None, bottom: float | None) -> str:
    if top is None or bottom is None or bottom <= 0:
        return "–"
    return f"{top / bottom:.2f}"


def _num(value: float | None, digits: int = 1) -> str:
    return "–" if value is None else f"{value:,.{digits}f}"


def _versus(subject: str, ratio: float, other: str) -> str:
    """'<subject> is 1.8x slower than <other>' from ``ratio`` = subject / other (time)."""
    if ratio > 1.05:
        return f"{subject} is {ratio:.2f}× slower than {other}"
    if ratio < 1 / 1.05:
        return f"{subject} is {1 / ratio:.2f}× faster than {other}"
    return f"{subject} is about as fast as {other} ({ratio:.2f}×)"


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    rule = "|---|" + "".join("---:|" for _ in header[1:])
    lines = ["| " + " | ".join(header) + " |", rule]
    lines.extend("| " + " | ".join(row) + " |" for row in rows)
    return lines


def _machine(results: Results) -> list[str]:
    m = results.machine
    return [
        f"Generated by `{results.command}` in {results.elapsed:.0f} s on {m['date']}.",
        "",
        f"* machine: {m['cpu']}, {m['cores']} cores, {m['platform']}",
        f"* python {m['python']}, trio {m['trio']}, trioexec {m['trioexec']}; {m['peers']}",
        f"* load average (1 min) {m['load_before']} before the run, {m['load_after']} after:"
        f" {m['load_note']}",
        f"* every time is {m['clock']}; each table names its clock and the load while it ran",
        "",
        "Every figure is a median of repeated runs; the runtimes were measured alternately in"
        " one process so that drift and load hit them alike (from N = 1,000 on, the tool phase"
        " in blocks of one runtime's runs, so that each pays the cycle collector for its own"
        " garbage). Read the **ratios**: the absolute figures move with the machine and its"
        " load, the ratios far less.",
    ]


def _runtimes(results: Results) -> list[str]:
    twin = (
        "* **twin**: the asyncio twin in `benchmarks/asyncio_twin/`: the same orchestrator"
        " (batch path, streaming executor, gate, cancellation reasons, grace period, time"
        " limits) on `asyncio.TaskGroup`, `asyncio.timeout` and queues, with cancel scopes"
        " rebuilt for asyncio; it reuses trioexec's pure parts."
        if results.twin
        else "* **twin**: the asyncio twin (`benchmarks/asyncio_twin/`) was not importable in"
        " this run; its columns are absent."
    )
    peers = ", ".join(results.peers) or "none installed (`pip install -e '.[bench]'`)"
    return [
        "## What runs",
        "",
        "* **trioexec**: `run_tools` (the batch path) and `open_streaming_executor`.",
        twin,
        "* **raw trio** and **raw asyncio**: each workload's bare shape on the loop itself,"
        " with no orchestrator: the floor under any runtime on that loop.",
        f"* **peers** (asyncio agent frameworks, tool phase only): {peers}.",
    ]


def _floors(results: Results) -> list[str]:
    sizes = sorted(results.tool_phase)
    rows = [
        [
            f"spawn + join, tool-phase shape, N = {n:,} (µs per call)",
            _num(results.tool_phase[n].get(RAW_TRIO), 2),
            _num(results.tool_phase[n].get(RAW_ASYNCIO), 2),
            _ratio(results.tool_phase[n].get(RAW_TRIO), results.tool_phase[n].get(RAW_ASYNCIO))
            + _flag(results, f"tool_phase|{n}|{RAW_TRIO}", f"tool_phase|{n}|{RAW_ASYNCIO}"),
        ]
        for n in sizes
    ]
    for label, key, table in (
        ("add → start (µs)", "add_to_start", results.add_to_start),
        ("send → receive (µs)", "progress", results.progress),
    ):
        trio_l, aio_l = table.get(RAW_TRIO), table.get(RAW_ASYNCIO)
        rows.append(
            [
                label,
                _num(trio_l and trio_l.median, 2),
                _num(aio_l and aio_l.median, 2),
                _ratio(trio_l and trio_l.median, aio_l and aio_l.median)
                + _flag(results, f"{key}|{RAW_TRIO}", f"{key}|{RAW_ASYNCIO}"),
            ]
        )
    for n in sorted(results.cascade):
        row = results.cascade[n]
        rows.append(
            [
                f"one child fails, {n:,} siblings cancelled and joined (ms)",
                _num(row.get(RAW_TRIO), 2),
                _num(row.get(RAW_ASYNCIO), 2),
                _ratio(row.get(RAW_TRIO), row.get(RAW_ASYNCIO))
                + _flag(results, f"cascade|{n}|{RAW_TRIO}", f"cascade|{n}|{RAW_ASYNCIO}"),
            ]
        )
    rows.append(
        [
            f"memory per waiting task, {results.memory_calls:,} tasks (bytes)",
            _num(results.memory.get(RAW_TRIO), 0),
            _num(results.memory.get(RAW_ASYNCIO), 0),
            _ratio(results.memory.get(RAW_TRIO), results.memory.get(RAW_ASYNCIO)),
        ]
    )
    return [
        "## The floors: raw trio against raw asyncio",
        "",
        "What each event loop costs for the bare shape of every workload below, with no"
        " orchestrator at all: a nursery (trio) or a `TaskGroup` (asyncio) with one task per"
        " call; a memory channel or an `asyncio.Queue`; one child raising while its siblings"
        " sleep. These bound from below what any runtime on that loop can reach.",
        "",
        *_table(["workload", "raw trio", "raw asyncio", "trio / asyncio"], rows),
        "",
        *_clock_line(
            results,
            "tool phase",
            "latencies",
            "cascades",
            runs="each figure a median of repeated runs, as in the sections below; the memory"
            " row is bytes (tracemalloc), not time",
        ),
    ]


def _tool_phase(results: Results) -> list[str]:
    ways = [TRIO_BATCH, TRIO_STREAM, TWIN_BATCH, TWIN_STREAM, RAW_TRIO, RAW_ASYNCIO]
    ways = [w for w in ways if any(w in row for row in results.tool_phase.values())]
    peers = list(results.peers)
    header = ["N", *ways, *peers]
    rows = []
    for n, row in sorted(results.tool_phase.items()):
        cells = [f"{n:,}", *(_num(row.get(w)) for w in ways)]
        cells += [_num(results.peers[p].get(n)) for p in peers]
        rows.append(cells)
    ratio_header = ["N", "trioexec run_tools / raw trio", "trioexec streaming / raw trio"]
    if results.twin:
        ratio_header += [
            "twin run_tools / raw asyncio",
            "twin streaming / raw asyncio",
            "trioexec run_tools / twin run_tools",
            "trioexec streaming / twin streaming",
        ]
    ratio_header += [f"{p} / trioexec run_tools" for p in peers]
    ratio_rows = []
    for n, row in sorted(results.tool_phase.items()):

        def ratio(top: str, bottom: str, n: int = n, row: dict[str, float] = row) -> str:
            cell = _ratio(row.get(top), row.get(bottom))
            flag = _flag(results, f"tool_phase|{n}|{top}", f"tool_phase|{n}|{bottom}")
            return cell + flag if cell != "–" else cell

        cells = [f"{n:,}", ratio(TRIO_BATCH, RAW_TRIO), ratio(TRIO_STREAM, RAW_TRIO)]
        if results.twin:
            cells += [
                ratio(TWIN_BATCH, RAW_ASYNCIO),
                ratio(TWIN_STREAM, RAW_ASYNCIO),
                ratio(TRIO_BATCH, TWIN_BATCH),
                ratio(TRIO_STREAM, TWIN_STREAM),
            ]
        cells += [_ratio(results.peers[p].get(n), row.get(TRIO_BATCH)) for p in peers]
        ratio_rows.append(cells)
    return [
        "## Tool-phase cost per call",
        "",
        'One assistant turn of N calls of a no-op, concurrency-safe tool taking `{"x": str}`,'
        " as `benchmarks/bench_tool_phase.py` times it: the content arrives as JSON text, is"
        " parsed, every block becomes a call, each input is validated (JSON Schema, then"
        " structured), the tool runs, the next user message is built (result handling and"
        " the message budget included) and dumped to JSON. `run_tools` is the batch path"
        " (`max_concurrency = N`), `streaming` adds every block to the streaming executor and"
        " drains it. The peers (asyncio agent frameworks, where installed) are timed by"
        " `benchmarks/peers.py`: their own tool phase with their own validation; they are"
        " measured after the runtimes, not alternated with them.",
        "",
        "µs per call (medians):",
        "",
        *_table(header, rows),
        "",
        "Ratios (time over time: above 1 means the first is slower):",
        "",
        *_table(ratio_header, ratio_rows),
        "",
        *_clock_line(
            results,
            "tool phase",
            runs="each figure the median of repeated runs in up to 10 alternating rounds"
            " (the peers: their own repeats, measured after the runtimes)",
        ),
        "",
        "![tool-phase cost per call against N, log-log]"
        f"({results.machine.get('plot', 'trio-vs-asyncio.svg')})",
    ]


def _latencies(results: Results) -> list[str]:
    rows = []
    for way in ("trioexec", "twin", RAW_TRIO, RAW_ASYNCIO):
        start, prog = results.add_to_start.get(way), results.progress.get(way)
        if start is None or prog is None:
            continue
        rows.append(
            [
                way,
                _num(start.median, 2),
                _num(start.p90, 2),
                _num(prog.median, 2),
                _num(prog.p90, 2),
                f"{start.samples:,} / {prog.samples:,}",
            ]
        )
    return [
        "## Streaming latencies",
        "",
        "As `benchmarks/bench_streaming.py`: **add → start** is the time from handing one call"
        " to an idle streaming executor (`add_tool`) until the tool's body runs;"
        " **progress** the time from a tool's progress send until the consumer holds the"
        " update (one item in flight). The raw rows are the loop's own floor: `start_soon` /"
        " `create_task` until the body runs; a memory channel / `asyncio.Queue` hand-over.",
        "",
        *_table(
            ["runtime", "add → start median µs", "p90", "progress median µs", "p90", "samples"],
            rows,
        ),
        "",
        *_clock_line(
            results,
            "latencies",
            runs="the samples taken in 4 alternating rounds (the floors' ratios above are"
            " flagged from those rounds)",
        ),
    ]


def _cascade(results: Results) -> list[str]:
    ways = ["trioexec", "twin", RAW_TRIO, RAW_ASYNCIO]
    ways = [w for w in ways if any(w in row for row in results.cascade.values())]
    rows = []
    for n, row in sorted(results.cascade.items()):
        cells = [f"{n:,}", *(_num(row.get(w), 2) for w in ways)]

        def ratio(top: str, bottom: str, n: int = n, row: dict[str, float] = row) -> str:
            cell = _ratio(row.get(top), row.get(bottom))
            flag = _flag(results, f"cascade|{n}|{top}", f"cascade|{n}|{bottom}")
            return cell + flag if cell != "–" else cell

        cells.append(ratio("trioexec", RAW_TRIO))
        if results.twin:
            cells.append(ratio("twin", RAW_ASYNCIO))
            cells.append(ratio("trioexec", "twin"))
        cells.append(str(results.cascade_runs[n]))
        rows.append(cells)
    header = ["N siblings", *(f"{w} ms" for w in ways), "trioexec / raw trio"]
    if results.twin:
        header += ["twin / raw asyncio", "trioexec / twin"]
    header.append("runs")
    return [
        "## Answering every sibling after a cascading error",
        "",
        "N calls execute (each waits forever); then a `Bash` call fails, which cancels its"
        " siblings. Timed: from the failure until the consumer of the streaming executor"
        " holds all N synthetic answers. The raw rows: from one child raising until its N"
        " sleeping siblings are cancelled and the nursery / TaskGroup is joined (no answers"
        " to build, no gate to pass).",
        "",
        *_table(header, rows),
        "",
        *_clock_line(results, "cascades", runs="each figure the median of the runs counted"),
    ]


def _memory(results: Results) -> list[str]:
    ways = [TRIO_BATCH, TRIO_STREAM, TWIN_BATCH, TWIN_STREAM, RAW_TRIO, RAW_ASYNCIO]
    rows = [[way, _num(results.memory[way], 0)] for way in ways if way in results.memory]
    return [
        "## Memory per in-flight call",
        "",
        f"{results.memory_calls:,} calls are started and all wait (on one event) at once;"
        " the figure is what **tracemalloc** traces as allocated and still held at that"
        " moment, less what it traced before the run opened, divided by the number of calls:"
        " Python-heap bytes per in-flight call, the run's own fixed cost spread over the calls."
        " (tracemalloc, not RSS: it sees only Python allocations, but it is exact and"
        " unaffected by the allocator's pools and by other processes.)",
        "",
        *_table(["runtime", "bytes per in-flight call"], rows),
    ]


def _lines(results: Results, rule: str) -> list[str]:
    rows = []
    for runtime, files in results.lines.items():
        for name, count in files.items():
            file, _, mark = name.partition(" ")
            label = f"`{file}` {mark}".rstrip()
            rows.append([runtime, label, str(count.code), str(count.teardown)])
        if files:
            total = sum(files.values(), start=LineCount(0, 0))
            rows.append([runtime, "**total**", f"**{total.code}**", f"**{total.teardown}**"])
    return [
        "## Lines of cancellation and teardown code",
        "",
        rule,
        "",
        *_table(["runtime", "file", "code lines", "cancellation/teardown lines"], rows),
    ]


def _reading(results: Results) -> list[str]:
    out = ["## Reading", ""]
    tp = results.tool_phase
    sizes = sorted(tp)
    big = max(sizes)
    mid = 1_000 if 1_000 in tp else big
    floor_ratio = {
        n: tp[n][RAW_TRIO] / tp[n][RAW_ASYNCIO]
        for n in sizes
        if RAW_TRIO in tp[n] and RAW_ASYNCIO in tp[n]
    }
    if floor_ratio:
        spread = ", ".join(f"{floor_ratio[n]:.2f}× at {n:,}" for n in sorted(floor_ratio))
        out.append(
            f"* **Raw spawn**: {_versus('raw trio', floor_ratio[mid], 'raw asyncio')} at"
            f" spawning and joining N = {mid:,} tasks in the tool-phase shape (trio / asyncio"
            f" per N: {spread}). Per task, trio does more: a task joins its nursery's"
            " cancel-scope tree and is scheduled through trio's run queue, where"
            " `create_task` schedules one callback."
        )
    for n, row in sorted(results.cascade.items()):
        if RAW_TRIO in row and RAW_ASYNCIO in row:
            out.append(
                f"* **Raw cancel**, {n:,} siblings: "
                f"{_versus('raw trio', row[RAW_TRIO] / row[RAW_ASYNCIO], 'raw asyncio')}."
            )
    if any(RAW_TRIO in row for row in results.cascade.values()):
        out.append(
            "  A trio nursery collects every child's outcome, each cancelled child's"
            " `Cancelled` included (with a cancel reason recorded for it), into one exception"
            " group that the cancelled scope then filters; an asyncio `TaskGroup` drops a"
            " cancelled child without collecting anything. That is the price of cancellation"
            " that reaches every task and explains itself, paid once per cancelled task."
        )
    start, prog = results.add_to_start, results.progress
    if RAW_TRIO in start and RAW_ASYNCIO in start:
        out.append(
            "* **Raw hand-over**: add → start "
            f"{_versus('trio', start[RAW_TRIO].median / start[RAW_ASYNCIO].median, 'asyncio')};"
            " send → receive "
            f"{_versus('trio', prog[RAW_TRIO].median / prog[RAW_ASYNCIO].median, 'asyncio')}."
        )
    if RAW_TRIO in results.memory and RAW_ASYNCIO in results.memory:
        ratio = results.memory[RAW_TRIO] / results.memory[RAW_ASYNCIO]
        out.append(
            f"* **Raw memory**: a waiting trio task holds {results.memory[RAW_TRIO]:,.0f} bytes"
            f" against {results.memory[RAW_ASYNCIO]:,.0f} for an asyncio task ({ratio:.2f}×)."
        )
    own = tp[mid].get(TRIO_BATCH, 0) / tp[mid].get(RAW_TRIO, 1)
    out.append(
        f"* **trioexec over its floor**: at N = {mid:,} `run_tools` costs {own:.2f}× raw trio"
        " per call; the difference is the orchestrator's own work (validation, the"
        " lifecycle, the gate, the message), which an asyncio runtime has to do as well."
    )
    if results.twin:
        twin_own = tp[mid].get(TWIN_BATCH, 0) / tp[mid].get(RAW_ASYNCIO, 1)
        versus = tp[mid][TRIO_BATCH] / tp[mid][TWIN_BATCH]
        stream = tp[mid][TRIO_STREAM] / tp[mid][TWIN_STREAM]
        out.append(
            f"* **trioexec against the twin**: at N = {mid:,} the twin's `run_tools` costs"
            f" {twin_own:.2f}× raw asyncio; "
            f"{_versus('trioexec run_tools', versus, 'twin run_tools')};"
            f" {_versus('trioexec streaming', stream, 'twin streaming')}."
            " Both reuse the same pure parts, so the gap is the event"
            " loop's share plus each orchestrator's scheduling."
        )
        for n, row in sorted(results.cascade.items()):
            if "trioexec" in row and "twin" in row:
                out.append(
                    f"* **Cascade**, {n:,} siblings: "
                    f"{_versus('trioexec', row['trioexec'] / row['twin'], 'the twin')}."
                )
        if "trioexec" in results.lines and "twin" in results.lines:
            trio_total = sum(c.teardown for c in results.lines["trioexec"].values())
            twin_lines = results.lines["twin"]
            twin_total = sum(c.teardown for c in twin_lines.values())
            twin_own = sum(c.teardown for n, c in twin_lines.items() if "(shared" not in n)
            out.append(
                f"* **Lines**: {trio_total} cancellation/teardown lines in trioexec's"
                f" orchestrator against {twin_total} for the twin ({twin_own} in its own files,"
                f" {twin_total - twin_own} in the trioexec parts it runs as they are), by the"
                " rule above. The twin's own lines stand in for what trio provides: a cancel"
                " scope rebuilt from `Task.cancel()`, `uncancel()` and a context variable"
                " (`_scope.py`), the run frame on a `TaskGroup` and timer callbacks for the"
                " grace period and time limits (`_core.py`)."
            )
    else:
        out.append(
            "* The asyncio twin (`benchmarks/asyncio_twin/`) was not importable in this run,"
            " so its columns are absent."
        )
    for peer, row in results.peers.items():
        if mid in row and TRIO_BATCH in tp[mid]:
            out.append(
                f"* **{peer}** at N = {mid:,}: "
                f"{_versus(peer, row[mid] / tp[mid][TRIO_BATCH], 'trioexec run_tools')}"
                " (trioexec's phase also runs its permission check and the message budget)."
            )
    return out


def _limits(results: Results) -> list[str]:
    twin = [
        "* The twin is trioexec's orchestrator moved to asyncio, not an independent design: it"
        " reuses trioexec's pure parts and subclasses its run core, so the two differ in the"
        " event loop and the concurrency layer (scopes, task groups, timers, queues) and in"
        " nothing else. That is the point: the gap between them is what the loop and"
        " structured concurrency cost or save for the same semantics.",
    ]
    return [
        "## What this comparison is and is not",
        "",
        *(twin if results.twin else []),
        "* The cascade is measured on the streaming path; the batch path shares the same"
        " sibling scope and answers.",
        "* Memory is tracemalloc's view (Python allocations), not RSS.",
        "* The peers run their own tool phase (their own validation and message types, no"
        " permission layer) and are measured after the runtimes, not alternated with them.",
        "* One run on one machine: the ratios are what to compare across runs; a loaded"
        " machine (see the load average above) inflates the absolute figures.",
    ]


def render(results: Results, *, lines_rule: str, plot_name: str = "trio-vs-asyncio.svg") -> str:
    """The whole report as Markdown.

    Args:
        results: one run's figures.
        lines_rule: the paragraph stating how lines were counted.
        plot_name: the plot's file name, linked from the tool-phase section.

    Returns:
        The Markdown text, ending in a newline.
    """
    results = attrs.evolve(results, machine={**results.machine, "plot": plot_name})
    parts = [
        ["# trio against asyncio: trioexec, its asyncio twin, the floors and the peers", ""],
        _machine(results),
        _runtimes(results),
        _floors(results),
        _tool_phase(results),
        _latencies(results),
        _cascade(results),
        _memory(results),
        _lines(results, lines_rule),
        _reading(results),
        _limits(results),
    ]
    return "\n\n".join("\n".join(part) for part in parts).replace("\n\n\n", "\n\n") + "\n"
