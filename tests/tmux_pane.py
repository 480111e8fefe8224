"""A program on a real terminal, for tests: tmux runs it, capture-pane reads the screen.

Each :func:`open_pane` starts a tmux server of its own (no user configuration)
with one window running one shell command, and kills it on the way out.  Real
time: a real program runs, and the screen is read every few tens of
milliseconds.  Tests using it skip where tmux is missing (``.ci/run`` installs
it).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import uuid
from typing import TYPE_CHECKING

import trio

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable

TMUX = shutil.which("tmux")
POLL = 0.05
TIMEOUT = 60.0


class Pane:
    """A tmux server of its own with one window (``window``) running one command."""

    def __init__(self, server: str, window: str) -> None:
        self.server = server
        self.window = window

    async def tmux(self, *args: str) -> str:
        assert TMUX is not None
        done = await trio.run_process(
            [TMUX, "-L", self.server, "-f", os.devnull, *args],
            capture_stdout=True,
            capture_stderr=True,
        )
        return done.stdout.decode("utf-8", errors="replace")

    async def rows(self) -> list[str]:
        """The visible rows, wrapped rows joined back into the lines they are (``-J``)."""
        text = await self.tmux("capture-pane", "-p", "-J", "-t", self.window)
        return [line.rstrip() for line in text.splitlines()]

    async def history(self) -> str:
        """Everything the window has shown, scrolled-off lines included."""
        return await self.tmux("capture-pane", "-p", "-J", "-S", "-", "-t", self.window)

    async def wait_for_rows(
        self, ready: Callable[[list[str]], bool], seen: list[list[str]] | None = None
    ) -> list[str]:
        """The visible rows once ``ready`` holds of them (each look added to ``seen``)."""
        with trio.fail_after(TIMEOUT):
            while True:
                rows = await self.rows()
                if seen is not None:
                    seen.append(rows)
                if ready(rows):
                    return rows
                await trio.sleep(POLL)

    async def wait_for_history(self, ready: Callable[[str], bool]) -> str:
        """The whole history once ``ready`` holds of it."""
        with trio.fail_after(TIMEOUT):
            while True:
                history = await self.history()
                if ready(history):
                    return history
                await trio.sleep(POLL)

    async def ctrl_c(self) -> None:
        await self.tmux("send-keys", "-t", self.window, "C-c")


@contextlib.asynccontextmanager
async def open_pane(command: str, *, window: str, width: int, height: int) -> AsyncIterator[Pane]:
    """Run ``command`` (a shell command line) in a ``width`` x ``height`` terminal."""
    pane = Pane(f"trioexec-test-{uuid.uuid4().hex[:12]}", window)
    await pane.tmux("new-session", "-d", "-s", window, "-x", str(width), "-y", str(height), command)
    try:
        yield pane
    finally:
        with trio.CancelScope(shield=True):
            await pane.tmux("kill-server")
