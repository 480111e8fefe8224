"""``trioexec demo``: two recorded assistant messages run against the real tools.

Offline and key-free: the "model" is a recording of Anthropic streaming events,
fed through :class:`ToolUseAssembler` into a streaming executor while it is
still "streaming", against the standard tools in a temporary workspace.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

import attrs
import trio

from ._budget import ContentReplacementState
from ._demo_recording import RECORDED_TURNS, RecordedEvent, write_workspace
from ._events import CallEvent, Observer
from ._guard import GuardRails
from ._live import LiveDisplay
from ._message import UserMessage, build_user_message
from ._models import JSONObject, JSONValue, ResultUpdate, ToolResult, ToolUse, Update
from ._stream_adapter import ToolUseAssembler
from ._streaming import open_streaming_executor
from ._turn import Turn
from .tools import default_tools

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from ._tool import Tool

__all__ = ["run_demo"]

_TIMELINE_WIDTH = 48

_DEMO_SETTINGS: JSONObject = {"permissions": {"allow": ["Edit(./src/**)"], "deny": ["Bash(rm:*)"]}}
"""What a project's .claude/settings.json might say: edits under src/ need no prompt."""
_DEMO_GUARD = GuardRails.from_settings(_DEMO_SETTINGS)


@attrs.define
class _Recorder(Observer):
    origin: float
    events: list[CallEvent] = attrs.Factory(list)

    def call_event(self, event: CallEvent) -> None:
        if event.kind not in ("call_began", "call_ended"):
            self.events.append(attrs.evolve(event, time=event.time - self.origin))


@attrs.frozen
class _TurnReport:
    title: str
    calls: tuple[ToolUse, ...]
    message: UserMessage
    events: tuple[CallEvent, ...]


async def _run_turn(
    title: str,
    recording: Sequence[RecordedEvent],
    *,
    tools: Sequence[Tool[Any]],
    workspace: Path,
    session_dir: Path,
    state: ContentReplacementState,
    out: TextIO | None,
) -> _TurnReport:
    origin = trio.current_time()
    recorder = _Recorder(origin)
    observers: list[Observer] = [recorder]
    display = None
    if out is not None:
        display = LiveDisplay(out, redraw=out.isatty(), clock_origin=origin)
        observers.append(display)
    assembler = ToolUseAssembler()
    updates: list[Update] = []
    async with open_streaming_executor(
        tools,
        turn=Turn(),
        guard=_DEMO_GUARD,
        cwd=workspace,
        session_dir=session_dir,
        observers=observers,
    ) as executor:
        for pause, event in recording:
            await trio.sleep(pause)
            tool_use = assembler.feed(event)
            if tool_use is not None:
                if display is not None:
                    display.describe(tool_use)
                executor.add_tool(tool_use)
            updates.extend(executor.drain_nowait())
        updates.extend([update async for update in executor.remaining()])
    results = [u for u in updates if isinstance(u, ResultUpdate)]
    if display is not None:
        display.finish()
    message = await build_user_message(
        results, state=state, session_dir=session_dir, limits=executor.result_limits
    )
    return _TurnReport(title, tuple(assembler.sealed), message, tuple(recorder.events))


async def _run_all(out: TextIO, *, as_json: bool, workspace: Path, session_dir: Path) -> int:
    tools = default_tools(root=workspace)
    state = ContentReplacementState()
    reports = []
    if not as_json:
        out.write(f"trioexec demo: a recorded model response, real tools, in {workspace}\n")
        out.write(f"settings: {json.dumps(_DEMO_SETTINGS)}\n")
    for number, (title, recording) in enumerate(RECORDED_TURNS, start=1):
        if not as_json:
            out.write(f"\n━━ turn {number}: {title}\n")
        report = await _run_turn(
            title,
            recording,
            tools=tools,
            workspace=workspace,
            session_dir=session_dir,
            state=state,
            out=None if as_json else out,
        )
        reports.append(report)
        if not as_json:
            _print_report(out, report)
    if as_json:
        out.write(json.dumps(_json_report(reports, workspace), indent=2) + "\n")
    else:
        out.write("\nEvery tool_use got exactly one tool_result, in the order the calls arrived.\n")
    return 0


