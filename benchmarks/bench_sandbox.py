"""What the OS sandbox costs a Bash call, measured side by side in one run.

Run: ``python benchmarks/bench_sandbox.py [--calls N] [--connections C]``.

The real ``BashTool`` runs ``true`` and ``echo hello`` N times each way,
interleaved (unconfined, confined, unconfined, ...), so that both see the
same machine load; the figures are medians of wall time per call (and the
CPU time the child processes used, which load does not inflate):

* ``unconfined``: the shell in its own process group, as without settings;
* ``sandboxed``: the same under bubblewrap (``"sandbox": {"enabled": true}``):
  mount, PID and network namespaces, the mount plan of a git workspace;
* ``sandboxed + proxy``: with ``allowedDomains`` set, so the call also opens
  its filtering proxy and starts the ``socat`` relay inside.

Then the proxy per connection: one confined command makes C HTTP requests
with ``curl`` to a local server through the proxy; the same command runs
unconfined straight to the server; the difference over C is the cost of one
connection through the proxy.  The target: at most 15 ms extra per sandboxed
call (median).  Skips with a reason where bubblewrap cannot run.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import trio

from trioexec import CallContext, GuardRails, ToolUse
from trioexec._guard._sandbox import probe_bwrap
from trioexec.tools import BashTool
from trioexec.tools._bash import BashInput

TARGET_MS = 15.0


async def _call(tool: BashTool, guard: GuardRails, cwd: Path, command: str) -> float:
    ctx = CallContext(ToolUse("toolu_b", "Bash", {}), cwd=cwd, permissions=guard.permissions)
    start = time.perf_counter()
    await tool.call(BashInput(command), ctx, lambda _: None)
    return time.perf_counter() - start


def _children_cpu() -> float:
    """CPU seconds (user + system) of the reaped child processes so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


async def _measure(calls: int, connections: int, cwd: Path) -> dict[str, dict[str, float]]:
    tool = BashTool(kill_grace=0.2)
    ways = {
        "unconfined": GuardRails(),
        "sandboxed": GuardRails.from_settings({"sandbox": {"enabled": True}}),
    }
    if shutil.which("socat"):
        ways["sandboxed + proxy"] = GuardRails.from_settings(
            {"sandbox": {"enabled": True, "network": {"allowedDomains": ["localhost"]}}}
        )
    figures: dict[str, dict[str, float]] = {}
    cpu: dict[str, float] = dict.fromkeys(ways, 0.0)
    for command in ("true", "echo hello"):
        times: dict[str, list[float]] = {way: [] for way in ways}
        for _ in range(calls):
            for way, guard in ways.items():
                before = _children_cpu()
                times[way].append(await _call(tool, guard, cwd, command))
                cpu[way] += _children_cpu() - before
        figures[command] = {way: statistics.median(t) * 1000 for way, t in times.items()}
    figures["cpu"] = {way: seconds * 1000 / (2 * calls) for way, seconds in cpu.items()}
    if "sandboxed + proxy" in ways and shutil.which("curl") and connections:
        figures["proxy"] = await _per_connection(tool, ways, cwd, connections)
    return figures


async def _per_connection(
    tool: BashTool, ways: dict[str, GuardRails], cwd: Path, connections: int
) -> dict[str, float]:
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    port = listeners[0].socket.getsockname()[1]

    async def serve(stream: trio.SocketStream) -> None:
        async with stream:
            await stream.receive_some(65536)
            await stream.send_all(b"HTTP/1.0 200 OK\r\nContent-Length: 3\r\n\r\nok\n")

    loop = f"for i in $(seq {connections}); do curl -s http://localhost:{port}/ >/dev/null; done"
    async with trio.open_nursery() as nursery:
        nursery.start_soon(trio.serve_listeners, serve, listeners)
        direct = await _call(tool, ways["unconfined"], cwd, f"export NO_PROXY='*'; {loop}")
        proxied = await _call(tool, ways["sandboxed + proxy"], cwd, loop)
        nursery.cancel_scope.cancel(reason="measured")
    return {
        "direct": direct * 1000 / connections,
        "through the proxy": proxied * 1000 / connections,
    }


def main(argv: list[str] | None = None) -> int:
    """Print the figures; returns 0 (or 0 with a skip line where bubblewrap cannot run)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=60)
    parser.add_argument("--connections", type=int, default=20)
    args = parser.parse_args(argv)
    why = probe_bwrap(None)
    if why is not None:
        print(f"bench_sandbox: skipped: {why}")
        return 0
    with tempfile.TemporaryDirectory(prefix="bench-sandbox-") as tmp:
        cwd = Path(tmp)
        subprocess.run(["git", "init", "-q"], cwd=cwd, check=True)
        figures = trio.run(_measure, args.calls, args.connections, cwd)
    print(f"Bash call, median of {args.calls} per way, interleaved (ms):")
    for command in ("true", "echo hello"):
        row = figures[command]
        base = row["unconfined"]
        cells = "  ".join(
            f"{way} {ms:6.2f}" + ("" if way == "unconfined" else f" (+{ms - base:.2f})")
            for way, ms in row.items()
        )
        print(f"  {command:<11} {cells}")
    extra = figures["true"]["sandboxed"] - figures["true"]["unconfined"]
    verdict = "within" if extra <= TARGET_MS else "OVER"
    print(f"  sandbox cost per call: {extra:.2f} ms ({verdict} the {TARGET_MS:.0f} ms target)")
    cells = "  ".join(f"{way} {ms:.2f}" for way, ms in figures["cpu"].items())
    print(f"  CPU of the child processes per call (ms): {cells}")
    print(f"  load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cpus while measuring")
    if "proxy" in figures:
        proxy = figures["proxy"]
        print(
            f"proxy, per connection ({args.connections} curl requests in one call): "
            f"direct {proxy['direct']:.2f} ms, through the proxy "
            f"{proxy['through the proxy']:.2f} ms"
        )
    print(f"python {sys.version.split()[0]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
