"""A live progress display: one line per call with its state.

On a terminal the block of lines is redrawn in place (ANSI cursor movement);
otherwise every state change is printed as a plain line, so logs and pipes
stay readable.  Built on the :class:`Observer` interface, like any UI would be.

Every line drawn on a terminal is cropped (with ``…``) to the width it has at
that moment, so a line never wraps and moving the cursor up one row per line
lands on the block's first line.  After a resize (:meth:`LiveDisplay.refresh`,
called on ``SIGWINCH``) the rows the old lines now occupy are counted at the
new width, as terminals that rewrap on resize (tmux, most emulators) show
them, and the block is redrawn below a cleared screen tail.  A block taller
than the terminal shows its last lines.  Progress shows as text (a ``Bash``
call's last output line), never as the repr of a progress object.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TextIO

import attrs

from .._core._events import CallEvent, Observer
from .._models import ToolResult
from .._texts import describe_tool_use
from ._terminal import cells, crop, terminal_size

if TYPE_CHECKING:
    from collections.abc import Callable

    from .._models import ToolUse

__all__ = ["LiveDisplay"]

_SYMBOLS = {
    "queued": "·",
    "running": "▶",
    "done": "✓",
    "error": "✗",
    "cancelled": "⊘",
}
_DEFAULT_SIZE = (80, 24)
"""Assumed when redrawing to something that reports no terminal size."""


@attrs.define
class _Line:
    label: str
    state: str = "queued"
    detail: str = ""
    started: float | None = None
    ended: float | None = None


class LiveDisplay(Observer):
    """Renders call states to ``out``; call :meth:`describe` when a call is added.

    Args:
        out: where to write.
        redraw: redraw the block in place (a terminal) instead of printing a
            line per state change.
        clock_origin: the trio time shown as 0.
        size: returns ``(columns, lines)`` now (default: asks ``out``'s
            terminal, and assumes 80x24 when there is none).
    """

    def __init__(
        self,
        out: TextIO,
        *,
        redraw: bool,
        clock_origin: float,
        size: Callable[[], tuple[int, int] | None] | None = None,
    ) -> None:
        self._out = out
        self._redraw = redraw
        self._origin = clock_origin
        self._size = size if size is not None else lambda: terminal_size(out)
        self._lines: dict[str, _Line] = {}
        self._drawn: list[str] = []
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
            text = progress_text(event.data)
            if text is None or not self._redraw:
                return  # nothing to show, or plain output (state changes only)
            line.detail = text
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

    def refresh(self) -> None:
        """Redraw the block now, at the terminal's current size (after a resize)."""
        if self._redraw and self._drawn:
            self._guarded(self._draw_all)

    def finish(self) -> None:
        """Leave the final state on screen and start a fresh block for the next turn."""
        if self._redraw:
            self._guarded(self._draw_all)
        self._lines.clear()
        self._drawn = []

    def _render(self, tool_use_id: str) -> None:
        if self._redraw:
            self._guarded(self._draw_all)
        else:
            self._guarded(lambda: self._write(self._format(self._lines[tool_use_id], None) + "\n"))

    def _guarded(self, draw: Callable[[], None]) -> None:
        if self._closed:
            return
        try:
            draw()
        except BrokenPipeError:
            self._closed = True  # the reader went away (``| head``): stop drawing, quietly

    def _write(self, text: str) -> None:
        self._out.write(text)
        self._out.flush()

    def _draw_all(self) -> None:
        columns, rows = self._size() or _DEFAULT_SIZE
        columns, rows = max(columns, 2), max(rows, 2)
        # Rows the last drawing takes now: one per line, unless a narrower terminal rewrapped it.
        up = sum(max(1, -(-cells(text) // columns)) for text in self._drawn)
        width = columns - 1  # never the last column: some terminals wrap at once there
        texts = [crop(self._format(line, width), width) for line in self._lines.values()]
        if len(texts) > rows - 1:
            hidden = len(texts) - (rows - 2)
            texts = [crop(f"  … {hidden} more above", width), *texts[hidden:]]
        move = f"\x1b[{up}F" if up else ""
        self._write(move + "\x1b[J" + "".join(text + "\n" for text in texts))
        self._drawn = texts

    def _format(self, line: _Line, width: int | None) -> str:
        symbol = _SYMBOLS.get(line.state, "?")
        timing = ""
        if line.started is not None and line.ended is not None:
            timing = f"{line.ended - line.started:6.2f}s"
        elif line.started is not None:
            timing = f"from {line.started:.2f}s"
        label_width = 44 if width is None else max(12, min(44, width - 36))
        label = crop(line.label, label_width)
        label += " " * (label_width - cells(label))
        detail = f"  {line.detail}" if line.detail else ""
        return f"  {symbol} {label} {line.state:<9} {timing}{detail}"


def progress_text(data: object) -> str | None:
    """What a progress update shows: its text's last non-blank line; None when it has none.

    A ``str`` is shown as it is; an object with a ``text`` attribute (such as
    ``BashProgress``) by that text, so the first ``BashProgress`` of a call,
    which announces the process and carries no output, shows nothing.  Other
    objects show their ``str()`` only when their class defines one (never a
    generated repr).
    """
    if isinstance(data, str):
        text: str | None = data
    else:
        attribute = getattr(data, "text", None)
        if isinstance(attribute, str):
            text = attribute
        elif type(data).__str__ is not object.__str__:
            text = str(data)
        else:
            text = None
    if text is None:
        return None
    lines = [" ".join(part.split()) for part in text.splitlines()]
    return next((line for line in reversed(lines) if line), None)
