"""The call record's own rules (``trioexec._core._call``): ids, and the answers decided per call."""

from __future__ import annotations

import pytest

from trioexec import ToolUse
from trioexec._contract._validation import compile_tool
from trioexec._core._call import (
    PROGRESS_KEPT,
    PROGRESS_KEPT_CHARS,
    Call,
    id_problem,
    unknown_tool_outcome,
)
from trioexec.tools import BashProgress, BashTool


@pytest.mark.parametrize("tool_id", ["toolu_01AbC", "a", "x-y_z9"])
def test_an_id_of_letters_digits_underscore_and_dash_is_usable(tool_id: str) -> None:
    assert id_problem(tool_id, set()) is None


@pytest.mark.parametrize("tool_id", ["", "../etc", "a b", "a/b", "é"])
def test_an_id_with_other_characters_is_refused_by_name(tool_id: str) -> None:
    problem = id_problem(tool_id, set())
    assert problem is not None
    assert problem.startswith("<tool_use_error>")
    assert repr(tool_id) in problem


def test_an_id_seen_earlier_in_the_run_is_refused_as_a_duplicate() -> None:
    problem = id_problem("toolu_1", {"toolu_1"})
    assert problem is not None
    assert "Duplicate tool_use id 'toolu_1'" in problem


def test_the_unknown_tool_answer_names_the_tool_as_the_model_sent_it() -> None:
    outcome = unknown_tool_outcome(ToolUse("t1", "Nope", {}))
    assert outcome.result.tool_use_id == "t1"
    assert outcome.result.is_error
    assert outcome.result.content == (
        "<tool_use_error>Error: No such tool available: Nope</tool_use_error>"
    )
    assert outcome.cancel_reason is None  # a real answer: it can never start a cascade


# -- the progress a call keeps (for the output a stopped call had produced) ---------------------

_CHUNK = 65_536  # what a command's output reader hands over at most, decoded


def _flooded(chunks: int, *, as_bash: bool) -> Call:
    call = Call(0, ToolUse("a", "Bash", {}), compile_tool(BashTool()))
    for n in range(chunks):
        text = f"{n:08d}" + "\ufffd" * (_CHUNK - 8)  # binary output, decoded
        call.log_progress(BashProgress(1, "stdout", text, n * _CHUNK) if as_bash else text)
    return call


def _kept_chars(call: Call) -> int:
    log = call.progress_log or []
    return sum(len(item if isinstance(item, str) else item.text) for item in log)  # type: ignore[attr-defined]


@pytest.mark.parametrize("as_bash", [True, False], ids=["BashProgress", "str"])
def test_a_flood_of_progress_keeps_a_bounded_amount_of_text(as_bash: bool) -> None:
    """A 100 MB flood (1,600 chunks of 64 KB) keeps at most PROGRESS_KEPT_CHARS of text,
    twice over while it is being trimmed, plus the chunk that crossed the line."""
    call = _flooded(1_600, as_bash=as_bash)
    assert _kept_chars(call) <= 2 * PROGRESS_KEPT_CHARS + _CHUNK
    # 100 MB in 64 KB chunks would otherwise keep every one of them.
    assert 1_600 * _CHUNK > 2 * PROGRESS_KEPT_CHARS + _CHUNK


def test_the_kept_progress_is_the_latest_and_covers_what_a_stopped_call_shows() -> None:
    call = _flooded(1_600, as_bash=True)
    output = call.output_so_far()
    assert output.startswith(f"{1_600 - len(call.progress_log or []):08d}")
    assert f"{1_599:08d}" in output[-_CHUNK:]
    assert len(output) >= PROGRESS_KEPT_CHARS  # enough for the first and last halves shown


def test_small_progress_items_are_still_bounded_by_count() -> None:
    call = Call(0, ToolUse("a", "T", {}), None)
    for n in range(10 * PROGRESS_KEPT):
        call.log_progress(n)
    assert len(call.progress_log or []) <= 2 * PROGRESS_KEPT
    assert (call.progress_log or [])[-1] == 10 * PROGRESS_KEPT - 1
