"""Running scenarios: virtual time, one outcome per instant, invariants on generated turns."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import trio
import trio.testing

from trioexec._scenario._generate import generate_scenario
from trioexec._scenario._load import parse_scenario
from trioexec._scenario._report import OUTPUT_KINDS
from trioexec._scenario._runner import run_scenario_sync
from trioexec._texts import interrupted_message
from trioexec.scenario import ScenarioRun, load_scenario, run_scenario

if TYPE_CHECKING:
    from pathlib import Path

READ = {"name": "Read", "concurrency_safe": True, "interrupt_behavior": "cancel"}
BASH = {
    "name": "Bash",
    "concurrency_safe": "input",
    "interrupt_behavior": "block",
    "cancels_siblings_on_error": True,
}


def doc(calls: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"trioexec_scenario": 1, "tools": [READ, BASH], "calls": calls, **extra}


def run(document: dict[str, Any], tmp_path: Path) -> ScenarioRun:
    return run_scenario_sync(parse_scenario(document), session_dir=tmp_path)


def texts(result: ScenarioRun) -> dict[str, str]:
    return {r.tool_use_id: r.text for r in result.results}


def test_interrupt_in_the_instant_a_call_finishes_leaves_its_result(tmp_path: Path) -> None:
    document = doc(
        [
            {"id": "a", "name": "Read", "input": {"sleep": 1, "output": "A"}},
            {"id": "b", "name": "Read", "input": {"sleep": 2, "output": "B"}},
        ],
        actions=[{"at": 1, "do": "interrupt"}],
    )
    for _ in range(10):  # trio shuffles same-instant tasks; the outcome must not change
        result = run(document, tmp_path)
        assert texts(result) == {"a": "A", "b": interrupted_message("Read", started=True)}


def test_call_arriving_in_the_instant_of_a_sibling_error_never_starts(tmp_path: Path) -> None:
    document = doc(
        [
            {"id": "a", "name": "Bash", "input": {"command": "x", "sleep": 1, "error": "boom"}},
            {"id": "b", "name": "Read", "at": 1, "input": {"sleep": 1, "output": "B"}},
        ]
    )
    for _ in range(10):
        result = run(document, tmp_path)
        kinds = [e.kind for e in result.events if e.tool_use_id == "b"]
        assert kinds == ["queued", "cancelled", "released"]


def test_calls_of_one_instant_are_added_before_its_actions(tmp_path: Path) -> None:
    document = doc(
        [{"id": "a", "name": "Read", "at": 1, "input": {"sleep": 1, "output": "A"}}],
        actions=[{"at": 1, "do": "abort"}],
    )
    result = run(document, tmp_path)
    assert [(e.t, e.kind) for e in result.events if e.kind in OUTPUT_KINDS] == [
        (1.0, "queued"),
        (1.0, "started"),
        (1.0, "cancelled"),
        (1.0, "released"),
    ]


def test_actions_after_the_last_answer_are_dropped(tmp_path: Path) -> None:
    document = doc(
        [{"id": "a", "name": "Read", "input": {"sleep": 1, "output": "A"}}],
        actions=[{"at": 100, "do": "abort"}],
    )
    result = run(document, tmp_path)
    assert texts(result) == {"a": "A"}
    assert max(e.t for e in result.events) == 1.0


def test_empty_scenario(tmp_path: Path) -> None:
    for mode in ("stream", "batch"):
        result = run(doc([], mode=mode), tmp_path)
        assert (result.results, result.events) == ((), ())
        assert result.to_json()["context"] == {}


def test_times_are_relative_and_rounded(tmp_path: Path) -> None:
    document = doc([{"id": "a", "name": "Read", "at": 0.1, "input": {"sleep": 0.2}}])
    result = run(document, tmp_path)
    assert [e.t for e in result.events if e.kind in OUTPUT_KINDS] == [0.1, 0.1, 0.3, 0.3]
    assert [e.kind for e in result.events if e.kind not in OUTPUT_KINDS] == [
        "call_began",
        "call_ended",
    ]


async def test_run_scenario_on_the_test_clock(
    autojump_clock: trio.testing.MockClock, tmp_path: Path
) -> None:
    await trio.sleep(5)  # the run's times are relative to its own start
    scenario = load_scenario("examples/scenarios/05_sibling_error.json")
    result = await run_scenario(scenario, session_dir=tmp_path)
    assert result.events[0].t == 0.0
    assert result.results[1].is_error
    assert result.results[1].text == "Exit code 1\n3 tests failed"


def test_batch_mode_ignores_at(tmp_path: Path) -> None:
    document = doc(
        [
            {"id": "a", "name": "Read", "at": 5, "input": {"sleep": 1}},
            {"id": "b", "name": "Read", "at": 9, "input": {"sleep": 1}},
        ],
        mode="batch",
    )
    result = run(document, tmp_path)
    assert {(e.t, e.kind) for e in result.events if e.kind in ("queued", "started")} == {
        (0.0, "queued"),
        (0.0, "started"),
    }


def overlaps(a: tuple[float, float], b: tuple[float, float]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


@pytest.mark.parametrize("mode", ["stream", "batch"])
def test_generated_scenario_keeps_the_invariants(mode: str, tmp_path: Path) -> None:
    document = generate_scenario(400, seed=7, unsafe_share=0.2, mode=mode)
    scenario = parse_scenario(document)
    first = run_scenario_sync(scenario, session_dir=tmp_path)
    assert first.dumps() == run_scenario_sync(scenario, session_dir=tmp_path).dumps()

    ids = [call.id for call in scenario.calls]
    assert [r.tool_use_id for r in first.results] == ids  # I1 exactly once, I2 arrival order
    spans: dict[str, tuple[float, float]] = {}
    for call_id in ids:
        events = [e for e in first.events if e.tool_use_id == call_id]
        kinds = [e.kind for e in events]
        assert kinds[0] == "queued"
        assert kinds[-1] == "released"
        assert kinds.count("completed") + kinds.count("cancelled") == 1
        if "started" in kinds:
            start = next(e.t for e in events if e.kind == "started")
            end = next(e.t for e in events if e.kind in ("completed", "cancelled"))
            spans[call_id] = (start, end)
    unsafe = {
        c.id
        for c in scenario.calls
        if c.name == "Edit" or (c.name == "Bash" and c.input.get("concurrency_safe") is False)
    }
    assert unsafe
    for call_id in unsafe & spans.keys():  # I3 exclusivity
        assert not [o for o in spans if o != call_id and overlaps(spans[call_id], spans[o])]
    released = [e.tool_use_id for e in first.events if e.kind == "released"]
    assert sorted(released, key=ids.index) == ids  # released once each
    release_times = [
        e.t
        for e in sorted(first.events, key=lambda e: ids.index(e.tool_use_id))
        if e.kind == "released"
    ]
    assert release_times == sorted(release_times)  # the gate: never before an earlier call


def test_generated_scenario_is_valid_and_seeded() -> None:
    assert generate_scenario(50, seed=1) == generate_scenario(50, seed=1)
    assert generate_scenario(50, seed=1) != generate_scenario(50, seed=2)
    parse_scenario(generate_scenario(50, mode="batch"))


# -- byte-identical runs whatever the scheduler's state (SPEC §8) --------------------------------


PASSES = range(8)


def run_after_stirring(doc: dict[str, Any], passes: int, session_dir: Path) -> str:
    """The scenario's JSON output, run after ``passes`` scheduler passes of another trio run.

    trio draws from one process-wide random source each scheduler pass to order
    the tasks that wake together; spinning first leaves that source in a
    different state for every ``passes``, the way earlier runs in a process do.
    """

    async def spin() -> None:
        async with trio.open_nursery() as nursery:
            for _ in range(2):
                nursery.start_soon(_checkpoints, passes)

    trio.run(spin)
    return run_scenario_sync(parse_scenario(doc), session_dir=session_dir).dumps()


async def _checkpoints(count: int) -> None:
    for _ in range(count):
        await trio.lowlevel.checkpoint()


def events_of(output: str, call_id: str) -> list[tuple[float, str]]:
    return [(e["t"], e["kind"]) for e in json.loads(output)["events"] if e["id"] == call_id]


# Completion-order ties follow trio's scheduling; the scenario runner fixes trio's
# scheduling seed for its run, so whatever seed the process had, the bytes repeat.
def test_completion_order_ties_do_not_depend_on_scheduling(tmp_path: Path) -> None:
    doc: dict[str, Any] = {
        "trioexec_scenario": 1,
        "result_order": "completion",
        "tools": [{"name": "Read", "concurrency_safe": True}],
        "calls": [
            {"id": "a", "name": "Read", "input": {"sleep": 1, "steps": [{"context": {"k": "a"}}]}},
            {"id": "b", "name": "Read", "input": {"sleep": 1, "steps": [{"context": {"k": "b"}}]}},
        ],
    }
    outputs = {run_after_stirring(doc, passes, tmp_path) for passes in PASSES}
    assert len(outputs) == 1, "\n".join(
        sorted(json.dumps(json.loads(o)["context"]) for o in outputs)
    )


def test_arrival_order_same_instant_actions_are_byte_identical(tmp_path: Path) -> None:
    """An interrupt, a cascade and a discard in the instant calls finish, arrival order."""
    doc: dict[str, Any] = {
        "trioexec_scenario": 1,
        "tools": [
            {"name": "Read", "concurrency_safe": True, "interrupt_behavior": "cancel"},
            {"name": "Bash", "concurrency_safe": True, "cancels_siblings_on_error": True},
        ],
        "calls": [
            {"id": "a", "name": "Read", "input": {"sleep": 1, "steps": [{"context": {"k": "a"}}]}},
            {"id": "b", "name": "Bash", "input": {"sleep": 1, "error": "boom", "command": "x"}},
            {"id": "c", "name": "Read", "input": {"sleep": 1, "steps": [{"context": {"k": "c"}}]}},
            {"id": "d", "name": "Read", "at": 1, "input": {"sleep": 1}},
            {"id": "e", "name": "Read", "at": 1.5, "input": {"sleep": 1}},
        ],
        "actions": [{"at": 1, "do": "interrupt"}, {"at": 1.5, "do": "discard"}],
    }
    outputs = {run_after_stirring(doc, passes, tmp_path) for passes in PASSES}
    assert len(outputs) == 1


def test_batch_actions_happen_at_their_time_whatever_the_file_order(tmp_path: Path) -> None:
    doc: dict[str, Any] = {
        "trioexec_scenario": 1,
        "mode": "batch",
        "tools": [{"name": "Read", "concurrency_safe": True, "interrupt_behavior": "cancel"}],
        "calls": [{"id": "a", "name": "Read", "input": {"sleep": 3, "output": "A"}}],
        "actions": [{"at": 2, "do": "abort"}, {"at": 1, "do": "interrupt"}],
    }
    output = run_scenario_sync(parse_scenario(doc), session_dir=tmp_path).dumps()
    stream = run_scenario_sync(parse_scenario({**doc, "mode": "stream"}), session_dir=tmp_path)
    assert (1.0, "cancelled") in events_of(stream.dumps(), "a")
    assert (1.0, "cancelled") in events_of(output, "a")