def run_demo(*, as_json: bool = False, out: TextIO | None = None) -> int:
    """Run the demo in a temporary workspace (real clock, a few seconds); returns the exit code."""
    with tempfile.TemporaryDirectory(prefix="trioexec-demo-") as tmp:
        workspace = Path(tmp, "workspace")
        session_dir = Path(tmp, "session")
        workspace.mkdir()
        session_dir.mkdir()
        write_workspace(workspace)
        stream = out or sys.stdout
        try:
            return trio.run(
                lambda: _run_all(
                    stream, as_json=as_json, workspace=workspace, session_dir=session_dir
                )
            )
        except BrokenPipeError:
            # The reader went away (``trioexec demo | head``): no traceback, and keep
            # the interpreter's final flush from failing again.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            return 1


def _print_report(out: TextIO, report: _TurnReport) -> None:
    out.write("\n  tool_results, in call order (what the model receives next):\n")
    for result in report.message.results:
        flag = "error" if result.is_error else "ok   "
        out.write(f"  {result.tool_use_id:<16} {flag} {_first_lines(result.text)}\n")
    out.write("\n  timeline (seconds since the message began streaming):\n")
    for line in _timeline(report):
        out.write(f"  {line}\n")


def _first_lines(text: str, limit: int = 88) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    shown = " ⏎ ".join(lines[:3])
    return shown if len(shown) <= limit else shown[: limit - 1] + "…"


def _timeline(report: _TurnReport) -> list[str]:
    """One row per call: · queued, █ running, ─ held by the ordered gate, then ✓ / ✗."""
    end = max((e.time for e in report.events), default=0.0) or 1.0
    scale = _TIMELINE_WIDTH / end
    rows = [f"{'':<16}  · queued   █ running   ─ done, held by the ordered gate until released"]

    def column(t: float) -> int:
        return min(int(t * scale), _TIMELINE_WIDTH)

    for call in report.calls:
        events = [e for e in report.events if e.tool_use_id == call.id]
        times = {e.kind: e.time for e in events}
        queued = times.get("queued", 0.0)
        start = times.get("started")
        stop = times.get("completed", times.get("cancelled", queued))
        released = times.get("released", stop)
        cells = [" "] * (_TIMELINE_WIDTH + 1)
        for i in range(column(queued), column(start if start is not None else stop)):
            cells[i] = "·"
        for i in range(column(start) if start is not None else column(stop), column(stop)):
            cells[i] = "█"
        for i in range(column(stop) + 1, column(released) + 1):
            cells[i] = "─"
        reason = next((e.reason for e in events if e.kind == "cancelled"), None)
        failed = reason is not None or any(
            isinstance(e.data, ToolResult) and e.data.is_error
            for e in events
            if e.kind in ("completed", "released")
        )
        cells[column(stop)] = "✗" if failed else "✓"
        ran = f"ran {stop - start:.2f}s" if start is not None else "never started"
        note = f"{ran}, cancelled: {reason}" if reason else ran
        rows.append(f"{call.id:<16} │{''.join(cells)}│ {note}")
    rows.append(f"{'':<16} 0{'':>{_TIMELINE_WIDTH - 6}}{end:.2f}s")
    return rows


def _json_report(reports: Sequence[_TurnReport], workspace: Path) -> JSONObject:
    turns: list[JSONValue] = []
    for report in reports:
        events: list[JSONValue] = []
        for event in report.events:
            item: JSONObject = {
                "t": round(event.time, 6),
                "id": event.tool_use_id,
                "kind": event.kind,
            }
            if event.reason is not None:
                item["reason"] = event.reason
            events.append(item)
        turns.append(
            {
                "title": report.title,
                "results": [r.to_api() for r in report.message.results],
                "events": events,
                "user_message": report.message.to_api(),
            }
        )
    return {"workspace": str(workspace), "turns": turns}
