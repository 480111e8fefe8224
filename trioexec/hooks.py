"""Hooks (SPEC §6): configuring them, what they receive and what they answer.

Hook authors write ``from trioexec.hooks import HookInput, HookOutput``; a
:class:`HookSet` is given to :class:`~trioexec.GuardRails`.
"""

from __future__ import annotations

from . import _util
from ._hooks._background import AsyncHookMailbox as AsyncHookMailbox
from ._hooks._config import CommandHook as CommandHook
from ._hooks._config import HookEntry as HookEntry
from ._hooks._config import HookEvent as HookEvent
from ._hooks._config import HookInput as HookInput
from ._hooks._config import HookSet as HookSet
from ._hooks._config import PythonHook as PythonHook
from ._hooks._output import HookBlockingError as HookBlockingError
from ._hooks._output import HookOutput as HookOutput
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
