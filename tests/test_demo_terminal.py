"""``trioexec demo`` on a real terminal (:mod:`tmux_pane`): what the screen shows.

Skipped where tmux is missing (``.ci/run`` installs it).  Real time: a real
program runs, and the screen is read every few tens of milliseconds.
"""

from __future__ import annotations

import shlex
import sys
import uuid
from pathlib import Path

import pytest
from tmux_pane import TMUX, open_pane

pytestmark = pytest.mark.skipif(TMUX is None, reason="tmux is not installed")


def demo_command(marker: str) -> str:
    python = shlex.quote(sys.executable)
    return f'env LANG=C.UTF-8 {marker} {python} -m trioexec demo; echo "EXIT=$?"; sleep 600'


@pytest.fixture
def marker() -> str:
    """Set only in the demo's environment, so its processes can be found (and none left)."""
    return f"TRIOEXEC_TERMINAL_TEST={uuid.uuid4().hex}"


def sleeping(rows: list[str]) -> bool:
    """Turn 2's ``sleep 30`` is running (a child process to be cleaned up)."""
    return any("Bash(sleep 30)" in row and "running" in row for row in rows)


def exited(rows: list[str]) -> bool:
    return any(row.startswith("EXIT=") for row in rows)


def overlong(rows: list[str], width: int) -> list[str]:
    return [row for row in rows if len(row) > width]


def repeated(rows: list[str]) -> list[str]:
    shown = [row for row in rows if row.strip()]
    return sorted({row for row in shown if shown.count(row) > 1})


def marked_processes(marker: str) -> list[int]:
    """Live processes whose environment holds ``marker`` (Linux: read from /proc)."""
    found = []
    needle = marker.encode()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                environ = (entry / "environ").read_bytes()
            except OSError:
                continue
            if needle in environ.split(b"\0"):
                found.append(int(entry.name))
    return found


async def test_the_demo_fits_an_80_by_24_terminal_at_every_moment(marker: str) -> None:
    seen: list[list[str]] = []
    async with open_pane(demo_command(marker), window="demo", width=80, height=24) as pane:
        final = await pane.wait_for_rows(exited, seen)
        assert "EXIT=0" in final
        assert any("Every tool_use got exactly one tool_result" in row for row in final)
        history = await pane.history()
    assert len(seen) > 5  # the screen was read while the demo ran, not only at the end
    for rows in seen:
        assert overlong(rows, 80) == []
        assert repeated(rows) == []
    assert "BashProgress(" not in history
    assert "Traceback" not in history


async def test_ctrl_c_exits_130_with_one_line_and_leaves_nothing_running(marker: str) -> None:
    async with open_pane(demo_command(marker), window="demo", width=80, height=24) as pane:
        await pane.wait_for_rows(sleeping)
        await pane.tmux("send-keys", "-t", "demo", "C-c")
        final = await pane.wait_for_rows(exited)
        history = await pane.history()
        assert "EXIT=130" in final
        assert history.count("trioexec demo: interrupted") == 1
        assert "Traceback" not in history
        assert "KeyboardInterrupt" not in history
        if sys.platform == "linux":
            assert marked_processes(marker) == []  # sleep 30 and every other child are gone


async def test_a_resize_mid_run_redraws_at_the_new_width(marker: str) -> None:
    seen: list[list[str]] = []
    async with open_pane(demo_command(marker), window="demo", width=100, height=30) as pane:
        await pane.wait_for_rows(lambda rows: any(r.startswith("━━ turn 2") for r in rows))
        await pane.tmux("resize-window", "-t", "demo", "-x", "60", "-y", "30")
        final = await pane.wait_for_rows(exited, seen)
    assert "EXIT=0" in final
    after = final[next(i for i, r in enumerate(final) if r.startswith("  turn 2 tool_results")) :]
    assert overlong(after, 60) == []
    for rows in seen:
        assert repeated(rows) == []
