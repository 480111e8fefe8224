"""Compound Bash lines as Claude Code reads them: each part on its own.

A list or pipeline is allowed when every part is: covered by some ``Bash(...)``
allow rule (not necessarily the same one), or read-only with every name it
gives inside the working directory (no rule needed).  Real ``BashTool`` calls
through ``run_tools`` in a temporary workspace.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import pytest

from trioexec import GuardRails, ToolUse, run_tools
from trioexec.tools import BashTool

if TYPE_CHECKING:
    from pathlib import Path

NOT_GRANTED = "Claude requested permissions to use Bash, but you haven't granted it yet."


async def _run(command: str, cwd: Path, **permissions: Any) -> tuple[bool, str]:
    guard = GuardRails.from_settings({"permissions": permissions})
    outcome = await run_tools(
        [ToolUse("toolu_1", "Bash", {"command": command})], [BashTool()], cwd=cwd, guard=guard
    )
    (result,) = outcome.results
    content = result.content if isinstance(result.content, str) else str(result.content)
    return result.is_error, content


@pytest.mark.parametrize(
    ("command", "rules", "output"),
    [
        ("echo ran | tail -1", ["Bash(echo ran)"], "ran"),
        ("echo a && echo b", ["Bash(echo a)", "Bash(echo b)"], "a\nb"),
        ("true && echo done", ["Bash(true)"], "done"),
        ("echo x | wc -c | tr -d ' '", ["Bash(echo x)"], "2"),
    ],
)
async def test_each_part_is_allowed_by_its_own_rule_or_by_being_read_only(
    tmp_path: Path, command: str, rules: list[str], output: str
) -> None:
    assert await _run(command, tmp_path, allow=rules) == (False, output)


@pytest.mark.parametrize(
    "command",
    [
        "echo ran | touch made",  # a part that writes, with no rule
        "echo ran && cat ../outside",  # a read-only part naming a path outside
        "echo ran && git config core.pager 'touch made'",  # git config is never read-only
    ],
)
async def test_a_part_neither_covered_nor_read_only_inside_still_asks(
    tmp_path: Path, command: str
) -> None:
    is_error, content = await _run(command, tmp_path, allow=["Bash(echo ran)"])
    assert is_error
    assert content.startswith("Claude requested permissions to "), content
    assert not (tmp_path / "made").exists()


async def test_a_read_only_part_through_a_symlink_out_of_the_workspace_asks(
    tmp_path: Path,
) -> None:
    outside = tmp_path / "outside"
    outside.write_text("secret")
    work = tmp_path / "work"
    work.mkdir()
    os.symlink(outside, work / "link")
    assert await _run("echo ran && cat link", work, allow=["Bash(echo ran)"]) == (
        True,
        NOT_GRANTED,
    )


async def test_an_ask_rule_on_a_read_only_part_still_asks(tmp_path: Path) -> None:
    result = await _run(
        "echo ran | tail -1", tmp_path, allow=["Bash(echo ran)"], ask=["Bash(tail:*)"]
    )
    assert result == (True, NOT_GRANTED)
