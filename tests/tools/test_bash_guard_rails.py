"""Bash's guard rails end to end: real ``BashTool`` calls through ``run_tools``.

Each test puts harmless victim files in a temporary workspace and checks both
what the model reads and what happened on disk.
"""

from __future__ import annotations

import os
import shutil
from typing import TYPE_CHECKING, Any

import pytest
import trio

from trioexec import GuardRails, PermissionResult, ToolUse, run_tools
from trioexec._texts import command_denied_message, sensitive_file_message
from trioexec.tools import BashTool

if TYPE_CHECKING:
    from pathlib import Path

NOT_GRANTED = "Claude requested permissions to use Bash, but you haven't granted it yet."


async def _run(command: str, cwd: Path, guard: GuardRails | None = None) -> tuple[bool, str]:
    outcome = await run_tools(
        [ToolUse("toolu_1", "Bash", {"command": command})], [BashTool()], cwd=cwd, guard=guard
    )
    (result,) = outcome.results
    content = result.content if isinstance(result.content, str) else str(result.content)
    return result.is_error, content


def _settings(**permissions: Any) -> GuardRails:
    return GuardRails.from_settings({"permissions": permissions})


ISSUE_DENY_REPROS = [
    "find . -name victim -exec rm {} \\;",
    "case x in x) rm victim;; esac",
    "f() { rm -rf victim; }; f",
    "sh -ec 'rm victim'",
    "bash -lc 'rm victim'",
    "bash --norc -c 'rm victim'",
    "bash -c -- 'rm victim'",
    "echo 'rm victim' | sh",
    "bash <<< 'rm victim'",
    "$'\\x72m' victim",
    "{rm,victim}",
    "trap 'rm victim' EXIT",
    "env -S'rm victim'",
    "chrt -o 0 rm victim",
    "taskset -c 0 rm victim",
    "flock lock rm victim",
    "script -qc 'rm victim' /dev/null",
    "watch rm victim",
    "xargs rm <<< victim",
    "timeout 5 rm victim",
    "nice -n 5 rm victim",
    "GIT_SSH_COMMAND='rm victim' git fetch",
    "r\\\nm victim",
]


@pytest.mark.parametrize("command", ISSUE_DENY_REPROS)
async def test_a_deny_rule_stops_every_way_of_running_the_command(
    tmp_path: Path, command: str
) -> None:
    victim = tmp_path / "victim"
    victim.write_text("keep me")
    is_error, content = await _run(command, tmp_path, _settings(deny=["Bash(rm:*)"]))
    assert (is_error, content) == (True, command_denied_message("Bash", command))
    assert victim.read_text() == "keep me"


async def test_the_same_rule_still_lets_other_commands_run(tmp_path: Path) -> None:
    (tmp_path / "victim").write_text("keep me")
    assert await _run("cat victim", tmp_path, _settings(deny=["Bash(rm:*)"])) == (False, "keep me")


@pytest.mark.parametrize("command", ["git -C . push", "git -c x=y push", "git --no-pager push"])
async def test_git_global_options_do_not_lead_around_a_deny_rule(
    tmp_path: Path, command: str
) -> None:
    denied = (True, command_denied_message("Bash", command))
    assert await _run(command, tmp_path, _settings(deny=["Bash(git push:*)"])) == denied


@pytest.mark.parametrize(
    "command", ["rm -fr victim", "rm -r -f victim", "rm --recursive -f victim"]
)
async def test_flag_clusters_in_any_order_meet_a_deny_rule(tmp_path: Path, command: str) -> None:
    victim = tmp_path / "victim"
    victim.mkdir()
    denied = (True, command_denied_message("Bash", command))
    assert await _run(command, tmp_path, _settings(deny=["Bash(rm -rf:*)"])) == denied
    assert victim.is_dir()


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
async def test_cd_into_a_nested_repository_and_git_is_never_auto_allowed(tmp_path: Path) -> None:
    """A nested repository's core.fsmonitor runs a program on `git status`: never unasked."""
    marker = tmp_path / "fsmonitor-ran"
    hook = tmp_path / "fsmonitor.sh"
    hook.write_text(f"#!/bin/sh\ntouch {marker}\nexit 1\n")
    hook.chmod(0o755)
    sub = tmp_path / "sub"
    sub.mkdir()
    await trio.run_process(["git", "init", "-q", str(sub)])
    await trio.run_process(["git", "-C", str(sub), "config", "core.fsmonitor", str(hook)])

    for command in ["cd sub && git status", "git -C sub status", "cd sub; git log"]:
        assert await _run(command, tmp_path) == (True, NOT_GRANTED)
        assert not marker.exists()
    # The documented limit: the working directory's own repository is trusted, as in
    # Claude Code, so this same hook runs for a plain `git status` there.
    is_error, _ = await _run("git status", sub)
    assert not is_error
    assert marker.exists()


def _secrets(tmp_path: Path) -> None:
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "key.pem").write_text("TOP SECRET")
    (tmp_path / "README").write_text("hello")
    os.symlink(tmp_path / "secrets", tmp_path / "docs")


