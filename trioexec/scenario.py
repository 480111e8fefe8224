"""Scenario files (SPEC §8): a whole turn as data, run on virtual time, rendered.

A scenario file scripts the calls of one turn (when each arrives, what each
does), the hooks, the permission rules and the policy; running it gives the
results, every event on virtual time, a text timeline and a Chrome trace.
``trioexec scenario run FILE`` does the same from the command line::

    run = run_scenario_sync(load_scenario("examples/scenarios/05_sibling_error.json"),
                            session_dir=tmp)
    print(render_timeline(run))

From a test, on the test's own clock, ``await run_scenario(...)``.
"""

from __future__ import annotations

from . import _util
from ._scenario._load import ScenarioError as ScenarioError
from ._scenario._load import load_scenario as load_scenario
from ._scenario._load import parse_scenario as parse_scenario
from ._scenario._load import scenario_schema as scenario_schema
from ._scenario._model import Scenario as Scenario
from ._scenario._report import RunEvent as RunEvent
from ._scenario._report import ScenarioRun as ScenarioRun
from ._scenario._runner import run_scenario as run_scenario
from ._scenario._runner import run_scenario_sync as run_scenario_sync
from ._scenario._timeline import render_timeline as render_timeline
from ._scenario._trace import trace_events as trace_events

__all__ = [
    "RunEvent",
    "Scenario",
    "ScenarioError",
    "ScenarioRun",
    "load_scenario",
    "parse_scenario",
    "render_timeline",
    "run_scenario",
    "run_scenario_sync",
    "scenario_schema",
    "trace_events",
]

_util.fixup_module_metadata(__name__, globals())
