"""Per-call cost of the guard rails: PreToolUse hooks plus the permission chain.

Run: ``python benchmarks/bench_guard.py [--calls N] [--command-calls M] [--repeat R]``.

One :func:`authorize_call` per call for a Bash-like tool with a realistic
rule set (allow, ask and deny rules with content, matched against the
command), best of R runs:

* ``no guard``: ``GuardRails()``, the tool's own check decides;
* ``rules, no hooks``: the permission chain with eight rules;
* ``rules + 1 Python hook``: the same plus one async Python hook that allows;
* ``rules + 1 command hook``: the same plus one command hook (``/bin/sh`` running
  a script that prints an allow decision as JSON): a process spawn per call.

Then the real ``BashTool`` (its own check resolves paths) over ten typical,
distinct commands, with every cache of the shell analysis cleared before each
call (``fresh``: a first sight of the command), or each line made new by blanks
after it with nothing cleared (``new line``: a first sight with the caches full,
as late in a long session), or kept (``cached``), median of all calls, with the
seven rules other than ``Read`` and with all eight (a ``Read`` deny rule makes
Bash look at every path a command names and walk the directories among them: in
place up to 64 paths, else in a worker thread);
and the read-only classifier alone per command, uncached.
The targets: a Bash permission decision within 50 µs, the classifier within
15 µs.

Then the bounds: every command of the adversarial corpus
(``tests/data/shell_corpus.json``), decided at first sight by the real
``BashTool`` with all eight rules in a workspace (the median and the slowest,
named), and lines of 100,000 characters of several shapes (16,000 pipes,
``&&`` chains, nested ``$(``, 50,000 words, 14,000 distinct file names, a
here-doc, one quoted word), the slowest of each.  The documented bound: every
line up to 100,000 characters decided within one second on this machine.

``--instructions`` counts instructions per first-sight decision of a new typical
line under valgrind's callgrind instead (with ``--baseline``, of both trees): a
figure free of machine noise, for small changes; it does not see cache misses or
the kernel's time.

``--baseline TREE`` runs this same script against another checkout of the
package (``PYTHONPATH=TREE``) and this one, alternately, ``--repeat`` times,
and prints each figure before and after with their ratio (medians of the runs),
so both versions are measured side by side under the same load.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import trio

from trioexec import CallContext, GuardRails, PermissionResult, Tool, ToolUse
from trioexec.hooks import HookInput, HookOutput, HookSet
from trioexec.lowlevel import authorize_call
from trioexec.permissions import RuleBehavior, match_bash_rule
from trioexec.tools import BashTool, is_read_only_command

RULES = {
    "permissions": {
        "allow": ["Bash(npm run test:*)", "Bash(git status)", "Bash(git diff:*)", "Read"],
        "ask": ["Bash(git push:*)"],
        "deny": ["Bash(rm -rf:*)", "Bash(curl:*)", "Read(./secrets/**)"],
    }
}


NO_READ_DENY = {
    "permissions": {
        **RULES["permissions"],
        "deny": [r for r in RULES["permissions"]["deny"] if not r.startswith("Read")],
    }
}
"""The same rules without the ``Read`` deny rule (which makes Bash walk the names on disk)."""


class Shell(Tool[dict[str, Any]]):
    """Bash-like: content rules match the command; its own check answers ``own``."""

    name = "Bash"

    def __init__(self, own: PermissionResult) -> None:
        self.own = own

    async def check_permissions(self, input: dict[str, Any], ctx: CallContext) -> PermissionResult:  # noqa: A002
        return self.own

    def match_rule_content(
        self,
        content: str,
        input: dict[str, Any],  # noqa: A002
        ctx: CallContext,
        *,
        behavior: RuleBehavior,
    ) -> bool:
        return match_bash_rule(content, input["command"], behavior=behavior)


async def allow_hook(data: HookInput) -> HookOutput:
    return HookOutput(permission_decision="allow")


async def per_call(guard: GuardRails, tool: Shell, calls: int) -> float:
    """Seconds per authorize_call, for a command the rules allow."""
    tool_use = ToolUse("toolu_1", "Bash", {"command": "npm run test -- --watch"})
    parsed = dict(tool_use.input)
    ctx = CallContext(tool_use, cwd=Path.cwd(), permissions=guard.permissions)
    start = time.perf_counter()
    for _ in range(calls):
        verdict = await authorize_call(guard, tool, tool_use, parsed, ctx)
        assert verdict.allowed, verdict.message
    return (time.perf_counter() - start) / calls


TYPICAL = [
    "git status",
    "ls -la src",
    "cat README.md | grep -n TODO | head -20",
    "git log --oneline -10",
    "npm run test -- --watch",
    "find . -name '*.py' -type f",
    "rg -n 'def main' src",
    "git diff HEAD~1 -- src/",
    "wc -l README.md",
    "cd src && ls",
]
"""Commands a coding agent sends all day; each ends allowed (a rule or read-only)."""


def clear_shell_caches() -> None:
    """Forget every parsed command and matched rule, so the next check starts afresh.

    Clears the bounded ``functools`` caches keyed by a command in the package's
    rule, shell, Bash and path modules (whatever their layout; compiled rules
    are kept), so the same script measures another version the same way.  The
    caches are found once (walking every module's names on each call cost 0.6
    ms and left the processor's caches cold for the call measured next).
    """
    if not _SHELL_CACHES:
        _SHELL_CACHES.extend(_shell_caches())
    for clear in _SHELL_CACHES:
        clear()


_SHELL_CACHES: list[Any] = []


def _shell_caches() -> list[Any]:
    found = []
    for name, module in list(sys.modules.items()):
        if name.startswith("trioexec.") and any(
            part in name for part in ("rules", "shell", "bash", "path")
        ):
            for key, value in vars(module).items():
                if any(part in key for part in ("compile", "rule", "matcher", "pattern")):
                    continue  # compiled rules: per settings, not per command
                clear = getattr(value, "cache_clear", None)
                info = getattr(value, "cache_info", None)
                if (
                    callable(clear)
                    and callable(info)
                    and info().maxsize is not None  # unbounded: a one-time loader (the grammar)
                    and getattr(value, "__module__", None) == name
                ):
                    found.append(clear)
    return found


def _made_new(command: str, serial: int) -> str:
    """``command`` with blanks after it that spell ``serial``: the same command to the
    shell and to every rule, a line no cache has seen."""
    return command + " " + format(serial, "b").replace("0", " ").replace("1", "\t")


async def bash_decision(guard: GuardRails, rounds: int, *, mode: str) -> float:
    """Median seconds per authorize_call of the real BashTool over TYPICAL.

    ``mode``: ``fresh`` clears every per-command cache before each call; ``new``
    clears nothing but makes each line new (:func:`_made_new`), so the caches fill
    and evict as in a long session; ``cached`` repeats the same lines.
    """
    tool = BashTool()
    with tempfile.TemporaryDirectory() as folder:
        cwd = Path(folder)
        (cwd / "src").mkdir()
        (cwd / "README.md").write_text("TODO\n")
        samples: list[float] = []
        serial = 0
        for _ in range(rounds):
            for command in TYPICAL:
                serial += 1
                if mode == "new":
                    command = _made_new(command, serial)
                tool_use = ToolUse("toolu_1", "Bash", {"command": command})
                parsed = tool.input_type(command)  # type: ignore[misc]
                ctx = CallContext(tool_use, cwd=cwd, permissions=guard.permissions)
                if mode == "fresh":
                    clear_shell_caches()
                start = time.perf_counter()
                verdict = await authorize_call(guard, tool, tool_use, parsed, ctx)
                samples.append(time.perf_counter() - start)
                assert verdict.allowed, (command, verdict.message)
    return statistics.median(samples)


def classifier(rounds: int) -> float:
    """Median seconds per is_read_only_command over TYPICAL, each read afresh."""
    samples: list[float] = []
    for _ in range(rounds):
        for command in TYPICAL:
            clear_shell_caches()
            start = time.perf_counter()
            is_read_only_command(command)
            samples.append(time.perf_counter() - start)
    return statistics.median(samples)


CORPUS = Path(__file__).resolve().parent.parent / "tests" / "data" / "shell_corpus.json"

LONG_LINES = {
    "16,000 pipes": " | ".join(["cat"] * 16_000)[:96_000],
    "&& chain": " && ".join(["ls"] * 25_000)[:100_000],
    "nested $(": "echo " + "$(echo " * 3_000 + "x" + ")" * 3_000,
    "50,000 words": "ls " + " ".join(["a"] * 49_998),
    "14,000 file names": "cat " + " ".join(f"f{i}" for i in range(14_000)),
    "here-doc": "cat <<EOF\n" + "ls x\n" * 19_990 + "EOF",
    "one quoted word": "echo '" + "x" * 99_990 + "'",
}
"""Lines up to 100,000 characters, each a shape that once cost the most."""


def _workspace(cwd: Path) -> None:
    (cwd / "src").mkdir()
    (cwd / "README.md").write_text("TODO\n")
    (cwd / "secrets").mkdir()
    (cwd / "secrets" / "key.pem").write_text("k")
    (cwd / ".git").mkdir()


async def first_sight(guard: GuardRails, commands: list[str]) -> list[tuple[float, str]]:
    """Seconds of one first-sight authorize_call of the real BashTool, per command."""
    tool = BashTool()
    found: list[tuple[float, str]] = []
    with tempfile.TemporaryDirectory() as folder:
        cwd = Path(folder)
        _workspace(cwd)
        for command in commands:
            tool_use = ToolUse("toolu_1", "Bash", {"command": command})
            parsed = tool.input_type(command)  # type: ignore[misc]
            ctx = CallContext(tool_use, cwd=cwd, permissions=guard.permissions)
            clear_shell_caches()
            start = time.perf_counter()
            with contextlib.suppress(Exception):  # a version that raises is still timed
                await authorize_call(guard, tool, tool_use, parsed, ctx)
            found.append((time.perf_counter() - start, command))
    return found


async def bounds(guard: GuardRails) -> dict[str, float]:
    """The corpus (median, slowest) and the long lines (each the slowest of three)."""
    corpus = [case["command"] for case in json.loads(CORPUS.read_text(encoding="utf-8"))]
    timed = await first_sight(guard, corpus)
    figures = {
        "corpus, median": statistics.median(t for t, _ in timed),
        "corpus, slowest": max(timed)[0],
    }
    print(f"{'':<4}slowest corpus line: {max(timed)[1][:70]!r} ({len(max(timed)[1]):,} chars)")
    for label, line in LONG_LINES.items():
        figures[f"100k: {label}"] = max(t for t, _ in await first_sight(guard, [line] * 3))
    return figures


_COLLECTED = re.compile(rb"Collected : (\d+)")


async def decide_new_lines(rounds: int) -> None:
    """``rounds`` rounds of first-sight decisions of new typical lines (``new line``), after
    20 warm-up rounds: the process :func:`instructions` counts."""
    await bash_decision(GuardRails.from_settings(NO_READ_DENY), rounds + 20, mode="new")


def instructions(tree: str | None = None) -> float:
    """Instructions per first-sight decision of a new typical line, counted by callgrind
    (``PYTHONHASHSEED=0``): two runs of 30 and 130 rounds, their difference per decision,
    so start-up and warm-up cancel out.  Free of machine noise (two runs agree to a few
    hundredths of a percent), blind to cache misses and to the kernel's time."""
    counts = []
    for rounds in (30, 130):
        env = {**os.environ, "PYTHONHASHSEED": "0"}
        if tree is not None:
            env["PYTHONPATH"] = tree
        done = subprocess.run(
            ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
             sys.executable, __file__, "--decide-new", str(rounds)],
            env=env, capture_output=True, check=False,
        )  # fmt: skip
        found = _COLLECTED.search(done.stderr)
        if done.returncode != 0 or found is None:
            raise SystemExit(
                f"valgrind run failed:\n{done.stderr.decode(errors='replace')[-2000:]}"
            )
        counts.append(int(found[1]))
    return (counts[1] - counts[0]) / (100 * len(TYPICAL))


