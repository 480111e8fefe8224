"""trioexec: a trio-native, structured-concurrency runtime for an LLM's tool calls.

The top level holds what an application uses every day: running tool calls
(:func:`run_tools`, :func:`open_streaming_executor`) and the rules they follow
(:class:`Policy`: trioexec's, or Claude Code's), writing tools
(:class:`Tool`, :func:`function_tool`), the messages, the guard rails' entry
points, observation and the errors.  The rest lives in thin public
submodules, as in trio:

- :mod:`trioexec.permissions`: permission rules, modes, rule matchers and the chain;
- :mod:`trioexec.hooks`: hook configuration and what hooks receive and answer;
- :mod:`trioexec.results`: result persistence and the per-message budget;
- :mod:`trioexec.lowlevel`: the building blocks the runners are made of;
- :mod:`trioexec.tools`: the standard tools; :mod:`trioexec.testing`: test helpers;
  :mod:`trioexec.scenario`: scenario files.
"""

from __future__ import annotations

from . import _util, hooks, lowlevel, permissions, results  # noqa: F401  (reachable as attributes)
from ._anthropic._assembler import ToolUseAssembler as ToolUseAssembler
from ._contract._function_tool import function_tool as function_tool
from ._contract._registry import ToolRegistry as ToolRegistry
from ._contract._tool import CallContext as CallContext
from ._contract._tool import ContextModifier as ContextModifier
from ._contract._tool import ContextState as ContextState
from ._contract._tool import InterruptBehavior as InterruptBehavior
from ._contract._tool import PermissionResult as PermissionResult
from ._contract._tool import ProgressSender as ProgressSender
from ._contract._tool import Tool as Tool
from ._contract._tool import ToolOutput as ToolOutput
from ._core._batch import RunOutcome as RunOutcome
from ._core._batch import run_tools as run_tools
from ._core._events import CallEvent as CallEvent
from ._core._events import CallEventKind as CallEventKind
from ._core._events import CancelReason as CancelReason
from ._core._events import Observer as Observer
from ._core._policy import Policy as Policy
from ._core._streaming import StreamingExecutor as StreamingExecutor
from ._core._streaming import open_streaming_executor as open_streaming_executor
from ._core._turn import Turn as Turn
from ._errors import ConfigurationError as ConfigurationError
from ._errors import MalformedBlockError as MalformedBlockError
from ._errors import ToolDefinitionError as ToolDefinitionError
from ._errors import TrioexecError as TrioexecError
from ._guard._rails import CanUseTool as CanUseTool
from ._guard._rails import GuardRails as GuardRails
from ._guard._settings import Settings as Settings
from ._guard._settings import default_settings_paths as default_settings_paths
from ._guard._settings import load_settings as load_settings
from ._models import Attachment as Attachment
from ._models import Content as Content
from ._models import ContentBlock as ContentBlock
from ._models import ImageBlock as ImageBlock
from ._models import JSONObject as JSONObject
from ._models import JSONValue as JSONValue
from ._models import ProgressUpdate as ProgressUpdate
from ._models import ResultUpdate as ResultUpdate
from ._models import TextBlock as TextBlock
from ._models import ToolResult as ToolResult
from ._models import ToolUse as ToolUse
from ._models import Update as Update
from ._results._budget import ContentReplacementState as ContentReplacementState
from ._results._message import UserMessage as UserMessage
from ._results._message import build_user_message as build_user_message
from ._version import __version__ as __version__

__all__ = [
    "Attachment",
    "CallContext",
    "CallEvent",
    "CallEventKind",
    "CanUseTool",
    "CancelReason",
    "ConfigurationError",
    "Content",
    "ContentBlock",
    "ContentReplacementState",
    "ContextModifier",
    "ContextState",
    "GuardRails",
    "ImageBlock",
    "InterruptBehavior",
    "JSONObject",
    "JSONValue",
    "MalformedBlockError",
    "Observer",
    "PermissionResult",
    "Policy",
    "ProgressSender",
    "ProgressUpdate",
    "ResultUpdate",
    "RunOutcome",
    "Settings",
    "StreamingExecutor",
    "TextBlock",
    "Tool",
    "ToolDefinitionError",
    "ToolOutput",
    "ToolRegistry",
    "ToolResult",
    "ToolUse",
    "ToolUseAssembler",
    "TrioexecError",
    "Turn",
    "Update",
    "UserMessage",
    "__version__",
    "build_user_message",
    "default_settings_paths",
    "function_tool",
    "load_settings",
    "open_streaming_executor",
    "run_tools",
]

_util.fixup_module_metadata(__name__, globals())
