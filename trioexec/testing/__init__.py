"""Helpers for testing code that runs tool calls, in the spirit of ``trio.testing``.

:class:`ScriptedTool` is a tool whose behaviour is its input (sleep, progress,
context updates, output or error), so a test can script a whole turn and run
it on ``trio.testing.MockClock``.
"""

from __future__ import annotations

from ._scripted import SCRIPTED_INPUT_SCHEMA as SCRIPTED_INPUT_SCHEMA
from ._scripted import ScriptedTool as ScriptedTool
from ._scripted import ScriptedToolError as ScriptedToolError
from ._scripted import generated_output as generated_output

__all__ = [
    "SCRIPTED_INPUT_SCHEMA",
    "ScriptedTool",
    "ScriptedToolError",
    "generated_output",
]
