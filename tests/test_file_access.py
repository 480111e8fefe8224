"""Which rules govern which file tool, end to end through ``run_tools`` with the real tools.

Claude Code's permissions documentation: "Edit rules apply to all built-in
tools that edit files. Claude will make a best-effort attempt to apply Read
rules to all built-in tools that read files like Grep, Glob, and LS."
trioexec makes the second a guarantee and ties both to a declaration
(``Tool.path_access``), not to tool names, so a user's tool opts in.

Every test works on harmless victim files in a temporary directory and
checks the file system afterwards, not only the answer.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from trioexec import (
    CallContext,
    GuardRails,
    PermissionResult,
    ProgressSender,
    ToolDefinitionError,
    ToolUse,
    function_tool,
    run_tools,
)
from trioexec.permissions import PathAccess, PermissionContext
from trioexec.tools import default_tools

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from trioexec import JSONValue, Tool

DENIED = "Permission to use {} has been denied."


def edit_denied(cwd: Path, path: str) -> str:
    """The denial naming the path, as Claude Code words it (the path made absolute)."""
    return f"Permission to edit {os.path.normpath(os.path.join(cwd, path))} has been denied."


def read_denied(cwd: Path, path: str) -> str:
    return f"Permission to read {os.path.normpath(os.path.join(cwd, path))} has been denied."


NOT_GRANTED = "Claude requested permissions to use {}, but you haven't granted it yet."
WRITE_NOT_GRANTED = (
    "Claude requested permissions to write to {}, but you haven't granted it yet."
)  # Claude Code's file tools' own ask reason: what the model reads when nobody answers


async def run_one(
    cwd: Path,
    name: str,
    tool_input: Mapping[str, JSONValue],
    guard: GuardRails | None,
    tools: Sequence[Tool[Any]] | None = None,
) -> tuple[str, bool]:
    """Run one call through ``run_tools``; its content as text, and whether it is an error."""
    use = ToolUse("toolu_1", name, dict(tool_input))
    outcome = await run_tools(
        [use], list(tools) if tools is not None else default_tools(), cwd=cwd, guard=guard
    )
    (result,) = outcome.results
    return str(result.content), result.is_error


def deny(*rules: str, mode: str = "default", **more: Any) -> GuardRails:
    return GuardRails(PermissionContext(deny=rules, mode=mode), **more)  # type: ignore[arg-type]


def workspace(tmp_path: Path) -> Path:
    """``protected/existing.txt``, ``open/``, and ``link -> protected``."""
    (tmp_path / "protected").mkdir()
    (tmp_path / "protected" / "existing.txt").write_text("ORIGINAL\n")
    (tmp_path / "open").mkdir()
    (tmp_path / "link").symlink_to("protected")
    return tmp_path


# -- Edit rules govern every file-writing tool ------------------------------------------------


@pytest.mark.parametrize(
    "file_path",
    [
        "protected/new.txt",
        "protected/existing.txt",
        "./protected/new.txt",
        "open/../protected/new.txt",
        "link/new.txt",
        "link/existing.txt",
        "protected/deeper/new.txt",
    ],
)
@pytest.mark.parametrize("mode", ["default", "bypass"])
async def test_an_edit_deny_rule_stops_write(tmp_path: Path, file_path: str, mode: str) -> None:
    """``deny: ["Edit(./protected/**)"]`` stops Write: "Edit rules apply to all built-in
    tools that edit files" (Claude Code's permissions documentation)."""
    cwd = workspace(tmp_path)
    guard = deny("Edit(./protected/**)", mode=mode)
    text, is_error = await run_one(cwd, "Write", {"file_path": file_path, "content": "X"}, guard)
    assert is_error
    assert text == edit_denied(cwd, file_path)
    assert (cwd / "protected" / "existing.txt").read_text() == "ORIGINAL\n"
    assert sorted(p.name for p in (cwd / "protected").iterdir()) == ["existing.txt"]


async def test_an_edit_deny_rule_stops_write_by_absolute_path(tmp_path: Path) -> None:
    cwd = workspace(tmp_path)
    target = str(cwd / "protected" / "new.txt")
    guard = deny("Edit(./protected/**)", mode="bypass")
    text, _ = await run_one(cwd, "Write", {"file_path": target, "content": "X"}, guard)
    assert text == edit_denied(cwd, target)
    assert not (cwd / "protected" / "new.txt").exists()


