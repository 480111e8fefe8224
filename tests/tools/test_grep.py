"""The Grep tool: output modes, filters, context, and bad input."""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING

import attrs
import pytest
import trio
from harness import tool_context, validate_and_call

from trioexec import ToolUse, run_tools
from trioexec._contract._validation import compile_tool
from trioexec.permissions import PermissionContext
from trioexec.tools import GrepInput, GrepTool, _grep

if TYPE_CHECKING:
    from pathlib import Path

    from trioexec._models import JSONValue


async def grep(cwd: Path, root: Path | None = None, **raw: JSONValue) -> str:
    tool = GrepTool(root)
    assert compile_tool(tool).check(raw) is None
    out = await validate_and_call(tool, raw, cwd)
    assert isinstance(out, str)
    return out


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    files = {
        "a.py": "import os\n# TODO: fix\nx = 1\n",
        "b.txt": "todo later\nnothing\n",
        "src/c.py": "def f():\n    pass  # TODO\n\n\nreturn 1\n",
        "src/d.js": "// TODO js\n",
        ".git/x.py": "TODO in git\n",
        "bin.dat": "TODO\x00binary",
    }
    for age, (name, text) in enumerate(files.items()):
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        os.utime(path, (1_000_000 + age, 1_000_000 + age))
    return tmp_path


async def test_files_with_matches_is_the_default_newest_first(tree: Path) -> None:
    assert await grep(tree, pattern="TODO") == "Found 3 files\nsrc/d.js\nsrc/c.py\na.py"


async def test_case_insensitive(tree: Path) -> None:
    out = await grep(tree, pattern="todo", **{"-i": True})
    assert out == "Found 4 files\nsrc/d.js\nsrc/c.py\nb.txt\na.py"


async def test_content_mode_with_line_numbers(tree: Path) -> None:
    assert await grep(tree, pattern="TODO", output_mode="content") == (
        "a.py:2:# TODO: fix\nsrc/c.py:2:    pass  # TODO\nsrc/d.js:1:// TODO js"
    )
    assert await grep(tree, pattern="TODO", output_mode="content", **{"-n": False}) == (
        "a.py:# TODO: fix\nsrc/c.py:    pass  # TODO\nsrc/d.js:// TODO js"
    )


async def test_context_lines_and_group_separators(tree: Path) -> None:
    out = await grep(
        tree, pattern="^(def|return)", path="src/c.py", output_mode="content", **{"-A": 1}
    )
    assert out == "1:def f():\n2-    pass  # TODO\n--\n5:return 1"
    out = await grep(tree, pattern="pass", path="src/c.py", output_mode="content", **{"-C": 1})
    assert out == "1-def f():\n2:    pass  # TODO\n3-"


async def test_count_mode(tree: Path) -> None:
    assert await grep(tree, pattern="o", output_mode="count", glob="*.txt") == (
        "b.txt:2\n\nFound 2 total occurrences across 1 file."
    )


async def test_glob_filters_by_name_at_any_depth_or_by_path(tree: Path) -> None:
    assert await grep(tree, pattern="TODO", glob="*.py") == "Found 2 files\nsrc/c.py\na.py"
    assert await grep(tree, pattern="TODO", glob="src/*.{js,ts}") == "Found 1 file\nsrc/d.js"


async def test_multiline_patterns_span_lines(tree: Path) -> None:
    out = await grep(
        tree, pattern=r"import os\n#", path="a.py", output_mode="content", multiline=True
    )
    assert out == "1:import os\n2:# TODO: fix"
    assert await grep(tree, pattern=r"import os\n#", path="a.py") == "No files found"


async def test_head_limit_and_offset_say_what_they_cut(tree: Path) -> None:
    assert await grep(tree, pattern="TODO", head_limit=1) == "Found 1 file limit: 1\nsrc/d.js"
    assert await grep(tree, pattern="TODO", head_limit=1, offset=1) == (
        "Found 1 file limit: 1, offset: 1\nsrc/c.py"
    )
    unlimited = await grep(tree, pattern="TODO", head_limit=0)
    assert unlimited == "Found 3 files\nsrc/d.js\nsrc/c.py\na.py"
    assert await grep(tree, pattern="TODO", output_mode="content", head_limit=2) == (
        "a.py:2:# TODO: fix\nsrc/c.py:2:    pass  # TODO\n\n"
        "[Showing results with pagination = limit: 2]"
    )
    assert await grep(tree, pattern="TODO", output_mode="count", head_limit=1, offset=1) == (
        "src/c.py:1\n\nFound 1 total occurrence across 1 file. "
        "with pagination = limit: 1, offset: 1"
    )


async def test_binary_files_and_vcs_directories_are_skipped(tree: Path) -> None:
    out = await grep(tree, pattern="binary|in git")
    assert out == "No files found"


async def test_no_matches_in_content_mode(tree: Path) -> None:
    assert await grep(tree, pattern="zzz", output_mode="content") == "No matches found"


async def test_an_invalid_regex(tree: Path) -> None:
    assert await grep(tree, pattern="(unclosed") == (
        "Invalid regular expression '(unclosed': missing ), unterminated subpattern at position 0"
    )


async def test_a_missing_path(tree: Path) -> None:
    assert await grep(tree, pattern="x", path="nope") == "Path does not exist: nope"


