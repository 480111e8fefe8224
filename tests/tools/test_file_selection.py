"""Glob and Grep see ripgrep's file selection, with or without an ``rg`` binary.

One temporary repository has what a real checkout has: nested ``.gitignore``
files with negations, ``.ignore`` files, ``.git/info/exclude``, a virtual
environment that ignores itself, ``node_modules``, hidden files and symlinks.
The Python walk is checked against fixed expectations, and, where ``rg`` is
available, against ``rg --files`` and against the tools run with ripgrep as
their backend.
"""

from __future__ import annotations

import os
import subprocess
from typing import TYPE_CHECKING

import pytest
from harness import validate_and_call

from trioexec.tools import GlobInput, GlobTool, GrepTool
from trioexec.tools._ignore import FileSelection, is_hidden_pattern, walk_selected
from trioexec.tools._ripgrep import find_ripgrep, required_literals

if TYPE_CHECKING:
    from pathlib import Path

    from trioexec._models import JSONValue

RG = find_ripgrep()
needs_rg = pytest.mark.skipif(RG is None, reason="no rg binary on PATH or beside Python")

FILES = {
    ".gitignore": "*.log\n!keep.log\nnode_modules\n/top.txt\n*.bak\n**/cache/**\n!.env\n",
    ".ignore": "secret_dir/\n",
    ".git/HEAD": "ref: refs/heads/main\n",
    ".git/info/exclude": "excluded.txt\n",
    ".env": "TOKEN=whitelisted hidden file\n",
    ".hidden/inside.txt": "TODO hidden dir\n",
    ".venv/lib/site.py": "TODO venv\n",
    ".venv/.gitignore": "*\n",
    "venv/.gitignore": "*\n",
    "venv/lib/pkg.py": "TODO venv without a dot\n",
    "node_modules/mod/index.js": "TODO module\n",
    "a.py": "import os\n# TODO: top\n",
    "a b.py": "# TODO: spaced\n",
    "ü.py": "# TODO: unicode\n",
    "top.txt": "TODO anchored\n",
    "sub/top.txt": "TODO not anchored here\n",
    "debug.log": "TODO log\n",
    "keep.log": "TODO kept log\n",
    "old.bak": "TODO backup\n",
    "excluded.txt": "TODO excluded\n",
    "secret_dir/s.txt": "TODO ignored by .ignore\n",
    "cache/c.txt": "TODO cache\n",
    "x/cache/d.txt": "TODO nested cache\n",
    "src/.gitignore": "generated/\n*.tmp\n!important.tmp\n/local.txt\ndeep/x.txt\nbuild/\n",
    "src/.ignore": "!x.bak\n",
    "src/.config.py": "TODO hidden file\n",
    "src/main.py": "def main():\n    return 1  # TODO\n",
    "src/x.bak": "TODO whitelisted by .ignore over .gitignore\n",
    "src/scratch.tmp": "TODO tmp\n",
    "src/important.tmp": "TODO important\n",
    "src/local.txt": "TODO local\n",
    "src/deep/x.txt": "TODO deep anchored\n",
    "src/deep/y.txt": "TODO deep kept\n",
    "src/other/local.txt": "TODO local elsewhere\n",
    "src/other/deep/x.txt": "TODO other deep\n",
    "src/generated/g.py": "TODO generated\n",
    "src/build": "TODO a file named like a directory pattern\n",
    "src/sub/.gitignore": "!*.log\n",
    "src/sub/trace.log": "TODO re-included log\n",
    "src/sub/code.js": "// TODO js\n",
    "docs/readme.md": "TODO docs\n",
    "bin.dat": "TODO\x00binary",
}

SELECTED = {
    ".env",  # hidden, but whitelisted by ``!.env``
    "a.py",
    "a b.py",
    "ü.py",
    "sub/top.txt",
    "keep.log",
    "src/main.py",
    "src/x.bak",
    "src/important.tmp",
    "src/deep/y.txt",
    "src/other/local.txt",
    "src/other/deep/x.txt",
    "src/build",
    "src/sub/trace.log",
    "src/sub/code.js",
    "docs/readme.md",
    "bin.dat",
}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    for age, (name, text) in enumerate(sorted(FILES.items())):
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        os.utime(path, (1_000_000 + age, 1_000_000 + age))
    (root / "link.py").symlink_to("a.py")
    (root / "linkdir").symlink_to("src")
    return root