async def test_an_edit_deny_rule_stops_edit_through_a_symlinked_directory(tmp_path: Path) -> None:
    cwd = workspace(tmp_path)
    guard = deny("Edit(./protected/**)", mode="bypass")
    edit = {"file_path": "link/existing.txt", "old_string": "ORIGINAL", "new_string": "CHANGED"}
    text, _ = await run_one(cwd, "Edit", edit, guard)
    assert text == edit_denied(cwd, "link/existing.txt")
    assert (cwd / "protected" / "existing.txt").read_text() == "ORIGINAL\n"


async def test_a_write_deny_rule_names_write_itself(tmp_path: Path) -> None:
    cwd = workspace(tmp_path)
    guard = deny("Write(./protected/**)", mode="bypass")
    text, _ = await run_one(cwd, "Write", {"file_path": "protected/x", "content": "X"}, guard)
    assert text == edit_denied(cwd, "protected/x")
    assert not (cwd / "protected" / "x").exists()


async def test_a_whole_tool_edit_deny_stops_write(tmp_path: Path) -> None:
    cwd = workspace(tmp_path)
    text, _ = await run_one(
        cwd, "Write", {"file_path": "open/x", "content": "X"}, deny("Edit", mode="bypass")
    )
    assert text == DENIED.format("Write")
    assert not (cwd / "open" / "x").exists()


async def test_writes_outside_the_denied_tree_still_run(tmp_path: Path) -> None:
    cwd = workspace(tmp_path)
    guard = deny("Edit(./protected/**)", mode="bypass")
    text, is_error = await run_one(cwd, "Write", {"file_path": "open/x", "content": "X"}, guard)
    assert not is_error, text
    assert (cwd / "open" / "x").read_text() == "X"


async def test_an_edit_ask_rule_asks_for_write(tmp_path: Path) -> None:
    cwd = workspace(tmp_path)
    guard = GuardRails(PermissionContext(ask=["Edit(./protected/**)"], mode="bypass"))
    text, _ = await run_one(cwd, "Write", {"file_path": "link/x", "content": "X"}, guard)
    assert text == NOT_GRANTED.format("Write")
    assert not (cwd / "protected" / "x").exists()


async def test_an_edit_allow_rule_allows_write_without_asking(tmp_path: Path) -> None:
    cwd = workspace(tmp_path)
    guard = GuardRails(PermissionContext(allow=["Edit(./open/**)"]))
    text, is_error = await run_one(cwd, "Write", {"file_path": "open/x", "content": "X"}, guard)
    assert not is_error, text
    assert (cwd / "open" / "x").read_text() == "X"


async def test_an_allow_rule_does_not_reach_through_a_symlink_out_of_its_tree(
    tmp_path: Path,
) -> None:
    """``open/escape -> ../protected``: ``Edit(./open/**)`` must not allow writing there."""
    cwd = workspace(tmp_path)
    (cwd / "open" / "escape").symlink_to("../protected")
    guard = GuardRails(PermissionContext(allow=["Edit(./open/**)"]))
    text, _ = await run_one(cwd, "Write", {"file_path": "open/escape/x", "content": "X"}, guard)
    assert text == WRITE_NOT_GRANTED.format(cwd / "open" / "escape" / "x")
    assert not (cwd / "protected" / "x").exists()


async def test_a_read_allow_rule_never_lets_a_tool_write(tmp_path: Path) -> None:
    cwd = workspace(tmp_path)
    guard = GuardRails(PermissionContext(allow=["Read(./open/**)"]))
    text, _ = await run_one(cwd, "Write", {"file_path": "open/x", "content": "X"}, guard)
    assert text == WRITE_NOT_GRANTED.format(cwd / "open" / "x")
    assert not (cwd / "open" / "x").exists()


@attrs.frozen
class SaveInput:
    path: str
    text: str


@function_tool(input_type=SaveInput, path_access=PathAccess("path", writes=True))
async def save(args: SaveInput, ctx: CallContext, progress: ProgressSender) -> str:
    """A user's file-writing tool that declares what it writes."""
    (ctx.cwd / args.path).write_text(args.text)
    return "saved"


async def test_edit_rules_govern_a_user_tool_that_declares_it_writes(tmp_path: Path) -> None:
    cwd = workspace(tmp_path)
    guard = deny("Edit(./protected/**)", mode="bypass")
    text, _ = await run_one(cwd, "save", {"path": "link/x", "text": "X"}, guard, [save])
    assert text == edit_denied(cwd, "link/x")
    assert not (cwd / "protected" / "x").exists()
    text, is_error = await run_one(cwd, "save", {"path": "open/x", "text": "X"}, guard, [save])
    assert (text, is_error) == ("saved", False)


