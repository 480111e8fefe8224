"""The Glob tool: patterns, ordering, truncation and bad input."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from harness import tool_context, validate_and_call
from helpers import (
    call_context,
    ignore_progress,
    proves,
)

from trioexec.tools import (
    GlobInput,
    GlobTool,
)
from trioexec.tools._glob import MAX_RESULTS, TRUNCATED_NOTE
from trioexec.tools._globs import compile_glob, expand_braces


async def glob(cwd: Path, pattern: str, path: str | None = None, root: Path | None = None) -> str:
    out = await validate_and_call(GlobTool(root), GlobInput(pattern, path), cwd)
    assert isinstance(out, str)
    return out


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    files = ["a.py", "b.txt", "src/c.py", "src/deep/d.py", "src/e.ts", ".git/hook.py"]
    for age, name in enumerate(files):
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(name)
        os.utime(path, (1_000_000 + age, 1_000_000 + age))  # later in the list = newer
    return tmp_path


async def test_star_stays_in_one_directory(tree: Path) -> None:
    assert await glob(tree, "*.py") == "a.py"


async def test_double_star_descends_oldest_first(tree: Path) -> None:
    # Claude Code 2.1.88 lists with rg --sort=modified: oldest first.
    assert await glob(tree, "**/*.py") == "a.py\nsrc/c.py\nsrc/deep/d.py"


async def test_braces_give_alternatives(tree: Path) -> None:
    assert await glob(tree, "src/*.{py,ts}") == "src/c.py\nsrc/e.ts"


async def test_path_sets_the_directory(tree: Path) -> None:
    assert await glob(tree, "*.py", "src") == "src/c.py"


async def test_results_outside_the_cwd_are_absolute(tree: Path) -> None:
    assert await glob(tree / "src", "*.py", str(tree)) == str(tree / "a.py")


async def test_an_absolute_pattern(tree: Path) -> None:
    assert await glob(Path("/"), f"{tree}/src/**/*.py") == (
        f"{tree}/src/c.py\n{tree}/src/deep/d.py"
    )


async def test_no_match(tree: Path) -> None:
    assert await glob(tree, "*.rs") == "No files found"


async def test_many_matches_are_truncated(tmp_path: Path) -> None:
    for i in range(MAX_RESULTS + 5):
        (tmp_path / f"f{i:03}.txt").write_text("")
        os.utime(tmp_path / f"f{i:03}.txt", (1_000_000, 1_000_000))
    lines = (await glob(tmp_path, "*.txt")).split("\n")
    assert len(lines) == MAX_RESULTS + 1
    assert lines[0] == "f000.txt"
    assert lines[-1] == TRUNCATED_NOTE


async def test_missing_directory_and_a_file_as_directory(tree: Path) -> None:
    assert await glob(tree, "*", "nope") == "Directory does not exist: nope"
    assert await glob(tree, "*", "a.py") == "Path is not a directory: a.py"


async def test_bad_patterns(tree: Path) -> None:
    assert await glob(tree, "") == "Invalid glob pattern '': the pattern is empty"
    assert await glob(tree, "*/../*") == (
        "Invalid glob pattern '*/../*': '..' may only come before the first wildcard."
    )


async def test_the_root_cannot_be_left(tree: Path) -> None:
    root = tree / "src"
    message = f"is outside the workspace root {root}"
    assert message in await glob(root, "*", "..", root=root)
    assert message in await glob(root, "../*.py", root=root)
    assert message in await glob(root, f"{tree}/*.py", root=root)
    assert await glob(root, "**/*.py", root=root) == "c.py\ndeep/d.py"


@pytest.mark.parametrize(
    ("pattern", "path", "allowed"),
    [
        ("**/*.py", None, True),
        ("src/*.py", None, True),
        ("{src,a}/*", None, True),
        ("src/../*", None, True),
        ("../*", None, False),
        ("src/../../*", None, False),
        ("{src,..}/*", None, False),
        ("OUTSIDE/*", None, False),
        ("/*", None, False),
        ("~/*", None, False),
        ("link/*", None, False),
        ("*", "..", False),
        ("src/*", "/nonexistent-dir", False),
    ],
)
async def test_permission_follows_the_base_the_pattern_moves_to(
    tree: Path, pattern: str, path: str | None, allowed: bool
) -> None:
    project = tree / "src"
    outside = tree.parent / f"{tree.name}-outside"
    outside.mkdir()
    (project / "src").mkdir()
    (project / "link").symlink_to(outside)
    glob_input = GlobInput(pattern.replace("OUTSIDE", str(outside)), path)
    tool = GlobTool()
    result = await tool.check_permissions(glob_input, tool_context(tool, project))
    assert (result.behavior == "allow") is allowed


def test_glob_translation() -> None:
    assert compile_glob("**/*.py").fullmatch("a/b/c.py")
    assert compile_glob("**/*.py").fullmatch("c.py")
    assert not compile_glob("*.py").fullmatch("a/c.py")
    assert compile_glob("src/**").fullmatch("src/x/y")
    assert compile_glob("[!a]?.txt").fullmatch("bc.txt")
    assert not compile_glob("[!a]?.txt").fullmatch("ac.txt")
    assert expand_braces("{a,b{c,d}}.x") == ["a.x", "bc.x", "bd.x"]
    assert expand_braces("HEAD@{1}") == ["HEAD@{1}"]


def test_declared_behaviour() -> None:
    tool = GlobTool()
    assert tool.is_concurrency_safe(GlobInput("*"))
    assert tool.interrupt_behavior == "cancel"


# -- patterns out of the working directory are never auto-allowed --------------------------------


@pytest.mark.parametrize("pattern", ["../*", "ABS/*"], ids=["dotdot", "absolute"])
async def test_a_glob_pattern_reaching_out_of_the_working_directory_is_not_auto_allowed(
    pattern: str, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (tmp_path / "outside.txt").write_text("x")
    glob = GlobInput(pattern.replace("ABS", str(tmp_path)))
    ctx = call_context("Glob", project)
    proves("outside.txt" in await GlobTool().call(glob, ctx, ignore_progress), "it lists outside")
    assert (await GlobTool().check_permissions(glob, ctx)).behavior != "allow"
