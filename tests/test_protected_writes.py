"""Writes to protected paths always ask: in bypass mode, against allow rules and hook allows.

Claude Code's permission-modes documentation lists protected paths (``.git``,
``.vscode``, ``.idea``, ``.husky``, ``.claude``; ``.gitconfig``,
``.gitmodules``, shell start-up files such as ``.bashrc``, ``.zshrc`` and
``.profile``, ``.ripgreprc``, ``.mcp.json``, ``.claude.json``) whose writes are
never approved automatically.  trioexec asks for them in every mode, bypass
included; with no ``can_use_tool`` to answer, the call is denied with Claude
Code's text ``Claude requested permissions to edit {path} which is a
sensitive file.``  Every test runs the real tools through ``run_tools`` on
victim files in a temporary directory and checks the file system afterwards.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs
import pytest

from trioexec import (
    CallContext,
    GuardRails,
    PermissionResult,
    ProgressSender,
    Tool,
    ToolUse,
    function_tool,
    run_tools,
)
from trioexec._texts import REJECT_MESSAGE
from trioexec.hooks import HookInput, HookOutput, HookSet
from trioexec.permissions import PathAccess, PermissionContext
from trioexec.tools import default_tools

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from pathlib import Path

    from trioexec import JSONValue


def sensitive(path: Path | str) -> str:
    return f"Claude requested permissions to edit {path} which is a sensitive file."


async def run_one(
    cwd: Path,
    name: str,
    tool_input: Mapping[str, JSONValue],
    guard: GuardRails | None,
    tools: Sequence[Tool[Any]] | None = None,
) -> tuple[str, bool]:
    use = ToolUse("toolu_1", name, dict(tool_input))
    outcome = await run_tools(
        [use], list(tools) if tools is not None else default_tools(), cwd=cwd, guard=guard
    )
    (result,) = outcome.results
    return str(result.content), result.is_error


def repo(tmp_path: Path) -> Path:
    """A project with ``.git/config``, ``.claude/settings.json`` and ``innocent -> .git``."""
    (tmp_path / ".git" / "hooks").mkdir(parents=True)
    (tmp_path / ".git" / "config").write_text("[core]\n")
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text("{}\n")
    (tmp_path / "src").mkdir()
    (tmp_path / "innocent").symlink_to(".git")
    return tmp_path


def snapshot(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): p.read_text()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


BYPASS = GuardRails(PermissionContext(mode="bypass"))


@pytest.mark.parametrize(
    ("file_path", "lands_at"),
    [
        (".git/config", ".git/config"),
        (".git/hooks/pre-commit", ".git/hooks/pre-commit"),
        ("src/../.git/config", ".git/config"),
        ("./.git/hooks/post-checkout", ".git/hooks/post-checkout"),
        ("innocent/config", ".git/config"),
        ("innocent/hooks/pre-commit", ".git/hooks/pre-commit"),
        (".claude/settings.json", ".claude/settings.json"),
        (".claude/settings.local.json", ".claude/settings.local.json"),
        (".vscode/tasks.json", ".vscode/tasks.json"),
        (".idea/workspace.xml", ".idea/workspace.xml"),
        (".husky/pre-commit", ".husky/pre-commit"),
        ("sub/.git/config", "sub/.git/config"),
        (".gitmodules", ".gitmodules"),
        (".mcp.json", ".mcp.json"),
    ],
)
async def test_bypass_mode_does_not_write_a_protected_project_path(
    tmp_path: Path, file_path: str, lands_at: str
) -> None:
    cwd = repo(tmp_path)
    before = snapshot(cwd)
    text, is_error = await run_one(cwd, "Write", {"file_path": file_path, "content": "X"}, BYPASS)
    assert is_error
    assert text == sensitive(cwd / file_path.removeprefix("./").replace("src/../", ""))
    assert snapshot(cwd) == before
    assert not (cwd / lands_at).exists() or (cwd / lands_at).read_text() != "X"


@pytest.mark.parametrize(
    "name",
    [".bashrc", ".bash_profile", ".zshrc", ".zprofile", ".profile", ".gitconfig", ".zshenv"],
)
async def test_bypass_mode_does_not_write_a_home_start_up_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / name).write_text("# mine\n")
    cwd = tmp_path / "project"
    cwd.mkdir()
    monkeypatch.setenv("HOME", str(home))
    text, _ = await run_one(cwd, "Write", {"file_path": f"~/{name}", "content": "evil"}, BYPASS)
    assert text == sensitive(home / name)
    assert (home / name).read_text() == "# mine\n"


async def test_bypass_mode_does_not_write_the_xdg_git_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    text, _ = await run_one(
        tmp_path, "Write", {"file_path": "~/.config/git/config", "content": "X"}, BYPASS
    )
    assert text == sensitive(tmp_path / ".config" / "git" / "config")
    assert not (tmp_path / ".config").exists()


async def test_edit_of_a_protected_file_asks_in_bypass_mode(tmp_path: Path) -> None:
    cwd = repo(tmp_path)
    edit = {"file_path": "innocent/config", "old_string": "[core]", "new_string": "[core]\n x=1"}
    text, _ = await run_one(cwd, "Edit", edit, BYPASS)
    assert text == sensitive(cwd / "innocent" / "config")
    assert (cwd / ".git" / "config").read_text() == "[core]\n"


async def test_default_mode_answers_with_the_sensitive_file_text(tmp_path: Path) -> None:
    cwd = repo(tmp_path)
    text, _ = await run_one(
        cwd, "Write", {"file_path": ".git/config", "content": "X"}, GuardRails()
    )
    assert text == sensitive(cwd / ".git" / "config")


async def test_allow_rules_do_not_skip_the_question(tmp_path: Path) -> None:
    cwd = repo(tmp_path)
    guard = GuardRails(PermissionContext(allow=["Write", "Edit", "Edit(./.git/**)"], mode="bypass"))
    text, _ = await run_one(cwd, "Write", {"file_path": ".git/config", "content": "X"}, guard)
    assert text == sensitive(cwd / ".git" / "config")
    assert (cwd / ".git" / "config").read_text() == "[core]\n"


async def test_a_hook_allow_does_not_skip_the_question(tmp_path: Path) -> None:
    cwd = repo(tmp_path)

    async def allow_all(event: HookInput) -> HookOutput:
        return HookOutput(permission_decision="allow")

    hooks = HookSet().with_python_hook("PreToolUse", "*", allow_all)
    guard = GuardRails(PermissionContext(mode="bypass"), hooks)
    text, _ = await run_one(cwd, "Write", {"file_path": ".git/config", "content": "X"}, guard)
    assert text == sensitive(cwd / ".git" / "config")
    assert (cwd / ".git" / "config").read_text() == "[core]\n"


async def test_a_deny_rule_still_denies_a_protected_path(tmp_path: Path) -> None:
    cwd = repo(tmp_path)
    guard = GuardRails(PermissionContext(deny=["Edit(./.git/**)"], mode="bypass"))
    text, _ = await run_one(cwd, "Write", {"file_path": ".git/config", "content": "X"}, guard)
    assert text == f"Permission to edit {cwd / '.git' / 'config'} has been denied."


class Answer:
    """A ``can_use_tool`` that records what it was asked and answers ``result``."""

    def __init__(self, result: PermissionResult) -> None:
        self.result = result
        self.asked: list[tuple[str, dict[str, JSONValue]]] = []

    async def __call__(
        self, name: str, tool_input: Mapping[str, JSONValue], tool_use_id: str
    ) -> PermissionResult:
        self.asked.append((name, dict(tool_input)))
        return self.result


async def test_the_application_can_approve_a_protected_write(tmp_path: Path) -> None:
    cwd = repo(tmp_path)
    answer = Answer(PermissionResult.allow())
    guard = GuardRails(PermissionContext(mode="bypass"), can_use_tool=answer)
    tool_input = {"file_path": "innocent/hooks/pre-commit", "content": "#!/bin/sh\n"}
    text, is_error = await run_one(cwd, "Write", tool_input, guard)
    assert not is_error, text
    assert answer.asked == [("Write", tool_input)]
    assert (cwd / ".git" / "hooks" / "pre-commit").read_text() == "#!/bin/sh\n"


async def test_the_application_can_refuse_a_protected_write(tmp_path: Path) -> None:
    cwd = repo(tmp_path)
    answer = Answer(PermissionResult.deny(""))
    guard = GuardRails(PermissionContext(mode="bypass"), can_use_tool=answer)
    text, _ = await run_one(cwd, "Write", {"file_path": ".git/config", "content": "X"}, guard)
    assert text == REJECT_MESSAGE
    assert len(answer.asked) == 1
    assert (cwd / ".git" / "config").read_text() == "[core]\n"


async def test_reading_a_protected_path_is_not_asked(tmp_path: Path) -> None:
    cwd = repo(tmp_path)
    text, is_error = await run_one(cwd, "Read", {"file_path": ".git/config"}, BYPASS)
    assert not is_error
    assert "[core]" in text


@attrs.frozen
class SaveInput:
    path: str
    text: str


@function_tool(input_type=SaveInput, path_access=PathAccess("path", writes=True))
async def save(args: SaveInput, ctx: CallContext, progress: ProgressSender) -> str:
    """A user's writing tool; its own check allows everything (the default)."""
    (ctx.cwd / args.path).write_text(args.text)
    return "saved"