def test_a_path_access_declaration_must_read_or_write() -> None:
    with pytest.raises(ToolDefinitionError, match="reads=True"):
        PathAccess("path")
    with pytest.raises(ToolDefinitionError, match="non-empty"):
        PathAccess("", reads=True)


# -- Read rules govern every file-reading tool ------------------------------------------------


def secrets(tmp_path: Path) -> Path:
    """``secrets/key.pem`` (TOKEN inside), ``src/app.py`` (TOKEN too), ``docs -> secrets``."""
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "key.pem").write_text("TOKEN=hunter2\n")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("TOKEN = read_token()\n")
    (tmp_path / "src" / "alias.pem").symlink_to("../secrets/key.pem")
    (tmp_path / "docs").symlink_to("secrets")
    return tmp_path


READ_DENY = deny("Read(./secrets/**)")


@pytest.mark.parametrize(
    "file_path", ["secrets/key.pem", "docs/key.pem", "src/alias.pem", "src/../secrets/key.pem"]
)
async def test_a_read_deny_rule_stops_read_in_every_spelling(
    tmp_path: Path, file_path: str
) -> None:
    cwd = secrets(tmp_path)
    text, is_error = await run_one(cwd, "Read", {"file_path": file_path}, READ_DENY)
    assert (text, is_error) == (read_denied(cwd, file_path), True)


async def test_a_denied_missing_file_answers_like_a_denied_existing_one(tmp_path: Path) -> None:
    """Validation (``File does not exist``) would tell which denied files exist."""
    cwd = secrets(tmp_path)
    for name in ("key.pem", "missing.pem", "missing-dir/x"):
        for tool, field in (("Read", "file_path"), ("Grep", "path"), ("Glob", "path")):
            extra = {"pattern": "TOKEN"} if tool != "Read" else {}
            text, _ = await run_one(cwd, tool, {field: f"secrets/{name}", **extra}, READ_DENY)
            assert text == read_denied(cwd, f"secrets/{name}"), (tool, name, text)


async def test_a_read_deny_rule_stops_edit_from_probing_the_file(tmp_path: Path) -> None:
    """Edit's answers (``String to replace not found``) would reveal a denied file's content."""
    cwd = secrets(tmp_path)
    edit = {"file_path": "secrets/key.pem", "old_string": "TOKEN=h", "new_string": "TOKEN=h"}
    guard = deny("Read(./secrets/**)", mode="bypass")
    for old in ("TOKEN=hunter2", "not there"):
        text, _ = await run_one(cwd, "Edit", {**edit, "old_string": old}, guard)
        assert text == edit_denied(cwd, "secrets/key.pem")
    assert (cwd / "secrets" / "key.pem").read_text() == "TOKEN=hunter2\n"


@pytest.mark.parametrize("pattern", ["**/*", "**/*.pem", "secrets/*", "docs/*", "*/key.pem"])
async def test_glob_never_lists_a_read_denied_file(tmp_path: Path, pattern: str) -> None:
    cwd = secrets(tmp_path)
    text, _ = await run_one(cwd, "Glob", {"pattern": pattern}, READ_DENY)
    assert "key.pem" not in text
    assert "alias.pem" not in text


async def test_glob_still_lists_what_no_rule_covers(tmp_path: Path) -> None:
    cwd = secrets(tmp_path)
    text, _ = await run_one(cwd, "Glob", {"pattern": "**/*.py"}, READ_DENY)
    assert text == os.path.join("src", "app.py")


@pytest.mark.parametrize("mode", ["files_with_matches", "content", "count"])
async def test_grep_never_searches_names_or_counts_a_read_denied_file(
    tmp_path: Path, mode: str
) -> None:
    cwd = secrets(tmp_path)
    text, _ = await run_one(cwd, "Grep", {"pattern": "TOKEN", "output_mode": mode}, READ_DENY)
    assert "hunter2" not in text
    assert "key.pem" not in text
    assert "alias.pem" not in text
    assert "app.py" in text
    if mode == "count":
        assert text.startswith(os.path.join("src", "app.py") + ":1\n")
        assert text.endswith("across 1 file.")
    if mode == "files_with_matches":
        assert text.startswith("Found 1 file")


