"""``trioexec demo``: two recorded assistant messages run against the real tools.

Offline and key-free: the "model" is a recording of Anthropic streaming events,
fed through :class:`ToolUseAssembler` into a streaming executor while it is
still "streaming", against the standard tools in a temporary workspace.

On a terminal every line is cropped to the terminal's width (read again for
each line, and the live block is redrawn on ``SIGWINCH``), so nothing wraps.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import tempfile
import threading
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

import attrs
import trio

from .._anthropic._assembler import ToolUseAssembler
from .._contract._tool import CallContext
from .._core._events import CallEvent, Observer
from .._core._streaming import open_streaming_executor
from .._core._turn import Turn
from .._guard._rails import GuardRails
from .._models import JSONObject, JSONValue, ResultUpdate, ToolResult, ToolUse, Update
from .._results._budget import ContentReplacementState
from .._results._message import UserMessage, build_user_message
from ..tools import default_tools
from ._demo_recording import RECORDED_TURNS, RecordedEvent, write_workspace
from ._live import LiveDisplay
from ._terminal import crop, terminal_size

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from .._contract._tool import Tool

__all__ = ["run_demo"]

_TIMELINE_WIDTH = 48
"""Columns of the timeline's bar, narrower when the terminal is."""

_DEMO_SETTINGS: JSONObject = {"permissions": {"allow": ["Edit(./src/**)"], "deny": ["Bash(rm:*)"]}}
"""What a project's .claude/settings.json might say: edits under src/ need no prompt."""
_DEMO_GUARD = GuardRails.from_settings(_DEMO_SETTINGS)


