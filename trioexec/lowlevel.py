"""The building blocks the runners are made of, for rebuilding parts of the pipeline.

Partitioning (:func:`partition_tool_calls`), the guard's two halves around a
call (:func:`authorize_call`, :func:`after_call`), schemas for attrs input
types, the process-group runner the Bash tool uses, and the run options for
time limits (:class:`ToolTimeouts`) and the words of stopped calls
(:data:`SyntheticTexts`), and the channel a streaming run's updates arrive on
(:class:`UpdateReceiveChannel`, what ``StreamingExecutor.remaining()`` returns).
"""

from __future__ import annotations

from . import _util
from ._contract._function_tool import FunctionTool as FunctionTool
from ._contract._function_tool import ToolDecorator as ToolDecorator
from ._contract._schema import schema_for_attrs as schema_for_attrs
from ._core._concurrency import DEFAULT_MAX_CONCURRENCY as DEFAULT_MAX_CONCURRENCY
from ._core._partition import partition_tool_calls as partition_tool_calls
from ._core._timeouts import ToolTimeouts as ToolTimeouts
from ._core._update_channel import UpdateReceiveChannel as UpdateReceiveChannel
from ._guard._after import PostToolUseVerdict as PostToolUseVerdict
from ._guard._after import after_call as after_call
from ._guard._rails import PreToolUseVerdict as PreToolUseVerdict
from ._guard._rails import authorize_call as authorize_call
from ._models import Batch as Batch
from ._process import ProcessResult as ProcessResult
from ._process import live_group_members as live_group_members
from ._process import run_process_group as run_process_group
from ._texts import SyntheticTexts as SyntheticTexts

__all__ = [
    "DEFAULT_MAX_CONCURRENCY",
    "Batch",
    "FunctionTool",
    "PostToolUseVerdict",
    "PreToolUseVerdict",
    "ProcessResult",
    "SyntheticTexts",
    "ToolDecorator",
    "ToolTimeouts",
    "UpdateReceiveChannel",
    "after_call",
    "authorize_call",
    "live_group_members",
    "partition_tool_calls",
    "run_process_group",
    "schema_for_attrs",
]

_util.fixup_module_metadata(__name__, globals())
