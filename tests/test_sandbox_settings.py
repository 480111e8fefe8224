"""The ``sandbox`` key of Claude Code's settings: merge rules, path prefixes, problems told."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trioexec import ConfigurationError
from trioexec._guard._rails import GuardRails
from trioexec._guard._sandbox import Sandbox, SandboxPath, SandboxSettings, parse_sandbox
from trioexec._guard._sandbox._rule_paths import rule_paths
from trioexec._guard._settings import SettingsFile, load_settings

HOME = Path("/home/me")
CWD = Path("/work/project")


def write(path: Path, data: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_booleans_come_from_the_highest_precedence_file_that_sets_them() -> None:
    settings = load_settings(
        {"sandbox": {"enabled": True, "autoAllowBashIfSandboxed": False}},
        {"sandbox": {"enabled": False}},
        {"sandbox": {"network": {"allowedDomains": ["example.org"]}}},  # sets no boolean
    )
    assert settings.sandbox.enabled is False
    assert settings.sandbox.auto_allow_bash_if_sandboxed is False


def test_lists_merge_across_files() -> None:
    settings = load_settings(
        {"sandbox": {"excludedCommands": ["docker *"], "network": {"allowedDomains": ["a.org"]}}},
        {"sandbox": {"excludedCommands": ["podman *"], "network": {"allowedDomains": ["b.org"]}}},
    )
    assert settings.sandbox.excluded_commands == ("docker *", "podman *")
    assert settings.sandbox.allowed_domains == ("a.org", "b.org")


def test_defaults_are_claude_codes() -> None:
    empty = SandboxSettings()
    assert not empty.is_enabled
    assert empty.auto_allow  # autoAllowBashIfSandboxed: default true
    assert empty.allows_unsandboxed  # allowUnsandboxedCommands: default true


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("/abs/dir", Path("/abs/dir")),
        ("//abs/dir", Path("/abs/dir")),
        ("~/.ssh", HOME / ".ssh"),
        ("./build", CWD / "build"),
        ("build", CWD / "build"),
        ("build/../out", CWD / "out"),
    ],
)
def test_filesystem_entries_use_the_sandbox_prefixes(text: str, expected: Path) -> None:
    # In sandbox.filesystem a leading / is absolute: the opposite of Read(...) rules.
    assert SandboxPath(text, CWD).resolve(CWD, HOME) == expected


def test_user_settings_entries_are_relative_to_the_claude_directory(tmp_path: Path) -> None:
    user = write(
        tmp_path / "home" / ".claude" / "settings.json",
        {"sandbox": {"filesystem": {"allowWrite": ["cache", "/abs/**"]}}},
    )
    project = write(
        tmp_path / "proj" / ".claude" / "settings.json",
        {"sandbox": {"filesystem": {"allowWrite": ["./out/"]}}},
    )
    settings = load_settings(SettingsFile(user, "user"), SettingsFile(project, "project"))
    resolved = [p.resolve(CWD, HOME) for p in settings.sandbox.allow_write]
    assert resolved == [
        tmp_path / "home" / ".claude" / "cache",
        Path("/abs"),  # the trailing /** stripped
        tmp_path / "proj" / "out",
    ]


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("/secrets", CWD / "secrets"),  # project-relative in a rule
        ("//etc/secrets", Path("/etc/secrets")),
        ("~/.aws/**", HOME / ".aws"),
        ("./config/prod.env", CWD / "config" / "prod.env"),
    ],
)
def test_rule_paths_use_the_rule_prefixes(content: str, expected: Path) -> None:
    assert rule_paths([content], CWD, HOME, expand=False) == [expected]


def test_read_patterns_are_expanded_and_write_patterns_skipped(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    for name in ("a/.env", "a/b/.env", ".env", "a/b/keep.txt"):
        (tmp_path / name).write_text("x", encoding="utf-8")
    found = rule_paths([".env"], tmp_path, HOME, expand=True)
    assert sorted(found) == sorted(tmp_path / n for n in (".env", "a/.env", "a/b/.env"))
    assert rule_paths(["**/*.txt"], tmp_path, HOME, expand=True) == [tmp_path / "a/b/keep.txt"]
    assert rule_paths(["**/*.txt"], tmp_path, HOME, expand=False) == []


def test_problems_are_told_and_the_rest_loads(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, "trioexec.settings")
    settings = load_settings(
        {
            "sandbox": {
                "enabeld": True,
                "bwrapPath": "/opt/bwrap",
                "credentials": {"files": []},
                "filesystem": {"alowWrite": ["x"], "allowWrite": ["*.log", "out"]},
                "network": {"allowedDomain": ["x.org"], "tlsTerminate": True},
            }
        }
    )
    text = "\n".join(settings.problems)
    assert "sandbox.enabeld: unknown key (did you mean 'enabled'?)" in text
    assert "sandbox.bwrapPath: only managed settings may set it" in text
    assert "sandbox.credentials: secret masking in the proxy is not implemented" in text
    assert "sandbox.filesystem.alowWrite: unknown key (did you mean 'allowWrite'?)" in text
    assert "sandbox.filesystem.allowWrite[0]: '*.log' is a pattern" in text
    assert "sandbox.network.allowedDomain: unknown key (did you mean 'allowedDomains'?)" in text
    assert "sandbox.network.tlsTerminate: TLS termination is not implemented" in text
    assert settings.sandbox.bwrap_path is None
    assert [p.text for p in settings.sandbox.allow_write] == ["out"]
    assert len(caplog.records) == len(settings.problems)


@pytest.mark.parametrize(
    ("sandbox", "message"),
    [
        ([], "sandbox: expected an object"),
        ({"enabled": "yes"}, "sandbox.enabled: expected true or false"),
        ({"excludedCommands": "docker"}, "sandbox.excludedCommands: expected a list"),
        ({"filesystem": {"denyRead": [1]}}, "sandbox.filesystem.denyRead[0]: expected a string"),
        ({"network": []}, "sandbox.network: expected an object"),
        ({"bwrapPath": "bwrap"}, "sandbox.bwrapPath: expected an absolute path"),
    ],
)
def test_a_wrong_type_is_an_error_naming_the_field(sandbox: object, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message.replace("[", r"\[").replace("]", r"\]")):
        load_settings({"sandbox": sandbox})


def test_managed_settings_may_name_the_executables(tmp_path: Path) -> None:
    managed = write(tmp_path / "managed-settings.json", {"sandbox": {"bwrapPath": "/opt/bwrap"}})
    settings = load_settings(SettingsFile(managed, "managed"))
    assert settings.sandbox.bwrap_path == "/opt/bwrap"
    assert settings.problems == ()


def test_fail_if_unavailable_is_one_error_when_the_guard_rails_are_built(tmp_path: Path) -> None:
    managed = write(
        tmp_path / "managed-settings.json",
        {
            "sandbox": {
                "enabled": True,
                "failIfUnavailable": True,
                "bwrapPath": str(tmp_path / "no-bwrap"),
            }
        },
    )
    with pytest.raises(ConfigurationError, match=r"failIfUnavailable are true, but .*no-bwrap"):
        GuardRails.from_settings(SettingsFile(managed, "managed"))


def test_without_fail_if_unavailable_a_warning_once_and_no_confinement(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, "trioexec.sandbox")
    managed = write(
        tmp_path / "managed-settings.json",
        {"sandbox": {"enabled": True, "bwrapPath": str(tmp_path / "missing-bwrap")}},
    )
    first = GuardRails.from_settings(SettingsFile(managed, "managed"))
    second = GuardRails.from_settings(SettingsFile(managed, "managed"))
    assert first.sandbox is not None
    assert not first.sandbox.active
    assert second.sandbox is not None
    assert not second.sandbox.confines("echo hi")
    warned = [r for r in caplog.records if r.name == "trioexec.sandbox"]
    assert len(warned) == 1
    assert "commands run unconfined" in warned[0].getMessage()


def test_guard_rails_have_no_sandbox_unless_enabled() -> None:
    assert GuardRails.from_settings({"sandbox": {"enabled": False}}).sandbox is None
    assert GuardRails.from_settings({}).sandbox is None


def test_settings_check_shows_the_sandbox(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from trioexec._cli import main

    path = write(tmp_path / "s.json", {"sandbox": {"network": {"deniedDomains": ["x.org"]}}})
    assert main(["settings", "check", str(path)]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["sandbox"]["enabled"] is False
    assert shown["sandbox"]["network"]["deniedDomains"] == ["x.org"]
    assert shown["sandbox"]["autoAllowBashIfSandboxed"] is True


_BOOLS = st.none() | st.booleans()


@settings(max_examples=60)
@given(st.lists(st.tuples(_BOOLS, st.lists(st.sampled_from("abc"), max_size=3)), max_size=4))
def test_merging_keeps_the_last_set_boolean_and_every_list_entry(
    files: list[tuple[bool | None, list[str]]],
) -> None:
    merged = SandboxSettings()
    for enabled, commands in files:
        merged = merged.merged(SandboxSettings(enabled=enabled, excluded_commands=tuple(commands)))
    set_values = [enabled for enabled, _ in files if enabled is not None]
    assert merged.enabled == (set_values[-1] if set_values else None)
    assert set(merged.excluded_commands) == {c for _, cs in files for c in cs}


def test_parse_sandbox_reports_through_the_callback() -> None:
    seen: list[tuple[str, str]] = []
    parse_sandbox(
        {"ripgrep": {}, "bogus": 1},
        name="f",
        managed=False,
        root=None,
        report=lambda field, problem: seen.append((field, problem)),
    )
    assert [field for field, _ in seen] == ["sandbox.bogus"]  # ripgrep is Claude Code's own key


def test_a_sandbox_built_directly_needs_no_settings_file() -> None:
    sandbox = Sandbox(SandboxSettings(enabled=True, excluded_commands=("docker *",)), "/bwrap")
    assert sandbox.confines("make test")
    assert not sandbox.confines("make && docker run x")  # any part matching: unconfined
    assert not sandbox.confines("make", disable=True)
    strict = Sandbox(SandboxSettings(enabled=True, allow_unsandboxed_commands=False), "/bwrap")
    assert strict.confines("make", disable=True)


def test_settings_check_shows_what_a_command_would_run_under(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from trioexec._cli import main
    from trioexec._guard._sandbox import probe_bwrap

    monkeypatch.chdir(tmp_path)
    (tmp_path / ".env").write_text("x", encoding="utf-8")
    path = write(
        tmp_path / "s.json",
        {"sandbox": {"enabled": True}, "permissions": {"deny": ["Read(.env)"]}},
    )
    assert main(["settings", "check", str(path)]) == 0
    in_force = json.loads(capsys.readouterr().out)["sandbox"]["inForce"]
    if probe_bwrap(None) is not None:
        assert in_force["bubblewrap"] is None
        assert in_force["unconfined"]
        return
    assert str(tmp_path) in in_force["writable"]
    assert in_force["unreadable"] == [str(tmp_path / ".env")]  # from the Read deny rule
