"""Memory one call holds while its command floods output: a 100 MB binary ``Bash`` output.

A real ``BashTool`` call runs ``head -c SIZE /dev/urandom`` through
``run_tools`` (no update channel: nothing outside the run keeps the progress)
and the peak of Python's traced memory during the run is printed, with what
the call kept for its partial output at the end (items and characters of
text, read by an observer from the run's last progress).  The documented
bound (docs/tools.md, Bash): each captured stream ``max_output_bytes``
(1 MiB), the kept progress 100,000 characters of text (twice that between
trims, plus one 64 KiB chunk)::

    python benchmarks/bench_flood.py              # 100 MB
    python benchmarks/bench_flood.py --mb 20

Real processes and real time: it takes a few seconds per 100 MB.
"""

from __future__ import annotations

import argparse
import math
import tracemalloc
from pathlib import Path

import trio

from trioexec import GuardRails, ToolUse, run_tools
from trioexec._core._run import RunCore
from trioexec.permissions import PermissionContext
from trioexec.tools import BashTool


def flood(size: int) -> tuple[float, int, int]:
    """Peak traced MiB during the run, and the progress items and text the call kept."""
    kept: list[tuple[int, int]] = []
    real_complete = RunCore.complete

    def complete(self: RunCore, call: object, outcome: object, *, cascade: bool = True) -> None:
        log = getattr(call, "progress_log", None) or []
        kept.append((len(log), getattr(call, "progress_chars", -1)))
        real_complete(self, call, outcome, cascade=cascade)  # type: ignore[arg-type]

    RunCore.complete = complete  # type: ignore[method-assign]
    command = f"head -c {size} /dev/urandom"
    tracemalloc.start()
    try:
        outcome = trio.run(
            lambda: run_tools(
                [ToolUse("flood", "Bash", {"command": command})],
                [BashTool()],
                guard=GuardRails(PermissionContext(allow=["Bash"])),
            )
        )
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        RunCore.complete = real_complete  # type: ignore[method-assign]
    assert not math.isnan(peak)
    assert not outcome.results[0].is_error, outcome.results[0].content
    items, chars = kept[-1] if kept else (0, 0)
    return peak / 2**20, items, chars


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--mb", type=int, default=100, help="megabytes of output")
    args = parser.parse_args()
    peak, items, chars = flood(args.mb * 1_000_000)
    print(f"trioexec from {Path(__file__).resolve().parent.parent}")
    print(f"{args.mb} MB of binary output: peak traced memory {peak:.1f} MiB; "
          f"kept progress: {items} items, {chars:,} characters")  # fmt: skip


if __name__ == "__main__":
    main()