@pytest.mark.parametrize(
    "command",
    [
        "cat secrets/key.pem",
        "cat ./secrets/key.pem",
        "cat docs/key.pem",
        "cat < secrets/key.pem",
        "grep -r SECRET secrets",
        "grep -r SECRET .",
        "cat secre*/key.pem",
        "cd secrets && cat key.pem",
        "bash -c 'cat secrets/key.pem'",
        "head -c 3 secrets/key.pem | wc -c",
        "find . -name key.pem -exec cat {} \\;",
    ],
)
async def test_a_read_deny_rule_covers_the_paths_a_command_reads(
    tmp_path: Path, command: str
) -> None:
    _secrets(tmp_path)
    guard = _settings(deny=["Read(./secrets/**)"], allow=["Bash"])
    is_error, content = await _run(command, tmp_path, guard)
    assert is_error
    assert content.startswith("Permission to"), content
    assert "TOP SECRET" not in content


@pytest.mark.parametrize(
    "command", ["grep -R SECRET src", "rg -L SECRET src", "cat src/a/b/*", "grep -R SECRET ."]
)
async def test_a_symlink_deep_in_a_walked_directory_is_followed_to_the_denied_file(
    tmp_path: Path, command: str
) -> None:
    _secrets(tmp_path)
    deep = tmp_path / "src" / "a" / "b"
    deep.mkdir(parents=True)
    (tmp_path / "src" / "plain.txt").write_text("plain")
    (deep / "innocent.txt").symlink_to(tmp_path / "secrets" / "key.pem")
    guard = _settings(deny=["Read(./secrets/**)"], allow=["Bash"])
    is_error, content = await _run(command, tmp_path, guard)
    assert is_error
    assert content.startswith("Permission to read"), content
    if "src" in command:
        assert content == f"Permission to read {deep / 'innocent.txt'} has been denied."


@pytest.mark.parametrize(
    "command", ["grep -r SECRET src", "grep -rn SECRET src", "ls -R src", "ls src/a/b", "find src"]
)
async def test_a_symlink_a_program_does_not_follow_is_no_read_of_its_target(
    tmp_path: Path, command: str
) -> None:
    """``grep -r`` skips the links it meets, ``ls`` and ``find`` list names (issue 30's
    false positives: a directory holding a link to a denied file is not a read of it)."""
    _secrets(tmp_path)
    deep = tmp_path / "src" / "a" / "b"
    deep.mkdir(parents=True)
    (deep / "innocent.txt").symlink_to(tmp_path / "secrets" / "key.pem")
    guard = _settings(deny=["Read(./secrets/**)"], allow=["Bash"])
    _, content = await _run(command, tmp_path, guard)
    assert not content.startswith("Permission to"), content
    assert "TOP SECRET" not in content


@pytest.mark.parametrize("command", ["ls secrets", "ls -R .", "find secrets", "du -a secrets"])
async def test_listing_a_denied_directory_is_a_read_of_its_names(
    tmp_path: Path, command: str
) -> None:
    _secrets(tmp_path)
    guard = _settings(deny=["Read(./secrets/**)"], allow=["Bash"])
    is_error, content = await _run(command, tmp_path, guard)
    assert is_error
    assert content.startswith("Permission to read"), content


