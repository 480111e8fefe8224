"""Policies in scenarios: the ``"policy"`` field, ``run --policy`` and ``scenario diff``."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import attrs
import pytest

from trioexec import Policy
from trioexec._cli._main import main
from trioexec._scenario._diff import call_facts, differing_calls, render_diff
from trioexec._scenario._load import check_document, parse_scenario
from trioexec._scenario._runner import run_scenario_sync
from trioexec._texts import sibling_stopped_message

ROOT = Path(__file__).resolve().parent.parent
POLICIES_DOC = ROOT / "docs" / "policies.md"
UPDATE = os.environ.get("TRIOEXEC_UPDATE_GOLDEN") == "1"
CASCADE = "<tool_use_error>Cancelled: parallel tool call Bash(false) errored</tool_use_error>"
CASCADE_EXPLAINED = sibling_stopped_message("Bash(false)", "Read", started=True)


def scenario(**extra: Any) -> dict[str, Any]:
    """Slow Read beside a Bash call that fails at 1 s; fast Read done at 0.5 s."""
    doc: dict[str, Any] = {
        "trioexec_scenario": 1,
        "name": "policy",
        "tools": [
            {"name": "Read", "concurrency_safe": True, "interrupt_behavior": "cancel"},
            {"name": "Bash", "concurrency_safe": True, "cancels_siblings_on_error": True},
        ],
        "calls": [
            {"id": "slow", "name": "Read", "input": {"sleep": 2, "output": "S"}},
            {"id": "fast", "name": "Read", "input": {"sleep": 0.5, "output": "F"}},
            {"id": "bad", "name": "Bash", "input": {"sleep": 1, "command": "false", "error": "no"}},
        ],
    }
    doc.update(extra)
    return doc


def write(tmp_path: Path, doc: object) -> str:
    path = tmp_path / "s.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return str(path)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# ------------------------------------------------------------------ the field


def test_a_missing_policy_field_is_trioexec() -> None:
    assert parse_scenario(scenario()).policy == Policy()


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        ("claude-code-2.1.88", Policy.preset("claude-code-2.1.88")),
        ({"preset": "claude-code-2.1.161"}, Policy.preset("claude-code-2.1.161")),
        ({"cascade_on": ["Bash"]}, Policy(cascade_on=frozenset({"Bash"}))),
        (
            {"preset": "claude-code-2.1.88", "result_order": "arrival"},
            attrs.evolve(Policy.preset("claude-code-2.1.88"), result_order="arrival"),
        ),
    ],
)
def test_the_policy_field_is_a_preset_or_a_preset_with_overrides(
    written: object, expected: Policy
) -> None:
    assert parse_scenario(scenario(policy=written)).policy == expected


def test_the_older_fields_vary_the_files_policy() -> None:
    parsed = parse_scenario(
        scenario(policy="claude-code-2.1.88", result_order="arrival", synthetic_texts="trioexec")
    )
    assert parsed.policy == attrs.evolve(
        Policy.preset("claude-code-2.1.88"), result_order="arrival", synthetic_texts="trioexec"
    )
    assert parsed.result_order == "arrival"


@pytest.mark.parametrize(
    ("written", "issue"),
    [
        ("cc", 'policy: unknown policy "cc" (expected "trioexec", "claude-code-2.1.88" or '),
        ({"preset": "x"}, 'policy.preset: unknown policy "x"'),
        ({"result_order": "fifo"}, 'policy.result_order: expected "arrival" or "completion"'),
        ({"cascade_on": "Bash"}, 'policy.cascade_on: expected "declared" or a list of tool names'),
        ({"knob": True}, "policy.knob: unknown field"),
        (3, "policy: expected string or object, got number"),
    ],
)
def test_a_bad_policy_field_is_reported_where_it_is(written: object, issue: str) -> None:
    issues = [str(item) for item in check_document(scenario(policy=written))]
    assert len(issues) == 1
    assert issues[0].startswith(issue)


# ------------------------------------------------------------------ run --policy


def test_run_policy_replaces_the_files_policy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, scenario(policy="claude-code-2.1.161", result_order="completion"))
    session = str(tmp_path / "s")
    code, out, err = run(capsys, "scenario", "run", path, "--session-dir", session)
    assert (code, err) == (0, "")
    texts = {r["tool_use_id"]: r["content"] for r in json.loads(out)["results"]}
    assert texts == {"fast": "F", "bad": "no", "slow": "S"}  # no cascade, completion order
    assert list(texts) == ["fast", "bad", "slow"]
    code, out, err = run(
        capsys, "scenario", "run", path, "--session-dir", session, "--policy", "trioexec"
    )
    assert (code, err) == (0, "")
    results = json.loads(out)["results"]
    assert [r["tool_use_id"] for r in results] == ["slow", "fast", "bad"]  # arrival order
    assert results[0]["content"] == CASCADE_EXPLAINED  # and trioexec's explaining texts


def test_run_policy_names_the_presets_when_it_knows_none(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "scenario", "run", write(tmp_path, scenario()), "--policy", "cc")
    assert (code, out) == (2, "")
    assert err == (
        "trioexec scenario run: error: --policy: unknown policy 'cc': the presets are "
        "'trioexec', 'claude-code-2.1.88', 'claude-code-2.1.161'\n"
    )


def test_a_timeline_names_a_policy_that_is_not_trioexecs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, scenario(policy="claude-code-2.1.88"))
    code, out, _ = run(capsys, "scenario", "run", path, "--timeline")
    assert code == 0
    assert out.splitlines()[0].endswith(
        "(stream mode, result_order completion, max_concurrency 10, policy claude-code-2.1.88)"
    )


# ------------------------------------------------------------------ diff


def test_diff_prints_both_timelines_and_what_differs_per_call(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, scenario())
    argv = ["scenario", "diff", path, "--policy", "trioexec", "--policy", "claude-code-2.1.161"]
    code, out, err = run(capsys, *argv)
    assert (code, err) == (1, "")
    assert "=== policy trioexec ===\nscenario: policy (stream mode, result_order arrival" in out
    assert "=== policy claude-code-2.1.161 ===\nscenario: policy (stream mode" in out
    differences = out[out.index("=== differences (trioexec | claude-code-2.1.161) ===") :]
    assert differences.splitlines()[1:] == [
        "slow (Read)",
        f'  result     "{CASCADE[:63]}…" | "S"',
        "  is_error   true | false",
        "  finished   1 | 2",
        "  released   1 | 2",
        '  cancelled  "sibling_error" | -',
        "fast (Read)",
        "  released   1 | 0.5",
        "release order",
        "  trioexec: slow fast bad",
        "  claude-code-2.1.161: fast bad slow",
        "2 of 3 calls differ; the release order differs",
    ]


def test_diff_exits_0_when_the_runs_agree(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    calm = scenario()
    calm["calls"] = calm["calls"][:1]
    argv = ["scenario", "diff", write(tmp_path, calm), "--policy", "trioexec"]
    code, out, _ = run(capsys, *argv, "--policy", "claude-code-2.1.88")
    assert code == 0
    assert out.endswith("no differences: the 2 runs agree on all 1 calls\n")


@pytest.mark.parametrize(
    ("extra", "error"),
    [
        (["--policy", "trioexec"], "--policy: give at least two presets to compare"),
        (["--policy", "trioexec", "--policy", "x"], "--policy: unknown policy 'x'"),
    ],
)
def test_diff_refuses_bad_options(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], error: str
) -> None:
    code, out, err = run(capsys, "scenario", "diff", write(tmp_path, scenario()), *extra)
    assert (code, out) == (2, "")
    assert err.startswith(f"trioexec scenario diff: error: {error}")


def test_diff_shows_where_long_texts_that_share_a_start_differ(tmp_path: Path) -> None:
    doc = scenario(policy={"synthetic_texts": "trioexec"})
    doc["calls"][0]["input"] = {"steps": [{"progress": "half read"}, {"sleep": 2}]}
    with_output = parse_scenario(doc)
    without = attrs.evolve(
        with_output, policy=attrs.evolve(with_output.policy, partial_output=False)
    )
    runs = [run_scenario_sync(each, session_dir=tmp_path) for each in (with_output, without)]
    assert differing_calls(runs) == {"slow": ["result"]}
    assert "half read" in (call_facts(runs[0])["slow"].result or "")
    assert "half read" not in (call_facts(runs[1])["slow"].result or "")
    (line,) = [row for row in render_diff(["a", "b"], runs).splitlines() if "  result " in row]
    left, right = line.split("  result     ")[1].split(" | ")
    assert left.startswith('"…')  # both shown from where they part
    assert right.startswith('"…')
    assert "half read" in left


def test_the_policies_doc_shows_the_real_three_way_diff(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(ROOT)
    stem = "23_bash_cascade_by_release"
    presets = [arg for name in Policy.preset_names() for arg in ("--policy", name)]
    command = f"trioexec scenario diff examples/scenarios/{stem}.json {' '.join(presets)}"
    code, out, err = run(capsys, "scenario", "diff", f"examples/scenarios/{stem}.json", *presets)
    assert (code, err) == (1, "")
    block = f"$ {command}\n{out}"
    pattern = re.compile(rf"(<!-- diff: {stem} -->\n```console\n).*?(```\n)", re.DOTALL)
    docs = POLICIES_DOC.read_text("utf-8")
    assert pattern.search(docs), f"docs/policies.md has no marker for {stem}"
    if UPDATE:
        docs = pattern.sub(lambda m: m.group(1) + block + m.group(2), docs, count=1)
        POLICIES_DOC.write_text(docs, "utf-8")
    assert f"<!-- diff: {stem} -->\n```console\n{block}```\n" in docs
