"""``protected_path_reason``: which write targets always ask, in every spelling.

Claude Code's permission-modes documentation lists the protected paths that
are never auto-approved: the directories ``.git``, ``.vscode``, ``.idea``,
``.husky`` and ``.claude``, and the files ``.gitconfig``, ``.gitmodules``,
``.bashrc``, ``.bash_profile``, ``.zshrc``, ``.zprofile``, ``.profile``,
``.ripgreprc``, ``.mcp.json`` and ``.claude.json``.  trioexec protects those
and more shell start-up files; these tests pin the list and show that
``..``, ``~``, case and symlinks do not lead around it.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trioexec._guard._protected import (
    PROTECTED_DIRS,
    PROTECTED_FILES,
    protected_path_reason,
)

if TYPE_CHECKING:
    from pathlib import Path

CWD = "/work/project"
HOME = "/home/me"


def reason(path: str, **kwargs: object) -> str | None:
    return protected_path_reason(path, cwd=CWD, home=HOME, environ={}, **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "path",
    [
        ".git/config",
        ".git/hooks/pre-commit",
        ".git",
        "sub/repo/.git/config",
        ".git/modules/lib/hooks/post-checkout",
        ".claude/settings.json",
        ".claude/settings.local.json",
        ".claude/hooks/check.sh",
        ".vscode/tasks.json",
        ".vscode/settings.json",
        ".idea/workspace.xml",
        ".husky/pre-commit",
        "~/.bashrc",
        "~/.bash_profile",
        "~/.bash_login",
        "~/.bash_logout",
        "~/.profile",
        "~/.zshrc",
        "~/.zprofile",
        "~/.zshenv",
        "~/.zlogin",
        "~/.config/fish/config.fish",
        "~/.config/fish/functions/ls.fish",
        "~/.gitconfig",
        "~/.config/git/config",
        "~/.mcp.json",
        ".mcp.json",
        "~/.claude.json",
        "~/.ripgreprc",
        ".gitmodules",
        "/etc/gitconfig",
        "/etc/profile",
        "/etc/profile.d/proxy.sh",
        "/etc/bash.bashrc",
        "srv/project.git/config",
    ],
)
def test_documented_protected_paths_are_protected(path: str) -> None:
    assert reason(path) is not None


@pytest.mark.parametrize(
    "path",
    [
        "src/app.py",
        "README.md",
        ".gitignore",
        ".gitattributes",
        ".github/workflows/ci.yml",
        "docs/git/config.md",
        "notes.git",
        "gitconfig.txt",
        "bashrc",
        "~/notes/.claude-notes.md",
        "/etc/hosts-notes",
        "/tmp/x",
    ],
)
def test_ordinary_paths_are_not_protected(path: str) -> None:
    assert reason(path) is None


@pytest.mark.parametrize(
    "spelling",
    [
        "./.git/config",
        "a/../.git/config",
        "a/b/../../.git/config",
        f"{CWD}/.git/config",
        "//work/project/.git/config",
        ".GIT/config",
        ".Git/config",
        ".git./config",
        ".git /config",
        ".git::$INDEX_ALLOCATION/config",
        "src/../../project/.git/hooks/x",
    ],
)
def test_every_spelling_of_a_git_path_is_protected(spelling: str) -> None:
    assert reason(spelling) is not None


def test_the_reason_names_what_the_path_is() -> None:
    assert reason(".git/config") == (
        "inside a .git directory: git runs the hooks and programs configured there"
    )
    assert reason(".git") == "a .git directory: git runs the hooks and programs configured there"
    assert reason("~/.bashrc") == ".bashrc is a shell start-up file"
    assert reason("/etc/profile.d/x.sh") == "in /etc/profile.d: a system-wide shell start-up file"


def test_xdg_config_home_is_honoured() -> None:
    env = {"XDG_CONFIG_HOME": "/cfg"}
    assert protected_path_reason("/cfg/git/config", cwd=CWD, environ=env) is not None
    assert protected_path_reason("/cfg/fish/config.fish", cwd=CWD, environ=env) is not None
    assert protected_path_reason("/cfg/app/settings.ini", cwd=CWD, environ=env) is None


def test_a_symlinked_directory_into_git_is_resolved(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "innocent").symlink_to(tmp_path / ".git")
    found = protected_path_reason("innocent/config", cwd=tmp_path, environ={})
    assert found is not None
    assert "resolves to" in found
    assert str(tmp_path / ".git" / "config") in found


def test_a_symlinked_file_to_a_start_up_file_is_resolved(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / ".bashrc").write_text("")
    (tmp_path / "notes.txt").symlink_to(home / ".bashrc")
    assert protected_path_reason("notes.txt", cwd=tmp_path, environ={}) is not None


def test_a_dangling_symlink_into_git_is_resolved(tmp_path: Path) -> None:
    (tmp_path / "new.txt").symlink_to(tmp_path / ".git" / "config")
    assert protected_path_reason("new.txt", cwd=tmp_path, environ={}) is not None


def test_a_symlink_loop_is_treated_as_protected(tmp_path: Path) -> None:
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    found = protected_path_reason("a", cwd=tmp_path, environ={})
    assert found is not None
    assert "cannot be resolved" in found


def test_a_symlink_out_of_git_is_judged_by_where_it_is_written(tmp_path: Path) -> None:
    # Writing .git/x is protected even when .git/x points at an ordinary file.
    (tmp_path / ".git").mkdir()
    (tmp_path / "plain.txt").write_text("")
    (tmp_path / ".git" / "x").symlink_to(tmp_path / "plain.txt")
    assert protected_path_reason(".git/x", cwd=tmp_path, environ={}) is not None


def test_hard_links_are_protected_only_when_asked(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text("[core]\n")
    os.link(tmp_path / ".git" / "config", tmp_path / "alias")
    assert protected_path_reason("alias", cwd=tmp_path, environ={}) is None
    found = protected_path_reason("alias", cwd=tmp_path, environ={}, hard_links=True)
    assert found is not None
    assert "hard links" in found


def test_a_nul_byte_is_refused() -> None:
    with pytest.raises(ValueError, match="NUL"):
        reason(".git\0/config")


_SEGMENT = st.text(alphabet="abcxyz_-.", min_size=1, max_size=6).filter(
    lambda s: s not in (".", "..")
)


@st.composite
def _spelled(draw: st.DrawFn, target: str) -> str:
    """``target`` (relative to CWD) written with detours: ``x/..``, ``./``, absolute."""
    parts = target.split("/")
    out: list[str] = []
    for part in parts:
        if draw(st.booleans()):
            out.append(draw(_SEGMENT) + "/..")
        if draw(st.booleans()):
            out.append(".")
        out.append(part)
    spelled = "/".join(out)
    return f"{CWD}/{spelled}" if draw(st.booleans()) else spelled


@settings(max_examples=200, deadline=None)
@given(
    directory=st.sampled_from(sorted(PROTECTED_DIRS)),
    above=st.lists(_SEGMENT, max_size=3),
    below=st.lists(_SEGMENT, max_size=3),
    data=st.data(),
)
def test_any_spelling_of_a_path_in_a_protected_directory_is_protected(
    directory: str, above: list[str], below: list[str], data: st.DataObject
) -> None:
    target = "/".join([*above, directory, *below])
    spelled = data.draw(_spelled(target))
    assert reason(spelled) is not None, spelled


@settings(max_examples=100, deadline=None)
@given(
    name=st.sampled_from(sorted(PROTECTED_FILES)),
    above=st.lists(_SEGMENT, max_size=3),
    upper=st.booleans(),
    data=st.data(),
)
def test_any_spelling_of_a_protected_file_name_is_protected(
    name: str, above: list[str], upper: bool, data: st.DataObject
) -> None:
    target = "/".join([*above, name.upper() if upper else name])
    assert reason(data.draw(_spelled(target))) is not None