async def test_the_root_cannot_be_left(
    tree: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    outside = tmp_path_factory.mktemp("outside")
    (outside / "secret.txt").write_text("TODO secret\n")
    (tree / "link.txt").symlink_to(outside / "secret.txt")
    out = await grep(tree, root=tree, pattern="x", path=str(outside))
    assert out == (
        f"Path {outside} is outside the workspace root {tree}; "
        "only files under the workspace root can be used."
    )
    # A symlink inside the root that leads out of it is not read, even when named.
    assert "link.txt" not in await grep(tree, root=tree, pattern="secret")
    named = await grep(tree, root=tree, pattern="secret", path="link.txt")
    assert named.startswith("Path link.txt is outside the workspace root")
    # Without a root it is read when named; a directory walk never follows symlinks (as rg).
    assert "link.txt" not in await grep(tree, pattern="secret")
    assert await grep(tree, pattern="secret", path="link.txt") == (
        f"Found 1 file\n{outside / 'secret.txt'}"
    )


def test_schema_uses_claude_code_field_names() -> None:
    compiled = compile_tool(GrepTool())
    assert compiled.check({"pattern": "x", "-i": True, "-C": 2, "output_mode": "count"}) is None
    assert compiled.check({"pattern": "x", "output_mode": "lines"}) is not None
    assert compiled.check({"pattern": "x", "ignore_case": True}) is not None
    assert compiled.check({"pattern": "x", "-A": -1}) is not None


def test_input_reading_applies_defaults_and_context() -> None:
    parsed = GrepInput.from_json({"pattern": "p", "-C": 2, "-A": 5})
    assert (parsed.before, parsed.after) == (2, 2)  # -C wins over -A / -B, as in Claude Code
    parsed = GrepInput.from_json({"pattern": "p", "context": 1, "-C": 2, "-B": 3})
    assert (parsed.before, parsed.after) == (1, 1)
    parsed = GrepInput.from_json({"pattern": "p", "-A": 5})
    assert (parsed.before, parsed.after) == (0, 5)
    assert parsed.output_mode == "files_with_matches"
    assert parsed.line_numbers is True


async def test_through_the_runtime(tree: Path) -> None:
    uses = [
        ToolUse("toolu_1", "Grep", {"pattern": "TODO", "glob": "*.js"}),
        ToolUse("toolu_2", "Grep", {"pattern": "["}),
    ]
    ok, bad = (await run_tools(uses, [GrepTool()], cwd=tree)).results
    assert (ok.is_error, ok.content) == (False, "Found 1 file\nsrc/d.js")
    assert bad.is_error
    assert bad.content == (
        "<tool_use_error>Invalid regular expression '[': "
        "unterminated character set at position 0</tool_use_error>"
    )


def test_declared_behaviour() -> None:
    tool = GrepTool()
    assert tool.is_concurrency_safe({"pattern": "x"})
    assert tool.interrupt_behavior == "cancel"


async def test_a_cancelled_search_stops_between_files(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    entered = threading.Event()
    proceed = threading.Event()
    seen: list[bytes] = []
    real = _grep.looks_binary

    def held_on_first_file(head: bytes) -> bool:
        seen.append(head)
        if len(seen) == 1:
            entered.set()
            proceed.wait(10)
        return real(head)

    monkeypatch.setattr(_grep, "looks_binary", held_on_first_file)
    with trio.fail_after(10), trio.CancelScope() as scope:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(
                GrepTool().call, {"pattern": "TODO"}, tool_context(GrepTool(), tree), print
            )
            await trio.to_thread.run_sync(entered.wait, 10)
            scope.cancel(reason="interrupt")
            proceed.set()
    assert scope.cancelled_caught
    assert len(seen) == 1  # the worker thread noticed the cancellation before the next file


def secrets_tree(tmp_path: Path) -> Path:
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "key.txt").write_text("TOKEN=abc\n")
    (tmp_path / ".env").write_text("TOKEN=env\n")
    (tmp_path / "notes.txt").write_text("TOKEN=public\n")
    (tmp_path / "docs").symlink_to("secrets")
    (tmp_path / "link.txt").symlink_to("secrets/key.txt")
    return tmp_path


async def grep_with_rules(cwd: Path, deny: list[str], **raw: JSONValue) -> str:
    tool = GrepTool()
    ctx = attrs.evolve(tool_context(tool, cwd), permissions=PermissionContext(deny=deny))
    assert await tool.validate_input(raw, ctx) is None
    out = await tool.call(raw, ctx, lambda _: None)
    assert isinstance(out, str)
    return out


@pytest.mark.parametrize(
    "deny",
    [["Read(./secrets/**)"], ["Grep(./secrets/**)"], ["Read(secrets/)"], ["Read(**/key.txt)"]],
)
async def test_files_denied_to_read_or_grep_are_skipped_silently(
    tmp_path: Path, deny: list[str]
) -> None:
    cwd = secrets_tree(tmp_path)
    out = await grep_with_rules(cwd, [*deny, "Read(.env)"], pattern="TOKEN", output_mode="content")
    assert out == "notes.txt:1:TOKEN=public"
    listed = await grep_with_rules(cwd, [*deny, "Read(.env)"], pattern="TOKEN")
    assert listed == "Found 1 file\nnotes.txt"


async def test_other_deny_rules_do_not_hide_files(tmp_path: Path) -> None:
    cwd = secrets_tree(tmp_path)
    out = await grep_with_rules(cwd, ["Edit(./secrets/**)", "Read(./other/**)"], pattern="abc")
    assert "secrets/key.txt" in out


async def test_a_whole_read_deny_hides_every_file(tmp_path: Path) -> None:
    cwd = secrets_tree(tmp_path)
    assert await grep_with_rules(cwd, ["Read"], pattern="TOKEN") == "No files found"
