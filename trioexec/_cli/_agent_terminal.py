"""What ``trioexec agent`` shows on a terminal, and how it asks the user.

:class:`Display` writes the model's streamed text and one line per tool state
change; :class:`Prompter` puts an ``ask`` to the user (y/n on a terminal,
refused when stdin is not one; Ctrl-C at the question answers no).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, TextIO

import trio

from .._contract._tool import PermissionResult
from .._core._events import CallEvent, Observer
from .._hooks._config import HookEvent, HookSet
from .._models import ProgressUpdate, ToolResult, ToolUse
from .._texts import describe_tool_use

if TYPE_CHECKING:
    from collections.abc import Mapping

    from .._anthropic._turn import FailedAttempt
    from .._models import JSONValue, Update

__all__ = ["Display", "Prompter", "is_terminal", "read_line"]


class Display(Observer):
    """Streamed text and one line per tool state change (nothing at all with --json)."""

    _SYMBOLS: Mapping[str, str] = {"ok": "✓", "error": "✗", "cancelled": "⊘"}

    def __init__(
        self, out: TextIO, err: TextIO, *, quiet: bool, hooks: HookSet | None = None
    ) -> None:
        self._out = out
        self._err = err
        self._quiet = quiet
        self._hooks = hooks if hooks is not None else HookSet()
        self._labels: dict[str, str] = {}
        self._names: dict[str, str] = {}
        self._started: dict[str, float] = {}
        # What each unfinished call is doing: "hook" (its PreToolUse hooks), "guard"
        # (the permission check), "tool" (Tool.call), "post" (its PostToolUse hooks).
        self._phase: dict[str, str] = {}
        self._at_line_start = True
        self._explained = 0  # the attempt whose failure stream_failed() described

    def text(self, delta: str) -> None:
        if self._quiet or not delta:
            return
        self._out.write(delta)
        self._out.flush()
        self._at_line_start = delta.endswith("\n")

    def describe(self, tool_use: ToolUse) -> None:
        self._labels[tool_use.id] = describe_tool_use(tool_use)
        self._names[tool_use.id] = tool_use.name

    def running(self, stops: Mapping[str, bool]) -> list[str]:
        """What an interrupt leaves running: hooks, and calls of tools it does not stop."""
        out = []
        for tool_use_id, phase in self._phase.items():
            label = self._labels.get(tool_use_id, tool_use_id)
            if phase == "hook":
                out.append(f"the PreToolUse hook of {label}")
            elif phase == "post":
                out.append(f"the PostToolUse hook of {label}")
            elif not stops.get(self._names.get(tool_use_id, ""), False):
                out.append(label)
        return out

    def _hook_labels(self, event: HookEvent, tool_use_id: str) -> list[str]:
        name = self._names.get(tool_use_id)
        if name is None:
            return []
        return [entry.label for entry in self._hooks.matching(event, name)]

    def line(self, text: str) -> None:
        if self._quiet:
            return
        if not self._at_line_start:
            self._out.write("\n")
        self._out.write(text + "\n")
        self._out.flush()
        self._at_line_start = True

    def call_event(self, event: CallEvent) -> None:
        tool_use_id = event.tool_use_id
        label = self._labels.get(tool_use_id, tool_use_id)
        if event.kind == "started":
            self._started[tool_use_id] = event.time
            # Its PreToolUse hooks and the permission check come first: the
            # screen shows a hook as the hook, and ▶ once the tool itself runs.
            hooks = self._hook_labels("PreToolUse", tool_use_id)
            self._phase[tool_use_id] = "hook" if hooks else "guard"
            if hooks:
                self.line(f"  ⚙ PreToolUse hook of {label}: {', '.join(hooks)}")
        elif event.kind == "call_began":
            self._phase[tool_use_id] = "tool"
            self.line(f"  ▶ {label}")
        elif event.kind == "call_ended":
            hooks = self._hook_labels("PostToolUse", tool_use_id)
            if hooks:
                self._phase[tool_use_id] = "post"
                self.line(f"  ⚙ PostToolUse hook of {label}: {', '.join(hooks)}")
        elif event.kind in ("completed", "cancelled"):
            self._phase.pop(tool_use_id, None)
            took = event.time - self._started.get(tool_use_id, event.time)
            result = event.data
            if event.kind == "cancelled":
                state, detail = "cancelled", f"  {event.reason}" if event.reason else ""
            else:
                is_error = isinstance(result, ToolResult) and result.is_error
                state, detail = ("error" if is_error else "ok"), ""
            self.line(f"  {self._SYMBOLS[state]} {label}  {took:.2f}s{detail}")

    def update(self, update: Update) -> None:
        if isinstance(update, ProgressUpdate) and isinstance(update.data, str):
            label = self._labels.get(update.tool_use_id, update.tool_use_id)
            self.line(f"    … {label}: {update.data[:100]}")

    _FATES: Mapping[str, str] = {
        "kept": "kept: it ran once, and the model is told its result",
        "not_started": "never started",
        "cancelled": "stopped while running (it may have done part of its work); "
        "its result is discarded",
        "discarded": "ran to its end; its result is discarded (the model is not told it ran)",
    }

    def stream_failed(self, failed: FailedAttempt) -> None:
        """Say what happened to each call of a failed attempt (nothing when it had none)."""
        self._explained = failed.attempt
        calls = len(failed.calls)
        if not calls:
            self._explained = 0  # the retry line or the final error says it all
            return
        error = _one_line(failed.error)
        counted = "1 tool call" if calls == 1 else f"{calls} tool calls"
        if failed.kept:
            results = "its result" if calls == 1 else "their results"
            head = f"the stream failed after {counted} ({error}); the model continues from "
            head += results
        else:
            head = f"the stream failed ({error}); attempt {failed.attempt} and its {counted} "
            head += "are discarded"
        lines = [f"trioexec agent: {head}"]
        for tool_use, fate in failed.calls:
            label = self._labels.get(tool_use.id, tool_use.id)
            lines.append(f"  {label}: {self._FATES[fate]}")
        self.end()
        print("\n".join(lines), file=self._err, flush=True)

    def retry(self, attempt: int, failure: BaseException) -> None:
        if self._explained == attempt:
            line = f"trioexec agent: retrying (attempt {attempt + 1})"
        else:
            line = f"trioexec agent: the stream failed ({_one_line(failure)}); retrying "
            line += f"(attempt {attempt + 1})"
        print(line, file=self._err, flush=True)

    def end(self) -> None:
        if not self._quiet and not self._at_line_start:
            self._out.write("\n")
            self._out.flush()
            self._at_line_start = True


class Prompter:
    """Answers an ``ask``: y/n on a terminal, refused when stdin is not one.

    Ctrl-C while the question is on the screen answers it no (:meth:`refuse`).
    """

    def __init__(self, stdin: TextIO, err: TextIO) -> None:
        self._stdin = stdin
        self._err = err
        self._lock = trio.Lock()
        self._asking: trio.CancelScope | None = None
        self.display: Display | None = None

    def refuse(self) -> bool:
        """Answer the question on the screen no; False when none is."""
        if self._asking is None:
            return False
        self._asking.cancel(reason="Ctrl-C at the question: no")
        self._asking = None
        return True

    async def ask(
        self, tool_name: str, tool_input: Mapping[str, JSONValue], tool_use_id: str
    ) -> PermissionResult:
        label = describe_tool_use(ToolUse(tool_use_id, tool_name, tool_input))
        if not is_terminal(self._stdin):
            return PermissionResult.deny(
                f"Permission to use {tool_name} was not granted: it needs the user's answer, "
                "and stdin is not a terminal. Allow it with a settings rule or "
                "--permission-mode to run it unattended."
            )
        async with self._lock:
            if self.display is not None:
                self.display.end()
            self._err.write(f"Allow {label}? [y/N] ")
            self._err.flush()
            with trio.CancelScope() as asking:
                self._asking = asking
                try:
                    answer = await read_line(self._stdin.fileno())
                finally:
                    self._asking = None
            if asking.cancelled_caught:
                self._err.write("no  [Ctrl-C answered no; Ctrl-C again interrupts the turn]\n")
                self._err.flush()
                return PermissionResult("deny")
        if answer.strip().lower() in ("y", "yes"):
            return PermissionResult.allow()
        return PermissionResult("deny")  # the user's no: the rejection text


async def read_line(fd: int) -> str:
    """One line from a terminal, waiting without a thread (so Ctrl-C can cancel the wait).

    The terminal is in canonical mode: it hands over a line once Enter is
    pressed, and the read after the wait does not block.  Empty at end of file.
    """
    chunks: list[bytes] = []
    while True:
        await trio.lowlevel.wait_readable(fd)
        data = os.read(fd, 4096)
        chunks.append(data)
        if not data or b"\n" in data:
            return b"".join(chunks).decode(errors="replace")


def is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _one_line(exc: BaseException) -> str:
    return " ".join(f"{type(exc).__name__}: {exc}".split())
