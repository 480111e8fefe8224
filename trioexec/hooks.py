"""Hooks (SPEC §6): configuring them, what they receive and what they answer.

Hook authors write ``from trioexec.hooks import HookInput, HookOutput``; a
:class:`HookSet` is given to :class:`~trioexec.GuardRails`.
"""

from __future__ import annotations

from . import _util
from ._hook_background import AsyncHookMailbox as AsyncHookMailbox
from ._hook_output import HookBlockingError as HookBlockingError
from ._hook_output import HookOutput as HookOutput
from ._hooks import CommandHook as CommandHook
from ._hooks import HookEntry as HookEntry
from ._hooks import HookEvent as HookEvent
from ._hooks import HookInput as HookInput
from ._hooks import HookSet as HookSet
from ._hooks import PythonHook as PythonHook
from ._models import AttachmentKind as AttachmentKind

__all__ = [
    "AsyncHookMailbox",
    "AttachmentKind",
    "CommandHook",
    "HookBlockingError",
    "HookEntry",
    "HookEvent",
    "HookInput",
    "HookOutput",
    "HookSet",
    "PythonHook",
]

_util.fixup_module_metadata(__name__, globals())
