"""A live progress display: one line per call with its state.

On a terminal the block of lines is redrawn in place (ANSI cursor movement);
otherwise every state change is printed as a plain line, so logs and pipes
stay readable.  Built on the :class:`Observer` interface, like any UI would be.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TextIO

import attrs

from ._events import CallEvent, Observer
from ._models import ToolResult
from ._texts import describe_tool_use

if TYPE_CHECKING:
    from ._models import ToolUse

__all__ = ["LiveDisplay"]

_SYMBOLS = {
    "queued": "·",
    "running": "▶",
    "done": "✓",
    "error": "✗",
    "cancelled": "⊘",
}


@attrs.define
class _Line:
    label: str
    state: str = "queued"
    detail: str = ""
    started: float | None = None
    ended: float | None = None


class LiveDisplay(Observer):
    """Renders call states to ``out``; call :meth:`describe` when a call is added."""

    def __init__(self, out: TextIO, *, redraw: bool, clock_origin: float) -> None:
        self._out = out
        self._redraw = redraw
        self._origin = clock_origin
        self._lines: dict[str, _Line] = {}
        self._drawn = 0
        self._closed = False

    def describe(self, tool_use: ToolUse) -> None:
        """Give the display the call's label before its events arrive."""
        self._lines.setdefault(tool_use.id, _Line(describe_tool_use(tool_use)))

    def call_event(self, event: CallEvent) -> None:
        line = self._lines.setdefault(event.tool_use_id, _Line(event.tool_use_id))
        t = event.time - self._origin
        if event.kind == "started":
            line.state, line.started = "running", t
        elif event.kind == "progress":
            line.detail = _short(_progress_text(event.data), 40)
            if not self._redraw:
                return  # plain output: state changes only
        elif event.kind == "completed":
            failed = isinstance(event.data, ToolResult) and event.data.is_error
            line.state, line.ended = ("error" if failed else "done"), t
            line.detail = ""
        elif event.kind == "cancelled":
            line.state, line.ended = "cancelled", t
            line.detail = str(event.reason)
        elif event.kind != "queued" or not self._redraw:
            return
        self._render(event.tool_use_id)

    def finish(self) -> None:
        """Leave the final state on screen and start a fresh block for the next turn."""
        if self._redraw and not self._closed:
            try:
                self._draw_all()
            except BrokenPipeError:
                self._closed = True
        self._lines.clear()
        self._drawn = 0

    def _render(self, tool_use_id: str) -> None:
        if self._closed:
            return
        try:
            if self._redraw:
                self._draw_all()
                return
            self._out.write(self._format(self._lines[tool_use_id]) + "\n")
            self._out.flush()
        except BrokenPipeError:
            self._closed = True  # the reader went away (``| head``): stop drawing, quietly

    def _draw_all(self) -> None:
        if self._drawn:
            self._out.write(f"\x1b[{self._drawn}F")
        for line in self._lines.values():
            self._out.write("\x1b[2K" + self._format(line) + "\n")
        self._drawn = len(self._lines)
        self._out.flush()

    def _format(self, line: _Line) -> str:
        symbol = _SYMBOLS.get(line.state, "?")
        timing = ""
        if line.started is not None and line.ended is not None:
            timing = f"{line.ended - line.started:6.2f}s"
        elif line.started is not None:
            timing = f"from {line.started:.2f}s"
        detail = f"  {line.detail}" if line.detail else ""
        return f"  {symbol} {line.label:<44.44} {line.state:<9} {timing}{detail}"


def _progress_text(data: object) -> str:
    text = getattr(data, "text", None)
    return text if isinstance(text, str) and text.strip() else str(data)


def _short(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
