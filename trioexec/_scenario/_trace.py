"""Chrome Trace Event Format output of a scenario run (opens in Perfetto or chrome://tracing).

One process (the turn), one thread per call in arrival order.  A call's
thread holds complete events (``ph: "X"``) for its phases: ``queued``,
``running`` (its lifecycle), ``Tool.call`` nested inside it, and ``waiting
for release`` (held by the ordered gate); instant events (``ph: "i"``) mark
progress, completion, cancellation (with its reason) and release.  Actions are
global instants.  Timestamps are virtual microseconds.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .._models import JSONObject, JSONValue
    from ._report import RunEvent, ScenarioRun

__all__ = ["dumps_trace", "trace_events"]

_PID = 1


def _us(t: float) -> int:
    return round(t * 1_000_000)


def trace_events(run: ScenarioRun) -> JSONObject:
    """The trace as a JSON object: ``{"traceEvents": [...], "displayTimeUnit": "ms", ...}``."""
    scenario = run.scenario
    tids = {call.id: index + 1 for index, call in enumerate(scenario.calls)}
    errors = {result.tool_use_id for result in run.results if result.is_error}
    events: list[JSONValue] = [
        _meta("process_name", 0, {"name": f"scenario {scenario.name or '(unnamed)'}"}),
        _meta("thread_name", 0, {"name": "actions"}),
        _meta("thread_sort_index", 0, {"sort_index": 0}),
    ]
    for call in scenario.calls:
        tid = tids[call.id]
        events.append(_meta("thread_name", tid, {"name": f"{call.id} {call.name}"}))
        events.append(_meta("thread_sort_index", tid, {"sort_index": tid}))
    timed: list[tuple[int, int, JSONObject]] = []
    by_call: dict[str, list[RunEvent]] = {call.id: [] for call in scenario.calls}
    for event in run.events:
        if event.tool_use_id in by_call:
            by_call[event.tool_use_id].append(event)
    for call_id, call_events in by_call.items():
        tid = tids[call_id]
        timed.extend((ts, tid, item) for ts, item in _call_events(call_events, tid, errors))
    for action in scenario.actions:
        item: JSONObject = {
            "name": action.do,
            "ph": "i",
            "s": "g",
            "ts": _us(action.at),
            "pid": _PID,
            "tid": 0,
        }
        timed.append((_us(action.at), 0, item))
    timed.sort(key=lambda entry: (entry[0], entry[1]))
    events.extend(item for _, _, item in timed)
    return {
        "traceEvents": events,
        "displayTimeUnit": "ms",
        "otherData": {"scenario": scenario.name, "clock": "virtual seconds (trio MockClock)"},
    }


def _call_events(
    events: list[RunEvent], tid: int, errors: set[str]
) -> list[tuple[int, JSONObject]]:
    times: dict[str, float] = {}
    instants: list[tuple[int, JSONObject]] = []
    out: list[tuple[int, JSONObject]] = []
    reason: str | None = None
    for event in events:
        times.setdefault(event.kind, event.t)
        if event.kind == "progress":
            args: JSONObject = {"data": _plain(event.data)}
            instants.append((_us(event.t), _instant("progress", event.t, tid, args)))
        elif event.kind == "cancelled":
            reason = event.reason
            args = {"reason": reason}
            instants.append((_us(event.t), _instant("cancelled", event.t, tid, args)))
        elif event.kind in ("completed", "released"):
            instants.append((_us(event.t), _instant(event.kind, event.t, tid, {})))
    end = times.get("completed", times.get("cancelled"))
    queued, started, released = times.get("queued"), times.get("started"), times.get("released")
    if queued is not None:
        until = started if started is not None else end
        if until is not None:
            out.append((_us(queued), _span("queued", queued, until, tid, {})))
    if started is not None and end is not None:
        call_id = events[0].tool_use_id
        outcome = f"cancelled: {reason}" if reason else ("error" if call_id in errors else "ok")
        out.append((_us(started), _span("running", started, end, tid, {"outcome": outcome})))
    began, ended = times.get("call_began"), times.get("call_ended")
    if began is not None and ended is not None:
        out.append((_us(began), _span("Tool.call", began, ended, tid, {})))
    if end is not None and released is not None:
        out.append((_us(end), _span("waiting for release", end, released, tid, {})))
    return out + instants


def _meta(name: str, tid: int, args: JSONObject) -> JSONObject:
    return {"name": name, "ph": "M", "pid": _PID, "tid": tid, "args": args}


def _instant(name: str, t: float, tid: int, args: JSONObject) -> JSONObject:
    return {"name": name, "ph": "i", "s": "t", "ts": _us(t), "pid": _PID, "tid": tid, "args": args}


def _span(name: str, t0: float, t1: float, tid: int, args: JSONObject) -> JSONObject:
    return {
        "name": name,
        "ph": "X",
        "ts": _us(t0),
        "dur": _us(t1) - _us(t0),
        "pid": _PID,
        "tid": tid,
        "args": args,
    }


def _plain(value: object) -> JSONValue:
    try:
        return json.loads(json.dumps(value))  # type: ignore[no-any-return]
    except (TypeError, ValueError):
        return repr(value)


def dumps_trace(run: ScenarioRun) -> str:
    """The trace file's text: one event per line, stable order, final newline."""
    trace = trace_events(run)
    events = trace["traceEvents"]
    assert isinstance(events, list)
    body = ",\n".join("  " + json.dumps(item, ensure_ascii=False) for item in events)
    rest = {key: value for key, value in trace.items() if key != "traceEvents"}
    tail = json.dumps(rest, ensure_ascii=False)[1:-1]
    return '{"traceEvents": [\n' + body + "\n],\n" + tail + "}\n"
