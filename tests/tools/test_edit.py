"""The Edit tool: exact, unique replacement, and its refusals."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from harness import tool_context, validate_and_call
from helpers import (
    call_context,
    ignore_progress,
    proves,
)

from trioexec import (
    CallContext,
    PermissionResult,
)
from trioexec.tools import (
    EditInput,
    EditTool,
    FileToolError,
)
from trioexec.tools._edit import NO_CHANGE, apply_edit

if TYPE_CHECKING:
    from pathlib import Path


def context(cwd: Path) -> CallContext:
    return tool_context(EditTool(), cwd)


async def edit(cwd: Path, data: EditInput, tool: EditTool | None = None) -> str:
    out = await validate_and_call(tool or EditTool(), data, cwd)
    assert isinstance(out, str)
    return out


async def test_replaces_a_unique_string(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\ny = 2\n")
    out = await edit(tmp_path, EditInput("a.py", "y = 2", "y = 3"))
    assert out == "The file a.py has been updated successfully."
    assert (tmp_path / "a.py").read_text() == "x = 1\ny = 3\n"


async def test_a_non_unique_string_is_refused_unless_replace_all(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("v = 0\nv = 0\n")
    out = await edit(tmp_path, EditInput("a.py", "v = 0", "v = 1"))
    assert out == (
        "Found 2 matches of the string to replace, but replace_all is false. To replace all "
        "occurrences, set replace_all to true. To replace only one occurrence, please provide "
        "more context to uniquely identify the instance.\nString: v = 0"
    )
    assert (tmp_path / "a.py").read_text() == "v = 0\nv = 0\n"
    out = await edit(tmp_path, EditInput("a.py", "v = 0", "v = 1", replace_all=True))
    assert out == (
        "The file a.py has been updated. All occurrences were successfully replaced."
    )
    assert (tmp_path / "a.py").read_text() == "v = 1\nv = 1\n"


async def test_a_missing_string(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x\n")
    assert await edit(tmp_path, EditInput("a.py", "nothere", "y")) == (
        "String to replace not found in file.\nString: nothere"
    )


async def test_identical_strings_are_no_change(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x\n")
    assert await edit(tmp_path, EditInput("a.py", "x", "x")) == NO_CHANGE


async def test_missing_file(tmp_path: Path) -> None:
    assert await edit(tmp_path, EditInput("nope.py", "a", "b")) == (
        f"File does not exist. Note: your current working directory is {tmp_path}."
    )


async def test_an_empty_old_string_creates_a_new_file_only(tmp_path: Path) -> None:
    # Claude Code says "updated" for a file the edit created, too.
    assert await edit(tmp_path, EditInput("new/n.txt", "", "content")) == (
        "The file new/n.txt has been updated successfully."
    )
    assert (tmp_path / "new" / "n.txt").read_text() == "content"
    assert await edit(tmp_path, EditInput("new/n.txt", "", "again")) == (
        "Cannot create new file - file already exists."
    )


async def test_a_directory_is_refused(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    assert await edit(tmp_path, EditInput("pkg", "a", "b")) == (
        "pkg is a directory, not a file. Use Glob (or Bash with ls) to list a directory."
    )


async def test_binary_and_non_utf8_files_are_refused(tmp_path: Path) -> None:
    (tmp_path / "b.bin").write_bytes(b"ab\x00cd")
    (tmp_path / "latin1.txt").write_bytes(b"caf\xe9")
    assert await edit(tmp_path, EditInput("b.bin", "ab", "xy")) == (
        "b.bin is a binary file; Edit changes text files only."
    )
    assert await edit(tmp_path, EditInput("latin1.txt", "caf", "tea")) == (
        "latin1.txt is not valid UTF-8 text; Edit cannot change it safely."
    )
    assert (tmp_path / "b.bin").read_bytes() == b"ab\x00cd"


async def test_crlf_files_keep_their_line_ends(tmp_path: Path) -> None:
    (tmp_path / "w.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    await edit(tmp_path, EditInput("w.txt", "one\ntwo", "1\n2"))
    assert (tmp_path / "w.txt").read_bytes() == b"1\r\n2\r\nthree\r\n"


async def test_lines_inserted_into_a_crlf_file_get_crlf(tmp_path: Path) -> None:
    # old_string has no line end, so it is found as it is; new_string's LFs still convert.
    (tmp_path / "w.txt").write_bytes(b"one\r\ntwo\r\n")
    await edit(tmp_path, EditInput("w.txt", "two", "two\nthree\r\nfour"))
    assert (tmp_path / "w.txt").read_bytes() == b"one\r\ntwo\r\nthree\r\nfour\r\n"


def test_crlf_conversion_in_apply_edit() -> None:
    def applied(text: str, old: str, new: str) -> str:
        return apply_edit(text, old, new, replace_all=False, shown="f").text

    assert applied("a\r\nb\r\n", "a", "a\nx") == "a\r\nx\r\nb\r\n"
    assert applied("a\r\nb\r\n", "a\r\nb", "b\na") == "b\r\na\r\n"
    assert applied("a\nb\n", "a", "a\nx") == "a\nx\nb\n"  # an LF file stays LF
    # Once converted, an edit that only changes line ends to LF changes nothing.
    with pytest.raises(FileToolError, match="No changes to make"):
        applied("a\r\nb\r\n", "a\r\nb", "a\nb")


async def test_paths_outside_the_root_are_refused(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (tmp_path / "victim.txt").write_text("a")
    out = await edit(root, EditInput(str(tmp_path / "victim.txt"), "a", "b"), EditTool(root))
    assert out.startswith(f"Path {tmp_path / 'victim.txt'} is outside the workspace root {root}")
    assert (tmp_path / "victim.txt").read_text() == "a"


async def test_a_file_changed_since_validation_is_not_half_edited(tmp_path: Path) -> None:
    tool = EditTool()
    target = tmp_path / "a.txt"
    target.write_text("old")
    data = EditInput("a.txt", "old", "new")
    assert await tool.validate_input(data, context(tmp_path)) is None
    target.write_text("changed")
    with pytest.raises(FileToolError, match="String to replace not found"):
        await tool.call(data, context(tmp_path), lambda _: None)
    assert target.read_text() == "changed"


def test_apply_edit_is_pure() -> None:
    assert apply_edit("a-b-a", "a", "c", replace_all=True, shown="f").text == "c-b-c"
    assert apply_edit(None, "", "new", replace_all=False, shown="f").text == "new"
    assert apply_edit("  \n", "", "filled", replace_all=False, shown="f").text == "filled"
    with pytest.raises(FileToolError, match="Found 2 matches"):
        apply_edit("a-a", "a", "b", replace_all=False, shown="f")


async def test_declared_behaviour_and_permissions(tmp_path: Path) -> None:
    tool = EditTool()
    data = EditInput("a.txt", "x", "y")
    assert not tool.is_concurrency_safe(data)
    assert tool.interrupt_behavior == "block"
    assert await tool.check_permissions(data, context(tmp_path)) == PermissionResult.passthrough(
        f"Claude requested permissions to write to {tmp_path / 'a.txt'}, "
        "but you haven't granted it yet."
    )


# -- line endings --------------------------------------------------------------------------------


async def test_edit_inserting_lines_into_a_crlf_file_keeps_it_crlf(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_bytes(b"a\r\nb\r\n")
    tool, ctx = EditTool(), call_context("Edit", tmp_path)
    edit = EditInput("f.txt", "a", "a\nx")
    proves(await tool.validate_input(edit, ctx) is None, "the edit validates")
    await tool.call(edit, ctx, ignore_progress)
    assert (tmp_path / "f.txt").read_bytes() == b"a\r\nx\r\nb\r\n"
