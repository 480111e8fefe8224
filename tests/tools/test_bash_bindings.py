"""Every way a line binds a name to a program, end to end with the real ``Bash`` tool.

``hash -p /bin/rm ls``, ``BASH_CMDS[ls]=/bin/rm``, a git alias set in the same
line, a program carried in an option (``rg --pre rm``): a deny rule for the
program stops the call, also when a PreToolUse hook's ``updatedInput``
supplies the line.  Harmless victim files in a temporary workspace.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs
import pytest

from trioexec import GuardRails, ToolUse, run_tools
from trioexec._hooks._output import HookOutput
from trioexec._texts import command_denied_message
from trioexec.tools import BashTool

if TYPE_CHECKING:
    from pathlib import Path

    from trioexec._hooks._config import HookInput

BOUND = [
    "hash -p /bin/rm ls; ls victim",
    "hash -p /bin/rm ls && ls -f victim",
    "BASH_CMDS[ls]=/bin/rm; ls victim",
    "rg --pre rm x victim",
    "sort --compress-prog=rm victim",
]


async def _run(command: str, cwd: Path, guard: GuardRails) -> tuple[bool, str]:
    outcome = await run_tools(
        [ToolUse("toolu_1", "Bash", {"command": command})], [BashTool()], cwd=cwd, guard=guard
    )
    (result,) = outcome.results
    return result.is_error, str(result.content)


@pytest.mark.parametrize("command", BOUND)
async def test_a_deny_rule_for_the_bound_program_stops_the_line(
    tmp_path: Path, command: str
) -> None:
    victim = tmp_path / "victim"
    victim.write_text("keep me")
    guard = GuardRails.from_settings({"permissions": {"deny": ["Bash(rm:*)"], "allow": ["Bash"]}})
    assert await _run(command, tmp_path, guard) == (True, command_denied_message("Bash", command))
    assert victim.read_text() == "keep me"


@pytest.mark.parametrize("command", BOUND)
async def test_a_hooks_updated_input_is_read_the_same_way(tmp_path: Path, command: str) -> None:
    victim = tmp_path / "victim"
    victim.write_text("keep me")

    async def rewrite(data: HookInput) -> HookOutput:
        return HookOutput(permission_decision="allow", updated_input={"command": command})

    guard = GuardRails.from_settings({"permissions": {"deny": ["Bash(rm:*)"]}})
    guard = attrs.evolve(guard, hooks=guard.hooks.with_python_hook("PreToolUse", "Bash", rewrite))
    is_error, content = await _run("ls", tmp_path, guard)
    assert is_error
    assert content.startswith("Permission to use Bash"), content
    assert victim.read_text() == "keep me"


async def test_a_git_alias_set_in_the_line_is_its_target(tmp_path: Path) -> None:
    command = "git config alias.p push && git p origin main"
    guard = GuardRails.from_settings(
        {"permissions": {"deny": ["Bash(git push:*)"], "allow": ["Bash"]}}
    )
    assert await _run(command, tmp_path, guard) == (True, command_denied_message("Bash", command))
