"""Model-facing texts: sibling-error descriptions cut at 40 UTF-16 units, as the original does."""

from __future__ import annotations

import pytest

from trioexec import ToolUse
from trioexec._texts import describe_tool_use

SMILE = "\N{GRINNING FACE}"  # outside the BMP: two UTF-16 units


@pytest.mark.parametrize(
    ("command", "shown"),
    [
        ("x" * 40, "x" * 40),
        ("x" * 41, "x" * 40 + "…"),
        (SMILE * 20, SMILE * 20),  # 40 units: not cut
        (SMILE * 21, SMILE * 20 + "…"),  # 42 units
        ("x" + SMILE * 21, "x" + SMILE * 19 + "…"),  # the cut splits a pair: half dropped
    ],
)
def test_cut_counts_utf16_units(command: str, shown: str) -> None:
    assert describe_tool_use(ToolUse("t", "Bash", {"command": command})) == f"Bash({shown})"


def test_first_non_empty_key_wins_and_no_key_gives_the_name() -> None:
    use = ToolUse("t", "Grep", {"command": "", "file_path": "a.py", "pattern": "x"})
    assert describe_tool_use(use) == "Grep(a.py)"
    assert describe_tool_use(ToolUse("t", "Glob", {"path": "src"})) == "Glob"
