"""Background hooks and don't-ask mode: an ``async: true`` hook is heard on the next turn.

The settings (a dict here; a ``.claude/settings.json`` works the same) allow
``Bash(npm run test:*)`` in ``dontAsk`` mode: whatever would ask the user is
denied instead, with Claude Code's text.  An ``async: true`` PostToolUse
command hook "lints" in the background: the call is answered without waiting
for it, and what it says (its JSON ``systemMessage``) reaches the model with
the next call.  The run waits at most ``async_hook_grace`` seconds for such a
hook at its end, then stops it: no hook process outlives its run.  The shell
is fake.

Run: python examples/background_hooks.py
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs
import trio

import trioexec
from trioexec import CallContext, PermissionResult, ProgressSender, ToolUse

if TYPE_CHECKING:
    from trioexec.permissions import RuleBehavior

LINTER = 'sleep 0.2; echo \'{"systemMessage": "lint: 2 warnings in app.py"}\''
SETTINGS = {
    "permissions": {"defaultMode": "dontAsk", "allow": ["Bash(npm run test:*)"]},
    "hooks": {
        "PostToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": LINTER, "async": True}]}
        ]
    },
}


@attrs.frozen
class ShellInput:
    command: str


class FakeShell(trioexec.Tool[ShellInput]):
    name = "Bash"
    input_type = ShellInput

    def match_rule_content(
        self, content: str, args: ShellInput, ctx: CallContext, *, behavior: RuleBehavior
    ) -> bool:
        return trioexec.permissions.match_bash_rule(content, args.command, behavior=behavior)

    async def check_permissions(self, args: ShellInput, ctx: CallContext) -> PermissionResult:
        return PermissionResult.passthrough()  # the rules decide

    async def call(self, args: ShellInput, ctx: CallContext, progress: ProgressSender) -> str:
        return f"(ran {args.command})"


async def main() -> None:
    guard = trioexec.GuardRails.from_settings(SETTINGS)
    turns = [["npm run test", "git push origin main"], ["npm run test -- -k api"]]
    for number, commands in enumerate(turns, 1):
        calls = [
            ToolUse(f"toolu_{number}{i}", "Bash", {"command": c}) for i, c in enumerate(commands)
        ]
        outcome = await trioexec.run_tools(calls, [FakeShell()], guard=guard)
        print(f"turn {number}:")
        for command, update in zip(commands, outcome.updates, strict=True):
            print(f"  {command:24} -> {update.result.text[:92]}")
            for record in update.attachments:
                print(f"  {'':24}    + {record.kind} from {record.hook_name}: {record.text}")


if __name__ == "__main__":
    trio.run(main)
