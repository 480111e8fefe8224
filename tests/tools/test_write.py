"""The Write tool: create, replace atomically, and refuse bad targets."""

from __future__ import annotations

import stat
from typing import TYPE_CHECKING

import pytest
import trio
from harness import tool_context, validate_and_call

from trioexec import CallContext, PermissionResult
from trioexec.tools import FileToolError, WriteInput, WriteTool

if TYPE_CHECKING:
    from pathlib import Path


def context(cwd: Path) -> CallContext:
    return tool_context(WriteTool(), cwd)


async def write(cwd: Path, file_path: str, content: str, tool: WriteTool | None = None) -> str:
    out = await validate_and_call(tool or WriteTool(), WriteInput(file_path, content), cwd)
    assert isinstance(out, str)
    return out


async def test_creates_a_file_and_its_parent_directories(tmp_path: Path) -> None:
    out = await write(tmp_path, "a/b/new.txt", "hello\n")
    assert out == "File created successfully at: a/b/new.txt"
    assert (tmp_path / "a" / "b" / "new.txt").read_text() == "hello\n"


async def test_replaces_an_existing_file_keeping_its_mode(tmp_path: Path) -> None:
    target = tmp_path / "x.sh"
    target.write_text("old")
    target.chmod(0o750)
    out = await write(tmp_path, "x.sh", "new\r\nline ✓")
    assert out == "The file x.sh has been updated successfully."
    assert target.read_bytes() == "new\r\nline ✓".encode()
    assert stat.S_IMODE(target.stat().st_mode) == 0o750
    left = [p.name for p in await trio.Path(tmp_path).iterdir()]
    assert left == ["x.sh"]  # no temporary file left behind


async def test_writing_through_a_symlink_keeps_the_link(tmp_path: Path) -> None:
    (tmp_path / "real.txt").write_text("old")
    (tmp_path / "link.txt").symlink_to(tmp_path / "real.txt")
    await write(tmp_path, "link.txt", "new")
    assert (tmp_path / "link.txt").is_symlink()
    assert (tmp_path / "real.txt").read_text() == "new"


async def test_a_directory_cannot_be_written(tmp_path: Path) -> None:
    (tmp_path / "dir").mkdir()
    assert await write(tmp_path, "dir", "x") == (
        "dir is a directory, not a file. Give the path of a file to write."
    )


async def test_a_file_in_the_way_of_the_parent_directory(tmp_path: Path) -> None:
    (tmp_path / "plain").write_text("x")
    with pytest.raises(FileToolError, match="a parent path is not a directory"):
        await write(tmp_path, "plain/child.txt", "y")


async def test_paths_outside_the_root_are_refused(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    tool = WriteTool(root)
    out = await write(root, "../escape.txt", "x", tool)
    assert out == (
        f"Path ../escape.txt is outside the workspace root {root}; "
        "only files under the workspace root can be used."
    )
    assert not (tmp_path / "escape.txt").exists()
    # call() checks again, whatever validation said.
    with pytest.raises(FileToolError, match="outside the workspace root"):
        await tool.call(WriteInput("../escape.txt", "x"), context(root), lambda _: None)
    assert not (tmp_path / "escape.txt").exists()


async def test_declared_behaviour_and_permissions(tmp_path: Path) -> None:
    tool = WriteTool()
    data = WriteInput("a.txt", "x")
    assert not tool.is_concurrency_safe(data)
    assert tool.interrupt_behavior == "block"
    assert await tool.check_permissions(data, context(tmp_path)) == PermissionResult.passthrough(
        f"Claude requested permissions to write to {tmp_path / 'a.txt'}, "
        "but you haven't granted it yet."
    )
    assert tool.match_rule_content(
        "./src/**", WriteInput("src/a.py", ""), context(tmp_path), behavior="allow"
    )
