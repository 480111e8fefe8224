"""Loading and merging settings: permissions, mode, hooks, and errors that name the field."""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING

import pytest

from trioexec import ConfigurationError, PermissionResult
from trioexec._contract._rules import PermissionRule
from trioexec._guard._rails import GuardRails
from trioexec._guard._settings import default_settings_paths, load_settings
from trioexec._hooks._config import CommandHook, HookEntry

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    from trioexec._models import JSONValue


def write(path: Path, data: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data) if not isinstance(data, str) else data, encoding="utf-8")
    return path


def test_load_one_file(tmp_path: Path) -> None:
    path = write(
        tmp_path / "settings.json",
        {
            "model": "ignored",
            "permissions": {
                "allow": ["Bash(npm run test:*)", "Read"],
                "ask": ["Bash(git push:*)"],
                "deny": ["Read(./secrets/**)"],
                "additionalDirectories": ["../other"],
            },
            "hooks": {
                "PreToolUse": [
                    {
                        "matcher": "Bash",
                        "hooks": [{"type": "command", "command": "./check.sh", "timeout": 30}],
                    }
                ],
                "Stop": [{"hooks": [{"type": "command", "command": "ignored"}]}],
            },
        },
    )
    settings = load_settings(path)
    perms = settings.permissions
    assert perms.allow == (PermissionRule("Bash", "npm run test:*"), PermissionRule("Read"))
    assert perms.ask == (PermissionRule("Bash", "git push:*"),)
    assert perms.deny == (PermissionRule("Read", "./secrets/**"),)
    assert perms.mode == "default"
    assert settings.mode is None
    assert settings.hooks.entries == (
        HookEntry("PreToolUse", "Bash", CommandHook("./check.sh"), 30.0),
    )


def test_sources_merge_and_a_deny_anywhere_wins(tmp_path: Path) -> None:
    user = write(tmp_path / "user.json", {"permissions": {"deny": ["Bash(rm:*)"]}})
    project = {"permissions": {"allow": ["Bash", "Bash(rm:*)"], "defaultMode": "bypassPermissions"}}
    local = write(
        tmp_path / "local.json",
        {
            "permissions": {"allow": ["Bash"], "deny": ["WebFetch"]},
            "hooks": {"PostToolUse": [{"hooks": [{"type": "command", "command": "log.sh"}]}]},
        },
    )
    settings = load_settings(user, project, local)
    perms = settings.permissions
    assert [str(r) for r in perms.deny] == ["Bash(rm:*)", "WebFetch"]
    assert [str(r) for r in perms.allow] == ["Bash", "Bash(rm:*)"]  # duplicates dropped
    assert perms.mode == "bypass"
    assert [e.event for e in settings.hooks.entries] == ["PostToolUse"]


def test_last_source_setting_the_mode_wins() -> None:
    a = {"permissions": {"defaultMode": "bypassPermissions"}}
    b = {"permissions": {"defaultMode": "default"}}
    c = {"permissions": {"allow": []}}
    assert load_settings(a, b, c).permissions.mode == "default"
    assert load_settings(b, a, c).permissions.mode == "bypass"


@pytest.mark.parametrize(
    ("mode", "problem"),
    [
        ("dontask", "unknown mode 'dontask' (did you mean 'dontAsk'?); using 'default'"),
        ("someFutureMode", "unknown mode 'someFutureMode'; using 'default'"),
        ("", "unknown mode ''; using 'default'"),
        (
            "acceptedits",
            "unknown mode 'acceptedits' (did you mean 'acceptEdits'?); using 'default'",
        ),
    ],
)
def test_an_unknown_mode_falls_back_to_default_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, mode: str, problem: str
) -> None:
    caplog.set_level(logging.WARNING, logger="trioexec.settings")
    user = write(tmp_path / "user.json", {"permissions": {"defaultMode": "bypassPermissions"}})
    project = write(tmp_path / "project.json", {"permissions": {"defaultMode": mode}})
    settings = load_settings(user, project)
    assert settings.mode == "default"  # it still overrides the earlier source's bypass
    assert settings.permissions.mode == "default"
    assert [(r.name, r.levelno, r.getMessage()) for r in caplog.records] == [
        ("trioexec.settings", logging.WARNING, f"{project}: permissions.defaultMode: {problem}")
    ]
    assert settings.problems == (f"{project}: permissions.defaultMode: {problem}",)


def test_known_modes_are_not_warned_about(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="trioexec.settings")
    for mode in ("default", "bypassPermissions", "bypass", "acceptEdits", "plan"):
        load_settings({"permissions": {"defaultMode": mode}})
    assert caplog.records == []


def test_claude_code_modes_load_and_the_last_source_wins(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    write(home / ".claude" / "settings.json", {"permissions": {"defaultMode": "acceptEdits"}})
    write(
        project / ".claude" / "settings.json",
        {"permissions": {"allow": ["Bash(npm test)"], "defaultMode": "plan"}},
    )
    guard = GuardRails.from_settings(*default_settings_paths(project, home=home))
    assert guard.permissions.mode == "plan"
    assert guard.permissions.allow == (PermissionRule("Bash", "npm test"),)


def test_hooks_concatenate_in_source_order() -> None:
    def hooks(command: str) -> dict[str, object]:
        return {"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": command}]}]}}

    settings = load_settings(hooks("first"), hooks("second"))
    assert [e.label for e in settings.hooks.entries] == ["first", "second"]


