"""The standard tool set as a whole: names, flags, schemas, exports, path resolution."""

from __future__ import annotations

import math
import os
from pathlib import Path

import pytest

import trioexec.tools
from trioexec import ToolRegistry, ToolUse
from trioexec.lowlevel import partition_tool_calls
from trioexec.tools import (
    BashTool,
    EditTool,
    GlobTool,
    GrepTool,
    OutsideRootError,
    ReadTool,
    WriteTool,
    default_tools,
)
from trioexec.tools._paths import absolute_path, resolve_sync


def test_default_tools_are_the_six_standard_tools(tmp_path: Path) -> None:
    tools = default_tools(tmp_path)
    assert [t.name for t in tools] == ["Read", "Write", "Edit", "Glob", "Grep", "Bash"]
    assert [type(t) for t in tools] == [
        ReadTool,
        WriteTool,
        EditTool,
        GlobTool,
        GrepTool,
        BashTool,
    ]
    file_tools = [t for t in tools if not isinstance(t, BashTool)]
    assert all(t.root == tmp_path for t in file_tools)  # type: ignore[attr-defined]
    assert all(t.root is None for t in default_tools() if not isinstance(t, BashTool))  # type: ignore[attr-defined]


def test_flags_of_the_standard_tools() -> None:
    flags = {
        t.name: (t.interrupt_behavior, t.cancels_siblings_on_error, t.max_result_size_chars)
        for t in default_tools()
    }
    assert flags == {
        "Read": ("cancel", False, math.inf),
        "Write": ("block", False, 100_000),
        "Edit": ("block", False, 100_000),
        "Glob": ("cancel", False, 100_000),
        "Grep": ("cancel", False, 20_000),
        "Bash": ("block", True, 30_000),
    }


def test_every_schema_compiles_in_a_registry() -> None:
    registry = ToolRegistry(default_tools())
    for name in ["Read", "Write", "Edit", "Glob", "Grep", "Bash"]:
        compiled = registry.lookup(name)
        assert compiled is not None
        assert compiled.schema["additionalProperties"] is False


def test_partitioning_follows_each_calls_safety() -> None:
    uses = [
        ToolUse("1", "Read", {"file_path": "a"}),
        ToolUse("2", "Grep", {"pattern": "x"}),
        ToolUse("3", "Bash", {"command": "git status"}),
        ToolUse("4", "Bash", {"command": "make"}),
        ToolUse("5", "Glob", {"pattern": "*"}),
        ToolUse("6", "Edit", {"file_path": "a", "old_string": "x", "new_string": "y"}),
    ]
    batches = partition_tool_calls(uses, ToolRegistry(default_tools()))
    assert [[u.id for u in b.tool_uses] for b in batches] == [["1", "2", "3"], ["4"], ["5"], ["6"]]


def test_exports_are_explicit_and_complete() -> None:
    names = set(trioexec.tools.__all__)
    assert names == {n for n in dir(trioexec.tools) if not n.startswith("_")} - {
        "annotations",
        "TYPE_CHECKING",
        "Any",
    }
    for name in names:
        assert getattr(trioexec.tools, name) is not None


def test_absolute_path_is_lexical(tmp_path: Path) -> None:
    assert absolute_path("a/../b", tmp_path) == tmp_path / "b"
    assert absolute_path("/x/y", tmp_path) == Path("/x/y")
    assert absolute_path("~", tmp_path) == Path(os.path.expanduser("~"))


def test_resolution_follows_symlinks_before_checking_the_root(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "inner").mkdir(parents=True)
    (root / "up").symlink_to(tmp_path)
    assert resolve_sync("inner/../inner/f", cwd=root, root=root) == root.resolve() / "inner" / "f"
    with pytest.raises(OutsideRootError) as caught:
        resolve_sync("up/f", cwd=root, root=root)
    assert str(caught.value) == (
        f"Path up/f is outside the workspace root {root}; "
        "only files under the workspace root can be used."
    )
    assert resolve_sync("up/f", cwd=root, root=None) == tmp_path.resolve() / "f"
