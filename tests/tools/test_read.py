"""The Read tool: numbered lines, windows, images, and every kind of bad path."""

from __future__ import annotations

import base64
import math
import os
import tracemalloc
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import trio
from harness import tool_context, validate_and_call
from helpers import (
    call_context,
    ignore_progress,
    proves,
)

from trioexec import (
    CallContext,
    ImageBlock,
    PermissionResult,
    ToolUse,
    run_tools,
)
from trioexec.tools import FileToolError, ReadInput, ReadTool
from trioexec.tools._read import (
    DEFAULT_LIMIT,
    LINE_READ_BYTES,
    MALWARE_REMINDER,
    MAX_LINE_CHARS,
    MAX_OUTPUT_CHARS,
    SKIP_CHUNK_BYTES,
)

if TYPE_CHECKING:
    from trioexec._contract._rules import RuleBehavior

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


def context(cwd: Path) -> CallContext:
    return tool_context(ReadTool(), cwd)


def no_progress(_: object) -> None:
    pass


async def read(cwd: Path, file_path: str, tool: ReadTool | None = None, **kw: int) -> object:
    """The text Read answers, without the malware reminder every text read ends with."""
    out = await validate_and_call(tool or ReadTool(), ReadInput(file_path, **kw), cwd)
    return out.removesuffix(MALWARE_REMINDER) if isinstance(out, str) else out


