"""Read-before-write: Write and Edit refuse a file the session has not Read (Claude Code 2.1.88)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from harness import validate_and_call

from trioexec import Policy
from trioexec.tools import (
    EditInput,
    EditTool,
    ReadInput,
    ReadTool,
    WriteInput,
    WriteTool,
    default_tools,
)
from trioexec.tools._read_state import MODIFIED_SINCE_READ, NOT_READ, FileReadState

if TYPE_CHECKING:
    from pathlib import Path


def tools(state: FileReadState | None) -> tuple[ReadTool, WriteTool, EditTool]:
    return ReadTool(read_state=state), WriteTool(read_state=state), EditTool(read_state=state)


def touch_later(path: Path, seconds: int = 10) -> None:
    """Move the file's modification time forward (a change by someone else)."""
    stamp = path.stat().st_mtime + seconds
    os.utime(path, (stamp, stamp))


async def test_write_and_edit_refuse_an_existing_file_not_read(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha\n")
    _, write, edit = tools(FileReadState())
    assert await validate_and_call(write, WriteInput("a.txt", "x\n"), tmp_path) == NOT_READ
    assert await validate_and_call(edit, EditInput("a.txt", "alpha", "beta"), tmp_path) == NOT_READ
    assert (tmp_path / "a.txt").read_text() == "alpha\n"


async def test_a_new_file_needs_no_read(tmp_path: Path) -> None:
    _, write, edit = tools(FileReadState())
    out = await validate_and_call(write, WriteInput("new.txt", "x\n"), tmp_path)
    assert out == "File created successfully at: new.txt"
    out = await validate_and_call(edit, EditInput("made.txt", "", "m\n"), tmp_path)
    assert out == "The file made.txt has been updated successfully."


async def test_a_read_in_full_or_in_part_allows_the_write(tmp_path: Path) -> None:
    for window in ({}, {"offset": 2, "limit": 1}):
        (tmp_path / "a.txt").write_text("one\ntwo\nthree\n")
        read, write, _ = tools(FileReadState())
        await validate_and_call(read, ReadInput("a.txt", **window), tmp_path)
        out = await validate_and_call(write, WriteInput("a.txt", "x\n"), tmp_path)
        assert out == "The file a.txt has been updated successfully."


async def test_a_file_changed_since_it_was_read_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_text("alpha\n")
    read, write, edit = tools(FileReadState())
    await validate_and_call(read, ReadInput("a.txt", offset=1, limit=1), tmp_path)
    path.write_text("changed\n")
    touch_later(path)
    assert await validate_and_call(write, WriteInput("a.txt", "x\n"), tmp_path) == (
        MODIFIED_SINCE_READ
    )
    assert await validate_and_call(edit, EditInput("a.txt", "changed", "y"), tmp_path) == (
        MODIFIED_SINCE_READ
    )


async def test_edit_after_a_full_read_passes_when_only_the_time_changed(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_text("alpha\n")
    read, write, edit = tools(FileReadState())
    await validate_and_call(read, ReadInput("a.txt"), tmp_path)
    touch_later(path)  # same text, newer time
    out = await validate_and_call(edit, EditInput("a.txt", "alpha", "beta"), tmp_path)
    assert out == "The file a.txt has been updated successfully."
    # Write compares times only, as in Claude Code.
    touch_later(path, 20)
    assert await validate_and_call(write, WriteInput("a.txt", "x\n"), tmp_path) == (
        MODIFIED_SINCE_READ
    )


async def test_what_a_tool_wrote_counts_as_read(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a\n")
    read, write, edit = tools(FileReadState())
    await validate_and_call(read, ReadInput("a.txt"), tmp_path)
    await validate_and_call(edit, EditInput("a.txt", "a", "b"), tmp_path)
    await validate_and_call(edit, EditInput("a.txt", "b", "c"), tmp_path)
    out = await validate_and_call(write, WriteInput("a.txt", "d\n"), tmp_path)
    assert out == "The file a.txt has been updated successfully."
    assert (tmp_path / "a.txt").read_text() == "d\n"


async def test_without_a_state_there_is_no_check(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha\n")
    _, write, _ = tools(None)
    out = await validate_and_call(write, WriteInput("a.txt", "x\n"), tmp_path)
    assert out == "The file a.txt has been updated successfully."


def test_the_policy_knob_decides_whether_the_agents_tools_share_a_state() -> None:
    def states(policy: Policy | None) -> set[int | None]:
        found = {
            id(tool.read_state) if tool.read_state is not None else None
            for tool in default_tools(
                read_before_write=(policy or Policy()).read_before_write
            )
            if isinstance(tool, (ReadTool, WriteTool, EditTool))
        }
        return found

    assert states(None) == {None}  # the default follows later Claude Code: no check
    chosen = states(Policy.preset("claude-code-2.1.88"))
    assert None not in chosen
    assert len(chosen) == 1
    assert states(Policy.preset("claude-code-2.1.161")) == {None}