def _shown(seconds: float) -> str:
    return f"{seconds * 1e6:8.1f} µs" if seconds < 1e-3 else f"{seconds * 1e3:8.2f} ms"


def compare(baseline: str, repeat: int, extra: list[str]) -> None:
    """Run this script against ``baseline`` and this tree alternately; print both."""
    here = str(Path(__file__).resolve().parent.parent)
    runs: dict[str, list[dict[str, float]]] = {"before": [], "after": []}
    for _ in range(repeat):
        for label, tree in (("before", baseline), ("after", here)):
            env = {**os.environ, "PYTHONPATH": tree}
            out = subprocess.run(
                [sys.executable, __file__, "--json", "--repeat", "1", *extra],
                env=env, capture_output=True, text=True, check=True,
            ).stdout  # fmt: skip
            runs[label].append(json.loads(out.strip().splitlines()[-1]))
    print(f"{'figure':<28}{'before':>12}{'after':>12}   after/before  ({repeat} runs each)")
    for key in runs["after"][0]:
        after = statistics.median(r[key] for r in runs["after"])
        before = statistics.median(r[key] for r in runs["before"] if key in r)
        print(f"{key:<28}{_shown(before):>12}{_shown(after):>12}   {after / before:6.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--calls", type=int, default=20_000)
    parser.add_argument("--command-calls", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--baseline", help="another checkout to measure side by side")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="count instructions per first-sight decision instead (needs valgrind)",
    )
    parser.add_argument("--decide-new", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.decide_new is not None:
        trio.run(decide_new_lines, args.decide_new)
        return
    if args.instructions:
        if shutil.which("valgrind") is None:
            raise SystemExit("--instructions counts with valgrind: it is not on the PATH")
        here = str(Path(__file__).resolve().parent.parent)
        after = instructions(here)
        line = f"{'instructions per first-sight decision (new line)':<52}{after:>12,.0f}"
        if args.baseline:
            before = instructions(args.baseline)
            line += f"  before {before:,.0f}  after/before {after / before:.3f}x"
        print(line)
        return
    if args.baseline:
        extra = ["--calls", str(args.calls), "--command-calls", str(args.command_calls)]
        compare(args.baseline, args.repeat, extra)
        return
    figures: dict[str, float] = {}
    if args.json:
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - only the JSON line is printed

    with tempfile.TemporaryDirectory() as folder:
        script = Path(folder) / "allow.sh"
        script.write_text(
            "#!/bin/sh\n"
            'echo \'{"hookSpecificOutput": {"hookEventName": "PreToolUse", '
            '"permissionDecision": "allow"}}\'\n'
        )
        os.chmod(script, 0o755)
        rules = GuardRails.from_settings(RULES).permissions
        python_hook = HookSet().with_python_hook("PreToolUse", "Bash", allow_hook)
        command_hook = HookSet().with_command_hook("PreToolUse", "Bash", str(script))
        passthrough = Shell(PermissionResult.passthrough())
        cases = [
            ("no guard", GuardRails(), Shell(PermissionResult.allow()), args.calls),
            ("rules, no hooks", GuardRails(rules), passthrough, args.calls),
            ("rules + 1 Python hook", GuardRails(rules, python_hook), passthrough, args.calls),
            (
                "rules + 1 command hook",
                GuardRails(rules, command_hook),
                passthrough,
                args.command_calls,
            ),
        ]

        async def run() -> None:
            for label, guard, tool, calls in cases:
                best = min([await per_call(guard, tool, calls) for _ in range(args.repeat)])
                figures[label] = best
                print(f"{label:<24}{_shown(best)} per call  ({calls} calls, best of {args.repeat})")

            rounds = max(1, args.calls // 200)
            for label, settings, mode in (
                ("Bash, fresh", NO_READ_DENY, "fresh"),
                ("Bash, new line", NO_READ_DENY, "new"),
                ("Bash, cached", NO_READ_DENY, "cached"),
                ("Bash + Read deny, fresh", RULES, "fresh"),
                ("Bash + Read deny, cached", RULES, "cached"),
            ):
                guard = GuardRails.from_settings(settings)
                median = await bash_decision(guard, rounds, mode=mode)
                figures[label] = median
                print(f"{label:<24}{median * 1e6:8.1f} µs median  ({rounds * len(TYPICAL)} calls)")
            median = classifier(rounds)
            figures["classifier, fresh"] = median
            print(f"{'classifier, fresh':<24}{median * 1e6:8.1f} µs median per command")
            for label, seconds in (await bounds(GuardRails.from_settings(RULES))).items():
                figures[label] = seconds
                print(f"{label:<24}{_shown(seconds)}")

        trio.run(run)
    if args.json:
        sys.stdout = sys.__stdout__
        print(json.dumps(figures))


if __name__ == "__main__":
    main()
