"""The tool phase in instructions per call: ``bench_tool_phase``'s ways, free of machine noise.

Wall-clock figures follow the machine: on a shared one, two runs an hour apart
can differ by half.  Counted instructions do not: each way runs under
valgrind's ``callgrind`` (user-space instructions, the interpreter's and the
extension modules' alike; the kernel's time in system calls is not counted),
once for K1 turns and once for K2, and the difference divided by
``(K2 - K1) * N`` is what one call costs, start-up and warm-up cancelled out.
With the hash seed fixed, two runs agree to a few tenths of a percent, so a
change of one function call per call (about 0.5% at N = 10) shows.

It is the guide for small changes, not a replacement for the timings:
instructions do not show cache misses (which matter from N = 10,000 on) nor
the system calls of scheduler passes.  The columns are the ways of
``bench_tool_phase.py``; ``stream-batch`` and ``host-floor`` are what the
streaming shape adds over the batch shape, in trioexec and in trio alone::

    python benchmarks/bench_instructions.py                  # N = 1, 10, 1,000
    python benchmarks/bench_instructions.py --sizes 10 --ways run_tools streaming

Needs ``valgrind`` on the PATH; a few minutes per size.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

SIZES = (1, 10, 1_000)
"""How many calls one turn carries."""

WAYS = ("run_tools", "streaming", "floor", "host")
"""Which of bench_tool_phase's ways are counted (see its docstring)."""

CALLS_COUNTED = 4_000
"""About how many calls the difference of the two runs covers, at every N."""

_COLLECTED = re.compile(rb"Collected : (\d+)")


def turns(count: int) -> tuple[int, int]:
    """K1 and K2 for turns of ``count`` calls: at least two turns apart, K1 at least one."""
    apart = max(2, CALLS_COUNTED // count)
    return max(1, apart // 4), max(1, apart // 4) + apart


def instructions(way: str, count: int, repeat: int) -> int:
    """Instructions a process takes to run ``repeat`` turns of ``way`` (after one warm-up)."""
    command = [
        "valgrind",
        "--tool=callgrind",
        "--callgrind-out-file=/dev/null",
        sys.executable,
        str(Path(__file__).resolve()),
        "--child",
        way,
        str(count),
        str(repeat),
    ]
    env = dict(os.environ, PYTHONHASHSEED="0")
    done = subprocess.run(command, capture_output=True, env=env, check=False)
    found = _COLLECTED.search(done.stderr)
    if done.returncode != 0 or found is None:
        tail = done.stderr.decode(errors="replace")[-2000:]
        raise RuntimeError(f"valgrind run of {way} at N = {count} failed:\n{tail}")
    return int(found.group(1))


def per_call(way: str, count: int) -> float:
    """Instructions per call of ``way`` at N = ``count``."""
    first, second = turns(count)
    spent = instructions(way, count, second) - instructions(way, count, first)
    return spent / ((second - first) * count)


def child(way: str, count: int, repeat: int) -> None:
    """Run one warm-up turn, then ``repeat`` turns of ``way`` (the process valgrind counts)."""
    import trio

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_tool_phase import WAYS as TIMED
    from bench_tool_phase import Echo, assistant_content

    from trioexec import ToolRegistry

    async def main() -> None:
        registry = ToolRegistry([Echo()])
        text = assistant_content(count)
        await TIMED[way](text, registry)
        for _ in range(repeat):
            await TIMED[way](text, registry)

    trio.run(main)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--ways", nargs="+", choices=WAYS, default=list(WAYS))
    parser.add_argument("--child", nargs=3, metavar=("WAY", "N", "TURNS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        way, count, repeat = args.child
        child(way, int(count), int(repeat))
        return
    if shutil.which("valgrind") is None:
        raise SystemExit("bench_instructions.py counts instructions: it needs valgrind on the PATH")
    ways: list[str] = args.ways
    print(f"python {sys.version.split()[0]}; instructions per call (callgrind, PYTHONHASHSEED=0)")
    print(f"{'N':>6}  " + "  ".join(f"{way:>10}" for way in ways) + "  ratios")
    for count in args.sizes:
        row = {way: per_call(way, count) for way in ways}
        ratios = []
        if "run_tools" in row and "streaming" in row:
            gap = row["streaming"] - row["run_tools"]
            ratios.append(f"stream/batch {row['streaming'] / row['run_tools']:.3f}")
            ratios.append(f"stream-batch {gap:,.0f}")
        if "floor" in row and "host" in row:
            ratios.append(f"host/floor {row['host'] / row['floor']:.3f}")
            ratios.append(f"host-floor {row['host'] - row['floor']:,.0f}")
        cells = "  ".join(f"{row[way]:>10,.0f}" for way in ways)
        print(f"{count:>6}  {cells}  {'; '.join(ratios)}")


if __name__ == "__main__":
    main()
