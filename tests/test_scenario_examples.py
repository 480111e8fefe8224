"""The example scenarios: golden output, byte-identical reruns, timelines in the docs.

Regenerate the golden files after an intended change with
``TRIOEXEC_UPDATE_GOLDEN=1 python -m pytest tests/test_scenario_examples.py``
and review the diff.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from trioexec import Policy
from trioexec._cli._main import main

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs" / "scenarios.md"
EXAMPLES_DIR = ROOT / "examples" / "scenarios"
EXPECTED_DIR = EXAMPLES_DIR / "expected"
EXAMPLES = sorted(EXAMPLES_DIR.glob("*.json"))
UPDATE = os.environ.get("TRIOEXEC_UPDATE_GOLDEN") == "1"


def run_cli(capsysbinary: pytest.CaptureFixture[bytes], *args: str) -> bytes:
    code = main(["scenario", "run", *args])
    captured = capsysbinary.readouterr()
    assert captured.err == b""
    assert code == 0
    return captured.out


def check_golden(golden: Path, produced: bytes) -> None:
    if UPDATE:
        golden.parent.mkdir(exist_ok=True)
        golden.write_bytes(produced)
    assert golden.exists(), f"no golden file {golden.name}; run with TRIOEXEC_UPDATE_GOLDEN=1"
    assert produced.decode("utf-8") == golden.read_text("utf-8")


def test_there_are_at_least_ten_examples() -> None:
    assert len(EXAMPLES) >= 10


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_example_output_matches_golden_and_is_reproducible(
    example: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsysbinary: pytest.CaptureFixture[bytes],
) -> None:
    monkeypatch.chdir(tmp_path)
    first = run_cli(capsysbinary, str(example), "--session-dir", "session")
    second = run_cli(capsysbinary, str(example), "--session-dir", "session")
    assert first == second
    check_golden(EXPECTED_DIR / f"{example.stem}.json", first)
    output = json.loads(first)
    assert output["session_dir"] == "session"


@pytest.mark.parametrize("preset", Policy.preset_names())
@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_example_output_under_each_preset_is_pinned(
    example: Path,
    preset: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsysbinary: pytest.CaptureFixture[bytes],
) -> None:
    """``--policy PRESET``: golden ``NAME.PRESET.json`` where it differs from ``NAME.json``."""
    monkeypatch.chdir(tmp_path)
    produced = run_cli(capsysbinary, str(example), "--session-dir", "session", "--policy", preset)
    own = EXPECTED_DIR / f"{example.stem}.{preset}.json"
    default = (EXPECTED_DIR / f"{example.stem}.json").read_bytes()
    if UPDATE:
        if produced != default:
            own.write_bytes(produced)
        elif own.exists():
            own.unlink()  # the same as the file's own golden now: not kept twice
    expected = own.read_bytes() if own.exists() else default
    assert produced.decode("utf-8") == expected.decode("utf-8")


def test_some_examples_differ_under_each_claude_code_preset() -> None:
    for preset in ("trioexec", "claude-code-2.1.88", "claude-code-2.1.161"):
        assert len(list(EXPECTED_DIR.glob(f"*.{preset}.json"))) >= 2, preset


def test_the_two_claude_code_releases_differ_on_the_bash_cascade_example() -> None:
    def golden(preset: str) -> Path:
        own = EXPECTED_DIR / f"23_bash_cascade_by_release.{preset}.json"
        return own if own.exists() else EXPECTED_DIR / "23_bash_cascade_by_release.json"

    old = json.loads(golden("claude-code-2.1.88").read_text("utf-8"))
    new = json.loads(golden("claude-code-2.1.161").read_text("utf-8"))
    assert sum(r["is_error"] for r in old["results"]) == 4  # the error and its 3 siblings
    assert sum(r["is_error"] for r in new["results"]) == 1  # the error alone


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_example_timeline_matches_golden_and_the_docs(
    example: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsysbinary: pytest.CaptureFixture[bytes],
) -> None:
    monkeypatch.chdir(tmp_path)
    timeline = run_cli(capsysbinary, str(example), "--session-dir", "session", "--timeline")
    check_golden(EXPECTED_DIR / f"{example.stem}.timeline.txt", timeline)
    text = timeline.decode("utf-8")
    if UPDATE:
        DOCS.write_text(replace_docs_block(DOCS.read_text("utf-8"), example.stem, text), "utf-8")
    block = f"<!-- timeline: {example.stem} -->\n```text\n{text}```\n"
    assert block in DOCS.read_text("utf-8"), f"docs/scenarios.md lacks the {example.stem} timeline"


def replace_docs_block(docs: str, stem: str, timeline: str) -> str:
    """Put ``timeline`` in the code block after ``<!-- timeline: stem -->``."""
    pattern = re.compile(rf"(<!-- timeline: {re.escape(stem)} -->\n```text\n).*?(```\n)", re.DOTALL)
    assert pattern.search(docs), f"docs/scenarios.md has no marker for {stem}"
    return pattern.sub(lambda m: m.group(1) + timeline + m.group(2), docs, count=1)


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_example_answers_every_call_once(example: Path, tmp_path: Path) -> None:
    from trioexec._scenario._load import load_scenario
    from trioexec._scenario._runner import run_scenario_sync

    scenario = load_scenario(example)
    run = run_scenario_sync(scenario, session_dir=tmp_path)
    discarded = any(action.do == "discard" for action in scenario.actions)
    ids = [result.tool_use_id for result in run.results]
    assert len(ids) == len(set(ids))
    if not discarded:
        assert sorted(ids) == sorted(call.id for call in scenario.calls)
    for call in scenario.calls:
        kinds = [e.kind for e in run.events if e.tool_use_id == call.id]
        assert kinds[0] == "queued"
        assert kinds.count("completed") + kinds.count("cancelled") == 1
        assert kinds.count("released") == (0 if discarded and call.id not in ids else 1)
