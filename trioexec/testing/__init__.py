"""Helpers for testing code that runs tool calls, in the spirit of ``trio.testing``.

:class:`ScriptedTool` is a tool whose behaviour is its input (sleep, progress,
context updates, output or error) and :class:`ScriptedHook` a hook whose
answer is data, so a test can script a whole turn and run it on
``trio.testing.MockClock``.  Whole scenario files run from a test with
:func:`trioexec.scenario.run_scenario`, on the test's own clock::

    async def test_sibling_error(autojump_clock: trio.testing.MockClock, tmp_path) -> None:
        run = await run_scenario(load_scenario("examples/scenarios/05_sibling_error.json"),
                                 session_dir=tmp_path)
        assert run.results[1].is_error
"""

from __future__ import annotations

from .. import _util
from .._scenario._runner import scripted_tool as scripted_tool
from .._scenario._scripted import SCRIPTED_INPUT_SCHEMA as SCRIPTED_INPUT_SCHEMA
from .._scenario._scripted import ScriptedTool as ScriptedTool
from .._scenario._scripted import ScriptedToolError as ScriptedToolError
from .._scenario._scripted import generated_output as generated_output
from .._scenario._scripted_hooks import ScriptedHook as ScriptedHook
from .._scenario._scripted_hooks import ScriptedHookError as ScriptedHookError

__all__ = [
    "SCRIPTED_INPUT_SCHEMA",
    "ScriptedHook",
    "ScriptedHookError",
    "ScriptedTool",
    "ScriptedToolError",
    "generated_output",
    "scripted_tool",
]

_util.fixup_module_metadata(__name__, globals())
