"""Claude Code 2.1.88 as the test oracle: the same scripted turns, the same observations.

Each case (``cases.py``) is a scripted conversation.  The real CLI's
observation of it (what it sent back after every turn, what every hook read,
the files left behind) is recorded in ``claude-code-2.1.88.json``:

* ``pytest -m oracle tests/oracle`` runs the real CLI (node needed; the
  package is installed on demand into ``~/.cache/trioexec-oracle``) and checks
  that it still answers as recorded (``TRIOEXEC_ORACLE_RECORD=1``: record).
* The other tests run ``trioexec agent`` on each case and compare with the
  recording: under ``--policy claude-code-2.1.88`` every case agrees except
  those marked ``known``; under the default policy, every case agrees except
  those marked ``differs`` (each a documented difference, docs/policies.md).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from cases import CASES
from claude_code_oracle import ensure_cli, run_claude_code, run_trioexec

if TYPE_CHECKING:
    from claude_code_oracle import Case

pytestmark = pytest.mark.filterwarnings(
    "ignore:Async generator '(anthropic|httpx|httpcore):ResourceWarning"
)

RECORDING = Path(__file__).with_name("claude-code-2.1.88.json")
_IDS = {"ids": lambda case: case.name}


def _recording() -> dict[str, Any]:
    if not RECORDING.exists():
        return {}
    loaded: dict[str, Any] = json.loads(RECORDING.read_text())
    return loaded


def _recorded(case: Case) -> Any:
    recorded = _recording()
    if case.name not in recorded:
        pytest.fail(f"{case.name} is not recorded: run TRIOEXEC_ORACLE_RECORD=1 pytest -m oracle")
    return recorded[case.name]


@pytest.fixture(scope="session")
def cli() -> Path:
    found, why = ensure_cli()
    if found is None:
        pytest.skip(f"the Claude Code oracle cannot run: {why}")
    return found


@pytest.mark.oracle
@pytest.mark.parametrize("case", CASES, **_IDS)
def test_the_real_claude_code_answers_as_recorded(case: Case, cli: Path, tmp_path: Path) -> None:
    live = run_claude_code(cli, case, tmp_path / "claude-code")
    if os.environ.get("TRIOEXEC_ORACLE_RECORD"):
        recorded = _recording()
        recorded[case.name] = live
        RECORDING.write_text(json.dumps(recorded, indent=1, sort_keys=True) + "\n")
        return
    assert live == _recorded(case)


def test_every_case_is_recorded_and_every_recording_is_a_case() -> None:
    assert sorted(_recording()) == sorted(case.name for case in CASES)


@pytest.mark.parametrize("case", CASES, **_IDS)
def test_under_the_claude_code_preset_trioexec_answers_as_claude_code(
    case: Case, tmp_path: Path
) -> None:
    mine = run_trioexec(case, tmp_path / "trioexec", "claude-code-2.1.88", in_process=True)
    if case.known is None:
        assert mine == _recorded(case)
    else:
        assert mine != _recorded(case), f"known to differ ({case.known}), but agrees"


@pytest.mark.parametrize("case", CASES, **_IDS)
def test_under_the_default_policy_only_documented_differences(
    case: Case, tmp_path: Path
) -> None:
    mine = run_trioexec(case, tmp_path / "trioexec", None, in_process=True)
    reason = case.differs or case.known
    if reason is None:
        assert mine == _recorded(case)
    else:
        assert mine != _recorded(case), f"documented as differing ({reason}), but agrees"


def test_the_compatibility_table_names_every_differing_case() -> None:
    table = (Path(__file__).parents[2] / "docs" / "claude-code-compatibility.md").read_text()
    named = {name for case in CASES for name in [case.name] if f"`{name}`" in table}
    for case in CASES:
        if case.known or case.differs:
            assert case.name in named, f"{case.name} differs but is not in the table"
    rows = [line for line in table.splitlines() if line.startswith("| ") and "`" in line]
    for row in rows:
        for cell in row.split("|")[-2:-1]:
            for name in cell.replace("`", "").split(","):
                assert name.strip() in {case.name for case in CASES}, name
    agree_88 = sum(1 for case in CASES if case.known is None)
    agree_default = sum(1 for case in CASES if case.known is None and case.differs is None)
    assert (
        f"Figure ({len(CASES)} cases): under `claude-code-2.1.88`, {agree_88} agree; "
        f"under the default\npolicy, {agree_default} agree."
    ) in table
