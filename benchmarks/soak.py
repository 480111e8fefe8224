"""Soak the fault-injection harness: many generated turns, every invariant checked.

Runs the same generated turns as ``tests/test_fault_injection.py`` (faulty
tools, hooks, callbacks and observers on both paths, interrupts, aborts,
discards and deadlines at random instants; see ``tests/faults.py``), for as
many examples as asked, and prints the count, the rate and the result::

    python benchmarks/soak.py --examples 100000
    python benchmarks/soak.py --examples 20000 --sessions 0.1 --seed 7

Every example is a whole trio run on a MockClock; a tenth (``--sessions``) are
sessions of up to 50 turns in one trio run, each compared with the same turn
run alone.  A failure prints the shrunk plan and exits with status 1.

``--sigint N`` runs N examples of another kind instead: Ctrl-C at a random
line of trioexec's own code, one child process per example
(``_sigint_child.py``: batch, from a child task, streaming, a real ``Bash``
command), each checked for a call left unanswered or answered twice, an end
other than a plain ``KeyboardInterrupt``, a process left alive, and
``Exception ignored`` / ``never awaited`` / ``TrioInternalError`` noise::

    python benchmarks/soak.py --sigint 1000 --jobs 2
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "tests"))

import faults
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=10_000, help="turns and sessions to run")
    parser.add_argument("--sessions", type=float, default=0.1, help="share that are sessions")
    parser.add_argument("--seed", type=int, default=None, help="hypothesis seed (default: random)")
    parser.add_argument("--chunk", type=int, default=2_000, help="examples per hypothesis run")
    parser.add_argument("--sigint", type=int, default=0, help="run N random-SIGINT examples")
    parser.add_argument("--jobs", type=int, default=2, help="child processes at once (--sigint)")
    args = parser.parse_args(argv)
    if args.sigint:
        base = args.seed if args.seed is not None else int(time.time())
        return sigint_soak(args.sigint, base_seed=base, jobs=args.jobs)

    counts = {"turns": 0, "sessions": 0, "session_turns": 0}
    sessions_wanted = int(args.examples * args.sessions)
    turns_wanted = args.examples - sessions_wanted
    common = {
        "deadline": None,
        "database": None,
        "suppress_health_check": list(HealthCheck),
        "phases": [Phase.generate, Phase.shrink],
    }

    def run_turns(n: int, chunk_seed: int) -> None:
        @seed(chunk_seed)
        @settings(max_examples=n, **common)  # type: ignore[arg-type]
        @given(plan=faults.turn_plans())
        def turns(plan: faults.TurnPlan) -> None:
            faults.check_observation(faults.run_virtual(plan))
            counts["turns"] += 1

        turns()

    def run_sessions(n: int, chunk_seed: int) -> None:
        @seed(chunk_seed)
        @settings(max_examples=n, **common)  # type: ignore[arg-type]
        @given(plans=faults.session_plans(max_turns=50), width=st.sampled_from([1, 3, 8]))
        def sessions(plans: list[faults.TurnPlan], width: int) -> None:
            counts["session_turns"] += faults.check_session(plans, width=width)
            counts["sessions"] += 1

        sessions()

    base_seed = args.seed if args.seed is not None else int(time.time())
    start = time.perf_counter()
    cpu = time.process_time()
    status = 0
    with faults.quiet_logs():
        try:
            # Turns and sessions alternate, chunk by chunk, so any prefix of a
            # long soak has both.
            left = {"turns": turns_wanted, "sessions": sessions_wanted}
            runners = {"turns": run_turns, "sessions": run_sessions}
            session_chunk = max(1, int(args.chunk * args.sessions))
            chunk = 0
            while any(left.values()):
                for kind in ("turns", "sessions"):
                    n = min(args.chunk if kind == "turns" else session_chunk, left[kind])
                    if n <= 0:
                        continue
                    runners[kind](n, base_seed + chunk)
                    chunk += 1
                    left[kind] -= n
                done = counts["turns"] + counts["sessions"]
                rate = done / (time.perf_counter() - start)
                print(f"... {done} examples clean, {rate:.0f}/s", flush=True)
        except Exception as exc:  # a falsified invariant: report and fail
            print(f"FAILED: {type(exc).__name__}: {exc}", file=sys.stderr)
            status = 1
    wall = time.perf_counter() - start
    used = time.process_time() - cpu
    examples = counts["turns"] + counts["sessions"]
    print(
        f"examples: {examples} ({counts['turns']} turns, {counts['sessions']} sessions "
        f"holding {counts['session_turns']} turns, each also run alone)"
    )
    print(f"wall: {wall:.1f} s, cpu: {used:.1f} s, rate: {examples / wall:.0f} examples/s wall")
    print(f"seed: {base_seed}; result: {'ok' if status == 0 else 'FAILED'}")
    return status


_CHILD = pathlib.Path(__file__).resolve().parent / "_sigint_child.py"
_NOISE = ("Exception ignored", "never awaited", "TrioInternalError")


def sigint_example(seed: int) -> dict[str, object]:
    """Run one random-SIGINT example in a child process; its report, noise included."""
    done = subprocess.run(
        [sys.executable, str(_CHILD), str(seed)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONHASHSEED": "0"},
        check=False,
    )
    lines = done.stdout.strip().splitlines()
    try:
        report: dict[str, object] = json.loads(lines[-1])
    except (IndexError, ValueError):
        report = {"seed": seed, "violations": [f"no report (exit {done.returncode})"]}
    violations = list(report.get("violations") or [])  # type: ignore[call-overload]
    violations += [f"stderr: {noise}" for noise in _NOISE if noise in done.stderr]
    report["violations"] = violations
    if violations:
        report["stderr"] = done.stderr[-2_000:]
    return report


def sigint_soak(count: int, *, base_seed: int, jobs: int) -> int:
    """Run ``count`` random-SIGINT examples; print the tally; 1 if any was not clean."""
    start = time.perf_counter()
    ends: dict[str, int] = {}
    shapes: dict[str, int] = {}
    failed: list[dict[str, object]] = []
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        for n, report in enumerate(pool.map(sigint_example, range(base_seed, base_seed + count))):
            ended = str(report.get("ended", "?")).split(":")[0]
            ends[ended] = ends.get(ended, 0) + 1
            shape = str(report.get("shape", "?"))
            shapes[shape] = shapes.get(shape, 0) + 1
            if report["violations"]:
                failed.append(report)
                print(f"NOT CLEAN: {json.dumps(report)}", file=sys.stderr, flush=True)
            if (n + 1) % 100 == 0:
                print(f"... {n + 1} SIGINT examples, {len(failed)} not clean", flush=True)
    wall = time.perf_counter() - start
    print(f"SIGINT examples: {count} ({', '.join(f'{k} {v}' for k, v in sorted(shapes.items()))})")
    print(f"ended: {', '.join(f'{k} {v}' for k, v in sorted(ends.items()))}")
    print(f"wall: {wall:.1f} s, rate: {count / wall:.1f} examples/s, jobs: {jobs}")
    print(f"seeds: {base_seed}..{base_seed + count - 1}; not clean: {len(failed)}; "
          f"result: {'ok' if not failed else 'FAILED'}")  # fmt: skip
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
