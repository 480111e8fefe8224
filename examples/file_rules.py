"""Which rules govern the file tools, and the paths that always ask, on a temporary workspace.

``Edit(...)`` rules govern every tool that writes files (``Write`` too, and
your own tool once it declares ``path_access``); ``Read(...)`` rules every
tool that reads, so ``Glob`` and ``Grep`` never show a denied file, not even
its name.  Writes to protected paths (``.git/``, ``.claude/``, shell start-up
files, ``~/.gitconfig``...) ask even in bypass mode: only the application's
``can_use_tool`` can approve them, and here it says no.

Run: python examples/file_rules.py
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import attrs
import trio

import trioexec
from trioexec import (
    CallContext,
    GuardRails,
    PermissionResult,
    ProgressSender,
    ToolUse,
    function_tool,
)
from trioexec.permissions import PathAccess, PermissionContext
from trioexec.tools import default_tools

if TYPE_CHECKING:
    from collections.abc import Mapping

    from trioexec import JSONValue


@attrs.frozen
class NoteInput:
    path: str
    text: str


@function_tool(input_type=NoteInput, path_access=PathAccess("path", writes=True))
async def append_note(note: NoteInput, ctx: CallContext, progress: ProgressSender) -> str:
    """Append a line to a text file (a user's tool that declares what it writes)."""
    async with await trio.open_file(ctx.cwd / note.path, "a", encoding="utf-8") as file:
        await file.write(note.text + "\n")
    return f"appended to {note.path}"


async def ask_the_user(name: str, tool_input: Mapping[str, JSONValue], _: str) -> PermissionResult:
    print(f"    (can_use_tool asked about {name} {tool_input.get('file_path')}: no)")
    return PermissionResult.deny("Not without a review.")


async def main(root: Path) -> None:
    tools = [*default_tools(root), append_note]
    guard = GuardRails(
        PermissionContext(deny=["Edit(./vendor/**)", "Read(./secrets/**)"], mode="bypass"),
        can_use_tool=ask_the_user,
    )
    calls = [
        ToolUse("toolu_1", "Write", {"file_path": "vendor/lib.py", "content": "x = 1\n"}),
        ToolUse("toolu_2", "Write", {"file_path": "third_party/lib.py", "content": "x = 1\n"}),
        ToolUse("toolu_3", "append_note", {"path": "vendor/NOTES", "text": "hi"}),
        ToolUse("toolu_4", "Glob", {"pattern": "**/*"}),
        ToolUse("toolu_5", "Grep", {"pattern": "TOKEN", "output_mode": "count"}),
        ToolUse("toolu_6", "Write", {"file_path": ".git/hooks/pre-commit", "content": "#!/bin/sh"}),
        ToolUse("toolu_7", "append_note", {"path": "src/notes.txt", "text": "hi"}),
    ]
    for call in calls:
        outcome = await trioexec.run_tools([call], tools, cwd=root, guard=guard)
        text = outcome.results[0].text.replace(str(root), "{workspace}")
        print(f"{call.id} {call.name:<11} -> " + text.replace("\n", " | "))
    print("vendor/lib.py written:", (root / "vendor" / "lib.py").exists())
    print(".git/hooks/pre-commit written:", (root / ".git" / "hooks" / "pre-commit").exists())


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as folder:
        workspace = Path(folder).resolve()
        (workspace / "vendor").mkdir()
        (workspace / "third_party").symlink_to("vendor")  # a symlink does not lead around a rule
        (workspace / "secrets").mkdir()
        (workspace / "secrets" / "token.txt").write_text("TOKEN=hunter2\n")
        (workspace / "src").mkdir()
        (workspace / "src" / "app.py").write_text("TOKEN = load()\n")
        (workspace / ".git" / "hooks").mkdir(parents=True)
        trio.run(main, workspace)
