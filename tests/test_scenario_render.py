"""Timeline and trace rendering of scenario runs."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from trioexec._models import ToolResult
from trioexec._scenario._model import ActionSpec, CallSpec, Scenario
from trioexec._scenario._report import RunEvent, ScenarioRun, dumps_output
from trioexec._scenario._timeline import _step, format_time, render_timeline
from trioexec._scenario._trace import dumps_trace, trace_events
from trioexec.scenario import load_scenario, run_scenario_sync

if TYPE_CHECKING:
    from pathlib import Path


def make_run(events: list[RunEvent], results: list[ToolResult], **scenario: object) -> ScenarioRun:
    calls = (CallSpec("a", "Read"), CallSpec("b", "Bash"))
    return ScenarioRun(
        scenario=Scenario(name="hand", calls=calls, **scenario),  # type: ignore[arg-type]
        results=tuple(results),
        events=tuple(events),
        attachments=(),
        context={},
        stop_reason=None,
        session_dir="s",
    )


EVENTS = [
    RunEvent(0.0, "a", "queued"),
    RunEvent(0.0, "a", "started"),
    RunEvent(0.0, "a", "call_began"),
    RunEvent(0.5, "b", "queued"),
    RunEvent(1.0, "a", "progress", data={"n": 1}),
    RunEvent(2.0, "a", "call_ended"),
    RunEvent(2.0, "a", "completed"),
    RunEvent(2.0, "a", "released"),
    RunEvent(2.0, "b", "started"),
    RunEvent(3.0, "b", "cancelled", reason="user_interrupted"),
    RunEvent(3.0, "b", "released"),
]
RESULTS = [ToolResult("a", "A"), ToolResult("b", "no", is_error=True)]


def test_format_time() -> None:
    assert [format_time(t) for t in (0.0, 1.0, 1.5, 0.000001, 12.25)] == [
        "0",
        "1",
        "1.5",
        "0.000001",
        "12.25",
    ]


def test_step_is_one_two_or_five_times_a_power_of_ten() -> None:
    assert _step(0.0, 60) == 1.0
    assert _step(3.0, 60) == 0.1
    assert _step(1.1, 60) == 0.02
    assert _step(70.9, 60) == 2.0
    assert _step(1000.0, 60) == 20.0


def test_timeline_rows_marks_and_summary() -> None:
    run = make_run(EVENTS, RESULTS, actions=(ActionSpec(3.0, "interrupt"),))
    lines = render_timeline(run).splitlines()
    assert lines[0] == "scenario: hand (stream mode, result_order arrival, max_concurrency 10)"
    assert lines[1] == "1 column = 0.1 s of virtual time"
    assert lines[2].split() == ["0s", "1s", "2s", "3s"]
    indent = lines[2].index("0s")
    row_a = next(line for line in lines if line.startswith("a "))
    row_b = next(line for line in lines if line.startswith("b "))
    assert row_a[:indent].split() == ["a", "Read"]
    chart_a = row_a[indent:]
    assert chart_a.startswith("=" * 10 + "+" + "=" * 9 + "C")
    assert row_a.endswith("completed@2 ok, released@2")
    chart_b = row_b[indent:]
    assert chart_b.startswith(" " * 5 + "." * 15 + "=" * 10 + "X")
    assert row_b.endswith("cancelled@3 (user_interrupted), released@3")
    actions = next(line for line in lines if line.startswith("actions"))
    assert actions.endswith("^  interrupt@3")
    assert lines[-1].startswith("legend:")


def test_timeline_waiting_for_release_and_never_started() -> None:
    events = [
        RunEvent(0.0, "a", "queued"),
        RunEvent(0.0, "a", "started"),
        RunEvent(0.0, "b", "queued"),
        RunEvent(0.0, "b", "started"),
        RunEvent(0.2, "b", "completed"),
        RunEvent(1.0, "a", "completed"),
        RunEvent(1.0, "a", "released"),
        RunEvent(1.0, "b", "released"),
    ]
    text = render_timeline(make_run(events, RESULTS))
    row_b = next(line for line in text.splitlines() if line.startswith("b "))
    assert "=" * 10 + "E" + "-" * 39 + "R" in row_b  # error result, then held by the gate
    never = [RunEvent(0.0, "a", "queued"), RunEvent(0.4, "a", "cancelled", reason="sibling_error")]
    text = render_timeline(make_run(never, []))
    assert "never started, cancelled@0.4 (sibling_error), not released" in text


def test_trace_is_chrome_trace_event_format() -> None:
    trace = trace_events(make_run(EVENTS, RESULTS, actions=(ActionSpec(3.0, "interrupt"),)))
    events = trace["traceEvents"]
    assert isinstance(events, list)
    names = {(e["tid"], e["name"]): e for e in events if isinstance(e, dict) and e["ph"] == "X"}
    assert names[1, "running"]["ts"] == 0
    assert names[1, "running"]["dur"] == 2_000_000
    assert names[1, "Tool.call"]["dur"] == 2_000_000
    assert names[2, "queued"] == {
        "name": "queued",
        "ph": "X",
        "ts": 500_000,
        "dur": 1_500_000,
        "pid": 1,
        "tid": 2,
        "args": {},
    }
    assert names[2, "running"]["args"] == {"outcome": "cancelled: user_interrupted"}
    instants = [e for e in events if isinstance(e, dict) and e["ph"] == "i"]
    assert {"name": "progress", "args": {"data": {"n": 1}}}.items() <= instants[0].items()
    assert any(e["name"] == "interrupt" and e["s"] == "g" for e in instants)
    metadata = [e["args"] for e in events if isinstance(e, dict) and e["name"] == "thread_name"]
    assert metadata == [{"name": "actions"}, {"name": "a Read"}, {"name": "b Bash"}]
    timestamps = [e["ts"] for e in events if isinstance(e, dict) and "ts" in e]
    assert all(isinstance(ts, int) for ts in timestamps)
    assert timestamps == sorted(timestamps, key=lambda ts: ts if isinstance(ts, int) else 0)


def test_trace_text_is_valid_json_one_event_per_line(tmp_path: Path) -> None:
    run = run_scenario_sync(
        load_scenario("examples/scenarios/05_sibling_error.json"), session_dir=tmp_path
    )
    text = dumps_trace(run)
    assert json.loads(text) == trace_events(run)
    assert text.count("\n") == len(trace_events(run)["traceEvents"]) + 3  # type: ignore[arg-type]


def test_output_layout() -> None:
    text = dumps_output({"results": [{"a": 1}, {"b": "é"}], "events": [], "x": False})
    assert text.splitlines() == [
        "{",
        '  "results": [',
        '    {"a": 1},',
        '    {"b": "é"}',
        "  ],",
        '  "events": [],',
        '  "x": false',
        "}",
    ]
    assert text.endswith("}\n")
    assert json.loads(text) == {"results": [{"a": 1}, {"b": "é"}], "events": [], "x": False}


def test_event_json_fields() -> None:
    assert RunEvent(1.0, "a", "progress", data=[1]).to_json() == {
        "t": 1.0,
        "id": "a",
        "kind": "progress",
        "data": [1],
    }
    cancelled = RunEvent(1.0, "a", "cancelled", data=ToolResult("a", "x"), reason="sibling_error")
    assert cancelled.to_json() == {
        "t": 1.0,
        "id": "a",
        "kind": "cancelled",
        "reason": "sibling_error",
    }
    assert RunEvent(1.0, "a", "completed", data=ToolResult("a", "x")).to_json() == {
        "t": 1.0,
        "id": "a",
        "kind": "completed",
    }