def test_guard_rails_from_settings(tmp_path: Path) -> None:
    path = write(tmp_path / "s.json", {"permissions": {"deny": ["Bash"]}})

    async def callback(
        name: str, tool_input: Mapping[str, JSONValue], tool_use_id: str
    ) -> PermissionResult:
        return PermissionResult.allow()

    guard = GuardRails.from_settings(
        path,
        {"permissions": {"defaultMode": "default"}},
        mode="bypass",
        session_id="s1",
        can_use_tool=callback,
    )
    assert guard.permissions.mode == "bypass"
    assert guard.permissions.deny == (PermissionRule("Bash"),)
    assert guard.session_id == "s1"
    assert guard.can_use_tool is callback
    assert GuardRails.from_settings().permissions.mode == "default"
    named = GuardRails.from_settings(path, mode="bypassPermissions")
    assert named.permissions == guard.permissions


def test_guard_rails_from_settings_refuses_an_unknown_mode() -> None:
    with pytest.raises(ConfigurationError, match="not 'dontask'"):
        GuardRails.from_settings({}, mode="dontask")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ("{not json", r"x\.json: invalid JSON at line 1 column 2"),
        ([1, 2], r"x\.json: expected a JSON object at the top level"),
        ({"permissions": []}, r"x\.json: permissions: expected an object"),
        ({"permissions": {"allow": "Bash"}}, r"x\.json: permissions\.allow: expected a list"),
        (
            {"permissions": {"deny": ["Read", 3]}},
            r"x\.json: permissions\.deny\[1\]: expected a string, got int",
        ),
        (
            {"permissions": {"ask": ["Bash(ls"]}},
            r"x\.json: permissions\.ask\[0\]: rule 'Bash\(ls' has '\(' without a closing '\)'",
        ),
        (
            {"permissions": {"defaultMode": 1}},
            r"x\.json: permissions\.defaultMode: expected a string, got int",
        ),
        (
            {"permissions": {"defaultMode": ["plan"]}},
            r"x\.json: permissions\.defaultMode: expected a string, got list",
        ),
        ({"hooks": []}, r"x\.json: hooks: expected an object"),
        ({"hooks": {"PreToolUse": {}}}, r"x\.json: hooks\.PreToolUse: expected a list"),
        (
            {"hooks": {"PreToolUse": [{"matcher": 1, "hooks": []}]}},
            r"x\.json: hooks\.PreToolUse\[0\]\.matcher: expected a string",
        ),
        (
            {"hooks": {"PostToolUse": [{"matcher": "Bash"}]}},
            r"x\.json: hooks\.PostToolUse\[0\]\.hooks: expected a list",
        ),
        (
            {"hooks": {"PreToolUse": [{"hooks": [{"type": 3, "prompt": "?"}]}]}},
            r"x\.json: hooks\.PreToolUse\[0\]\.hooks\[0\]\.type: expected a string, got int",
        ),
        (
            {"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": ""}]}]}},
            r"x\.json: hooks\.PreToolUse\[0\]\.hooks\[0\]\.command: expected a non-empty string",
        ),
        (
            {
                "hooks": {
                    "PostToolUseFailure": [
                        {"hooks": [{"type": "command", "command": "x"}]},
                        {"hooks": [{"type": "command", "command": "y", "timeout": 0}]},
                    ]
                }
            },
            r"x\.json: hooks\.PostToolUseFailure\[1\]\.hooks\[0\]\.timeout: expected a positive",
        ),
    ],
)
def test_bad_file_names_the_file_and_the_field(tmp_path: Path, data: object, message: str) -> None:
    path = write(tmp_path / "x.json", data)
    with pytest.raises(ConfigurationError, match=message):
        load_settings(path)


def test_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match=r"nope\.json: cannot read"):
        load_settings(tmp_path / "nope.json")


def test_dict_sources_are_numbered() -> None:
    with pytest.raises(ConfigurationError, match=r"<settings #2>: permissions\.allow\[0\]"):
        load_settings({}, {"permissions": {"allow": [None]}})


def test_default_settings_paths(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    managed = tmp_path / "etc"

    def found() -> list[tuple[Path, str]]:
        paths = default_settings_paths(project, home=home, managed_dir=managed)
        return [(file.path, file.scope) for file in paths]

    assert found() == []
    user = write(home / ".claude" / "settings.json", {})
    local = write(project / ".claude" / "settings.local.json", {})
    assert found() == [(user, "user"), (local, "local")]
    shared = write(project / ".claude" / "settings.json", {})
    policy = write(managed / "managed-settings.json", {})
    drop_in = write(managed / "managed-settings.d" / "10-team.json", {})
    assert found() == [
        (user, "user"),
        (shared, "project"),
        (local, "local"),
        (policy, "managed"),
        (drop_in, "managed"),
    ]
