"""Scenario files: schema and cross-field checks, with messages naming the field at fault."""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trioexec._scenario._load import (
    ScenarioError,
    _call_validator,
    _plainly_valid_call,
    check_document,
    load_scenario,
    parse_scenario,
    read_document,
    scenario_schema,
)

if TYPE_CHECKING:
    from pathlib import Path


def minimal(**extra: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "trioexec_scenario": 1,
        "tools": [{"name": "Read", "concurrency_safe": True}],
        "calls": [{"id": "toolu_1", "name": "Read", "at": 0, "input": {"sleep": 1}}],
    }
    doc.update(extra)
    return doc


def messages(doc: object) -> list[str]:
    return [str(issue) for issue in check_document(doc)]


def test_minimal_document_is_valid_and_gets_defaults() -> None:
    scenario = parse_scenario(minimal())
    assert messages(minimal()) == []
    assert scenario.mode == "stream"
    assert scenario.max_concurrency == 10
    assert scenario.result_order == "arrival"
    assert scenario.message_budget == 200_000
    assert scenario.tools[0].max_result_size_chars == 100_000
    assert scenario.tools[0].interrupt_behavior == "block"
    assert scenario.calls[0].tool_use().input == {"sleep": 1}


def test_null_max_result_size_means_infinity() -> None:
    doc = minimal(tools=[{"name": "Read", "max_result_size_chars": None}])
    assert parse_scenario(doc).tools[0].max_result_size_chars == math.inf


def test_schema_is_shipped_as_package_data() -> None:
    schema = scenario_schema()
    assert schema["properties"]["trioexec_scenario"] == {"const": 1}


def test_wrong_type_names_the_field_and_call_id() -> None:
    doc = minimal(calls=[{"id": "toolu_9", "name": "Read", "at": "soon"}])
    assert messages(doc) == ['calls[0] (id "toolu_9").at: expected number, got string']


def test_negative_time_names_the_call() -> None:
    doc = minimal(calls=[{"id": "a", "name": "Read", "at": -1}])
    assert messages(doc) == ['calls[0] (id "a").at: must be a time >= 0, got -1']


@pytest.mark.parametrize(
    ("value", "shown"), [(math.inf, "Infinity"), (-math.inf, "-Infinity"), (math.nan, "NaN")]
)
def test_non_finite_numbers_are_refused(value: float, shown: str) -> None:
    doc = minimal(actions=[{"at": value, "do": "interrupt"}])
    assert messages(doc) == [f"actions[0].at: must be finite, got {shown}"]


