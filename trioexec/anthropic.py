"""Run the model's tool calls while it streams: the Anthropic SDK adapter and an agent loop.

Needs the ``anthropic`` extra (``pip install 'trioexec[anthropic]'``); ``import
trioexec`` never imports it.  See docs/agent.md.
"""

from __future__ import annotations

from . import _util
from ._agent import Agent as Agent
from ._agent import AgentResult as AgentResult
from ._agent import AgentStopReason as AgentStopReason
from ._agent import StopHook as StopHook
from ._model_turn import DEFAULT_MAX_TOKENS as DEFAULT_MAX_TOKENS
from ._model_turn import ModelStreamError as ModelStreamError
from ._model_turn import TurnOutcome as TurnOutcome
from ._model_turn import run_assistant_turn as run_assistant_turn
from ._transcript import Transcript as Transcript
from ._transcript import default_transcript_path as default_transcript_path

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "Agent",
    "AgentResult",
    "AgentStopReason",
    "ModelStreamError",
    "StopHook",
    "Transcript",
    "TurnOutcome",
    "default_transcript_path",
    "run_assistant_turn",
]

_util.fixup_module_metadata(__name__, globals())
