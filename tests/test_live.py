"""The live display: lines fit the terminal, redraws land on the block, progress is text."""

from __future__ import annotations

import io
import itertools
import re

import pytest

from trioexec import ToolUse
from trioexec._cli._live import LiveDisplay, progress_text
from trioexec._cli._terminal import cells, crop
from trioexec._core._events import CallEvent
from trioexec.tools import BashProgress

DRAW = re.compile(r"(?:\x1b\[(\d+)F)?\x1b\[J([^\x1b]*)")
"""One redraw: move up N rows (when something was drawn before), clear below, the lines."""


class Terminal(io.StringIO):
    """Records what is written; its size can change between draws."""

    def __init__(self, columns: int, lines: int = 24) -> None:
        super().__init__()
        self.size = (columns, lines)

    def isatty(self) -> bool:
        return True


def display_on(term: Terminal) -> LiveDisplay:
    return LiveDisplay(term, redraw=True, clock_origin=0.0, size=lambda: term.size)


def draws(term: Terminal) -> list[tuple[int, list[str]]]:
    """Each redraw as (rows moved up, lines written)."""
    return [
        (int(up or 0), body.split("\n")[:-1]) for up, body in DRAW.findall(term.getvalue())
    ]


def start(display: LiveDisplay, tool_id: str, command: str, t: float = 0.0) -> None:
    display.describe(ToolUse(tool_id, "Bash", {"command": command}))
    display.call_event(CallEvent(t, tool_id, "queued"))
    display.call_event(CallEvent(t, tool_id, "started"))


def test_every_line_is_cropped_to_the_width_with_an_ellipsis() -> None:
    term = Terminal(40)
    display = display_on(term)
    start(display, "toolu_1", "echo " + "x" * 200)
    *_, (_, lines) = draws(term)
    assert lines
    assert all(cells(line) <= 39 for line in lines)
    assert "…" in lines[0]


def test_a_redraw_moves_up_exactly_the_rows_it_drew() -> None:
    term = Terminal(80)
    display = display_on(term)
    start(display, "toolu_1", "sleep 1")
    start(display, "toolu_2", "sleep 2")
    history = draws(term)
    for (_, before), (up, _) in itertools.pairwise(history):
        assert up == len(before)


def test_after_a_resize_the_rewrapped_rows_are_counted_and_the_new_width_used() -> None:
    term = Terminal(80)
    display = display_on(term)
    start(display, "toolu_1", "echo " + "y" * 200)
    (_, wide), *_ = draws(term)[-1:]
    term.size = (30, 24)
    display.refresh()
    up, narrow = draws(term)[-1]
    assert up == sum(-(-cells(line) // 30) for line in wide)  # 79 cells rewrap onto 3 rows
    assert all(cells(line) <= 29 for line in narrow)


def test_a_block_taller_than_the_terminal_shows_its_last_lines() -> None:
    term = Terminal(80, lines=5)
    display = display_on(term)
    for i in range(8):
        start(display, f"toolu_{i}", f"echo {i}")
    _, lines = draws(term)[-1]
    assert len(lines) == 4
    assert lines[0] == "  … 5 more above"
    assert "echo 7" in lines[-1]


def test_bash_progress_shows_its_last_output_line_never_a_repr() -> None:
    term = Terminal(100)
    display = display_on(term)
    start(display, "toolu_1", "make")
    display.call_event(CallEvent(0.1, "toolu_1", "progress", BashProgress(42, None, "", 0)))
    display.call_event(
        CallEvent(0.2, "toolu_1", "progress", BashProgress(42, "stdout", "one\ntwo  words\n\n", 9))
    )
    text = term.getvalue()
    assert "BashProgress" not in text
    _, lines = draws(term)[-1]
    assert lines[0].endswith("  two words")


@pytest.mark.parametrize(
    ("data", "shown"),
    [
        ("50%", "50%"),
        (BashProgress(1, None, "", 0), None),
        (BashProgress(1, "stderr", "warn\n", 5), "warn"),
        ({"step": 1}, None),
        (object(), None),
    ],
)
def test_progress_text(data: object, shown: str | None) -> None:
    assert progress_text(data) == shown


def test_plain_output_prints_state_changes_without_escape_codes() -> None:
    out = io.StringIO()
    display = LiveDisplay(out, redraw=False, clock_origin=0.0)
    start(display, "toolu_1", "ls")
    display.call_event(CallEvent(0.5, "toolu_1", "progress", "halfway"))
    display.call_event(CallEvent(1.0, "toolu_1", "completed"))
    lines = out.getvalue().splitlines()
    assert "\x1b" not in out.getvalue()
    assert [line.split()[0] for line in lines] == ["▶", "✓"]


def test_crop_counts_wide_characters_and_turns_controls_into_spaces() -> None:
    assert crop("a\tb", 10) == "a b"
    assert crop("日本語テキスト", 7) == "日本語…"
    assert cells(crop("日本語テキスト", 7)) <= 7
    assert crop("short", 10) == "short"
