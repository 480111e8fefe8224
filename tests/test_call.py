"""The call record's own rules (``trioexec._core._call``): ids, and the answers decided per call."""

from __future__ import annotations

import pytest

from trioexec import ToolUse
from trioexec._core._call import id_problem, unknown_tool_outcome


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