async def test_lines_are_numbered_cat_n_style(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha\nbeta\n\tgamma")
    assert await read(tmp_path, "a.txt") == "1\talpha\n2\tbeta\n3\t\tgamma"


async def test_offset_and_limit_choose_a_window(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    assert await read(tmp_path, "a.txt", offset=4, limit=2) == "4\tline 4\n5\tline 5"
    assert await read(tmp_path, "a.txt", offset=0, limit=1) == "1\tline 1"


async def test_absolute_paths_work_and_relative_ones_use_the_call_cwd(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.txt").write_text("x\n")
    assert await read(tmp_path / "sub", "a.txt") == "1\tx\n2\t"
    assert await read(Path("/"), str(tmp_path / "sub" / "a.txt")) == "1\tx\n2\t"


async def test_crlf_line_ends_are_not_shown(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_bytes(b"one\r\ntwo\r\n")
    assert await read(tmp_path, "a.txt") == "1\tone\n2\ttwo\n3\t"


async def test_invalid_utf8_is_replaced_not_fatal(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_bytes(b"caf\xe9\n")
    assert await read(tmp_path, "a.txt") == "1\tcaf\ufffd\n2\t"


async def test_an_empty_file_reads_as_one_empty_line_shorter_than_the_offset(
    tmp_path: Path,
) -> None:
    # Claude Code 2.1.88 splits the text on "\n": an empty file has one (empty) line.
    (tmp_path / "empty.txt").write_text("")
    assert await read(tmp_path, "empty.txt") == (
        "<system-reminder>Warning: the file exists but is shorter than the provided "
        "offset (1). The file has 1 lines.</system-reminder>"
    )


async def test_a_text_read_ends_with_the_malware_reminder(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha\nbeta\n")
    out = await validate_and_call(ReadTool(), ReadInput("a.txt"), tmp_path)
    assert out == "1\talpha\n2\tbeta\n3\t" + MALWARE_REMINDER
    assert MALWARE_REMINDER.startswith("\n\n<system-reminder>\nWhenever you read a file")


async def test_offset_past_the_end_says_how_long_the_file_is(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("1\n2\n3\n")
    assert await read(tmp_path, "a.txt", offset=10) == (
        "<system-reminder>Warning: the file exists but is shorter than the provided "
        "offset (10). The file has 4 lines.</system-reminder>"
    )


async def test_long_lines_are_cut(tmp_path: Path) -> None:
    (tmp_path / "min.js").write_text("x" * (MAX_LINE_CHARS + 500))
    out = await read(tmp_path, "min.js")
    assert out == "1\t" + "x" * MAX_LINE_CHARS + " [line truncated]"


@pytest.mark.parametrize(
    "extra",
    [1, 2, LINE_READ_BYTES, LINE_READ_BYTES - 1, LINE_READ_BYTES + 1, 3 * SKIP_CHUNK_BYTES + 7],
)
async def test_lines_past_the_read_limit_are_cut_and_skipped(tmp_path: Path, extra: int) -> None:
    # Four-byte characters fill the read limit with the fewest characters; the line
    # after the long one (and its number) must come out whole, wherever the cut fell.
    long = "\U0001f600" * (LINE_READ_BYTES // 4) + "y" * extra
    (tmp_path / "min.js").write_text(f"{long}\r\nnext\r\n{long}")
    out = await read(tmp_path, "min.js")
    cut = long[:MAX_LINE_CHARS] + " [line truncated]"
    assert out == f"1\t{cut}\n2\tnext\n3\t{cut}"
    assert await read(tmp_path, "min.js", offset=2, limit=1) == "2\tnext"


async def test_a_huge_line_is_never_read_whole(tmp_path: Path) -> None:
    size = 8 * 1024 * 1024
    (tmp_path / "min.js").write_bytes(b"a" * size + b"\nend\n")
    tracemalloc.start()
    try:
        out = await ReadTool().call(ReadInput("min.js", offset=1), context(tmp_path), no_progress)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert out == "1\t" + "a" * MAX_LINE_CHARS + " [line truncated]\n2\tend\n3\t" + MALWARE_REMINDER
    assert peak < 4 * SKIP_CHUNK_BYTES


async def test_skipping_a_huge_line_checks_for_cancellation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Stop(Exception):
        pass

    checks: list[None] = []

    def check_cancelled() -> None:
        checks.append(None)
        if len(checks) == 3:
            raise Stop

    (tmp_path / "min.js").write_bytes(b"a" * (10 * SKIP_CHUNK_BYTES))
    monkeypatch.setattr(trio.from_thread, "check_cancelled", check_cancelled)
    with pytest.raises(Stop):
        await ReadTool().call(ReadInput("min.js"), context(tmp_path), no_progress)


async def test_default_window_stops_with_a_hint(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("".join(f"{i}\n" for i in range(1, DEFAULT_LIMIT + 501)))
    out = await read(tmp_path, "big.txt")
    assert isinstance(out, str)
    assert out.count("\n") == DEFAULT_LIMIT - 1 + 2
    assert out.endswith(
        f"(Showing lines 1-{DEFAULT_LIMIT}; the file has more. Use offset={DEFAULT_LIMIT + 1} "
        "to read on.)"
    )


async def test_an_explicit_limit_gets_no_hint(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("1\n2\n3\n")
    assert await read(tmp_path, "a.txt", limit=2) == "1\t1\n2\t2"


async def test_output_is_capped_at_whole_lines(tmp_path: Path) -> None:
    (tmp_path / "wide.txt").write_text(("y" * 1500 + "\n") * 200)
    out = await read(tmp_path, "wide.txt")
    assert isinstance(out, str)
    body, _, hint = out.rpartition("\n\n")
    assert len(body) <= MAX_OUTPUT_CHARS
    assert body.endswith("y" * 1500)
    shown = body.count("\n") + 1
    assert (
        hint == f"(Showing lines 1-{shown}; the file has more. Use offset={shown + 1} to read on.)"
    )


async def test_images_come_back_as_image_blocks(tmp_path: Path) -> None:
    (tmp_path / "dot.png").write_bytes(PNG)
    out = await read(tmp_path, "dot.png")
    assert out == (
        ImageBlock(
            {"type": "base64", "media_type": "image/png", "data": base64.b64encode(PNG).decode()}
        ),
    )


async def test_missing_file(tmp_path: Path) -> None:
    # Raised by the call (no <tool_use_error> wrapper), as in Claude Code.
    missing = f"File does not exist. Note: your current working directory is {tmp_path}."
    for name in ("nope.txt", "nope/deeper.txt"):
        with pytest.raises(FileToolError) as raised:
            await read(tmp_path, name)
        assert str(raised.value) == missing


async def test_a_directory_is_not_a_file(tmp_path: Path) -> None:
    (tmp_path / "dir").mkdir()
    with pytest.raises(FileToolError) as raised:
        await read(tmp_path, "dir")
    directory = tmp_path / "dir"
    assert str(raised.value) == f"EISDIR: illegal operation on a directory, read '{directory}'"


async def test_binary_files_are_refused(tmp_path: Path) -> None:
    (tmp_path / "prog.bin").write_bytes(b"\x7fELF\x00\x01\x02")
    assert await read(tmp_path, "prog.bin") == (
        "prog.bin is a binary file. Read shows text files and images (png, jpg, gif, webp) only."
    )


async def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    with trio.fail_after(5):
        assert await read(tmp_path, "pipe") == (
            "pipe is not a regular file (a device, socket or pipe)."
        )


async def test_bad_offset_and_limit(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x\n")
    assert await read(tmp_path, "a.txt", offset=-1) == "offset must be a line number >= 1"
    assert await read(tmp_path, "a.txt", limit=0) == "limit must be at least 1"


async def test_paths_outside_the_root_are_refused(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (tmp_path / "secret.txt").write_text("s\n")
    (root / "ok.txt").write_text("ok\n")
    (root / "link.txt").symlink_to(tmp_path / "secret.txt")
    tool = ReadTool(root)
    assert await read(root, "ok.txt", tool) == "1\tok\n2\t"
    outside = (
        f"Path {{}} is outside the workspace root {root}; "
        "only files under the workspace root can be used."
    )
    assert await read(root, "../secret.txt", tool) == outside.format("../secret.txt")
    assert await read(root, str(tmp_path / "secret.txt"), tool) == outside.format(
        tmp_path / "secret.txt"
    )
    assert await read(root, "link.txt", tool) == outside.format("link.txt")


async def test_call_rechecks_what_validation_saw(tmp_path: Path) -> None:
    tool = ReadTool()
    with pytest.raises(FileToolError, match=r"\AFile does not exist\. Note: your current "):
        await tool.call(ReadInput("gone.txt"), context(tmp_path), lambda _: None)


async def test_permissions_allow_reading_inside_the_working_directory(tmp_path: Path) -> None:
    tool = ReadTool()
    ctx = context(tmp_path)
    assert await tool.check_permissions(ReadInput("a.txt"), ctx) == PermissionResult.allow()
    assert await tool.check_permissions(ReadInput("/etc/hosts"), ctx) == (
        PermissionResult.passthrough(
            "Claude requested permissions to read from /etc/hosts, but you haven't granted it yet."
        )
    )


def test_rule_content_is_a_path_pattern(tmp_path: Path) -> None:
    tool = ReadTool()
    ctx = context(tmp_path)
    assert tool.match_rule_content(
        "./secrets/**", ReadInput("secrets/key.pem"), ctx, behavior="allow"
    )
    assert tool.match_rule_content(
        "*.env", ReadInput(str(tmp_path / "app" / ".env")), ctx, behavior="allow"
    )
    assert not tool.match_rule_content(
        "./secrets/**", ReadInput("src/main.py"), ctx, behavior="allow"
    )


def test_declared_behaviour() -> None:
    tool = ReadTool()
    assert tool.max_result_size_chars == math.inf
    assert tool.is_concurrency_safe(ReadInput("x"))
    assert tool.interrupt_behavior == "cancel"
    assert tool.cancels_siblings_on_error is False


async def test_through_the_runtime(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hello\n")
    uses = [
        ToolUse("toolu_1", "Read", {"file_path": "a.txt"}),
        ToolUse("toolu_2", "Read", {"file_path": "missing.txt"}),
        ToolUse("toolu_3", "Read", {"file_path": "a.txt", "offset": "1"}),
    ]
    outcome = await run_tools(uses, [ReadTool()], cwd=tmp_path)
    ok, missing, bad_type = outcome.results
    assert (ok.is_error, ok.content) == (False, "1\thello\n2\t" + MALWARE_REMINDER)
    assert missing.is_error
    assert missing.content == (
        f"File does not exist. Note: your current working directory is {tmp_path}."
    )
    assert bad_type.is_error
    assert "InputValidationError: Read failed" in bad_type.text


def secret_behind_links(tmp_path: Path) -> Path:
    (tmp_path / "secrets" / "deep").mkdir(parents=True)
    (tmp_path / "secrets" / "deep" / "key.txt").write_text("TOKEN=abc\n")
    (tmp_path / "docs").symlink_to("secrets")
    (tmp_path / "key-link.txt").symlink_to("secrets/deep/key.txt")
    return tmp_path


@pytest.mark.parametrize(
    "file_path", ["docs/deep/key.txt", "key-link.txt", "docs/../docs/deep/key.txt"]
)
@pytest.mark.parametrize("behavior", ["deny", "ask"])
async def test_deny_and_ask_path_rules_follow_symlinks(
    tmp_path: Path, file_path: str, behavior: RuleBehavior
) -> None:

    cwd = secret_behind_links(tmp_path)
    tool, ctx = ReadTool(), context(cwd)
    assert tool.match_rule_content("./secrets/**", ReadInput(file_path), ctx, behavior=behavior)
    # An allow rule matches the path as written only.
    assert not tool.match_rule_content("./secrets/**", ReadInput(file_path), ctx, behavior="allow")


async def test_deny_rule_follows_a_symlinked_working_directory(tmp_path: Path) -> None:

    (tmp_path / "real").mkdir()
    real = secret_behind_links(tmp_path / "real")
    (tmp_path / "cwd").symlink_to(real)
    tool, ctx = ReadTool(), context(tmp_path / "cwd")
    linked = ReadInput("docs/deep/key.txt")
    assert tool.match_rule_content("./secrets/**", linked, ctx, behavior="deny")
    assert not tool.match_rule_content("./public/**", linked, ctx, behavior="deny")


# -- memory --------------------------------------------------------------------------------------


async def test_read_of_a_huge_single_line_stays_bounded_in_memory(tmp_path: Path) -> None:
    size = 16 * 1024 * 1024
    (tmp_path / "min.js").write_bytes(b"a" * size)
    tracemalloc.start()
    try:
        text = await ReadTool().call(
            ReadInput("min.js"), call_context("Read", tmp_path), ignore_progress
        )
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    proves(
        isinstance(text, str) and text.endswith(" [line truncated]" + MALWARE_REMINDER),
        "the line was cut",
    )
    assert peak < size // 4
