"""The standard tools: Read, Write, Edit, Glob, Grep and Bash.

``default_tools(root)`` gives one of each; ``root`` (optional) is the
workspace root the file tools refuse to leave.  It does not sandbox Bash:
the OS sandbox does, when the guard rails enable it (docs/sandbox.md).
"""

from __future__ import annotations

from .. import _util
from .._shell._read_only import is_read_only_command as is_read_only_command
from .._shell._read_only import stays_in_working_directory as stays_in_working_directory
from ._base import FileToolError as FileToolError
from ._base import PathTool as PathTool
from ._bash import BashInput as BashInput
from ._bash import BashProgress as BashProgress
from ._bash import BashTool as BashTool
from ._bash import ShellError as ShellError
from ._bash import ShellSpawnError as ShellSpawnError
from ._bash import ShellTimeoutError as ShellTimeoutError
from ._defaults import default_tools as default_tools
from ._edit import EditInput as EditInput
from ._edit import EditTool as EditTool
from ._glob import GlobInput as GlobInput
from ._glob import GlobTool as GlobTool
from ._grep import GrepInput as GrepInput
from ._grep import GrepTool as GrepTool
from ._paths import OutsideRootError as OutsideRootError
from ._read import ReadInput as ReadInput
from ._read import ReadTool as ReadTool
from ._write import WriteInput as WriteInput
from ._write import WriteTool as WriteTool

__all__ = [
    "BashInput",
    "BashProgress",
    "BashTool",
    "EditInput",
    "EditTool",
    "FileToolError",
    "GlobInput",
    "GlobTool",
    "GrepInput",
    "GrepTool",
    "OutsideRootError",
    "PathTool",
    "ReadInput",
    "ReadTool",
    "ShellError",
    "ShellSpawnError",
    "ShellTimeoutError",
    "WriteInput",
    "WriteTool",
    "default_tools",
    "is_read_only_command",
    "stays_in_working_directory",
]

_util.fixup_module_metadata(__name__, globals())