class _Screen:
    """Writes whole lines to ``out``, cropped to the terminal's width when it is one."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.is_terminal = terminal_size(out) is not None
        self.displays: list[LiveDisplay] = []
        """The live blocks on screen now, redrawn after a resize."""

    def width(self) -> int | None:
        size = terminal_size(self.out) if self.is_terminal else None
        return None if size is None else size[0]

    def line(self, text: str = "") -> None:
        width = self.width()
        self.out.write((text if width is None else crop(text, width - 1)) + "\n")
        if width is not None:
            self.out.flush()

    async def follow_resizes(self) -> None:
        """Redraw the live blocks whenever the terminal is resized (until cancelled)."""
        with trio.open_signal_receiver(signal.SIGWINCH) as signals:
            async for _ in signals:
                for display in self.displays:
                    display.refresh()


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
    screen: _Screen | None,
) -> _TurnReport:
    origin = trio.current_time()
    recorder = _Recorder(origin)
    observers: list[Observer] = [recorder]
    display = None
    if screen is not None:
        display = LiveDisplay(screen.out, redraw=screen.is_terminal, clock_origin=origin)
        observers.append(display)
        screen.displays.append(display)
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
    if display is not None and screen is not None:
        display.finish()
        screen.displays.remove(display)
    message = await build_user_message(
        results, state=state, session_dir=session_dir, limits=executor.result_limits
    )
    return _TurnReport(title, tuple(assembler.sealed), message, tuple(recorder.events))


async def _run_all(out: TextIO, *, as_json: bool, workspace: Path, session_dir: Path) -> int:
    tools = default_tools(root=workspace)
    state = ContentReplacementState()
    reports = []
    screen = None if as_json else _Screen(out)
    async with trio.open_nursery() as nursery:
        if screen is not None and screen.is_terminal and _can_follow_resizes():
            nursery.start_soon(screen.follow_resizes)
        if screen is not None:
            screen.line(f"trioexec demo: a recorded model response, real tools, in {workspace}")
            screen.line(f"settings: {json.dumps(_DEMO_SETTINGS)}")
        for number, (title, recording) in enumerate(RECORDED_TURNS, start=1):
            if screen is not None:
                screen.line()
                screen.line(f"━━ turn {number}: {title}")
            report = await _run_turn(
                title,
                recording,
                tools=tools,
                workspace=workspace,
                session_dir=session_dir,
                state=state,
                screen=screen,
            )
            reports.append(report)
            if screen is not None:
                _print_report(screen, number, report)
        nursery.cancel_scope.cancel(reason="the demo is over")
    if screen is None:
        out.write(json.dumps(_json_report(reports, workspace), indent=2) + "\n")
    else:
        await _show_sandbox(screen, workspace)
        screen.line()
        screen.line("Every tool_use got exactly one tool_result, in the order the calls arrived.")
    return 0


_SANDBOX_COMMAND = "echo hi > ../outside.txt"
"""A write outside the workspace (into the demo's own temporary directory: harmless if it ran)."""


async def _show_sandbox(screen: _Screen, workspace: Path) -> None:
    """Where bubblewrap runs: one Bash call under ``"sandbox": {"enabled": true}``, refused."""
    from .._guard._sandbox import probe_bwrap
    from ..tools import BashTool
    from ..tools._bash import BashInput, ShellError

    if probe_bwrap(None) is not None:
        return
    guard = GuardRails.from_settings({"sandbox": {"enabled": True}})
    ctx = CallContext(
        ToolUse("toolu_sandbox", "Bash", {}), cwd=workspace, permissions=guard.permissions
    )
    try:
        text = str(await BashTool().call(BashInput(_SANDBOX_COMMAND), ctx, lambda _: None))
    except ShellError as exc:
        text = str(exc)
    refusal = next((line for line in text.splitlines() if "Read-only" in line), text)
    screen.line()
    screen.line('━━ the OS sandbox: Bash under bubblewrap, "sandbox": {"enabled": true}')
    screen.line(f"$ {_SANDBOX_COMMAND}")
    screen.line(f"  {refusal.strip()}")
    screen.line("  (the model gets <sandbox_violations>: what was refused, how to ask)")


def _can_follow_resizes() -> bool:
    """``SIGWINCH`` exists and trio may listen for signals (only from the main thread)."""
    return hasattr(signal, "SIGWINCH") and threading.current_thread() is threading.main_thread()


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


def _print_report(screen: _Screen, number: int, report: _TurnReport) -> None:
    screen.line()
    screen.line(f"  turn {number} tool_results, in call order (what the model receives next):")
    for result in report.message.results:
        flag = "error" if result.is_error else "ok   "
        screen.line(f"  {result.tool_use_id:<16} {flag} {_first_lines(result.text)}")
    screen.line()
    screen.line(f"  turn {number} timeline (seconds since the message began streaming):")
    for line in _timeline(report, screen.width(), legend=number == 1):
        screen.line(f"  {line}")


def _first_lines(text: str, limit: int = 88) -> str:
    lines = [line.replace("\t", " ") for line in text.splitlines() if line.strip()]
    shown = " ⏎ ".join(lines[:3])
    return shown if len(shown) <= limit else shown[: limit - 1] + "…"


def _timeline(report: _TurnReport, width: int | None = None, *, legend: bool = True) -> list[str]:
    """One row per call: · queued, █ running, ─ held by the ordered gate, then ✓ / ✗.

    On a terminal of ``width`` columns the bar narrows so that a row keeps
    about 24 columns for its note.
    """
    bar = _TIMELINE_WIDTH if width is None else max(16, min(_TIMELINE_WIDTH, width - 46))
    end = max((e.time for e in report.events), default=0.0) or 1.0
    scale = bar / end
    key = f"{'':<16}  · queued  █ running  ✓ ✗ done  ─ held by the ordered gate"
    rows = [key] if legend else []

    def column(t: float) -> int:
        return min(int(t * scale), bar)

    for call in report.calls:
        events = [e for e in report.events if e.tool_use_id == call.id]
        times = {e.kind: e.time for e in events}
        queued = times.get("queued", 0.0)
        start = times.get("started")
        stop = times.get("completed", times.get("cancelled", queued))
        released = times.get("released", stop)
        cells = [" "] * (bar + 1)
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
    rows.append(f"{'':<16} 0{'':>{bar - 6}}{end:.2f}s")
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
