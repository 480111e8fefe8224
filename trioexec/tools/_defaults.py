"""The standard tool set."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._bash import BashTool
from ._edit import EditTool
from ._glob import GlobTool
from ._grep import GrepTool
from ._read import ReadTool
from ._read_state import FileReadState
from ._write import WriteTool

if TYPE_CHECKING:
    from pathlib import Path

    from .._contract._tool import Tool

__all__ = ["default_tools"]


def default_tools(
    root: Path | str | None = None, *, read_before_write: bool = False
) -> list[Tool[Any]]:
    """One instance of each standard tool; file tools confined to ``root`` when given.

    ``root`` does not sandbox Bash: a shell command can reach any path, unless
    the guard rails enable the OS sandbox (``"sandbox": {"enabled": true}``,
    docs/sandbox.md).  With
    ``read_before_write`` (a policy's knob of that name: on in Claude Code
    2.1.88's), Read, Write and Edit share one :class:`FileReadState`: Write and
    Edit refuse an existing file the model has not Read with these tools (or
    that changed since); use one tool set per session.
    """
    state = FileReadState() if read_before_write else None
    return [
        ReadTool(root, read_state=state),
        WriteTool(root, read_state=state),
        EditTool(root, read_state=state),
        GlobTool(root),
        GrepTool(root),
        BashTool(),
    ]
