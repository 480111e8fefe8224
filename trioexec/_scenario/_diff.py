"""Comparing runs of one scenario under several policies (``trioexec scenario diff``).

:func:`call_facts` boils a run down to what a reader compares per call: the
result text and error flag, when the call started, finished and was
released (None: never), and why it was cancelled.  :func:`render_diff`
prints each run's timeline, then every call on which the runs disagree, one
line per differing fact, the values side by side in policy order, and the
release order when it differs.

Pure: no trio, no I/O.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import attrs

from ._timeline import format_time, render_timeline

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ._report import ScenarioRun

__all__ = ["CallFacts", "call_facts", "differing_calls", "render_diff"]

_TEXT_WIDTH = 64
"""Result texts longer than this are cut (with an ellipsis) in the differences."""

_CONTEXT = 12
"""Characters shown before the first difference of texts that share a long start."""

FACTS = ("result", "is_error", "started", "finished", "released", "cancelled")


@attrs.frozen
class CallFacts:
    """What one run says about one call (None: it did not happen)."""

    result: str | None = None
    is_error: bool | None = None
    started: float | None = None
    finished: float | None = None
    released: float | None = None
    cancelled: str | None = None
    """The cancellation reason, when the call was answered synthetically."""


def call_facts(run: ScenarioRun) -> dict[str, CallFacts]:
    """tool_use id -> the facts of that call in ``run``, in the scenario's call order."""
    found: dict[str, dict[str, object]] = {call.id: {} for call in run.scenario.calls}
    for result in run.results:
        if result.tool_use_id in found:
            found[result.tool_use_id]["result"] = result.text
            found[result.tool_use_id]["is_error"] = result.is_error
    for event in run.events:
        facts = found.get(event.tool_use_id)
        if facts is None:
            continue
        if event.kind == "started":
            facts["started"] = event.t
        elif event.kind in ("completed", "cancelled"):
            facts["finished"] = event.t
            if event.kind == "cancelled":
                facts["cancelled"] = event.reason or "cancelled"
        elif event.kind == "released":
            facts["released"] = event.t
    return {call_id: CallFacts(**facts) for call_id, facts in found.items()}  # type: ignore[arg-type]


def differing_calls(runs: Sequence[ScenarioRun]) -> dict[str, list[str]]:
    """tool_use id -> the facts (names in :data:`FACTS`) on which the runs disagree."""
    per_run = [call_facts(run) for run in runs]
    differing: dict[str, list[str]] = {}
    for call_id in per_run[0]:
        names = [
            name for name in FACTS if len({getattr(facts[call_id], name) for facts in per_run}) > 1
        ]
        if names:
            differing[call_id] = names
    return differing


def render_diff(labels: Sequence[str], runs: Sequence[ScenarioRun]) -> str:
    """Each run's timeline under its label, then what differs per call.

    Args:
        labels: one per run (the policy names), in the order to show them.
        runs: runs of one scenario, one per label.

    Returns:
        Text ending with a newline; its last line says how many calls differ.
    """
    out: list[str] = []
    for label, run in zip(labels, runs, strict=True):
        out.append(f"=== policy {label} ===")
        out.append(render_timeline(run).rstrip("\n"))
        out.append("")
    out.append(f"=== differences ({' | '.join(labels)}) ===")
    per_run = [call_facts(run) for run in runs]
    names = {call.id: call.name for call in runs[0].scenario.calls}
    differing = differing_calls(runs)
    width = max((len(name) for name in FACTS), default=0)
    for call_id, facts in differing.items():
        out.append(f"{call_id} ({names[call_id]})")
        for fact in facts:
            values = [getattr(each[call_id], fact) for each in per_run]
            skip = _shared_prefix(values) if fact == "result" else 0
            shown = " | ".join(_show(value, skip) for value in values)
            out.append(f"  {fact:<{width}}  {shown}")
    orders = [[result.tool_use_id for result in run.results] for run in runs]
    if any(order != orders[0] for order in orders):
        out.append("release order")
        for label, order in zip(labels, orders, strict=True):
            out.append(f"  {label}: {' '.join(order) or '(nothing released)'}")
    total = len(per_run[0])
    reordered = any(order != orders[0] for order in orders)
    if differing or reordered:
        also = "; the release order differs" if reordered else ""
        out.append(f"{len(differing)} of {total} calls differ{also}")
    else:
        out.append(f"no differences: the {len(runs)} runs agree on all {total} calls")
    return "\n".join(out) + "\n"


def _shared_prefix(values: Sequence[object]) -> int:
    """How many leading characters to skip so that differing texts show where they differ."""
    texts = [value for value in values if isinstance(value, str)]
    if len(texts) < len(values) or len(texts) < 2:
        return 0
    shared = len(texts[0])
    for text in texts[1:]:
        pairs = enumerate(zip(texts[0], text, strict=False))
        shared = next((i for i, (a, b) in pairs if a != b), shared)
        shared = min(shared, len(text))
    return max(0, shared - _CONTEXT) if shared > _TEXT_WIDTH // 2 else 0


def _show(value: object, skip: int = 0) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return format_time(value)
    text = str(value)
    if skip:
        text = "…" + text[skip:]
    if len(text) > _TEXT_WIDTH:
        text = text[: _TEXT_WIDTH - 1] + "…"
    return json.dumps(text, ensure_ascii=False)