def python_walk(base: Path, *, hidden: bool = False) -> set[str]:
    return {rel for rel, _ in walk_selected(FileSelection.for_base(base, hidden=hidden))}


def rg_walk(base: Path, *, hidden: bool = False) -> set[str]:
    assert RG is not None
    args = [RG, "--files", "--no-config", "--no-ignore-global", "--null"]
    args += ["--hidden"] if hidden else []
    for name in (".git", ".hg", ".svn", ".bzr", ".jj", ".sl"):
        args += ["--glob", f"!{name}"]
    out = subprocess.run(args, cwd=base, capture_output=True, check=False).stdout
    return {os.fsdecode(p) for p in out.split(b"\0") if p}


def test_the_walk_follows_gitignore_ignore_exclude_and_hidden_rules(repo: Path) -> None:
    assert python_walk(repo) == SELECTED


def test_asking_for_hidden_files_adds_them_but_never_the_vcs_folder(repo: Path) -> None:
    found = python_walk(repo, hidden=True)
    assert found - SELECTED == {
        ".gitignore",
        ".ignore",
        ".hidden/inside.txt",
        "src/.gitignore",
        "src/.ignore",
        "src/.config.py",
        "src/sub/.gitignore",
    }
    assert not any(p.startswith(".git/") for p in found)
    assert not any(p.startswith(".venv/") for p in found)  # it ignores itself


def test_parent_rules_apply_to_a_search_of_a_subdirectory(repo: Path) -> None:
    assert python_walk(repo / "src") == {
        p.removeprefix("src/") for p in SELECTED if p.startswith("src/")
    }


def test_an_ignored_folder_searched_on_purpose_is_listed(repo: Path) -> None:
    assert python_walk(repo / "node_modules") == {"mod/index.js"}


