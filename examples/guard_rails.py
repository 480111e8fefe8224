"""Guard rails: settings permission rules, a Python PreToolUse hook, and the ask callback.

``GuardRails.from_settings`` takes Claude Code's settings format (a dict here, or
settings file paths).  A Python hook is added for every ``Bash`` call.  Each
call prints what the model receives: the result or the denial text, plus the
records (``additional_context``) that go with it, a denial's too.  The shell is fake.

Run: python examples/guard_rails.py
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs
import trio

import trioexec
from trioexec import CallContext, PermissionResult, ProgressSender, ToolUse
from trioexec.hooks import HookInput, HookOutput

if TYPE_CHECKING:
    from collections.abc import Mapping

    from trioexec.permissions import RuleBehavior

SETTINGS = {"permissions": {"allow": ["Bash(npm run test:*)"], "ask": ["Bash(git push:*)"],
                            "deny": ["Bash(rm:*)", "Bash(curl:*)"]}}  # fmt: skip


@attrs.frozen
class ShellInput:
    command: str


class FakeShell(trioexec.Tool[ShellInput]):
    name = "Bash"
    input_type = ShellInput

    def match_rule_content(
        self, content: str, args: ShellInput, ctx: CallContext, *, behavior: RuleBehavior
    ) -> bool:
        # Bash(npm run test:*) etc.; a deny rule catches any part of `ls && rm x`.
        return trioexec.permissions.match_bash_rule(content, args.command, behavior=behavior)

    async def check_permissions(self, args: ShellInput, ctx: CallContext) -> PermissionResult:
        return PermissionResult.passthrough()  # no opinion of its own: the rules decide

    async def call(self, args: ShellInput, ctx: CallContext, progress: ProgressSender) -> str:
        return f"(ran {args.command})"


async def audit(event: HookInput) -> HookOutput | None:
    command = str(event.tool_input["command"])
    if "prod" in command:
        raise trioexec.hooks.HookBlockingError("commands touching prod need a ticket number")
    if command.startswith("curl"):
        return HookOutput(permission_decision="allow")  # never beats a deny rule
    if command.startswith("npm"):
        return HookOutput(additional_context="The test suite takes about a minute.")
    return None  # no opinion


async def ask_user(
    tool: str, tool_input: Mapping[str, object], tool_use_id: str
) -> PermissionResult:
    print(f"  [asked the user about {tool}({tool_input['command']})]")
    if str(tool_input["command"]).startswith("git push"):
        return PermissionResult.deny("Not now: the release branch is frozen.")
    return PermissionResult.allow()


async def main() -> None:
    guard = trioexec.GuardRails.from_settings(SETTINGS, can_use_tool=ask_user)
    guard = attrs.evolve(guard, hooks=guard.hooks.with_python_hook("PreToolUse", "Bash", audit))
    commands = ["npm run test -- --watch", "npm run test && rm -rf /", "curl https://x.example",
                "./deploy prod", "git push origin main", "ls -la"]  # fmt: skip
    calls = [ToolUse(f"toolu_{i}", "Bash", {"command": c}) for i, c in enumerate(commands, 1)]
    outcome = await trioexec.run_tools(calls, [FakeShell()], guard=guard)
    for command, update in zip(commands, outcome.updates, strict=True):
        print(f"{command:26} -> {update.result.text}")
        for record in update.attachments:
            print(f"{'':26}    + {record.kind}: {record.text}")


if __name__ == "__main__":
    trio.run(main)
