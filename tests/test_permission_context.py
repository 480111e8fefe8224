"""PermissionContext and the permission modes: one table of mode names, rules indexed by tool."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from trioexec import CallContext, ConfigurationError, GuardRails, ToolUse, load_settings
from trioexec._contract._permission_context import (
    MODE_SPELLINGS,
    PermissionContext,
    PermissionMode,
    claude_code_mode_name,
    mode_from_name,
    normalize_mode,
)
from trioexec._guard._rails import authorize_call
from trioexec.testing import ScriptedTool

if TYPE_CHECKING:
    from trioexec._hooks._config import HookInput


@pytest.mark.parametrize(("ours", "theirs"), MODE_SPELLINGS)
def test_every_mode_is_accepted_in_both_spellings(ours: PermissionMode, theirs: str) -> None:
    assert mode_from_name(ours) == ours
    assert mode_from_name(theirs) == ours
    assert normalize_mode(theirs) == ours  # type: ignore[arg-type]
    assert claude_code_mode_name(ours) == theirs
    assert PermissionContext(mode=theirs).mode == ours  # type: ignore[arg-type]
    assert PermissionContext().with_mode(theirs).mode == ours  # type: ignore[arg-type]


@pytest.mark.parametrize(("ours", "theirs"), MODE_SPELLINGS)
async def test_settings_files_and_hook_input_spell_modes_from_the_one_table(
    ours: PermissionMode, theirs: str
) -> None:
    assert load_settings({"permissions": {"defaultMode": theirs}}).mode == ours
    assert load_settings({"permissions": {"defaultMode": ours}}).mode == ours
    seen: list[str] = []

    async def spy(data: HookInput) -> None:
        seen.append(data.permission_mode)

    rails = GuardRails.from_settings(mode=theirs)  # type: ignore[arg-type]
    rails = GuardRails(
        permissions=rails.permissions,
        hooks=rails.hooks.with_python_hook("PreToolUse", None, spy),
    )
    use = ToolUse("toolu_1", "Bash", {"command": "ls"})
    await authorize_call(rails, ScriptedTool("Bash"), use, dict(use.input), CallContext(use))
    assert seen == [theirs]  # hooks see Claude Code's spelling


def test_an_unknown_mode_is_refused_with_every_accepted_spelling() -> None:
    spellings = (
        "'default', 'bypass', 'bypassPermissions', 'acceptEdits', 'plan', 'dontAsk' or 'auto'"
    )
    for bad in ("Bypass", "", "dontask"):
        assert mode_from_name(bad) is None
        with pytest.raises(ConfigurationError, match=f"must be {spellings}, not {bad!r}"):
            PermissionContext(mode=bad)  # type: ignore[arg-type]


def test_rules_for_merges_a_tool_name_and_its_aliases_in_order() -> None:
    perms = PermissionContext(
        deny=["Task(rm:*)", "Agent", "Agent(curl:*)", "Other(x)"], allow=["Task(ls:*)"]
    )
    assert perms.rules_for(("Agent", "Task"), "deny") == (True, ("curl:*", "rm:*"))
    assert perms.rules_for(("Task",), "deny") == (False, ("rm:*",))
    assert perms.rules_for(("Task",), "allow").contents == ("ls:*",)
    assert perms.rules_for(("Nobody",), "deny") == (False, ())
    assert PermissionContext().rules_for(("Task",), "ask") == (False, ())


def test_rule_lists_are_lists_of_rules_not_one_string() -> None:
    with pytest.raises(TypeError, match="a list of strings, not one string"):
        PermissionContext(deny="Bash(rm:*)")  # type: ignore[arg-type]