@pytest.mark.parametrize("entries", [10, 300])
async def test_a_denied_file_anywhere_in_a_large_directory_is_found(
    tmp_path: Path, entries: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Small trees are walked in place; one past the in-place budget is walked in a thread."""
    from trioexec.tools import _bash

    hops: list[object] = []
    real_hop = _bash.trio.to_thread.run_sync

    async def hop(fn: object, *args: object, **kwargs: object) -> object:
        hops.append(fn)
        return await real_hop(fn, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(_bash.trio.to_thread, "run_sync", hop)
    tree = tmp_path / "tree"
    tree.mkdir()
    for index in range(entries):
        (tree / f"f{index:03}.txt").write_text("x")
    (tree / "zz").mkdir()
    (tree / "zz" / "key.pem").write_text("TOP SECRET")
    guard = _settings(deny=["Read(./tree/zz/**)"], allow=["Bash"])
    expected = f"Permission to read {tree / 'zz' / 'key.pem'} has been denied."
    assert await _run("grep -r SECRET tree", tmp_path, guard) == (True, expected)
    assert len(hops) == (entries > 64)


@pytest.mark.parametrize("command", ["cat pem", "cat README pem", "wc -c < pem", "cat ./pem"])
async def test_a_symlinked_name_beside_the_working_directory_files_is_followed(
    tmp_path: Path, command: str
) -> None:
    _secrets(tmp_path)
    (tmp_path / "pem").symlink_to(tmp_path / "secrets" / "key.pem")
    guard = _settings(deny=["Read(./secrets/**)"], allow=["Bash"])
    is_error, content = await _run(command, tmp_path, guard)
    assert is_error
    assert content == f"Permission to read {tmp_path / 'pem'} has been denied.", content


async def test_read_deny_rules_hold_in_a_symlinked_working_directory(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    _secrets(real)
    (tmp_path / "alias").symlink_to(real)
    guard = _settings(deny=["Read(./secrets/**)"], allow=["Bash"])
    for command in ("cat secrets/key.pem", "cd secrets && cat key.pem", "grep -r SECRET ."):
        is_error, content = await _run(command, tmp_path / "alias", guard)
        assert is_error, command
        assert content.startswith("Permission to read"), content
    assert await _run("cat README", tmp_path / "alias", guard) == (False, "hello")


async def test_a_read_deny_rule_names_the_path_it_covers(tmp_path: Path) -> None:
    _secrets(tmp_path)
    guard = _settings(deny=["Read(./secrets/**)"])
    expected = f"Permission to read {tmp_path / 'secrets' / 'key.pem'} has been denied."
    assert await _run("cat secrets/key.pem", tmp_path, guard) == (True, expected)


async def test_a_computed_path_is_refused_while_read_deny_rules_are_in_force(
    tmp_path: Path,
) -> None:
    _secrets(tmp_path)
    guard = _settings(deny=["Read(./secrets/**)"], allow=["Bash"])
    is_error, content = await _run("F=secrets/key.pem; cat $F", tmp_path, guard)
    assert is_error
    assert "$F" in content
    assert "TOP SECRET" not in content


async def test_reads_outside_the_denied_paths_still_run_unasked(tmp_path: Path) -> None:
    _secrets(tmp_path)
    guard = _settings(deny=["Read(./secrets/**)"])
    assert await _run("cat README", tmp_path, guard) == (False, "hello")


async def test_an_allow_rule_never_covers_a_redirect_out_of_the_working_directory(
    tmp_path: Path,
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    guard = _settings(allow=["Bash(echo:*)"])
    assert await _run("echo hi > ../outside.txt", work, guard) == (True, NOT_GRANTED)
    assert not (tmp_path / "outside.txt").exists()
    is_error, _ = await _run("echo hi > inside.txt", work, guard)
    assert not is_error
    assert (work / "inside.txt").read_text() == "hi\n"


def _workspace(tmp_path: Path) -> Path:
    for directory in (".git", ".claude", ".vscode", "home"):
        (tmp_path / directory).mkdir()
    (tmp_path / ".git" / "config").write_text("[core]\n")
    (tmp_path / ".claude" / "settings.json").write_text("{}")
    (tmp_path / ".vscode" / "tasks.json").write_text("{}")
    (tmp_path / "home" / ".bashrc").write_text("# rc\n")
    return tmp_path


PROTECTED_WRITES = [
    ("echo x > .git/config", ".git/config"),
    ("echo x >> .claude/settings.json", ".claude/settings.json"),
    ("printf x | tee -a home/.bashrc", "home/.bashrc"),
    ("sed -i s/a/b/ .vscode/tasks.json", ".vscode/tasks.json"),
    ("cp /dev/null .git/hooks/pre-commit", ".git/hooks/pre-commit"),
    ("bash -c 'echo x >> .claude/settings.json'", ".claude/settings.json"),
    ("cd .git && echo x > config", ".git/config"),
    ("npm run test > home/.bashrc", "home/.bashrc"),
]


@pytest.mark.parametrize(("command", "target"), PROTECTED_WRITES)
async def test_a_write_to_a_protected_path_asks_even_in_bypass_mode(
    tmp_path: Path, command: str, target: str
) -> None:
    work = _workspace(tmp_path)
    before = {p: p.read_bytes() for p in work.rglob("*") if p.is_file()}
    guard = GuardRails.from_settings({"permissions": {"allow": ["Bash"]}}, mode="bypass")
    is_error, content = await _run(command, work, guard)
    assert (is_error, content) == (True, sensitive_file_message(str(work / target)))
    assert {p: p.read_bytes() for p in work.rglob("*") if p.is_file()} == before


async def test_a_computed_write_target_asks_even_in_bypass_mode(tmp_path: Path) -> None:
    guard = GuardRails.from_settings({}, mode="bypass")
    is_error, content = await _run("F=.git/config; echo x > $F", tmp_path, guard)
    assert is_error
    assert "$F" in content
    assert not (tmp_path / ".git").exists()


async def test_the_application_may_approve_a_protected_write(tmp_path: Path) -> None:
    work = _workspace(tmp_path)
    asked: list[str] = []

    async def approve(tool_name: str, tool_input: Any, tool_use_id: str) -> PermissionResult:
        asked.append(str(tool_input["command"]))
        return PermissionResult.allow()

    guard = GuardRails.from_settings({}, mode="bypass", can_use_tool=approve)
    assert await _run("echo x >> .git/config", work, guard) == (
        False,
        "(Bash completed with no output)",
    )
    assert asked == ["echo x >> .git/config"]
    assert (work / ".git" / "config").read_text() == "[core]\nx\n"


async def test_ordinary_writes_still_run_in_bypass_mode(tmp_path: Path) -> None:
    guard = GuardRails.from_settings({}, mode="bypass")
    is_error, _ = await _run("echo x > out.txt && echo y > /dev/null", tmp_path, guard)
    assert not is_error
    assert (tmp_path / "out.txt").read_text() == "x\n"
