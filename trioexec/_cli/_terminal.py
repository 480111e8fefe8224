"""Text that fits a terminal: cell widths, cropping with ``…``, the current width.

A line longer than the terminal wraps onto a second row, which breaks any
redraw that moves the cursor up one row per line; everything the command line
draws on a terminal is therefore cropped to the width *before* it is written.
Widths are counted in cells: East Asian wide and full-width characters take
two, combining marks none, control characters are shown as spaces.
"""

from __future__ import annotations

import os
import unicodedata
from typing import TextIO

__all__ = ["cells", "crop", "terminal_size", "visible"]


def _cell(ch: str) -> int:
    if unicodedata.combining(ch):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def visible(text: str) -> str:
    """``text`` with tabs and other control characters turned into spaces."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else " " for ch in text)


def cells(text: str) -> int:
    """How many terminal cells ``text`` (printable) takes."""
    if text.isascii():
        return len(text)
    return sum(_cell(ch) for ch in text)


def crop(text: str, width: int) -> str:
    """``text`` cut to at most ``width`` cells, ending in ``…`` when something was cut."""
    text = visible(text)
    if cells(text) <= width:
        return text
    if width <= 0:
        return ""
    out: list[str] = []
    used = 0
    for ch in text:
        size = _cell(ch)
        if used + size > width - 1:
            break
        out.append(ch)
        used += size
    return "".join(out) + "…"


def terminal_size(out: TextIO) -> tuple[int, int] | None:
    """``(columns, lines)`` of the terminal ``out`` writes to; None when it is no terminal."""
    try:
        if not out.isatty():
            return None
        size = os.get_terminal_size(out.fileno())
    except (AttributeError, OSError, ValueError):
        return None
    if size.columns <= 0:
        return None
    return size.columns, size.lines
