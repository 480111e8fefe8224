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
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import trio

from trioexec import CallContext, GuardRails, PermissionResult, Tool, ToolUse
from trioexec.hooks import HookInput, HookOutput, HookSet
from trioexec.lowlevel import authorize_call
from trioexec.permissions import RuleBehavior, match_bash_rule

RULES = {
    "permissions": {
        "allow": ["Bash(npm run test:*)", "Bash(git status)", "Bash(git diff:*)", "Read"],
        "ask": ["Bash(git push:*)"],
        "deny": ["Bash(rm -rf:*)", "Bash(curl:*)", "Read(./secrets/**)"],
    }
}


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


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--calls", type=int, default=20_000)
    parser.add_argument("--command-calls", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

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
                shown = f"{best * 1e6:8.1f} µs" if best < 1e-3 else f"{best * 1e3:8.2f} ms"
                print(f"{label:<24}{shown} per call  ({calls} calls, best of {args.repeat})")

        trio.run(run)


if __name__ == "__main__":
    main()
