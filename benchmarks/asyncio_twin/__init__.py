"""trioexec's orchestrator on asyncio: the twin a side-by-side comparison needs.

The same batch path, streaming executor, ordered gate, cancellation reasons,
grace period, time limits, interrupt, abort and discard, on ``asyncio``
(``TaskGroup``, ``asyncio.timeout``, queues), reusing trioexec's pure parts.
``python -m benchmarks.asyncio_twin FILE`` runs a scenario file on a
virtual-time loop and prints what ``trioexec scenario run FILE`` prints, byte
for byte.  See README.md next to this file.
"""

from __future__ import annotations

from ._core import END, Turn
from ._frontends import RunOutcome, StreamingExecutor, open_streaming_executor, run_tools
from ._loop import VirtualClockLoop, wait_all_tasks_blocked
from ._scenario import AsyncioScriptedHook, AsyncioScriptedTool, run_scenario, run_scenario_sync
from ._scope import Scope

__all__ = [
    "END",
    "AsyncioScriptedHook",
    "AsyncioScriptedTool",
    "RunOutcome",
    "Scope",
    "StreamingExecutor",
    "Turn",
    "VirtualClockLoop",
    "open_streaming_executor",
    "run_scenario",
    "run_scenario_sync",
    "run_tools",
    "wait_all_tasks_blocked",
]
