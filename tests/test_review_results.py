"""Review of result handling (SPEC §7) and the scenario laboratory (SPEC §8).

Tests marked ``xfail(strict=True)`` reproduce a defect: they start passing, and
so fail the suite, once the defect is fixed (then drop the marker).  The
unmarked tests guard subtle behaviour the review confirmed.

Runs that must not depend on trio's scheduling are repeated after other trio
runs that leave trio's scheduling randomness in a different state each time.
"""

from __future__ import annotations

import errno
import json
import threading
from typing import TYPE_CHECKING, Any, Self

import pytest
import trio
import trio.testing

from trioexec import ContentReplacementState, ToolResult
from trioexec._results import tool_result_path
from trioexec._stream_adapter import ToolUseAssembler
from trioexec.results import apply_message_budget, finalize_result
from trioexec.testing import ScriptedTool, parse_scenario, run_scenario, run_scenario_sync

if TYPE_CHECKING:
    from pathlib import Path

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


# --- scenario output: byte-identical runs (SPEC §8) ----------------------------------------


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
    """Guard: an interrupt, a cascade and a discard in the instant calls finish, arrival order."""
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


async def test_persisting_a_result_does_not_move_virtual_time(
    autojump_clock: trio.testing.MockClock, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A disk that answers in real time: the worker thread is busy until the
    # virtual clock reaches 0.75 (bug) or for at most one real second (fixed).
    disk = threading.Event()
    real_open = trio.open_file

    async def slow_disk_open(*args: Any, **kwargs: Any) -> Any:
        await trio.to_thread.run_sync(disk.wait, 1.0)
        return await real_open(*args, **kwargs)

    monkeypatch.setattr(trio, "open_file", slow_disk_open)
    scenario = parse_scenario(
        {
            "trioexec_scenario": 1,
            "tools": [{"name": "Grep", "concurrency_safe": True}],
            "calls": [
                {"id": "big", "name": "Grep", "input": {"sleep": 0.5, "output_size": 60_000}},
                {"id": "slow", "name": "Grep", "input": {"sleep": 2.0, "output": "s"}},
            ],
        }
    )

    async def later_deadline() -> None:
        await trio.sleep(0.75)
        disk.set()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(later_deadline)
        run = await run_scenario(scenario, session_dir=tmp_path)
    completed = [e.t for e in run.events if e.tool_use_id == "big" and e.kind == "completed"]
    assert run.results[0].text.startswith("<persisted-output>")
    assert completed == [0.5]


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


# --- persisted files (SPEC §7) -------------------------------------------------------------


class _FullDisk:
    """An async file whose write stores half the data and then fails (a full disk)."""

    def __init__(self, file: Any) -> None:
        self._file = file

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._file.aclose()

    async def write(self, data: str) -> int:
        await self._file.write(data[: len(data) // 2])
        raise OSError(errno.ENOSPC, "No space left on device")


async def test_a_failed_write_never_leaves_a_file_that_is_reused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    grep = ScriptedTool("Grep", concurrency_safe=True)
    text = "0123456789\n" * 6_000
    real_open = trio.open_file

    async def full_disk_open(*args: Any, **kwargs: Any) -> Any:
        return _FullDisk(await real_open(*args, **kwargs))

    with monkeypatch.context() as patch:
        patch.setattr(trio, "open_file", full_disk_open)
        first = await finalize_result(grep, ToolResult("toolu_1", text), session_dir=tmp_path)
    assert first.content == text  # the failed write keeps the result inline, as documented
    out = await apply_message_budget(
        [first], state=ContentReplacementState(), session_dir=tmp_path, budget=10_000
    )
    saved = tool_result_path(tmp_path, "toolu_1", is_json=False)
    assert out[0].content == text or saved.read_text("utf-8") == text


async def test_an_existing_file_with_other_contents_is_not_reused(tmp_path: Path) -> None:
    grep = ScriptedTool("Grep", concurrency_safe=True)
    saved = tool_result_path(tmp_path, "toolu_1", is_json=False)
    saved.parent.mkdir(parents=True)
    saved.write_text("an older result of another run", encoding="utf-8")
    text = "new line\n" * 7_000
    out = await finalize_result(grep, ToolResult("toolu_1", text), session_dir=tmp_path)
    assert out.content == text or saved.read_text("utf-8") == text


async def test_output_that_only_starts_like_a_wrapper_is_still_persisted(tmp_path: Path) -> None:
    bash = ScriptedTool("Bash")
    text = "<persisted-output>\n" + "log line\n" * 30_000  # e.g. `cat` of a saved transcript
    per_call = await finalize_result(bash, ToolResult("toolu_1", text), session_dir=tmp_path)
    budget = await apply_message_budget(
        [ToolResult("toolu_2", text)], state=ContentReplacementState(), session_dir=tmp_path
    )
    assert len(per_call.text) < 10_000
    assert len(budget[0].text) < 10_000


# --- the per-message budget (SPEC §7) ------------------------------------------------------


async def test_reapplying_a_message_with_a_repeated_id_is_byte_identical(tmp_path: Path) -> None:
    results = [ToolResult("toolu_1", "x" * 5_000), ToolResult("toolu_1", "x" * 5_000)]
    state = ContentReplacementState()
    first = await apply_message_budget(results, state=state, session_dir=tmp_path, budget=8_000)
    again = await apply_message_budget(results, state=state, session_dir=tmp_path, budget=8_000)
    assert again == first


async def test_budget_reapplied_after_a_json_round_trip_is_byte_identical(tmp_path: Path) -> None:
    """Guard: ties, frozen, error, image-free and math.inf results through to_json/from_json."""
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


# --- ToolUseAssembler ----------------------------------------------------------------------


def _start(index: int, tool_id: str) -> dict[str, Any]:
    block = {"type": "tool_use", "id": tool_id, "name": "Bash", "input": {}}
    return {"type": "content_block_start", "index": index, "content_block": block}


def _delta(index: int, text: str) -> dict[str, Any]:
    delta = {"type": "input_json_delta", "partial_json": text}
    return {"type": "content_block_delta", "index": index, "delta": delta}


def _stop(index: int) -> dict[str, Any]:
    return {"type": "content_block_stop", "index": index}


def _assemble(text: str) -> Any:
    assembler = ToolUseAssembler()
    assembler.feed(_start(0, "toolu_1"))
    assembler.feed(_delta(0, text))
    return assembler.feed(_stop(0))


@pytest.mark.parametrize(
    "text", ['{"n": ' + "1" * 5_000 + "}", "[" * 100_000 + "]" * 100_000], ids=["digits", "deep"]
)
def test_unparseable_input_is_handed_over_not_raised(text: str) -> None:
    tool_use = _assemble(text)
    assert tool_use.input == {"__unparsed_input__": text}


def test_non_json_constants_are_not_accepted_as_input() -> None:
    tool_use = _assemble('{"n": NaN}')
    json.dumps(tool_use.to_api(), allow_nan=False)


def test_a_restarted_block_index_does_not_lose_a_tool_use() -> None:
    assembler = ToolUseAssembler()
    assembler.feed(_start(1, "toolu_1"))
    assembler.feed(_delta(1, '{"command": "ls"}'))
    lost = False
    try:
        assembler.feed(_start(1, "toolu_2"))
    except ValueError:  # MalformedBlockError is a ValueError: refusing is fine too
        lost = True
    assembler.feed(_delta(1, '{"command": "pwd"}'))
    assembler.feed(_stop(1))
    assert lost or [t.id for t in assembler.sealed] == ["toolu_1", "toolu_2"]
