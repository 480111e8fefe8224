"""Claude Code's ``dontAsk`` and ``auto`` permission modes, as trioexec runs them.

Each test is named after the Claude Code behaviour it pins and quotes the
source line (v2.1.88) or documentation sentence stating it; where trioexec
cannot do what Claude Code does (``auto`` needs a model classifier), the test
pins what trioexec does instead and says so.
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING, Any

import pytest
import trio

from trioexec import GuardRails, PermissionResult, ToolUse, run_tools
from trioexec._guard._settings import AUTO_MODE_NOTE, load_settings
from trioexec._texts import dont_ask_denied_message
from trioexec.permissions import PermissionContext
from trioexec.tools import default_tools

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    from trioexec import JSONValue

RUN_LIMIT = 60


async def run(cwd: Path, guard: GuardRails, *uses: ToolUse) -> list[str]:
    with trio.fail_after(RUN_LIMIT):
        outcome = await run_tools(list(uses), default_tools(), cwd=cwd, guard=guard)
    return [str(result.content) for result in outcome.results]


class Asked:
    """A ``can_use_tool`` that records each question and answers ``allow``."""

    def __init__(self) -> None:
        self.names: list[str] = []

    async def __call__(
        self, tool_name: str, tool_input: Mapping[str, JSONValue], tool_use_id: str
    ) -> PermissionResult:
        self.names.append(tool_name)
        return PermissionResult.allow()


def test_dont_ask_text_is_claude_codes_byte_for_byte() -> None:
    """``DONT_ASK_REJECT_MESSAGE = (toolName) => `Permission to use ${toolName} has been
    denied because Claude Code is running in don't ask mode. ${DENIAL_WORKAROUND_GUIDANCE}```
    (src/utils/messages.ts)."""
    text = dont_ask_denied_message("Bash")
    assert text.startswith(
        "Permission to use Bash has been denied because Claude Code is running in don't ask "
        "mode. IMPORTANT: You *may* attempt to accomplish this action using other tools"
    )
    assert text.endswith(
        "STOP and explain to the user what you were trying to do and why you need this "
        "permission. Let the user decide how to proceed."
    )


async def test_dont_ask_denies_what_would_ask_and_runs_what_is_pre_approved(
    tmp_path: Path,
) -> None:
    """``if (appState.toolPermissionContext.mode === 'dontAsk') { return { behavior: 'deny',
    ... message: DONT_ASK_REJECT_MESSAGE(tool.name) } }`` on an ``ask`` result
    (hasPermissionsToUseTool); the docs: "dontAsk: Only pre-approved tools" run, for
    "locked-down CI and scripts".  Nobody is asked: ``can_use_tool`` is never called."""
    (tmp_path / "a.txt").write_text("hello\n")
    asked = Asked()
    guard = GuardRails.from_settings(
        {"permissions": {"defaultMode": "dontAsk", "allow": ["Bash(echo:*)"]}},
        can_use_tool=asked,
    )
    uses = [
        ToolUse("toolu_1", "Bash", {"command": "echo approved"}),
        ToolUse("toolu_2", "Bash", {"command": "touch made"}),
        ToolUse("toolu_3", "Write", {"file_path": "b.txt", "content": "x"}),
        ToolUse("toolu_4", "Read", {"file_path": "a.txt"}),
    ]
    texts = [(await run(tmp_path, guard, use))[0] for use in uses]  # one call per batch
    assert texts[0].strip() == "approved"
    assert texts[1] == dont_ask_denied_message("Bash")
    assert texts[2] == dont_ask_denied_message("Write")
    assert "hello" in texts[3]  # reads inside the working directory need no approval
    assert asked.names == []
    assert not (tmp_path / "made").exists()
    assert not (tmp_path / "b.txt").exists()


async def test_dont_ask_denies_an_ask_rule_a_hook_ask_and_a_protected_write(
    tmp_path: Path,
) -> None:
    """Every path to an ``ask`` ends in the dontAsk denial in Claude Code (the conversion
    happens on the final result): an ask rule, a hook's ``permissionDecision: "ask"``
    and a write to a protected path all become denials, never a question."""
    asked = Asked()
    hook = tmp_path / "ask.sh"
    hook.write_text(
        "#!/bin/sh\ncat >/dev/null\n"
        'echo \'{"hookSpecificOutput":{"hookEventName":"PreToolUse",'
        '"permissionDecision":"ask"}}\'\n'
    )
    hook.chmod(0o755)
    guard = GuardRails.from_settings(
        {
            "permissions": {
                "defaultMode": "dontAsk",
                "allow": ["Bash", "Write"],
                "ask": ["Bash(git push:*)"],
            },
            "hooks": {
                "PreToolUse": [
                    {"matcher": "Glob", "hooks": [{"type": "command", "command": str(hook)}]}
                ]
            },
        },
        can_use_tool=asked,
    )
    uses = [
        ToolUse("toolu_1", "Bash", {"command": "git push origin main"}),
        ToolUse("toolu_2", "Glob", {"pattern": "*"}),
        ToolUse("toolu_3", "Write", {"file_path": ".git/config", "content": "x"}),
    ]
    texts = [(await run(tmp_path, guard, use))[0] for use in uses]  # one call per batch
    assert texts == [
        dont_ask_denied_message("Bash"),
        dont_ask_denied_message("Glob"),
        dont_ask_denied_message("Write"),
    ]
    assert asked.names == []


async def test_auto_starts_from_accept_edits_and_asks_the_application_for_the_rest(
    tmp_path: Path,
) -> None:
    """Claude Code's auto mode tries the acceptEdits fast path first, then asks its
    classifier.  trioexec has no classifier: an edit inside the working directory
    is allowed as in acceptEdits, and a call that would ask goes to ``can_use_tool``
    (the application's classifier); without one it is denied, never allowed."""
    asked = Asked()
    settings = {"permissions": {"defaultMode": "auto"}}
    guard = GuardRails.from_settings(settings, can_use_tool=asked)
    uses = (
        ToolUse("toolu_1", "Write", {"file_path": "in.txt", "content": "x"}),
        ToolUse("toolu_2", "Bash", {"command": "touch made"}),
    )
    texts = await run(tmp_path, guard, *uses)
    assert texts[0] == "File created successfully at: in.txt"
    assert asked.names == ["Bash"]
    assert (tmp_path / "made").exists()
    (tmp_path / "made").unlink()
    denied = await run(tmp_path, GuardRails.from_settings(settings), uses[1])
    assert denied == ["Claude requested permissions to use Bash, but you haven't granted it yet."]
    assert not (tmp_path / "made").exists()


async def test_auto_mode_drops_allow_rules_that_would_let_any_code_run(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """``isDangerousBashPermission`` (permissionSetup.ts): on entering auto mode, a
    tool-level ``Bash`` allow, ``Bash(*)`` and interpreter rules such as ``Bash(python:*)``
    are stripped; a narrow rule (``Bash(npm test)``) stays.  Back in ``default`` mode
    the same rules apply again."""
    caplog.set_level(logging.WARNING, logger="trioexec.permissions")
    rules = ["Bash(python:*)", "Bash(echo:*)", "Bash(node *)", "Bash(sh -c*)", "Agent"]
    auto = PermissionContext(allow=[*rules, "Bash(*)"], mode="auto")
    assert [str(rule) for rule in auto.allow] == [*rules, "Bash"]  # kept, as written
    assert auto.rules_for(("Bash",), "allow") == (False, ("echo:*",))
    assert auto.rules_for(("Agent",), "allow") == (False, ())
    assert auto.with_mode("default").rules_for(("Bash",), "allow").whole
    assert "Bash(python:*) would let any code run" in caplog.text
    guard = GuardRails.from_settings({"permissions": {"defaultMode": "auto", "allow": ["Bash"]}})
    texts = await run(tmp_path, guard, ToolUse("toolu_1", "Bash", {"command": "touch made"}))
    assert texts == ["Claude requested permissions to use Bash, but you haven't granted it yet."]
    assert not (tmp_path / "made").exists()


def test_auto_mode_loads_and_says_what_it_does_instead_of_the_classifier(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A settings file with ``defaultMode: "auto"`` loads (the rest of the file with it)
    and the difference is reported once, naming the file and the field."""
    caplog.set_level(logging.WARNING, logger="trioexec.settings")
    settings = load_settings({"permissions": {"defaultMode": "auto", "deny": ["Bash(rm:*)"]}})
    assert settings.permissions.mode == "auto"
    assert [str(rule) for rule in settings.permissions.deny] == ["Bash(rm:*)"]
    assert settings.problems == (f"<settings #1>: permissions.defaultMode: {AUTO_MODE_NOTE}",)
    assert AUTO_MODE_NOTE in caplog.text


@pytest.mark.parametrize("mode", ["dontAsk", "auto"])
async def test_hooks_receive_dont_ask_and_auto_by_their_real_names(
    tmp_path: Path, mode: str
) -> None:
    """``permission_mode: permissionMode`` (createBaseHookInput): the mode's own name."""
    seen = tmp_path / "stdin.json"
    hook = tmp_path / "dump.sh"
    hook.write_text(f'#!/bin/sh\ncat > "{seen}"\n')
    hook.chmod(0o755)
    hooks = {"PreToolUse": [{"matcher": "", "hooks": [{"type": "command", "command": str(hook)}]}]}
    guard = GuardRails.from_settings({"hooks": hooks, "permissions": {"defaultMode": mode}})
    await run(tmp_path, guard, ToolUse("toolu_1", "Glob", {"pattern": "*.json"}))
    data: dict[str, Any] = json.loads(seen.read_text())
    assert data["permission_mode"] == mode