def test_outside_a_repository_gitignore_files_do_not_count(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("*.txt\n")
    (tmp_path / ".ignore").write_text("*.md\n")
    for name in ("a.txt", "b.md", "c.py"):
        (tmp_path / name).write_text("x\n")
    assert python_walk(tmp_path) == {"a.txt", "c.py"}


@needs_rg
@pytest.mark.parametrize("hidden", [False, True])
@pytest.mark.parametrize("sub", [".", "src", "src/sub", "node_modules", "docs"])
def test_the_walk_lists_what_rg_files_lists(repo: Path, sub: str, hidden: bool) -> None:
    base = repo / sub
    assert python_walk(base, hidden=hidden) == rg_walk(base, hidden=hidden)


@needs_rg
def test_a_nested_repository_and_a_plain_folder_agree_with_rg(tmp_path: Path) -> None:
    (tmp_path / ".ignore").write_text("*.md\n")
    (tmp_path / ".gitignore").write_text("*.txt\n")
    nested = tmp_path / "inner"
    (nested / ".git").mkdir(parents=True)
    (nested / ".gitignore").write_text("*.py\n!keep.py\n")
    for name in ("a.txt", "b.md", "c.py", "inner/d.py", "inner/keep.py", "inner/e.txt"):
        (tmp_path / name).write_text("x\n")
    assert python_walk(tmp_path) == rg_walk(tmp_path)


GLOB_PATTERNS = [
    "**/*.py",
    "*",
    "**/*",
    "src/**/*.{py,js,tmp}",
    "**/.*",
    ".hidden/*",
    "**/*.log",
    "src/*",
    "node_modules/**/*.js",
    "**/top.txt",
]


async def glob(repo: Path, pattern: str, *, ripgrep: bool | str) -> object:
    return await validate_and_call(GlobTool(ripgrep=ripgrep), GlobInput(pattern), repo)


async def test_glob_leaves_out_ignored_and_hidden_files(repo: Path) -> None:
    out = await glob(repo, "**/*.py", ripgrep=False)
    assert out == "\n".join(["a b.py", "a.py", "src/main.py", "ü.py"])  # oldest first
    assert await glob(repo, "**/.env", ripgrep=False) == ".env"
    assert await glob(repo, "**/.*.py", ripgrep=False) == "src/.config.py"


@needs_rg
@pytest.mark.parametrize("pattern", GLOB_PATTERNS)
async def test_glob_answers_the_same_with_rg(repo: Path, pattern: str) -> None:
    assert RG is not None
    assert await glob(repo, pattern, ripgrep=RG) == await glob(repo, pattern, ripgrep=False)


GREP_INPUTS: list[dict[str, JSONValue]] = [
    {"pattern": "TODO"},
    {"pattern": "todo", "-i": True, "output_mode": "count"},
    {"pattern": "TODO|import", "output_mode": "content"},
    {"pattern": r"T\w+: (top|spaced)", "output_mode": "content", "-C": 1},
    {"pattern": r"^\s+return", "output_mode": "content", "-n": False},
    {"pattern": "(?i)todo", "output_mode": "count"},
    {"pattern": "TODO", "glob": "*.{py,js}", "output_mode": "content"},
    {"pattern": "TODO", "glob": ".*"},
    {"pattern": "TODO", "type": "py"},
    {"pattern": "TODO", "path": "src", "output_mode": "count", "head_limit": 2},
    {"pattern": r"os\n#", "multiline": True, "output_mode": "content"},
    {"pattern": "binary"},
    {"pattern": "TOKEN"},
    {"pattern": "TODO", "path": "node_modules"},
]


async def grep(repo: Path, raw: dict[str, JSONValue], *, ripgrep: bool | str) -> object:
    return await validate_and_call(GrepTool(ripgrep=ripgrep), raw, repo)


async def test_grep_searches_the_selected_files_only(repo: Path) -> None:
    out = await grep(repo, {"pattern": "TODO", "output_mode": "count"}, ripgrep=False)
    assert isinstance(out, str)
    counted = {line.rsplit(":", 1)[0] for line in out.split("\n\n")[0].splitlines()}
    assert counted == SELECTED - {".env", "bin.dat"}
    assert await grep(repo, {"pattern": "TODO", "glob": ".hidden/*"}, ripgrep=False) == (
        "Found 1 file\n.hidden/inside.txt"
    )


async def test_grep_type_filter_and_unknown_type(repo: Path) -> None:
    out = await grep(repo, {"pattern": "TODO", "type": "js"}, ripgrep=False)
    assert out == "Found 1 file\nsrc/sub/code.js"
    bad = await grep(repo, {"pattern": "TODO", "type": "nope"}, ripgrep=False)
    assert isinstance(bad, str)
    assert bad.startswith("Unrecognized file type: nope. Known types: asm, c, ")


@needs_rg
@pytest.mark.parametrize("raw", GREP_INPUTS, ids=lambda raw: str(raw))
async def test_grep_answers_the_same_with_rg(repo: Path, raw: dict[str, JSONValue]) -> None:
    assert RG is not None
    assert await grep(repo, raw, ripgrep=RG) == await grep(repo, raw, ripgrep=False)


async def test_a_ripgrep_that_cannot_run_falls_back_to_the_python_walk(repo: Path) -> None:
    missing = str(repo / "no-such-rg")
    assert await glob(repo, "**/*.py", ripgrep=missing) == await glob(
        repo, "**/*.py", ripgrep=False
    )
    raw: dict[str, JSONValue] = {"pattern": "TODO", "output_mode": "count"}
    assert await grep(repo, raw, ripgrep=missing) == await grep(repo, raw, ripgrep=False)


def test_hidden_patterns_are_recognised() -> None:
    assert is_hidden_pattern(".env")
    assert is_hidden_pattern("**/.github/*.yml")
    assert not is_hidden_pattern("**/*.py")
    assert not is_hidden_pattern("../src/*.py")


@pytest.mark.parametrize(
    ("pattern", "ignore_case", "expected"),
    [
        ("TODO", False, ["TODO"]),
        ("TODO|FIXME", False, ["TODO", "FIXME"]),
        (r"def \w+\(", False, ["def "]),
        (r"log.*Error", False, ["Error"]),
        (r"interface\{\}", False, ["interface{}"]),
        ("colou?r", False, ["colo"]),
        ("ab+c", False, ["ab"]),
        ("x{2}yz", False, ["yz"]),
        ("(a|b)cd", False, ["cd"]),
        ("(?i)todo", False, None),
        ("a|.*", False, None),
        (r"\d+", False, None),
        ("été", True, None),
        ("été", False, ["été"]),
        ("[", False, None),
    ],
)
def test_required_literals(pattern: str, ignore_case: bool, expected: list[str] | None) -> None:
    assert required_literals(pattern, ignore_case=ignore_case) == expected