def test_non_finite_inside_an_input_is_refused_too(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text(
        '{"trioexec_scenario": 1, "tools": [], "calls": '
        '[{"id": "x", "name": "T", "input": {"sleep": NaN}}]}'
    )
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    assert str(info.value) == f'{path}: calls[0] (id "x").input.sleep: must be finite, got NaN'


def test_unknown_action_is_named() -> None:
    doc = minimal(actions=[{"at": 1, "do": "explode"}])
    assert messages(doc) == [
        'actions[0].do: unknown action "explode" '
        '(expected "interrupt", "abort", "discard" or "deadline")'
    ]


def test_missing_and_unknown_fields() -> None:
    doc = minimal(calls=[{"name": "Read", "sleep": 2}])
    assert messages(doc) == [
        'calls[0].sleep: unknown field (a scripted tool\'s input goes under "input")',
        "calls[0].id: required field is missing",
    ]


def test_top_level_required_fields() -> None:
    assert messages({}) == [
        "trioexec_scenario: required field is missing",
        "tools: required field is missing",
        "calls: required field is missing",
    ]


def test_top_level_must_be_an_object() -> None:
    assert messages([1, 2]) == ["expected object, got array"]


def test_version_and_enums() -> None:
    doc = minimal(trioexec_scenario=2, mode="fast")
    assert messages(doc) == [
        "trioexec_scenario: expected 1, got 2",
        'mode: expected "stream" or "batch", got "fast"',
    ]


def test_tool_entry_fields_name_the_tool() -> None:
    doc = minimal(tools=[{"name": "Bash", "concurrency_safe": "yes", "permission": "maybe"}])
    assert messages(doc) == [
        'tools[0] (name "Bash").concurrency_safe: expected true, false or "input", got "yes"',
        'tools[0] (name "Bash").permission: expected "allow", "ask" or "deny", got "maybe"',
    ]


def test_integer_fields_refuse_fractions_and_booleans() -> None:
    assert messages(minimal(max_concurrency=2.5)) == [
        "max_concurrency: expected integer, got a non-integer number"
    ]
    assert messages(minimal(max_concurrency=True)) == [
        "max_concurrency: expected integer, got boolean"
    ]
    assert messages(minimal(max_concurrency=0)) == ["max_concurrency: must be a number >= 1, got 0"]


def test_duplicate_call_ids() -> None:
    doc = minimal(
        calls=[
            {"id": "toolu_1", "name": "Read"},
            {"id": "toolu_2", "name": "Read"},
            {"id": "toolu_1", "name": "Read"},
        ]
    )
    assert messages(doc) == [
        'calls[2] (id "toolu_1").id: duplicate call id, already used by calls[0]'
    ]


def test_duplicate_tool_names() -> None:
    doc = minimal(tools=[{"name": "Read"}, {"name": "Read"}])
    assert messages(doc) == [
        'tools[1] (name "Read").name: duplicate tool name, already declared by tools[0]'
    ]


def test_call_naming_no_declared_tool_is_allowed() -> None:
    doc = minimal(calls=[{"id": "toolu_1", "name": "NoSuchTool"}])
    assert messages(doc) == []


def test_stream_calls_must_arrive_in_file_order() -> None:
    doc = minimal(
        calls=[{"id": "a", "name": "Read", "at": 2}, {"id": "b", "name": "Read", "at": 1}]
    )
    assert messages(doc) == [
        'calls[1] (id "b").at: 1 is earlier than a call before it (2); calls arrive in file order'
    ]
    assert messages({**doc, "mode": "batch"}) == []


def test_discard_only_in_stream_mode() -> None:
    doc = minimal(mode="batch", actions=[{"at": 1, "do": "discard"}])
    assert messages(doc) == [
        'actions[0].do: "discard" needs mode "stream" (it abandons a streaming executor)'
    ]


def test_call_input_is_not_checked_here() -> None:
    # A bad scripted input is a layer-1 error *result*, part of what a scenario can show.
    doc = minimal(calls=[{"id": "a", "name": "Read", "input": {"sleep": "x", "bogus": 1}}])
    assert messages(doc) == []


def test_issues_come_in_document_order() -> None:
    doc = {
        "trioexec_scenario": 1,
        "tools": [{"name": "A", "interrupt_behavior": "never"}],
        "calls": [{"id": "c", "name": "A", "at": -1}],
        "actions": [{"at": 1, "do": "stop"}],
    }
    assert [issue.where for issue in check_document(doc)] == [
        'tools[0] (name "A").interrupt_behavior',
        'calls[0] (id "c").at',
        "actions[0].do",
    ]


def test_error_string_is_one_line_with_a_count(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(minimal(mode="x", result_order="y")))
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    text = str(info.value)
    assert "\n" not in text
    assert text == f'{path}: mode: expected "stream" or "batch", got "x" (and 1 more issue)'
    assert len(info.value.issues) == 2


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="cannot read file: No such file or directory"):
        read_document(tmp_path / "missing.json")


def test_invalid_json_names_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text('{"trioexec_scenario": 1,\n  "tools": [}\n')
    with pytest.raises(ScenarioError) as info:
        read_document(path)
    assert str(info.value).startswith(f"{path}: invalid JSON at line 2 column 13: ")


def test_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(b'{"name": "\xff"}')
    with pytest.raises(ScenarioError, match=r"not UTF-8 text \(byte 10\)"):
        read_document(path)


json_scalars = (
    st.none() | st.booleans() | st.integers(-3, 3) | st.floats(-2, 2) | st.text(max_size=3)
)
call_like = st.dictionaries(
    st.sampled_from(["id", "name", "at", "input", "sleep"]),
    json_scalars | st.dictionaries(st.text(max_size=2), json_scalars, max_size=2),
    max_size=5,
)


@given(entry=call_like)
@settings(max_examples=300, deadline=None)
def test_fast_call_check_implies_the_schema(entry: dict[str, object]) -> None:
    if _plainly_valid_call(entry):
        assert _call_validator().is_valid(entry)


def test_invalid_calls_are_reported_with_their_index() -> None:
    calls: list[dict[str, object]] = [{"id": f"c{i}", "name": "Read"} for i in range(5)]
    calls[3] = {"id": "c3", "name": 3}
    assert messages(minimal(calls=calls)) == [
        'calls[3] (id "c3").name: expected string, got number'
    ]


def test_schema_and_cross_field_issues_are_reported_together() -> None:
    doc = minimal(
        calls=[{"id": "toolu_1", "name": "Read"}, {"id": "toolu_1", "name": "Read"}],
        colour="blue",
    )
    assert messages(doc) == [
        'calls[1] (id "toolu_1").id: duplicate call id, already used by calls[0]',
        "colour: unknown field",
    ]


