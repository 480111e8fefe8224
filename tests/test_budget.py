"""The per-message budget and ContentReplacementState."""

from __future__ import annotations

import json
import math
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing
from hypothesis import given, settings
from hypothesis import strategies as st

from trioexec import ContentReplacementState, ImageBlock, TextBlock, ToolResult
from trioexec._errors import ConfigurationError
from trioexec._results._budget import (
    DEFAULT_MESSAGE_BUDGET,
    apply_message_budget,
    choose_replacements,
)
from trioexec._results._persist import content_size, plan_persistence

IMAGE = ImageBlock({"type": "base64", "media_type": "image/png", "data": "AAAA"})


def text(n: int, width: int = 79) -> str:
    return (("x" * width + "\n") * (n // (width + 1) + 1))[:n]


def total(results: list[ToolResult]) -> int:
    return sum(content_size(r.content) for r in results)


def exists(path: Path) -> bool:
    return path.exists()


EIGHT_SIZES = [25_000, 29_000, 22_000, 27_000, 24_000, 28_000, 23_000, 26_000]


def eight() -> list[ToolResult]:
    return [ToolResult(f"toolu_{size}", text(size)) for size in EIGHT_SIZES]


# -- the decision --------------------------------------------------------------------------------


async def test_eight_results_only_the_largest_is_persisted(tmp_path: Path) -> None:
    results = eight()
    assert total(results) == 204_000
    state = ContentReplacementState()
    out = await apply_message_budget(results, state=state, session_dir=tmp_path)
    replaced = [r.tool_use_id for r in out if r.content != results[out.index(r)].content]
    assert replaced == ["toolu_29000"]
    assert (
        out[1].content == plan_persistence(results[1].content, "toolu_29000", tmp_path).replacement
    )
    assert [r.content for i, r in enumerate(out) if i != 1] == [
        r.content for i, r in enumerate(results) if i != 1
    ]
    assert (tmp_path / "tool-results" / "toolu_29000.txt").read_text() == results[1].content
    assert [p.name for p in (tmp_path / "tool-results").iterdir()] == ["toolu_29000.txt"]
    assert state.seen_ids == {r.tool_use_id for r in results}
    assert set(state.replacements) == {"toolu_29000"}
    assert total(out) <= DEFAULT_MESSAGE_BUDGET


def test_exactly_at_budget_persists_nothing(tmp_path: Path) -> None:
    results = [ToolResult("a", text(100_000)), ToolResult("b", text(100_000))]
    plan = choose_replacements(results, state=ContentReplacementState(), session_dir=tmp_path)
    assert plan.persist == ()
    assert plan.kept == {"a", "b"}
    one_more = [*results, ToolResult("c", "z")]
    plan = choose_replacements(one_more, state=ContentReplacementState(), session_dir=tmp_path)
    assert [p.tool_use_id for p in plan.persist] == ["a"]


def test_ties_go_to_the_earlier_call(tmp_path: Path) -> None:
    results = [ToolResult(i, text(70_000)) for i in ("first", "second", "third")]
    plan = choose_replacements(results, state=ContentReplacementState(), session_dir=tmp_path)
    assert [p.tool_use_id for p in plan.persist] == ["first"]


def test_largest_first_until_it_fits(tmp_path: Path) -> None:
    results = [ToolResult(f"t{n}", text(n)) for n in (60_000, 90_000, 80_000, 70_000)]
    plan = choose_replacements(results, state=ContentReplacementState(), session_dir=tmp_path)
    # 300,000 -> drop 90,000 (still 210,000 + preview) -> drop 80,000.
    assert [p.tool_use_id for p in plan.persist] == ["t90000", "t80000"]
    assert plan.total_before == 300_000
    assert plan.total_after == 130_000 + sum(len(p.plan.replacement) for p in plan.persist)


def test_choose_is_pure(tmp_path: Path) -> None:
    state = ContentReplacementState()
    plan = choose_replacements(eight(), state=state, session_dir=tmp_path)
    assert len(plan.persist) == 1
    assert state.to_json() == {"seen_ids": [], "replacements": {}}
    assert not exists(tmp_path / "tool-results")


async def test_frozen_result_over_budget_stays_inline(tmp_path: Path) -> None:
    state = ContentReplacementState(seen_ids={"big"})
    results = [ToolResult("big", text(250_000))]
    out = await apply_message_budget(results, state=state, session_dir=tmp_path)
    assert out == results
    assert not exists(tmp_path / "tool-results")
    assert state.replacements == {}


async def test_frozen_counts_but_only_fresh_results_move(tmp_path: Path) -> None:
    state = ContentReplacementState(seen_ids={"old"})
    results = [ToolResult("old", text(190_000)), ToolResult("new", text(30_000))]
    out = await apply_message_budget(results, state=state, session_dir=tmp_path)
    assert out[0] == results[0]
    assert isinstance(out[1].content, str)
    assert out[1].content.startswith("<persisted-output>")
    assert total(out) <= DEFAULT_MESSAGE_BUDGET


async def test_seen_result_is_never_replaced_later(tmp_path: Path) -> None:
    state = ContentReplacementState()
    first = [ToolResult("a", text(150_000))]
    assert await apply_message_budget(first, state=state, session_dir=tmp_path) == first
    assert state.seen_ids == {"a"}
    # The same result in a message that is now over budget: "a" is frozen, "b" goes.
    again = [ToolResult("a", text(150_000)), ToolResult("b", text(100_000))]
    out = await apply_message_budget(again, state=state, session_dir=tmp_path)
    assert out[0] == again[0]
    assert set(state.replacements) == {"b"}


async def test_non_candidates_count_but_never_move(tmp_path: Path) -> None:
    results = [
        ToolResult("err", text(120_000), is_error=True),
        ToolResult("img", (TextBlock(text(120_000)), IMAGE)),
        ToolResult("read", text(120_000)),
        ToolResult("fresh", text(10_000)),
    ]
    state = ContentReplacementState()
    out = await apply_message_budget(
        results, state=state, session_dir=tmp_path, limits={"read": math.inf, "fresh": 30_000}
    )
    assert out[:3] == results[:3]
    assert isinstance(out[3].content, str)
    assert out[3].content.startswith("<persisted-output>")
    # Errors and images are never recorded; the infinite-limit result is seen (frozen).
    assert state.seen_ids == {"read", "fresh"}


async def test_already_persisted_and_empty_are_not_candidates(tmp_path: Path) -> None:
    wrapper = plan_persistence(text(60_000), "w", tmp_path).replacement
    results = [ToolResult("w", wrapper), ToolResult("e", ""), ToolResult("big", text(300_000))]
    state = ContentReplacementState()
    out = await apply_message_budget(results, state=state, session_dir=tmp_path)
    assert out[:2] == results[:2]
    assert state.seen_ids == {"big"}
    assert set(state.replacements) == {"big"}


def test_replacement_that_would_not_shrink_is_skipped(tmp_path: Path) -> None:
    results = [ToolResult("a", text(1_000)), ToolResult("b", text(900))]
    plan = choose_replacements(
        results, state=ContentReplacementState(), session_dir=tmp_path, budget=100
    )
    assert plan.persist == ()
    assert plan.kept == {"a", "b"}


async def test_without_session_dir_the_largest_is_cut_and_the_message_fits() -> None:
    state = ContentReplacementState()
    results = eight()
    out = await apply_message_budget(results, state=state, session_dir=None)
    changed = [r.tool_use_id for r, o in zip(results, out, strict=True) if r != o]
    assert changed == [max(results, key=lambda r: len(str(r.content))).tool_use_id]
    assert total(out) <= DEFAULT_MESSAGE_BUDGET
    (cut,) = (o for r, o in zip(results, out, strict=True) if r != o)
    assert isinstance(cut.content, str)
    assert cut.content.startswith("<truncated-output>\nOutput too large (")
    assert state.seen_ids == {r.tool_use_id for r in results}
    assert state.replacements == {cut.tool_use_id: cut.content}
    assert await apply_message_budget(results, state=state, session_dir=None) == out


async def test_failed_write_stays_inline_and_fresh(tmp_path: Path) -> None:
    blocker = tmp_path / "blocker"
    blocker.write_text("a file, not a folder")
    state = ContentReplacementState()
    results = eight()
    out = await apply_message_budget(results, state=state, session_dir=blocker)
    assert out == results
    assert "toolu_29000" not in state.seen_ids
    # A later attempt with a usable folder persists it.
    out = await apply_message_budget(results, state=state, session_dir=tmp_path / "s")
    assert set(state.replacements) == {"toolu_29000"}
    assert out[1].content != results[1].content


async def test_duplicate_id_is_a_candidate_once(tmp_path: Path) -> None:
    results = [ToolResult("dup", text(150_000)), ToolResult("dup", text(150_001))]
    plan = choose_replacements(results, state=ContentReplacementState(), session_dir=tmp_path)
    assert [p.index for p in plan.persist] == [0]


async def test_several_files_written_concurrently(tmp_path: Path) -> None:
    results = [ToolResult(f"t{i}", text(100_000)) for i in range(5)]
    state = ContentReplacementState()
    out = await apply_message_budget(results, state=state, session_dir=tmp_path)
    assert len(state.replacements) == 4
    assert total(out) <= DEFAULT_MESSAGE_BUDGET
    assert sorted(p.name for p in (tmp_path / "tool-results").iterdir()) == [
        f"t{i}.txt" for i in range(4)
    ]


async def test_cancelled_budget_leaves_state_unchanged(tmp_path: Path) -> None:
    state = ContentReplacementState()
    with trio.CancelScope() as scope:
        scope.cancel(reason="test")
        await apply_message_budget(eight(), state=state, session_dir=tmp_path)
    assert scope.cancelled_caught
    assert state.to_json() == {"seen_ids": [], "replacements": {}}


# -- stability -----------------------------------------------------------------------------------


async def test_reapplying_state_is_byte_identical_without_disk(tmp_path: Path) -> None:
    session = tmp_path / "session"
    state = ContentReplacementState()
    results = eight()
    first = await apply_message_budget(results, state=state, session_dir=session)
    saved = state.to_json()
    shutil.rmtree(session)
    again = await apply_message_budget(results, state=state, session_dir=session)
    assert [json.dumps(r.to_api()) for r in again] == [json.dumps(r.to_api()) for r in first]
    on_output = await apply_message_budget(first, state=state, session_dir=session)
    assert on_output == first
    assert not exists(session)
    assert state.to_json() == saved


async def test_serialise_load_rebuilds_identical_bytes(tmp_path: Path) -> None:
    state = ContentReplacementState()
    results = [
        *eight(),
        ToolResult("small", "ok"),
        ToolResult("blocks", (TextBlock(text(90_000)),)),
    ]
    first = await apply_message_budget(results, state=state, session_dir=tmp_path)
    saved = json.dumps(state.to_json())
    resumed = ContentReplacementState.from_json(json.loads(saved))
    assert json.dumps(resumed.to_json()) == saved
    rebuilt = await apply_message_budget(results, state=resumed, session_dir=tmp_path / "gone")
    assert json.dumps([r.to_api() for r in rebuilt]) == json.dumps([r.to_api() for r in first])
    assert not exists(tmp_path / "gone")


def test_to_json_is_sorted_and_plain() -> None:
    state = ContentReplacementState(seen_ids={"b", "a", "c"}, replacements={"c": "C", "a": "A"})
    data = state.to_json()
    assert data == {"seen_ids": ["a", "b", "c"], "replacements": {"a": "A", "c": "C"}}
    assert list(data["replacements"]) == ["a", "c"]


@pytest.mark.parametrize(
    "data",
    [
        None,
        [],
        {"seen_ids": "abc", "replacements": {}},
        {"seen_ids": [1], "replacements": {}},
        {"seen_ids": [], "replacements": {"a": 1}},
        {"seen_ids": [], "replacements": []},
        {"seen_ids": [], "replacements": {}, "extra": True},
    ],
)
def test_from_json_rejects_malformed_state(data: Any) -> None:
    with pytest.raises(ConfigurationError, match="invalid ContentReplacementState"):
        ContentReplacementState.from_json(data)


def test_state_has_identity_semantics() -> None:
    assert ContentReplacementState() != ContentReplacementState()


# -- properties ----------------------------------------------------------------------------------

KINDS = ["fresh", "fresh", "fresh", "frozen", "replaced", "error", "image", "infinite", "empty"]


@st.composite
def messages(draw: st.DrawFn) -> tuple[list[ToolResult], ContentReplacementState, dict[str, float]]:
    count = draw(st.integers(0, 10))
    results: list[ToolResult] = []
    state = ContentReplacementState()
    limits: dict[str, float] = {}
    for i in range(count):
        tool_use_id = f"t{i}"
        kind = draw(st.sampled_from(KINDS))
        size = draw(st.one_of(st.integers(0, 4_000), st.integers(4_000, 90_000)))
        width = draw(st.integers(10, 3_000))
        body = text(size, width)
        if kind == "error":
            results.append(ToolResult(tool_use_id, body or "e", is_error=True))
        elif kind == "image":
            results.append(ToolResult(tool_use_id, (TextBlock(body), IMAGE)))
        elif kind == "empty":
            results.append(ToolResult(tool_use_id, ""))
        else:
            results.append(ToolResult(tool_use_id, body or "x"))
        if kind == "frozen":
            state.seen_ids.add(tool_use_id)
        elif kind == "replaced":
            state.seen_ids.add(tool_use_id)
            state.replacements[tool_use_id] = f"<persisted-output>\n{tool_use_id}\n"
        elif kind == "infinite":
            limits[tool_use_id] = math.inf
        else:
            limits[tool_use_id] = draw(st.sampled_from([100_000, 50_000, 1_000]))
    return results, state, limits


BUDGETS = st.one_of(st.sampled_from([0, 2_000, 50_000, 100_000, 200_000]), st.integers(0, 400_000))


def fresh_indices(
    results: list[ToolResult], state: ContentReplacementState, limits: dict[str, float]
) -> list[int]:
    return [
        i
        for i, r in enumerate(results)
        if not r.is_error
        and isinstance(r.content, str)
        and r.content
        and r.tool_use_id not in state.seen_ids
        and limits[r.tool_use_id] != math.inf
    ]


def floor_size(
    results: list[ToolResult],
    state: ContentReplacementState,
    limits: dict[str, float],
    session_dir: Path,
) -> int:
    """The smallest total the budget may reach: only fresh candidates can shrink."""
    size = 0
    for r in results:
        n = content_size(r.content)
        candidate = not r.is_error and not isinstance(r.content, tuple) and r.content != ""
        if candidate and r.tool_use_id in state.replacements:
            size += len(state.replacements[r.tool_use_id])
        elif (
            candidate and r.tool_use_id not in state.seen_ids and limits[r.tool_use_id] != math.inf
        ):
            size += min(n, len(plan_persistence(r.content, r.tool_use_id, session_dir).replacement))
        else:
            size += n
    return size


def run_budget(
    results: list[ToolResult],
    state: ContentReplacementState,
    limits: dict[str, float],
    session_dir: Path,
    budget: int,
) -> list[ToolResult]:
    async def main() -> list[ToolResult]:
        return await apply_message_budget(
            results, state=state, session_dir=session_dir, budget=budget, limits=limits
        )

    return trio.run(main)


@settings(deadline=None, max_examples=150)
@given(messages(), BUDGETS)
def test_property_within_budget_unless_nothing_more_can_move(
    message: tuple[list[ToolResult], ContentReplacementState, dict[str, float]], budget: int
) -> None:
    results, state, limits = message
    session_dir = Path("/nonexistent/session")
    floor = floor_size(results, state, limits, session_dir)
    plan = choose_replacements(
        results, state=state, session_dir=session_dir, budget=budget, limits=limits
    )
    after = plan.apply(results, {p.index for p in plan.persist})
    assert total(after) == plan.total_after
    assert plan.total_after <= budget or plan.total_after == floor
    # Largest first: a fresh result kept inline, although replacing it would shrink the
    # message, is never larger than one that was persisted.
    persisted = {p.index for p in plan.persist}
    smallest_persisted = min((content_size(results[i].content) for i in persisted), default=None)
    for i in fresh_indices(results, state, limits):
        r = results[i]
        shrinks = len(plan_persistence(r.content, r.tool_use_id, session_dir).replacement) < (
            content_size(r.content)
        )
        if i not in persisted and shrinks and smallest_persisted is not None:
            assert content_size(r.content) <= smallest_persisted


@settings(deadline=None, max_examples=60)
@given(messages(), BUDGETS)
def test_property_applying_twice_changes_nothing(
    message: tuple[list[ToolResult], ContentReplacementState, dict[str, float]], budget: int
) -> None:
    results, state, limits = message
    before = ContentReplacementState.from_json(state.to_json())
    with tempfile.TemporaryDirectory() as folder:
        session_dir = Path(folder)
        once = run_budget(results, state, limits, session_dir, budget)
        saved = state.to_json()
        assert run_budget(results, state, limits, session_dir, budget) == once
        assert run_budget(once, state, limits, session_dir, budget) == once
        assert state.to_json() == saved
        assert total(once) <= budget or total(once) == floor_size(
            results, before, limits, session_dir
        )


async def test_a_repeated_id_is_replaced_at_its_first_occurrence_only(tmp_path: Path) -> None:
    results = [ToolResult("toolu_1", "x" * 5_000), ToolResult("toolu_1", "x" * 5_000)]
    state = ContentReplacementState()
    for _ in range(2):
        out = await apply_message_budget(results, state=state, session_dir=tmp_path, budget=8_000)
        assert out[0].text.startswith("<persisted-output>")
        assert out[1] == results[1]


# -- reapplying a decision is byte-identical -----------------------------------------------------


async def test_reapplying_a_message_with_a_repeated_id_is_byte_identical(tmp_path: Path) -> None:
    results = [ToolResult("toolu_1", "x" * 5_000), ToolResult("toolu_1", "x" * 5_000)]
    state = ContentReplacementState()
    first = await apply_message_budget(results, state=state, session_dir=tmp_path, budget=8_000)
    again = await apply_message_budget(results, state=state, session_dir=tmp_path, budget=8_000)
    assert again == first


async def test_budget_reapplied_after_a_json_round_trip_is_byte_identical(tmp_path: Path) -> None:
    """Ties, frozen, error, image-free and math.inf results through to_json/from_json."""
    results = [ToolResult(f"toolu_{i}", chr(97 + i % 3) * 30_000) for i in range(8)]
    results += [
        ToolResult("toolu_err", "e" * 60_000, is_error=True),
        ToolResult("toolu_read", "r" * 60_000),
    ]
    limits = {"toolu_read": float("inf")}
    state = ContentReplacementState(seen_ids={"toolu_0"})
    first = await apply_message_budget(results, state=state, session_dir=tmp_path, limits=limits)
    replaced = [r.tool_use_id for r, o in zip(results, first, strict=True) if r != o]
    # 360,000 characters: equal sizes go earliest first; toolu_0 is frozen, the error and the
    # math.inf Read are never candidates.
    assert replaced == ["toolu_1", "toolu_2", "toolu_3", "toolu_4", "toolu_5", "toolu_6"]
    resumed = ContentReplacementState.from_json(json.loads(json.dumps(state.to_json())))
    again = await apply_message_budget(results, state=resumed, session_dir=None, limits=limits)
    assert again == first
