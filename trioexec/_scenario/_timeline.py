"""A text Gantt chart of a scenario run: one row per call over virtual time.

Each column is a fixed slice of virtual time (1, 2 or 5 times a power of
ten, chosen so the chart fits the width).  A row shows the call's state in
each slice, then marks for what happened in it, then an exact summary::

    .  queued, not started        =  running
    -  finished, held back by the ordered gate (waiting for release)
    +  progress     C  completed    E  completed with an error result
    X  cancelled    R  released

When several marks fall in one slice the strongest wins (X, E, C, R, +);
the summary at the end of the row gives exact times.
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING

import attrs

from .._core._policy import Policy
from .._models import ToolResult

if TYPE_CHECKING:
    from collections.abc import Iterable

    from ._report import RunEvent, ScenarioRun

__all__ = ["LEGEND", "render_timeline"]

LEGEND = (
    "legend: . queued  = running  - waiting for release  + progress  "
    "C completed  E error result  X cancelled  R released  ^ action"
)
_MARK_RANK = {"X": 5, "E": 4, "C": 3, "R": 2, "+": 1}


@attrs.define
class _Row:
    tool_use_id: str
    name: str
    queued: float | None = None
    started: float | None = None
    ended: float | None = None
    released: float | None = None
    cancelled_reason: str | None = None
    is_error: bool = False
    marks: list[tuple[float, str]] = attrs.Factory(list)


def format_time(t: float) -> str:
    """Virtual seconds with up to 6 decimals and no trailing zeros: ``1.5``, ``0``."""
    text = f"{t:.6f}".rstrip("0").rstrip(".")
    return "0" if text in ("", "-0") else text


def _step(end: float, width: int) -> float:
    """The smallest 1/2/5 x 10^k slice that fits ``end`` in ``width`` columns."""
    if end <= 0:
        return 1.0
    exponent = math.floor(math.log10(end / width)) - 1
    while True:
        for mantissa in (1, 2, 5):
            step = mantissa * 10.0**exponent
            if end / step < width:
                return step
        exponent += 1


def _rows(run: ScenarioRun) -> list[_Row]:
    rows = {call.id: _Row(call.id, call.name) for call in run.scenario.calls}
    errors = {result.tool_use_id for result in run.results if result.is_error}
    for event in run.events:
        row = rows.get(event.tool_use_id)
        if row is not None:
            _apply(row, event, errors)
    return list(rows.values())


def _apply(row: _Row, event: RunEvent, errors: set[str]) -> None:
    if event.kind == "queued":
        row.queued = event.t
    elif event.kind == "started":
        row.started = event.t
    elif event.kind == "progress":
        row.marks.append((event.t, "+"))
    elif event.kind == "completed":
        row.ended = event.t
        if isinstance(event.data, ToolResult):
            row.is_error = event.data.is_error
        else:
            row.is_error = row.tool_use_id in errors
        row.marks.append((event.t, "E" if row.is_error else "C"))
    elif event.kind == "cancelled":
        row.ended = event.t
        row.cancelled_reason = event.reason or "cancelled"
        row.marks.append((event.t, "X"))
    elif event.kind == "released":
        row.released = event.t
        row.marks.append((event.t, "R"))


def _state(row: _Row, t0: float, t1: float) -> str:
    """The state character for the slice ``[t0, t1)``."""

    def before(t: float | None) -> bool:
        return t is not None and t < t1

    if row.queued is None or not before(row.queued):
        return " "
    if row.released is not None and row.released < t0:
        return " "
    if row.ended is not None and row.ended < t0:
        return "-" if row.released is not None else " "
    if before(row.started):
        return "="
    return "."


def _summary(row: _Row) -> str:
    parts: list[str] = []
    if row.started is None and row.queued is not None:
        parts.append("never started")
    if row.cancelled_reason is not None and row.ended is not None:
        parts.append(f"cancelled@{format_time(row.ended)} ({row.cancelled_reason})")
    elif row.ended is not None:
        outcome = "error" if row.is_error else "ok"
        parts.append(f"completed@{format_time(row.ended)} {outcome}")
    if row.released is not None:
        parts.append(f"released@{format_time(row.released)}")
    elif row.ended is not None:
        parts.append("not released")
    return ", ".join(parts)


def _axis(columns: int, step: float, indent: int) -> list[str]:
    labels = [" "] * (columns + 12)
    ticks = [" "] * columns
    last_end = -1
    for col in range(0, columns, 10):
        ticks[col] = "|"
        text = format_time(col * step) + "s"
        if col > last_end:
            labels[col : col + len(text)] = list(text)
            last_end = col + len(text)
    pad = " " * indent
    return [pad + "".join(labels).rstrip(), pad + "".join(ticks).rstrip()]


def _marks(marks: Iterable[tuple[float, str]], step: float, cells: list[str]) -> None:
    for t, mark in marks:
        col = min(len(cells) - 1, math.floor(t / step + 1e-9))
        current = cells[col]
        if _MARK_RANK.get(mark, 0) >= _MARK_RANK.get(current, 0):
            cells[col] = mark


def _policy_label(policy: Policy) -> str:
    """``, policy NAME`` unless the policy is trioexec's, up to the knobs the title shows."""
    plain = attrs.evolve(policy, result_order="arrival", synthetic_texts="trioexec")
    if plain == Policy():
        return ""
    written = policy.to_json()
    return f", policy {written if isinstance(written, str) else json.dumps(written)}"


def render_timeline(run: ScenarioRun, *, width: int = 60) -> str:
    """The chart as text, ending with a newline.

    Args:
        run: a finished scenario run.
        width: the most columns the time axis may use.
    """
    scenario = run.scenario
    rows = _rows(run)
    end = max(
        [event.t for event in run.events] + [action.at for action in scenario.actions],
        default=0.0,
    )
    step = _step(end, width)
    columns = math.floor(end / step + 1e-9) + 1
    id_width = max([len(row.tool_use_id) for row in rows] + [len("actions")])
    name_width = max([len(row.name) for row in rows], default=0)
    indent = id_width + 1 + name_width + 2
    title = f"scenario: {scenario.name or '(unnamed)'} ({scenario.mode} mode"
    if scenario.mode == "stream":
        title += f", result_order {scenario.result_order}"
    title += f", max_concurrency {scenario.max_concurrency}"
    title += f"{_policy_label(scenario.policy)})"
    lines = [title, f"1 column = {format_time(step)} s of virtual time"]
    lines += _axis(columns, step, indent)
    for row in rows:
        cells = [_state(row, col * step, (col + 1) * step) for col in range(columns)]
        _marks(row.marks, step, cells)
        head = f"{row.tool_use_id:<{id_width}} {row.name:<{name_width}}  "
        lines.append(f"{head}{''.join(cells)}  {_summary(row)}".rstrip())
    if scenario.actions:
        cells = [" "] * columns
        _marks(((action.at, "^") for action in scenario.actions), step, cells)
        done = ", ".join(f"{action.do}@{format_time(action.at)}" for action in scenario.actions)
        lines.append(f"{'actions':<{indent}}{''.join(cells)}  {done}")
    lines.append(LEGEND)
    if run.stop_reason is not None:
        lines.append(f"stopped continuation: {run.stop_reason}")
    return "\n".join(lines) + "\n"