@function_tool(input_type=SaveInput)
async def undeclared(args: SaveInput, ctx: CallContext, progress: ProgressSender) -> str:
    """A writing tool that does not say so: trioexec cannot know what it writes."""
    return "not run"


@pytest.mark.parametrize("guard", [None, BYPASS], ids=["no guard", "bypass"])
async def test_a_user_tool_declaring_writes_asks_for_a_protected_path(
    tmp_path: Path, guard: GuardRails | None
) -> None:
    cwd = repo(tmp_path)
    text, _ = await run_one(cwd, "save", {"path": "innocent/config", "text": "X"}, guard, [save])
    assert text == sensitive(cwd / "innocent" / "config")
    assert (cwd / ".git" / "config").read_text() == "[core]\n"
    text, _ = await run_one(cwd, "save", {"path": "src/ok.txt", "text": "X"}, guard, [save])
    assert text == "saved"


async def test_a_tool_without_a_declaration_is_not_judged_by_path(tmp_path: Path) -> None:
    """The limit: a tool that writes without declaring ``path_access`` is not recognised."""
    cwd = repo(tmp_path)
    text, _ = await run_one(
        cwd, "undeclared", {"path": ".git/config", "text": "X"}, BYPASS, [undeclared]
    )
    assert text == "not run"


