"""Helpers for testing code that runs tool calls, in the spirit of ``trio.testing``.

:class:`ScriptedTool` is a tool whose behaviour is its input (sleep, progress,
context updates, output or error) and :class:`ScriptedHook` a hook whose
answer is data, so a test can script a whole turn and run it on
``trio.testing.MockClock``.  The scenario functions run a whole scenario file
(SPEC §8) from a test, on the test's own clock::

    async def test_sibling_error(autojump_clock: trio.testing.MockClock, tmp_path) -> None:
        run = await run_scenario(load_scenario("examples/scenarios/05_sibling_error.json"),
                                 session_dir=tmp_path)
        assert run.results[1].is_error
"""

from __future__ import annotations

from .. import _util
from .._scenario._load import ScenarioError as ScenarioError
from .._scenario._load import load_scenario as load_scenario
from .._scenario._load import parse_scenario as parse_scenario
from .._scenario._model import Scenario as Scenario
from .._scenario._report import RunEvent as RunEvent
from .._scenario._report import ScenarioRun as ScenarioRun
from .._scenario._runner import run_scenario as run_scenario
from .._scenario._runner import run_scenario_sync as run_scenario_sync
from .._scenario._runner import scripted_tool as scripted_tool
from .._scenario._scripted import SCRIPTED_INPUT_SCHEMA as SCRIPTED_INPUT_SCHEMA
from .._scenario._scripted import ScriptedTool as ScriptedTool
from .._scenario._scripted import ScriptedToolError as ScriptedToolError
from .._scenario._scripted import generated_output as generated_output
from .._scenario._scripted_hooks import ScriptedHook as ScriptedHook
from .._scenario._scripted_hooks import ScriptedHookError as ScriptedHookError
from .._scenario._timeline import render_timeline as render_timeline
from .._scenario._trace import trace_events as trace_events

__all__ = [
    "SCRIPTED_INPUT_SCHEMA",
    "RunEvent",
    "Scenario",
    "ScenarioError",
    "ScenarioRun",
    "ScriptedHook",
    "ScriptedHookError",
    "ScriptedTool",
    "ScriptedToolError",
    "generated_output",
    "load_scenario",
    "parse_scenario",
    "render_timeline",
    "run_scenario",
    "run_scenario_sync",
    "scripted_tool",
    "trace_events",
]

_util.fixup_module_metadata(__name__, globals())
