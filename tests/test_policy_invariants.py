"""Under every policy, every call is answered exactly once and the start rule holds (hypothesis).

Random turns (both paths; safe, unsafe, failing, cascading and unknown tools;
interrupts, aborts, discards and deadlines at random instants) run as
scenarios on the MockClock, under the three presets and under random
combinations of knobs.  Whatever the policy: one answer per call, released
once (nothing after a discard is released twice or for a stale attempt), no
unsafe call overlapping another, and the same bytes on a rerun.
"""

from __future__ import annotations

from typing import Any

import attrs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trioexec import Policy
from trioexec._scenario._load import parse_scenario
from trioexec._scenario._runner import run_scenario_sync

TOOLS = [
    {"name": "Read", "concurrency_safe": True, "interrupt_behavior": "cancel"},
    {"name": "Grep", "concurrency_safe": True, "interrupt_behavior": "block"},
    {"name": "Edit", "concurrency_safe": False, "interrupt_behavior": "cancel"},
    {"name": "Bash", "concurrency_safe": "input", "cancels_siblings_on_error": True},
    {"name": "Shell", "concurrency_safe": "input", "interrupt_behavior": "cancel"},
]
TIMES = [0.0, 0.5, 1.0, 1.5, 2.0]

policies = st.sampled_from([Policy.preset(name) for name in Policy.preset_names()]) | st.builds(
    Policy,
    result_order=st.sampled_from(["arrival", "completion"]),
    cap_streaming=st.booleans(),
    batch_cascade=st.booleans(),
    cascade_on=st.sampled_from(["declared", frozenset(), frozenset({"Bash"}), frozenset({"Read"})]),
    interrupt_queued=st.sampled_from(["reject", "by-behavior"]),
    discard_cancels=st.booleans(),
    synthetic_texts=st.sampled_from(["claude-code", "trioexec"]),
    partial_output=st.booleans(),
    hooks_fail_closed=st.booleans(),
)


@st.composite
def turns(draw: st.DrawFn) -> dict[str, Any]:
    mode = draw(st.sampled_from(["stream", "batch"]))
    count = draw(st.integers(1, 7))
    arrivals = sorted(draw(st.lists(st.sampled_from(TIMES), min_size=count, max_size=count)))
    calls = []
    for index, at in enumerate(arrivals):
        name = draw(st.sampled_from(["Read", "Grep", "Edit", "Bash", "Shell", "Nope"]))
        job: dict[str, Any] = {"sleep": draw(st.sampled_from([0.0, 0.5, 1.0, 2.0]))}
        if name in ("Bash", "Shell"):
            job["concurrency_safe"] = draw(st.booleans())
            job["command"] = f"cmd {index}"
        if draw(st.booleans()):
            job["steps"] = [{"progress": index}, {"sleep": 0.5}]
        if draw(st.integers(0, 3)) == 0:
            job["error"] = "failed"
        calls.append({"id": f"t{index}", "name": name, "at": at, "input": job})
    kinds = ["interrupt", "abort", "deadline"] + (["discard"] if mode == "stream" else [])
    actions = draw(
        st.lists(
            st.builds(
                lambda at, do: {"at": at, "do": do},
                st.sampled_from(TIMES),
                st.sampled_from(kinds),
            ),
            max_size=2,
        )
    )
    return {
        "trioexec_scenario": 1,
        "mode": mode,
        "max_concurrency": draw(st.integers(1, 3)),
        "tools": TOOLS,
        "calls": calls,
        "actions": actions,
    }


def _overlap(a: tuple[float, float], b: tuple[float, float]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(document=turns(), policy=policies)
def test_every_call_is_answered_once_under_every_policy(
    document: dict[str, Any], policy: Policy, tmp_path_factory: Any
) -> None:
    scenario = attrs.evolve(parse_scenario(document), policy=policy)
    folder = tmp_path_factory.mktemp("session")
    run = run_scenario_sync(scenario, session_dir=folder)
    assert run_scenario_sync(scenario, session_dir=folder).dumps() == run.dumps()

    discarded = any(action["do"] == "discard" for action in document["actions"])
    released = [result.tool_use_id for result in run.results]
    assert len(released) == len(set(released)), "a call was released twice"
    # A deadline ends a streaming run: calls due after it are never handed over.
    deadlines = [a["at"] for a in document["actions"] if a["do"] == "deadline"]
    last = min(deadlines) if deadlines and document["mode"] == "stream" else float("inf")
    ids = [call["id"] for call in document["calls"] if call["at"] <= last]
    if not discarded:
        assert sorted(released) == sorted(ids), "a call was never answered"
    spans: dict[str, tuple[float, float]] = {}
    for call_id in ids:
        events = [event for event in run.events if event.tool_use_id == call_id]
        kinds = [event.kind for event in events]
        assert kinds[0] == "queued"
        assert kinds.count("completed") + kinds.count("cancelled") == 1, (call_id, kinds)
        assert kinds.count("released") == (1 if call_id in released else 0)
        assert kinds.count("started") <= 1
        if "started" in kinds:
            start = next(e.t for e in events if e.kind == "started")
            end = next(e.t for e in events if e.kind in ("completed", "cancelled"))
            spans[call_id] = (start, end)

    # I3 under every policy: an unsafe call never runs beside another call.
    safe = {call.id: _safe(call.name, dict(call.input)) for call in scenario.calls}
    assert set(spans) <= set(ids)
    for one, span in spans.items():
        if safe[one]:
            continue
        for other, other_span in spans.items():
            if other != one:
                assert not _overlap(span, other_span), f"{one} overlapped {other}"


def _safe(name: str, job: dict[str, object]) -> bool:
    if name in ("Read", "Grep"):
        return True
    if name in ("Bash", "Shell"):
        return bool(job.get("concurrency_safe"))
    return False
