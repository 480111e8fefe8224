"""Glob and Grep over a checkout with a virtual environment: the backends side by side.

Run: ``python benchmarks/bench_search.py [--project N] [--venv N] [--repeat R]``.

The tree is a git checkout of N project files (default 150) with a ``.venv``
of N files (default 4,000) and a ``node_modules`` listed in ``.gitignore``,
every file a few kilobytes of Python-like text with a ``TODO`` in one of
seven.  Measured, best of R runs, in milliseconds:

* ``Grep TODO`` (count mode) and ``Glob **/*.py``, each with the Python walk
  (``ripgrep=False``) and with ripgrep as the backend (when an ``rg`` binary
  is found);
* ``rg -c TODO`` and ``rg --files`` run directly, for reference;
* the ``walk everything`` row: the Python search with every file selected
  (hidden folders and ignored ones included), which is what Glob and Grep
  read before they followed ripgrep's selection.

The ratios are what to compare (the figures depend on the machine and its load).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

import trio

from trioexec import CallContext, ToolUse
from trioexec.tools import GlobInput, GlobTool, GrepTool
from trioexec.tools._ignore import VCS_DIRS
from trioexec.tools._ripgrep import find_ripgrep

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

LINE = "    value = compute(value, other)  # some ordinary line of code\n"


def make_tree(root: Path, *, project: int, venv: int) -> None:
    (root / ".git" / "info").mkdir(parents=True)
    (root / ".gitignore").write_text("node_modules/\n*.pyc\n")
    (root / ".venv").mkdir()
    (root / ".venv" / ".gitignore").write_text("*\n")
    for i in range(project + venv):
        top = "src" if i < project else ".venv/lib/site-packages"
        path = root / top / f"pkg{i % 23}" / f"module_{i}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        body = LINE * 40 + ("# TODO: revisit\n" if i % 7 == 0 else "")
        path.write_text(body)
    for i in range(venv // 4):
        path = root / "node_modules" / f"m{i % 17}" / f"index_{i}.js"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("// TODO\n" + LINE * 20)


def context(cwd: Path) -> CallContext:
    return CallContext(tool_use=ToolUse("toolu_1", "Grep", {}), cwd=cwd)


async def timed(func: Callable[[], Awaitable[object]], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        await func()
        best = min(best, time.perf_counter() - start)
    return best * 1000


async def measure(root: Path, repeat: int) -> list[tuple[str, float]]:
    rg = find_ripgrep()
    ctx = context(root)
    rows: list[tuple[str, float]] = []
    grep_input = {"pattern": "TODO", "output_mode": "count"}
    for label, choice in (("python walk", False), ("ripgrep backend", rg)):
        if choice is None:
            continue
        grep = GrepTool(ripgrep=choice)
        glob = GlobTool(ripgrep=choice)
        grep_ms = await timed(lambda g=grep: g.call(grep_input, ctx, _drop), repeat)
        rows.append((f"Grep TODO, {label}", grep_ms))
        glob_ms = await timed(lambda g=glob: g.call(GlobInput("**/*.py"), ctx, _drop), repeat)
        rows.append((f"Glob **/*.py, {label}", glob_ms))
    everything_ms = await timed(lambda: _everything(root), repeat)
    rows.append(("Grep TODO, walk everything (before)", everything_ms))
    if rg is not None:
        flags = ["--no-config", "--no-ignore-global"]
        for name in sorted(VCS_DIRS):
            flags += ["--glob", f"!{name}"]
        count_ms = await timed(lambda: _run([rg, "-c", *flags, "TODO"], root), repeat)
        rows.append(("rg -c TODO (direct)", count_ms))
        files_ms = await timed(lambda: _run([rg, "--files", *flags], root), repeat)
        rows.append(("rg --files (direct)", files_ms))
    return rows


def _drop(_: object) -> None:
    return None


async def _run(args: list[str], cwd: Path) -> None:
    await trio.run_process(args, cwd=cwd, capture_stdout=True, check=False)


async def _everything(root: Path) -> None:
    """Read every file under ``root`` and count TODO lines (the selection-free search)."""

    def work() -> int:
        count = 0
        for directory, dirs, files in os.walk(root):
            dirs[:] = [d for d in dirs if d not in VCS_DIRS]
            for name in files:
                text = Path(directory, name).read_bytes().decode("utf-8", errors="replace")
                count += sum(1 for line in text.split("\n") if "TODO" in line)
        return count

    await trio.to_thread.run_sync(work)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--project", type=int, default=150)
    parser.add_argument("--venv", type=int, default=4000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="trioexec-bench-search-") as tmp:
        root = Path(tmp)
        make_tree(root, project=args.project, venv=args.venv)
        rows = trio.run(measure, root, args.repeat)
    if find_ripgrep() is None:
        print("(no rg binary found: only the Python walk is measured)")
    base = rows[0][1]
    print(f"{'':<42} {'ms':>9} {'vs Grep python walk':>20}")
    for label, ms in rows:
        print(f"{label:<42} {ms:9.1f} {ms / base:19.2f}x")


if __name__ == "__main__":
    main()
