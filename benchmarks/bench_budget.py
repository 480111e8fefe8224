"""Cost of the per-message budget and of building a user message, per tool_result.

Run: ``python benchmarks/bench_budget.py [--results N] [--repeat R]``.

One message of N results (default 1,000): nine in ten are small (100-2,000
characters), one in ten is 20,000 characters, so the message is far over the
200,000-character budget and the large ones are persisted.  Measured, best of
R runs, in microseconds per result:

* ``choose``: the pure decision (:func:`choose_replacements`) on a fresh state;
* ``apply fresh``: :func:`apply_message_budget` on a fresh state, files written
  to a new temporary folder;
* ``apply again``: the same message with the state it produced (replacements
  reapplied, no disk);
* ``build message``: :func:`build_user_message` plus ``to_api()`` with that state.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

import trio

from trioexec import (
    Attachment,
    ContentReplacementState,
    ResultUpdate,
    ToolResult,
    build_user_message,
)
from trioexec.results import apply_message_budget, choose_replacements

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable


def make_results(count: int) -> list[ToolResult]:
    line = "x" * 79 + "\n"
    results = []
    for i in range(count):
        size = 20_000 if i % 10 == 9 else 100 + (i * 37) % 1_900
        body = (line * (size // 80 + 1))[:size]
        results.append(ToolResult(f"toolu_{i:05d}", body))
    return results


def best_of(repeat: int, run: Callable[[], float]) -> float:
    return min(run() for _ in range(repeat))


def timed_sync(func: Callable[[], object]) -> float:
    start = time.perf_counter()
    func()
    return time.perf_counter() - start


async def timed_async(func: Callable[[], Awaitable[object]]) -> float:
    start = time.perf_counter()
    await func()
    return time.perf_counter() - start


async def main(count: int, repeat: int) -> None:
    results = make_results(count)
    updates = [
        ResultUpdate(
            r, (Attachment(r.tool_use_id, "additional_context", "ctx"),) if i % 50 == 0 else ()
        )
        for i, r in enumerate(results)
    ]
    total = sum(len(r.text) for r in results)
    print(f"{count} results, {total:,} characters, budget 200,000")

    with tempfile.TemporaryDirectory() as folder:
        session = Path(folder)

        choose = best_of(
            repeat,
            lambda: timed_sync(
                lambda: choose_replacements(
                    results, state=ContentReplacementState(), session_dir=session
                )
            ),
        )

        fresh_times = []
        state = ContentReplacementState()
        for run in range(repeat):
            state = ContentReplacementState()
            start = time.perf_counter()
            await apply_message_budget(results, state=state, session_dir=session / f"fresh{run}")
            fresh_times.append(time.perf_counter() - start)
        persisted = len(state.replacements)

        again_times = [
            await timed_async(
                lambda: apply_message_budget(results, state=state, session_dir=session)
            )
            for _ in range(repeat)
        ]

        async def build() -> object:
            message = await build_user_message(updates, state=state, session_dir=session)
            return message.to_api()

        build_times = [await timed_async(build) for _ in range(repeat)]

    rows = [
        ("choose", choose),
        (f"apply fresh ({persisted} files)", min(fresh_times)),
        ("apply again (no disk)", min(again_times)),
        ("build message + to_api", min(build_times)),
    ]
    for name, seconds in rows:
        print(f"{name:<32} {seconds * 1e6 / count:10.2f} µs/result {seconds * 1e3:10.2f} ms total")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=int, default=1_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    trio.run(main, args.results, args.repeat)
