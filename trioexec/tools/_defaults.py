"""The standard tool set."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._bash import BashTool
from ._edit import EditTool
from ._glob import GlobTool
from ._grep import GrepTool
from ._read import ReadTool
from ._write import WriteTool

if TYPE_CHECKING:
    from pathlib import Path

    from .._contract._tool import Tool

__all__ = ["default_tools"]


def default_tools(root: Path | str | None = None) -> list[Tool[Any]]:
    """One instance of each standard tool; file tools confined to ``root`` when given.

    ``root`` does not sandbox Bash: a shell command can reach any path, unless
    the guard rails enable the OS sandbox (``"sandbox": {"enabled": true}``,
    docs/sandbox.md).
    """
    return [
        ReadTool(root),
        WriteTool(root),
        EditTool(root),
        GlobTool(root),
        GrepTool(root),
        BashTool(),
    ]