async def test_grep_with_a_glob_naming_the_denied_file_finds_nothing(tmp_path: Path) -> None:
    cwd = secrets(tmp_path)
    text, _ = await run_one(cwd, "Grep", {"pattern": ".", "glob": "key.pem"}, READ_DENY)
    assert text == "No files found"


async def test_a_read_ask_rule_hides_files_from_a_wider_search(tmp_path: Path) -> None:
    """A search cannot ask file by file, so what an ask rule covers stays out of it."""
    cwd = secrets(tmp_path)
    guard = GuardRails(PermissionContext(ask=["Read(./secrets/**)"]))
    text, _ = await run_one(cwd, "Grep", {"pattern": "TOKEN", "output_mode": "content"}, guard)
    assert "hunter2" not in text
    text, _ = await run_one(cwd, "Glob", {"pattern": "**/*.pem"}, guard)
    assert "key.pem" not in text


async def test_a_search_the_application_approved_shows_the_asked_files(tmp_path: Path) -> None:
    cwd = secrets(tmp_path)
    asked: list[str] = []

    async def approve(name: str, tool_input: Mapping[str, JSONValue], _: str) -> PermissionResult:
        asked.append(name)
        return PermissionResult.allow()

    guard = GuardRails(PermissionContext(ask=["Read(./secrets/**)"]), can_use_tool=approve)
    grep = {"pattern": "TOKEN", "path": "secrets/key.pem", "output_mode": "content"}
    text, _ = await run_one(cwd, "Grep", grep, guard)
    assert asked == ["Grep"]
    assert "TOKEN=hunter2" in text


@attrs.frozen
class PeekInput:
    path: str


@function_tool(input_type=PeekInput, path_access=PathAccess("path", reads=True))
async def peek(args: PeekInput, ctx: CallContext, progress: ProgressSender) -> str:
    """A user's file-reading tool that declares what it reads."""
    return (ctx.cwd / args.path).read_text()


async def test_read_rules_govern_a_user_tool_that_declares_it_reads(tmp_path: Path) -> None:
    cwd = secrets(tmp_path)
    text, _ = await run_one(cwd, "peek", {"path": "docs/key.pem"}, READ_DENY, [peek])
    assert text == read_denied(cwd, "docs/key.pem")
    text, _ = await run_one(cwd, "peek", {"path": "src/app.py"}, READ_DENY, [peek])
    assert text == "TOKEN = read_token()\n"


# -- hypothesis: any spelling of a denied path is denied ----------------------------------------

_NAME = st.text(alphabet="abcxyz-_", min_size=1, max_size=5)


@st.composite
def spelled_target(draw: st.DrawFn) -> tuple[str, str]:
    """(a spelling of a path under ``protected/``, where the file would land)."""
    below = draw(st.lists(_NAME, min_size=1, max_size=3))
    head = draw(st.sampled_from(["protected", "./protected", "link", "open/../protected", "ABS"]))
    detour = draw(st.sampled_from(["", "open/../", "./", "link/../"]))
    spelled = "/".join([head, *below])
    if head != "ABS":
        spelled = detour + spelled
    return spelled, "/".join(below)


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(target=spelled_target(), mode=st.sampled_from(["default", "bypass"]))
async def test_any_spelling_of_a_path_under_a_denied_pattern_is_not_written(
    tmp_path: Path, target: tuple[str, str], mode: str
) -> None:
    cwd = tmp_path
    if not (cwd / "protected").exists():
        workspace(cwd)
    spelled, below = target
    spelled = spelled.replace("ABS", str(cwd / "protected"))
    guard = deny("Edit(./protected/**)", mode=mode)
    text, is_error = await run_one(cwd, "Write", {"file_path": spelled, "content": "X"}, guard)
    assert (text, is_error) == (edit_denied(cwd, spelled), True), spelled
    assert not (cwd / "protected" / below).exists()


@function_tool(
    name="save_many",
    input_schema={"type": "object", "properties": {"paths": {}}, "required": ["paths"]},
    path_access=PathAccess("paths", writes=True),
)
async def save_many(args: dict[str, Any], ctx: CallContext, progress: ProgressSender) -> str:
    """A tool whose field holds a list of paths (or, from a careless schema, anything)."""
    return "saved"


