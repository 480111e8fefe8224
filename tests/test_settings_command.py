"""``trioexec settings check``: one line per problem, the merged settings, exit 1 on a problem."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import TYPE_CHECKING

from trioexec._cli._main import main

if TYPE_CHECKING:
    from pathlib import Path

    import pytest

TYPOS = {
    "permisions": {"allow": []},
    "permissions": {"dney": ["Bash"], "deny": ["bash(rm:*)"]},
    "hooks": {
        "PreToolUze": [],
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "true", "timout": 5}]}
        ],
    },
}


def write(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_a_file_with_typos_prints_one_line_per_problem_and_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = write(tmp_path / "settings.json", TYPOS)
    assert main(["settings", "check", str(bad)]) == 1
    out, err = capsys.readouterr()
    problems = [line for line in out.splitlines() if line.startswith(str(bad))]
    assert problems == [
        f"{bad}: permisions: unknown setting (did you mean 'permissions'?); it is ignored",
        f"{bad}: permissions.dney: unknown key (did you mean 'deny'?); it is ignored",
        f"{bad}: permissions.deny[0]: rule 'bash(rm:*)' names no Claude Code tool "
        "(did you mean 'Bash'?); it matches no call of one",
        f"{bad}: hooks.PreToolUze: unknown hook event (did you mean 'PreToolUse'?); "
        "its hooks never run",
        f"{bad}: hooks.PreToolUse[0].hooks[0].timout: unknown key (did you mean 'timeout'?); "
        "it is ignored",
    ]
    assert err == ""  # each problem once, not again as a log record


def test_a_clean_file_prints_the_merged_settings_and_exits_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    user = write(tmp_path / "user.json", {"permissions": {"allow": ["Bash(npm test:*)"]}})
    project = write(
        tmp_path / "project.json",
        {"permissions": {"deny": ["Read(./.env)"], "defaultMode": "acceptEdits"}},
    )
    assert main(["settings", "check", str(user), str(project)]) == 0
    merged = json.loads(capsys.readouterr().out)
    assert merged == {
        "permissions": {
            "allow": ["Bash(npm test:*)"],
            "ask": [],
            "deny": ["Read(./.env)"],
            "defaultMode": "acceptEdits",
        },
        "hooks": {},
        "disableAllHooks": False,
    }


def test_an_unreadable_or_malformed_file_is_a_problem(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    assert main(["settings", "check", str(broken)]) == 1
    assert capsys.readouterr().out.startswith(f"{broken}: invalid JSON at line 1 column 2")
    assert main(["settings", "check", str(tmp_path / "missing.json")]) == 1


def test_the_installed_command_exits_with_the_status(tmp_path: Path) -> None:
    bad = write(tmp_path / "settings.json", TYPOS)
    run = subprocess.run(
        [sys.executable, "-m", "trioexec", "settings", "check", str(bad)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 1
    assert "did you mean 'PreToolUse'?" in run.stdout
