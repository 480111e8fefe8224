"""Run the model's tool calls while it streams: the Anthropic SDK adapter and an agent loop.

Needs the ``anthropic`` extra (``pip install 'trioexec[anthropic]'``); ``import
trioexec`` never imports it.  See docs/agent.md.
"""

# ruff: noqa: E402  (the extra is checked before the imports that need it)

from __future__ import annotations

from . import _util

_util.require_extra("trioexec.anthropic", "anthropic", "anthropic")

from ._anthropic._agent import Agent as Agent
from ._anthropic._agent import AgentResult as AgentResult
from ._anthropic._agent import AgentStopReason as AgentStopReason
from ._anthropic._agent import StopHook as StopHook
from ._anthropic._transcript import Transcript as Transcript
from ._anthropic._transcript import default_transcript_path as default_transcript_path
from ._anthropic._turn import DEFAULT_MAX_TOKENS as DEFAULT_MAX_TOKENS
from ._anthropic._turn import AttemptCallFate as AttemptCallFate
from ._anthropic._turn import FailedAttempt as FailedAttempt
from ._anthropic._turn import MalformedStreamError as MalformedStreamError
from ._anthropic._turn import ModelStreamError as ModelStreamError
from ._anthropic._turn import TurnOutcome as TurnOutcome
from ._anthropic._turn import run_assistant_turn as run_assistant_turn

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "Agent",
    "AgentResult",
    "AgentStopReason",
    "AttemptCallFate",
    "FailedAttempt",
    "MalformedStreamError",
    "ModelStreamError",
    "StopHook",
    "Transcript",
    "TurnOutcome",
    "default_transcript_path",
    "run_assistant_turn",
]

_util.fixup_module_metadata(__name__, globals())