class Cautious(Tool[dict[str, Any]]):
    """A tool whose own check asks as a safety check."""

    name = "cautious"

    async def check_permissions(self, input: dict[str, Any], ctx: CallContext) -> PermissionResult:  # noqa: A002
        return PermissionResult.ask("cautious wants a person to look first", safety_check=True)

    async def call(self, input: dict[str, Any], ctx: CallContext, progress: ProgressSender) -> str:  # noqa: A002
        return "ran"


@pytest.mark.parametrize(
    "guard",
    [
        GuardRails(PermissionContext(allow=["cautious"], mode="bypass")),
        GuardRails(PermissionContext(mode="bypass")),
        None,
    ],
    ids=["allow rule and bypass", "bypass", "no guard"],
)
async def test_a_tools_own_safety_check_holds_against_allow_rules_and_bypass(
    tmp_path: Path, guard: GuardRails | None
) -> None:
    text, is_error = await run_one(tmp_path, "cautious", {}, guard, [Cautious()])
    assert (text, is_error) == ("cautious wants a person to look first", True)


async def test_a_tools_own_safety_check_goes_to_the_application(tmp_path: Path) -> None:
    answer = Answer(PermissionResult.allow())
    guard = GuardRails(PermissionContext(allow=["cautious"], mode="bypass"), can_use_tool=answer)
    text, _ = await run_one(tmp_path, "cautious", {}, guard, [Cautious()])
    assert text == "ran"
    assert answer.asked == [("cautious", {})]
