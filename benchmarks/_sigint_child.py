"""One turn with Ctrl-C pressed at a random line of trioexec's own code (a child of ``soak.py``).

``python benchmarks/_sigint_child.py SEED`` picks a turn shape and a line
from SEED, counts the lines trioexec's own code runs for that turn (a dry
run), then runs it again and raises SIGINT in this process when the chosen
line is reached (the handler runs right there, in trioexec's frame).  It
prints one JSON line: the shape, the line, how the run ended, and every
violation found:

- a call handed to the run answered zero times or twice (the results
  collected from the run's update channel, read whatever ended the run);
- the run ended with anything but its normal end or a plain
  ``KeyboardInterrupt`` (a group, ``TrioInternalError``, a ``RuntimeError``
  about trio's stacks...);
- a process of a ``Bash`` call still alive afterwards.

The parent reads stderr for ``Exception ignored``, ``never awaited`` and
``TrioInternalError`` noise.  Shapes: ``batch`` (three calls, the lone
unsafe one in its batch's body, progress), ``child-task`` (the same from a
task other than trio's main one), ``streaming`` (calls added as they
arrive), ``bash`` (a real command on trio's real clock).
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import trio
import trio.testing

import trioexec
from trioexec import ResultUpdate, ToolUse, Update, open_streaming_executor, run_tools
from trioexec.testing import ScriptedTool
from trioexec.tools import BashProgress, BashTool

if TYPE_CHECKING:
    from collections.abc import Awaitable
    from types import FrameType

SHAPES = ("batch", "child-task", "streaming", "bash")
Tracer = Callable[["FrameType", str, object], Any]
_PACKAGE = str(Path(trioexec.__file__).resolve().parent)


class _LineCounter:
    """A trace function counting the lines run in trioexec's own files; at line
    ``press`` (if given) it raises SIGINT, once."""

    def __init__(self, press: int | None) -> None:
        self.lines = 0
        self.press = press
        self.pressed = False

    def __call__(self, frame: FrameType, event: str, arg: object) -> Tracer | None:
        if event == "call":
            return self._local if frame.f_code.co_filename.startswith(_PACKAGE) else None
        return None

    def _local(self, frame: FrameType, event: str, arg: object) -> Tracer:
        if event == "line":
            self.lines += 1
            if self.lines == self.press and not self.pressed:
                self.pressed = True
                signal.raise_signal(signal.SIGINT)
        return self._local


def _tools() -> list[Any]:
    return [
        ScriptedTool("Safe", concurrency_safe=True),
        ScriptedTool("Unsafe", concurrency_safe=False, interrupt_behavior="cancel"),
        BashTool(kill_grace=0.2),
    ]


def _uses(shape: str) -> list[ToolUse]:
    if shape == "bash":
        return [ToolUse("b1", "Bash", {"command": "trap '' TERM; sleep 0.3; echo done"})]
    steps: Any = [{"sleep": 0.5}, {"progress": "half"}, {"sleep": 0.5}]
    return [
        ToolUse("s1", "Safe", {"sleep": 1, "output": "one"}),
        ToolUse("s2", "Safe", {"steps": steps, "output": "two"}),
        ToolUse("u1", "Unsafe", {"sleep": 1, "output": "three"}),
    ]


def _turn(
    shape: str, got: list[Update], pids: list[int], sent: list[str]
) -> Callable[[], Awaitable[None]]:
    """The turn's body; ``sent`` collects the ids of the calls handed to the run."""
    uses = _uses(shape)
    tools = _tools()

    def keep(update: Update) -> None:
        got.append(update)
        data = getattr(update, "data", None)
        if isinstance(data, BashProgress) and data.pid and data.pid not in pids:
            pids.append(data.pid)

    async def batch() -> None:
        send, receive = trio.open_memory_channel[Update](float("inf"))
        sent.extend(use.id for use in uses)
        try:
            await run_tools(uses, tools, updates=send)
        finally:
            while True:
                try:
                    keep(receive.receive_nowait())
                except trio.WouldBlock:
                    break

    async def streaming() -> None:
        executor = None
        try:
            async with open_streaming_executor(tools) as executor:
                for use in uses:
                    executor.add_tool(use)
                    sent.append(use.id)
                    await trio.sleep(0.1)
                async for update in executor.remaining():
                    keep(update)
        finally:
            if executor is not None:
                for update in executor.drain_nowait():
                    keep(update)

    async def in_child_task() -> None:
        # (this nursery is the application's: it groups what it raises; a lone
        # exception is unwrapped here, one level only, so a group trioexec
        # raised would still show)
        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(batch)
        except BaseExceptionGroup as group:
            if len(group.exceptions) == 1:
                raise group.exceptions[0] from None
            raise

    return {"batch": batch, "bash": batch, "streaming": streaming, "child-task": in_child_task}[
        shape
    ]


def _run(shape: str, press: int | None) -> tuple[str, list[Update], list[int], list[str], int]:
    got: list[Update] = []
    pids: list[int] = []
    sent: list[str] = []
    counter = _LineCounter(press)
    clock = None if shape == "bash" else trio.testing.MockClock(autojump_threshold=0)
    ended = "returned"
    sys.settrace(counter)
    try:
        trio.run(_turn(shape, got, pids, sent), clock=clock)
    except KeyboardInterrupt:
        ended = "KeyboardInterrupt"
    except BaseException as exc:  # every other end is what is being looked for
        ended = f"{type(exc).__name__}: {exc}"[:300]
    finally:
        sys.settrace(None)
    return ended, got, pids, sent, counter.lines


def main(seed: int) -> None:
    rng = random.Random(seed)
    shape = rng.choice(SHAPES)
    _, _, pids, _, lines = _run(shape, None)  # the dry run: how many lines trioexec runs
    _reap(pids)
    press = rng.randrange(1, max(2, lines + 1))
    ended, got, pids, sent, _ = _run(shape, press)
    violations: list[str] = []
    if ended not in ("returned", "KeyboardInterrupt"):
        violations.append(f"ended with {ended}")
    answers = [u.result.tool_use_id for u in got if isinstance(u, ResultUpdate)]
    for tool_use_id in sent:  # (a call the body never handed over has nobody to answer)
        count = answers.count(tool_use_id)
        if count != 1:
            violations.append(f"{tool_use_id} answered {count} times")
    alive = [pid for pid in pids if _alive(pid)]
    if alive:
        violations.append(f"processes left alive: {alive}")
    _reap(pids)
    print(json.dumps({"seed": seed, "shape": shape, "line": press, "of": lines,
                      "ended": ended, "violations": violations}))  # fmt: skip


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2 :].split()[0] not in (b"Z", b"X")


def _reap(pids: list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)


if __name__ == "__main__":
    main(int(sys.argv[1]))