@pytest.mark.parametrize(
    ("paths", "answer"),
    [
        (["open/a", "open/b"], "saved"),
        (["open/a", "link/b"], "Permission to edit {cwd}/link/b has been denied."),
        ([], "saved"),
        (7, "Permission to use save_many has been denied."),
        ([".", 7], "Permission to use save_many has been denied."),
    ],
)
async def test_a_list_of_paths_is_denied_when_any_is_covered_and_unreadable_fails_closed(
    tmp_path: Path, paths: object, answer: str
) -> None:
    cwd = workspace(tmp_path)
    guard = deny("Edit(./protected/**)", mode="bypass")
    text, _ = await run_one(cwd, "save_many", {"paths": paths}, guard, [save_many])  # type: ignore[dict-item]
    assert text == answer.format(cwd=cwd)


async def test_an_unreadable_path_field_asks_even_without_rules(tmp_path: Path) -> None:
    text, _ = await run_one(
        tmp_path,
        "save_many",
        {"paths": 7},
        GuardRails(PermissionContext(mode="bypass")),
        [save_many],
    )
    assert text == (
        "Claude requested permissions to use save_many, whose paths could not be read as a path."
    )


# -- hypothesis: a listing or search shows exactly what no Read rule hides ---------------------

_DIR = st.sampled_from(["a", "b", "c", "keys", "Sub"])
_FILE = st.sampled_from(["x.txt", "y.pem", "z.py", ".hidden"])


@st.composite
def trees(draw: st.DrawFn) -> tuple[list[str], str, list[str]]:
    """(files as relative paths, the directory a deny rule covers, symlinks' paths into it)."""
    files = draw(
        st.lists(
            st.lists(_DIR, max_size=3).flatmap(
                lambda dirs: _FILE.map(lambda name: "/".join([*dirs, name]))
            ),
            min_size=1,
            max_size=12,
            unique=True,
        )
    )
    dirs = sorted({f.rsplit("/", 1)[0] for f in files if "/" in f})
    assume(dirs)
    denied = draw(st.sampled_from(dirs))
    inside = [f for f in files if f.startswith(denied + "/")]
    links = draw(st.lists(st.sampled_from(["link1", "link2"]), max_size=2, unique=True))
    return files, denied, [f"{name}->{inside[0]}" for name in links]


@settings(max_examples=20, deadline=None)
@given(tree=trees())
async def test_glob_and_grep_show_exactly_the_files_no_read_rule_hides(
    tree: tuple[list[str], str, list[str]],
) -> None:
    files, denied, links = tree
    with tempfile.TemporaryDirectory() as folder:
        cwd = _build(folder, files, links)
        guard = deny(f"Read(./{denied}/**)")
        visible = {f for f in files if not f.startswith(denied + "/")}
        listing, _ = await run_one(cwd, "Glob", {"pattern": "**/*"}, guard)
        grep, _ = await run_one(cwd, "Grep", {"pattern": "NEEDLE", "head_limit": 0}, guard)
        for answer in (listing, grep):
            shown = {line for line in answer.splitlines() if line and not line.startswith("Found")}
            shown.discard("No files found")
            assert not {line for line in shown if line.startswith(denied + "/")}, answer
            assert not {line for line in shown if line.startswith("link")}, answer
            assert {f for f in visible if not _is_hidden(f)} <= shown, answer


def _build(folder: str, files: list[str], links: list[str]) -> Path:
    cwd = Path(folder).resolve()
    for rel in files:
        (cwd / rel).parent.mkdir(parents=True, exist_ok=True)
        (cwd / rel).write_text("NEEDLE\n")
    for link in links:
        name, target = link.split("->")
        (cwd / name).symlink_to(cwd / target)
    return cwd


def _is_hidden(rel: str) -> bool:
    return any(part.startswith(".") for part in rel.split("/"))


async def test_a_symlink_swapped_after_the_permission_check_is_judged_again(
    tmp_path: Path,
) -> None:
    """Between the check and the write (here: while the application is asked) ``link``
    is pointed into the denied tree; the write is refused at call time."""
    cwd = workspace(tmp_path)
    (cwd / "hop").symlink_to("open")

    async def swap_then_approve(
        name: str, tool_input: Mapping[str, JSONValue], _: str
    ) -> PermissionResult:
        (cwd / "hop").unlink()
        (cwd / "hop").symlink_to("protected")
        return PermissionResult.allow()

    guard = GuardRails(
        PermissionContext(deny=["Edit(./protected/**)"], ask=["Write"]),
        can_use_tool=swap_then_approve,
    )
    text, is_error = await run_one(cwd, "Write", {"file_path": "hop/x", "content": "X"}, guard)
    assert is_error
    assert text == edit_denied(cwd, "hop/x")
    assert not (cwd / "protected" / "x").exists()
