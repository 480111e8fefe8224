"""Running with no guard rails decides every call exactly as ``GuardRails()`` does.

``run_tools(guard=None)`` skips the hooks and the checkpoints of an empty
``GuardRails``, but not the decision: both go through the one permission
chain, and an ask nobody can answer is refused with the same text.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trioexec import GuardRails, Tool, ToolUse, run_tools
from trioexec.testing import ScriptedTool
from trioexec.tools import default_tools

PATHS = ["notes.txt", "missing.txt", ".git/config", ".claude/settings.json", ".bashrc", "sub"]
# Commands that succeed when they run: a failing Bash call cancels its running
# siblings, and which of two failing calls fails first is the processes' race.
COMMANDS = ["ls", "cat notes.txt", "echo hi > out.txt", "ls sub", "rm -f notes.txt", "pwd"]


def _workspace(root: Path) -> None:
    (root / "notes.txt").write_text("one\ntwo\n")
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("[core]\n")
    (root / ".claude").mkdir()
    (root / ".claude" / "settings.json").write_text("{}")
    (root / "sub").mkdir()


def _calls() -> st.SearchStrategy[list[ToolUse]]:
    path = st.sampled_from(PATHS)
    one = st.one_of(
        st.builds(lambda p: ("Read", {"file_path": p}), path),
        st.builds(lambda p: ("Write", {"file_path": p, "content": "x"}), path),
        st.builds(
            lambda p: ("Edit", {"file_path": p, "old_string": "one", "new_string": "1"}), path
        ),
        st.builds(lambda c: ("Bash", {"command": c}), st.sampled_from(COMMANDS)),
        st.builds(lambda p: ("Glob", {"pattern": "*", "path": p}), st.sampled_from(["sub", "."])),
        st.builds(lambda n: (n, {"output": "done"}), st.sampled_from(["Allow", "Ask", "Deny"])),
    )
    return st.lists(one, min_size=1, max_size=4).map(
        lambda items: [ToolUse(f"toolu_{i}", name, args) for i, (name, args) in enumerate(items)]
    )


def _tools(root: Path) -> list[Tool[Any]]:
    scripted = [
        ScriptedTool("Allow", permission="allow"),
        ScriptedTool("Ask", permission="ask"),
        ScriptedTool("Deny", permission="deny"),
    ]
    return [*default_tools(root), *scripted]


async def _answers(tool_uses: list[ToolUse], root: Path, guard: GuardRails | None) -> list[object]:
    outcome = await run_tools(tool_uses, _tools(root), cwd=root, guard=guard)
    texts = [(r.is_error, str(r.content).replace(str(root), "<root>")) for r in outcome.results]
    return [*texts, _listing(root)]


def _listing(root: Path) -> list[str]:
    """What is on disk afterwards: a call that ran in one run and not the other shows."""
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tool_uses=_calls())
async def test_no_guard_rails_decides_every_call_as_empty_guard_rails(
    tool_uses: list[ToolUse],
) -> None:
    with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
        first, second = Path(a), Path(b)
        _workspace(first)
        _workspace(second)
        without = await _answers(tool_uses, first, None)
        empty = await _answers(tool_uses, second, GuardRails())
    assert without == empty
