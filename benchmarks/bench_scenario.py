"""Generate a large scenario, run it with ``trioexec scenario run`` and print the wall time.

    python benchmarks/bench_scenario.py                # 10,000 calls, 3 runs
    python benchmarks/bench_scenario.py --calls 2000 --repeat 5

Each run is a fresh ``trioexec scenario run FILE --session-dir DIR`` process
(interpreter start-up, loading and checking the file, the run on trio's
MockClock and writing the JSON are all included).  The goal is under 10 s of
wall time for 10,000 calls, mixed safe and unsafe, in stream mode.  The
outputs of all runs must be byte-identical.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from trioexec._scenario._generate import generate_scenario

GOAL_SECONDS = 10.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--mode", choices=("stream", "batch"), default="stream")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="trioexec-bench-") as folder:
        root = Path(folder)
        scenario = root / "generated.json"
        document = generate_scenario(args.calls, seed=args.seed, mode=args.mode)
        scenario.write_text(json.dumps(document), encoding="utf-8")
        unsafe = sum(
            1
            for call in document["calls"]  # type: ignore[union-attr]
            if call["name"] == "Edit" or call["input"].get("concurrency_safe") is False  # type: ignore[index, call-overload, union-attr]
        )
        print(
            f"scenario: {args.calls} calls ({unsafe} unsafe), mode {args.mode}, "
            f"seed {args.seed}, {scenario.stat().st_size / 1e6:.1f} MB"
        )
        command = [
            sys.executable,
            "-c",
            "import sys; from trioexec._cli._main import main; sys.exit(main())",
            "scenario",
            "run",
            str(scenario),
            "--session-dir",
            str(root / "session"),
        ]
        walls: list[float] = []
        digests: set[str] = set()
        for attempt in range(1, args.repeat + 1):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            proc = subprocess.run(command, capture_output=True, check=False)
            wall = time.perf_counter() - start
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            if proc.returncode != 0:
                print(proc.stderr.decode(errors="replace"), file=sys.stderr)
                return 1
            walls.append(wall)
            digests.add(hashlib.sha256(proc.stdout).hexdigest())
            output = json.loads(proc.stdout)
            print(
                f"run {attempt}: {wall:6.2f} s wall, {cpu:5.2f} s CPU  "
                f"({len(output['results'])} results, {len(output['events'])} events, "
                f"virtual end {output['events'][-1]['t']} s)"
            )
    load = os.getloadavg()[0]
    print(f"machine load average (1 min): {load:.2f} on {os.cpu_count()} CPUs")
    best, median = min(walls), statistics.median(walls)
    verdict = "within" if median < GOAL_SECONDS else "OVER"
    print(f"best {best:.2f} s, median {median:.2f} s: {verdict} the {GOAL_SECONDS:g} s goal")
    print(f"outputs byte-identical across runs: {len(digests) == 1}")
    return 0 if median < GOAL_SECONDS and len(digests) == 1 else 1


if __name__ == "__main__":
    sys.exit(main())
