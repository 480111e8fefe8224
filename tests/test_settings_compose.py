"""Loaded settings compose: ``load_settings`` output feeds ``HookSet.from_settings``,
``GuardRails.from_settings`` and ``load_settings`` itself; guard rails take a hook,
a rule or a mode without ``attrs.evolve``."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

from trioexec import (
    ConfigurationError,
    GuardRails,
    PermissionResult,
    ToolUse,
    function_tool,
    load_settings,
    run_tools,
)
from trioexec.hooks import HookInput, HookOutput, HookSet

if TYPE_CHECKING:
    from pathlib import Path

SETTINGS = {
    "permissions": {"deny": ["deploy(prod)"], "allow": ["status"], "defaultMode": "default"},
    "hooks": {
        "PreToolUse": [{"matcher": "deploy", "hooks": [{"type": "command", "command": "true"}]}]
    },
}


def _file(tmp_path: Path, data: object = SETTINGS) -> Path:
    path = tmp_path / "settings.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


@function_tool
async def deploy(target: str) -> str:
    """Deploy."""
    return f"deployed {target}"


def test_hookset_from_settings_takes_what_load_settings_returns(tmp_path: Path) -> None:
    settings = load_settings(_file(tmp_path))
    hooks = HookSet.from_settings(settings)
    assert hooks == settings.hooks
    assert [entry.matcher for entry in hooks.entries] == ["deploy"]


def test_hookset_from_settings_refuses_something_else_naming_it() -> None:
    with pytest.raises(ConfigurationError, match=r"expected a settings object .* got int"):
        HookSet.from_settings(3)  # type: ignore[arg-type]


def test_guard_rails_from_loaded_settings_equal_those_from_the_file(tmp_path: Path) -> None:
    path = _file(tmp_path)
    from_file = GuardRails.from_settings(path, session_id="s")
    from_loaded = GuardRails.from_settings(load_settings(path), session_id="s")
    assert from_loaded.permissions == from_file.permissions
    assert from_loaded.hooks == from_file.hooks


def test_a_loaded_settings_merges_with_more_sources_as_one_source(tmp_path: Path) -> None:
    loaded = load_settings(_file(tmp_path))
    merged = load_settings(loaded, {"permissions": {"deny": ["status"], "defaultMode": "plan"}})
    assert [str(r) for r in merged.permissions.deny] == ["deploy(prod)", "status"]
    assert merged.permissions.mode == "plan"
    assert merged.hooks == loaded.hooks
    assert merged.sources == (*loaded.sources, "<settings #2>")


def test_problems_of_loaded_settings_are_kept_not_reported_twice(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    loaded = load_settings(_file(tmp_path, {"permisions": {}}))
    assert len(loaded.problems) == 1
    caplog.clear()
    again = load_settings(loaded)
    assert again.problems == loaded.problems
    assert not caplog.records


async def test_with_python_hook_adds_a_hook_to_guard_rails_from_settings(tmp_path: Path) -> None:
    seen: list[str] = []

    async def audit(hook_input: HookInput) -> HookOutput | None:
        seen.append(hook_input.tool_name)
        return HookOutput(additional_context="audited")

    base = GuardRails.from_settings({"permissions": {"allow": ["deploy"]}})
    guard = base.with_python_hook("PreToolUse", "deploy", audit)
    assert base.hooks.entries == ()  # immutable: the original is unchanged
    assert guard.session_id == base.session_id
    outcome = await run_tools(
        [ToolUse("t1", "deploy", {"target": "staging"})], [deploy], guard=guard
    )
    assert outcome.results[0].text == "deployed staging"
    assert seen == ["deploy"]


def test_with_python_hook_checks_the_hook_when_added() -> None:
    def not_async(hook_input: HookInput) -> None:
        return None

    with pytest.raises(TypeError):
        GuardRails().with_python_hook("PreToolUse", None, not_async)  # type: ignore[arg-type]


async def test_with_rules_adds_a_deny_rule_that_holds() -> None:
    base = GuardRails.from_settings({"permissions": {"allow": ["deploy"]}})
    guard = base.with_rules(deny=["deploy(prod)"])
    assert [str(r) for r in base.permissions.deny] == []
    uses = [ToolUse("t1", "deploy", {"target": "prod"})]
    outcome = await run_tools(uses, [deploy], guard=guard)
    assert outcome.results[0].is_error
    assert "Permission to use deploy has been denied." in outcome.results[0].text


def test_with_rules_refuses_a_rule_that_does_not_parse() -> None:
    with pytest.raises(ValueError, match="without a closing"):
        GuardRails().with_rules(deny=["deploy(prod"])


def test_with_mode_and_with_command_hook_return_changed_copies() -> None:
    base = GuardRails()
    assert base.with_mode("plan").permissions.mode == "plan"
    assert base.permissions.mode == "default"
    hooked = base.with_command_hook("PostToolUse", "Bash", "true", timeout=5)
    assert [(e.event, e.matcher, e.timeout) for e in hooked.hooks.entries] == [
        ("PostToolUse", "Bash", 5)
    ]


async def test_with_can_use_tool_answers_an_ask() -> None:
    async def yes(name: str, tool_input: Any, tool_use_id: str) -> Any:
        return PermissionResult.allow()

    guard = GuardRails().with_rules(ask=["deploy"])
    uses = [ToolUse("t1", "deploy", {"target": "x"})]
    assert (await run_tools(uses, [deploy], guard=guard)).results[0].is_error
    allowed = await run_tools(uses, [deploy], guard=guard.with_can_use_tool(yes))
    assert allowed.results[0].text == "deployed x"
