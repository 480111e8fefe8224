"""Rules checked against the registry: a rule naming no tool is reported with the name
probably meant, once per run's rules and tools, and by ``settings check --tools``."""

from __future__ import annotations

import json
import logging
import sys
from typing import TYPE_CHECKING

import pytest

from trioexec import GuardRails, ToolUse, function_tool, run_tools
from trioexec._cli import main
from trioexec._guard._rule_names import unknown_rule_names
from trioexec.permissions import PermissionContext

if TYPE_CHECKING:
    from pathlib import Path


@function_tool
async def deploy(target: str) -> str:
    """Deploy."""
    return f"deployed {target}"


@function_tool(aliases=("state",))
async def status() -> str:
    """Status."""
    return "green"


def test_a_typo_in_a_rule_is_reported_with_the_tool_meant() -> None:
    permissions = PermissionContext(deny=["deplyo(prod)"], allow=["status", "state"])
    assert unknown_rule_names(permissions, {"deploy", "status", "state"}) == [
        "permissions.deny: deplyo(prod): no tool is named 'deplyo' (did you mean 'deploy'?); "
        "the rule applies to nothing"
    ]


def test_a_rule_far_from_every_name_is_reported_without_a_guess() -> None:
    permissions = PermissionContext(ask=["launch_missiles"])
    (line,) = unknown_rule_names(permissions, {"deploy"})
    assert "no tool is named 'launch_missiles'; the rule applies to nothing" in line


def test_claude_code_names_and_mcp_server_rules_are_not_reported() -> None:
    permissions = PermissionContext(
        deny=["Bash(rm:*)", "Read(./.env)", "mcp__github", "mcp__github__*"],
        allow=["mcp__gitlab"],
    )
    lines = unknown_rule_names(permissions, {"deploy", "mcp__github__create_issue"})
    assert lines == [
        "permissions.allow: mcp__gitlab: no tool is named 'mcp__gitlab'; "
        "the rule applies to nothing"
    ]


async def test_a_run_warns_once_about_a_rule_naming_no_tool(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="trioexec.settings")
    guard = GuardRails(PermissionContext(deny=["deplyo(prod)"]))
    uses = [ToolUse("t1", "deploy", {"target": "prod"})]
    for _ in range(3):
        outcome = await run_tools(uses, [deploy, status], guard=guard)
        assert outcome.results[0].text == "deployed prod"  # the typo protects nothing...
    warnings = [r.getMessage() for r in caplog.records if r.name == "trioexec.settings"]
    assert warnings == [  # ...and says so, once
        "permissions.deny: deplyo(prod): no tool is named 'deplyo' (did you mean 'deploy'?); "
        "the rule applies to nothing"
    ]


async def test_rules_naming_registered_tools_or_aliases_warn_nothing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="trioexec.settings")
    guard = GuardRails(PermissionContext(deny=["deploy(prod)"], allow=["state"]))
    await run_tools([ToolUse("t1", "status", {})], [deploy, status], guard=guard)
    assert not [r for r in caplog.records if r.name == "trioexec.settings"]


def _app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "myapp_tools.py").write_text(
        "from trioexec import function_tool\n\n"
        "@function_tool\nasync def deploy(target: str) -> str:\n    return target\n\n"
        "TOOLS = [deploy]\n",
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    monkeypatch.delitem(sys.modules, "myapp_tools", raising=False)
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"permissions": {"deny": ["deplyo(prod)"]}}), encoding="utf-8")
    return settings


def test_settings_check_with_tools_reports_a_rule_naming_none_of_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = _app(tmp_path, monkeypatch)
    assert main(["settings", "check", str(settings)]) == 0  # Claude Code's names alone: clean
    capsys.readouterr()
    assert main(["settings", "check", "--tools", "myapp_tools:TOOLS", str(settings)]) == 1
    out = capsys.readouterr().out
    assert out.splitlines()[0] == (
        "myapp_tools:TOOLS: permissions.deny: deplyo(prod): no tool is named 'deplyo' "
        "(did you mean 'deploy'?); the rule applies to nothing"
    )


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("myapp_tools", "expected MODULE:ATTR"),
        ("no_such_module_here:TOOLS", "cannot import no_such_module_here"),
        ("myapp_tools:NOPE", "myapp_tools has no NOPE"),
        ("myapp_tools:json", "expected a tool, a list of tools or a ToolRegistry, got module"),
    ],
)
def test_settings_check_with_unusable_tools_says_why(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    spec: str,
    message: str,
) -> None:
    settings = _app(tmp_path, monkeypatch)
    (tmp_path / "myapp_tools.py").write_text("import json\n", encoding="utf-8")
    assert main(["settings", "check", "--tools", spec, str(settings)]) == 1
    assert message in capsys.readouterr().out