def test_a_broken_entry_still_gets_its_cross_field_issue() -> None:
    doc = minimal(tools=[{"name": "Read"}, {"name": "Read", "permission": "maybe"}])
    assert messages(doc) == [
        'tools[1] (name "Read").name: duplicate tool name, already declared by tools[0]',
        'tools[1] (name "Read").permission: expected "allow", "ask" or "deny", got "maybe"',
    ]


def test_cross_field_rules_skip_what_the_schema_refused() -> None:
    doc = minimal(
        calls=[
            "not a call",
            {"id": 7, "name": "Read"},
            {"id": "a", "name": "Read", "at": 2},
            {"id": "a", "name": "Read", "at": -1},
            {"id": "b", "name": "Read", "at": "soon"},
            {"id": "c", "name": "Read", "at": 1},
        ]
    )
    assert messages(doc) == [
        "calls[0]: expected object, got string",
        "calls[1].id: expected string, got number",
        'calls[3] (id "a").id: duplicate call id, already used by calls[2]',
        # one issue per field: the negative time is not also "earlier than a call before it"
        'calls[3] (id "a").at: must be a time >= 0, got -1',
        'calls[4] (id "b").at: expected number, got string',
        'calls[5] (id "c").at: 1 is earlier than a call before it (2); calls arrive in file order',
    ]


def test_cross_field_rules_need_the_lists_they_check() -> None:
    assert messages(minimal(calls={"id": "a"}, tools="Read")) == [
        "tools: expected array, got string",
        "calls: expected array, got object",
    ]


def test_mode_dependent_rules_wait_for_a_valid_mode() -> None:
    calls = [{"id": "a", "name": "Read", "at": 2}, {"id": "b", "name": "Read", "at": 1}]
    discard = [{"at": 1, "do": "discard"}]
    assert messages(minimal(mode="fast", calls=calls, actions=discard)) == [
        'mode: expected "stream" or "batch", got "fast"'
    ]
    assert messages(minimal(mode="batch", actions=discard, max_concurrency=0)) == [
        'actions[0].do: "discard" needs mode "stream" (it abandons a streaming executor)',
        "max_concurrency: must be a number >= 1, got 0",
    ]


def test_permission_rules_are_checked_next_to_schema_issues() -> None:
    doc = minimal(permissions={"allow": ["Bash(ls", "", 3], "ask": "Read", "other": ["Bash("]})
    assert messages(doc) == [
        "permissions.allow[0]: invalid permission rule: rule 'Bash(ls' has '(' without a "
        "closing ')'",
        "permissions.allow[1]: must not be empty",
        "permissions.allow[2]: expected string, got number",
        "permissions.ask: expected array, got string",
        "permissions.other: unknown field",
    ]


def test_a_time_too_large_for_a_float_is_an_issue_not_a_crash() -> None:
    doc = minimal(
        calls=[{"id": "a", "name": "Read", "at": 10**400}],
        hooks=[{"event": "PreToolUse", "sleep": 10**309}],
    )
    assert messages(doc) == [
        'calls[0] (id "a").at: must be finite, got a number beyond 1.8e308',
        "hooks[0].sleep: must be finite, got a number beyond 1.8e308",
    ]


def test_unreadable_numbers_and_nesting_are_invalid_json(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text('{"at": ' + "9" * 5000 + "}")
    with pytest.raises(ScenarioError, match="invalid JSON: an integer has too many digits"):
        read_document(path)
    path.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(ScenarioError, match="invalid JSON: nested too deeply"):
        read_document(path)


def test_an_unusual_key_is_quoted_so_each_issue_stays_on_one_line() -> None:
    doc = minimal(**{"my\nfield": 1, "tools": [{"name": "Read", "a b": 2}]})
    assert messages(doc) == [
        'tools[0] (name "Read")."a b": unknown field',
        '"my\\nfield": unknown field',
    ]


scenario_keys = st.sampled_from(
    ["trioexec_scenario", "mode", "tools", "calls", "actions", "permissions", "hooks"]
) | st.text(max_size=2)
entry_keys = st.sampled_from(["id", "name", "at", "do", "event", "sleep", "allow", "input"])
json_values = st.recursive(
    json_scalars | st.integers(),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(entry_keys | st.text(max_size=2), inner, max_size=3)
    ),
    max_leaves=12,
)


@given(document=st.dictionaries(scenario_keys, json_values, max_size=6) | json_values)
@settings(max_examples=300, deadline=None)
def test_any_json_document_gets_issues_not_an_exception(document: object) -> None:
    issues = check_document(document)
    assert all("\n" not in str(issue) for issue in issues)
    assert len(set(issues)) == len(issues)
