"""trioexec: a trio-native, structured-concurrency runtime for an LLM's tool calls."""

from __future__ import annotations

from ._batch import RunOutcome as RunOutcome
from ._batch import run_tools as run_tools
from ._budget import DEFAULT_MESSAGE_BUDGET as DEFAULT_MESSAGE_BUDGET
from ._budget import ContentReplacementState as ContentReplacementState
from ._budget import apply_message_budget as apply_message_budget
from ._concurrency import DEFAULT_MAX_CONCURRENCY as DEFAULT_MAX_CONCURRENCY
from ._errors import ConfigurationError as ConfigurationError
from ._errors import MalformedBlockError as MalformedBlockError
from ._errors import ToolDefinitionError as ToolDefinitionError
from ._errors import TrioexecError as TrioexecError
from ._events import CallEvent as CallEvent
from ._events import CallEventKind as CallEventKind
from ._events import CancelReason as CancelReason
from ._events import Observer as Observer
from ._guard import CanUseTool as CanUseTool
from ._guard import GuardRails as GuardRails
from ._guard import PostToolUseVerdict as PostToolUseVerdict
from ._guard import PreToolUseVerdict as PreToolUseVerdict
from ._guard import after_call as after_call
from ._guard import authorize_call as authorize_call
from ._hook_output import HookBlockingError as HookBlockingError
from ._hook_output import HookOutput as HookOutput
from ._hooks import CommandHook as CommandHook
from ._hooks import HookEntry as HookEntry
from ._hooks import HookInput as HookInput
from ._hooks import HookSet as HookSet
from ._hooks import PythonHook as PythonHook
from ._message import UserMessage as UserMessage
from ._message import build_user_message as build_user_message
from ._models import Attachment as Attachment
from ._models import AttachmentKind as AttachmentKind
from ._models import Batch as Batch
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
from ._partition import partition_tool_calls as partition_tool_calls
from ._path_access import PathAccess as PathAccess
from ._permission_context import PermissionContext as PermissionContext
from ._permission_context import PermissionMode as PermissionMode
from ._permission_context import PermissionModeName as PermissionModeName
from ._registry import ToolRegistry as ToolRegistry
from ._results import DEFAULT_MAX_RESULT_CHARS as DEFAULT_MAX_RESULT_CHARS
from ._results import finalize_result as finalize_result
from ._rules import PermissionRule as PermissionRule
from ._rules import match_bash_rule as match_bash_rule
from ._rules import match_path_rule as match_path_rule
from ._rules import split_bash_command as split_bash_command
from ._schema import schema_for_attrs as schema_for_attrs
from ._settings import Settings as Settings
from ._settings import default_settings_paths as default_settings_paths
from ._settings import load_settings as load_settings
from ._stream_adapter import ToolUseAssembler as ToolUseAssembler
from ._streaming import StreamingExecutor as StreamingExecutor
from ._streaming import open_streaming_executor as open_streaming_executor
from ._tool import CallContext as CallContext
from ._tool import ContextModifier as ContextModifier
from ._tool import ContextState as ContextState
from ._tool import InterruptBehavior as InterruptBehavior
from ._tool import PermissionResult as PermissionResult
from ._tool import ProgressSender as ProgressSender
from ._tool import Tool as Tool
from ._tool import ToolOutput as ToolOutput
from ._tool import function_tool as function_tool
from ._turn import Turn as Turn
from ._version import __version__ as __version__

__all__ = [
    "DEFAULT_MAX_CONCURRENCY",
    "DEFAULT_MAX_RESULT_CHARS",
    "DEFAULT_MESSAGE_BUDGET",
    "Attachment",
    "AttachmentKind",
    "Batch",
    "CallContext",
    "CallEvent",
    "CallEventKind",
    "CanUseTool",
    "CancelReason",
    "CommandHook",
    "ConfigurationError",
    "Content",
    "ContentBlock",
    "ContentReplacementState",
    "ContextModifier",
    "ContextState",
    "GuardRails",
    "HookBlockingError",
    "HookEntry",
    "HookInput",
    "HookOutput",
    "HookSet",
    "ImageBlock",
    "InterruptBehavior",
    "JSONObject",
    "JSONValue",
    "MalformedBlockError",
    "Observer",
    "PathAccess",
    "PermissionContext",
    "PermissionMode",
    "PermissionModeName",
    "PermissionResult",
    "PermissionRule",
    "PostToolUseVerdict",
    "PreToolUseVerdict",
    "ProgressSender",
    "ProgressUpdate",
    "PythonHook",
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
    "after_call",
    "apply_message_budget",
    "authorize_call",
    "build_user_message",
    "default_settings_paths",
    "finalize_result",
    "function_tool",
    "load_settings",
    "match_bash_rule",
    "match_path_rule",
    "open_streaming_executor",
    "partition_tool_calls",
    "run_tools",
    "schema_for_attrs",
    "split_bash_command",
]
