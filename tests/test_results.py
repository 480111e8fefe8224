"""Per-call result size handling: placeholder, thresholds, preview, sizes, file names, disk."""

from __future__ import annotations

import errno
import json
import logging
import math
import threading
from pathlib import Path
from typing import Any, Self

import pytest
import trio
import trio.testing
from hypothesis import given
from hypothesis import strategies as st

import trioexec
from trioexec import ContentReplacementState, ImageBlock, TextBlock, Tool, ToolResult
from trioexec._results._persist import (
    DEFAULT_MAX_RESULT_CHARS,
    MAX_WRAPPER_CHARS,
    content_size,
    empty_placeholder,
    finalize_result,
    format_size,
    generate_preview,
    is_content_empty,
    is_persisted,
    persisted_output_message,
    persistence_threshold,
    plan_persistence,
    safe_file_stem,
    tool_result_path,
    write_exclusive,
)
from trioexec.results import apply_message_budget
from trioexec.scenario import parse_scenario, run_scenario
from trioexec.testing import ScriptedTool


class SizedTool(Tool[Any]):
    def __init__(self, name: str = "Bash", max_result_size_chars: float = 100_000) -> None:
        self.name = name
        self.max_result_size_chars = max_result_size_chars


def lines(n: int) -> str:
    """``n`` characters of 79-character lines plus newlines (like scenario ``output_size``)."""
    return (("x" * 79 + "\n") * (n // 80 + 1))[:n]


def listing(folder: Path) -> list[Path]:
    return sorted(folder.iterdir())


IMAGE = ImageBlock({"type": "base64", "media_type": "image/png", "data": "AAAA"})


# -- empty placeholder -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "content",
    [
        "",
        "   ",
        "\n\t \r\n",
        "\u00a0\ufeff",
        (),
        (TextBlock(""),),
        (TextBlock(" "), TextBlock("\n")),
    ],
)
async def test_empty_output_becomes_placeholder(tmp_path: Path, content: Any) -> None:
    result = ToolResult("toolu_1", content)
    out = await finalize_result(SizedTool("Bash"), result, session_dir=tmp_path)
    assert out == ToolResult("toolu_1", "(Bash completed with no output)")


def test_none_is_empty_and_placeholder_text() -> None:
    assert is_content_empty(None)
    assert empty_placeholder("Grep") == "(Grep completed with no output)"


@pytest.mark.parametrize("content", ["x", " x ", (IMAGE,), (TextBlock(" "), TextBlock("a"))])
def test_non_empty_content(content: Any) -> None:
    assert not is_content_empty(content)


async def test_empty_error_is_untouched(tmp_path: Path) -> None:
    result = ToolResult("toolu_1", "", is_error=True)
    assert await finalize_result(SizedTool(), result, session_dir=tmp_path) is result


# -- thresholds --------------------------------------------------------------------------------


def test_threshold_is_min_of_tool_limit_and_global() -> None:
    assert DEFAULT_MAX_RESULT_CHARS == 50_000
    assert persistence_threshold(100_000) == 50_000
    assert persistence_threshold(30_000) == 30_000
    assert persistence_threshold(math.inf) == math.inf


async def test_50000_stays_inline_50001_is_persisted(tmp_path: Path) -> None:
    tool = SizedTool()
    inline = ToolResult("toolu_a", lines(50_000))
    assert await finalize_result(tool, inline, session_dir=tmp_path) is inline
    assert not (tmp_path / "tool-results").exists()

    big = ToolResult("toolu_b", lines(50_001))
    out = await finalize_result(tool, big, session_dir=tmp_path)
    path = tmp_path / "tool-results" / "toolu_b.txt"
    assert path.read_text(encoding="utf-8") == big.content
    assert isinstance(out.content, str)
    assert out.content.startswith(
        f"<persisted-output>\nOutput too large (48.8KB). Full output saved to: {path}\n\n"
        "Preview (first 2KB):\n"
    )
    assert out.content.endswith("\n...\n</persisted-output>")
    assert out.tool_use_id == "toolu_b"
    assert not out.is_error


async def test_tool_limit_below_global_decides(tmp_path: Path) -> None:
    tool = SizedTool(max_result_size_chars=10)
    assert (
        await finalize_result(tool, ToolResult("t", "0123456789"), session_dir=tmp_path)
    ).content == ("0123456789")
    out = await finalize_result(tool, ToolResult("t", "0123456789A"), session_dir=tmp_path)
    path = tmp_path / "tool-results" / "t.txt"
    # The preview is the whole output, so there is no "..." line.
    assert out.content == (
        "<persisted-output>\n"
        f"Output too large (11 bytes). Full output saved to: {path}\n\n"
        "Preview (first 2KB):\n"
        "0123456789A\n"
        "</persisted-output>"
    )


async def test_infinite_limit_never_persists(tmp_path: Path) -> None:
    result = ToolResult("toolu_r", lines(300_000))
    out = await finalize_result(SizedTool("Read", math.inf), result, session_dir=tmp_path)
    assert out is result
    assert not (tmp_path / "tool-results").exists()


async def test_image_result_untouched(tmp_path: Path) -> None:
    result = ToolResult("toolu_i", (TextBlock(lines(80_000)), IMAGE))
    assert await finalize_result(SizedTool(), result, session_dir=tmp_path) is result
    assert not (tmp_path / "tool-results").exists()


async def test_error_never_persisted(tmp_path: Path) -> None:
    result = ToolResult("toolu_e", lines(80_000), is_error=True)
    assert await finalize_result(SizedTool(), result, session_dir=tmp_path) is result
    assert not (tmp_path / "tool-results").exists()


async def test_without_a_session_dir_an_oversized_result_is_cut_with_a_marker() -> None:
    result = ToolResult("toolu_n", lines(80_000))
    cut = await finalize_result(SizedTool(), result, session_dir=None)
    assert isinstance(cut.content, str)
    preview, has_more = generate_preview(lines(80_000))
    assert has_more
    assert cut.content == (
        "<truncated-output>\n"
        f"Output too large (78.1KB) and not kept: no session folder is configured, so only "
        f"its first {len(preview):,} characters are shown and the other {80_000 - len(preview):,} "
        "were cut. To see more, ask for less at a time (a narrower command or pattern, a range "
        "of lines, head, tail or grep).\n\n"
        f"Preview (first 2KB):\n{preview}\n...\n</truncated-output>"
    )
    assert is_persisted(cut.content)
    assert await finalize_result(SizedTool(), cut, session_dir=None) is cut  # idempotent


async def test_without_a_session_dir_a_result_under_the_threshold_stays_whole() -> None:
    result = ToolResult("toolu_n", lines(50_000))
    assert await finalize_result(SizedTool(), result, session_dir=None) is result


async def test_existing_file_with_the_same_text_is_reused(tmp_path: Path) -> None:
    result = ToolResult("toolu_x", lines(60_000))
    plan = plan_persistence(result.content, "toolu_x", tmp_path)
    plan.path.parent.mkdir(parents=True)
    plan.path.write_text(plan.data, encoding="utf-8")
    inode = plan.path.stat().st_ino
    out = await finalize_result(SizedTool(), result, session_dir=tmp_path)
    assert out.content == plan.replacement
    assert plan.path.stat().st_ino == inode  # reused, not rewritten


async def test_existing_file_with_other_text_keeps_result_inline(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "tool-results" / "toolu_x.txt"
    path.parent.mkdir(parents=True)
    path.write_text("from an earlier turn", encoding="utf-8")
    result = ToolResult("toolu_x", lines(60_000))
    with caplog.at_level(logging.WARNING, logger="trioexec.results"):
        out = await finalize_result(SizedTool(), result, session_dir=tmp_path)
    assert out is result
    assert "other contents" in caplog.text
    assert path.read_text(encoding="utf-8") == "from an earlier turn"


def test_is_persisted_accepts_only_the_exact_wrapper(tmp_path: Path) -> None:
    for text in (lines(60_000), "short"):
        wrapper = plan_persistence(text, "toolu_p", tmp_path).replacement
        assert is_persisted(wrapper)
        assert not is_persisted(wrapper + "\n")
        assert not is_persisted(wrapper[:-1])
        assert not is_persisted(wrapper.replace("Full output", "All output"))
    assert not is_persisted("<persisted-output>\n" + lines(60_000))
    assert not is_persisted("<persisted-output>\nhello\n</persisted-output>")


async def test_write_exclusive_reports_whether_it_wrote(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "er" / "f.txt"
    assert await write_exclusive(path, "one\r\ntwo") is True
    assert await write_exclusive(path, "one\r\ntwo") is False
    with pytest.raises(FileExistsError):
        await write_exclusive(path, "other")
    assert path.read_bytes() == b"one\r\ntwo"
    assert sorted(p.name for p in path.parent.iterdir()) == ["f.txt"]  # no temporary file left


async def test_finalize_is_idempotent(tmp_path: Path) -> None:
    for limit in (100_000, 100, 0):
        tool = SizedTool(max_result_size_chars=limit)
        for content in (lines(70_000), "", "short", (TextBlock(lines(70_000)),)):
            once = await finalize_result(
                tool, ToolResult(f"id{limit}", content), session_dir=tmp_path
            )
            twice = await finalize_result(tool, once, session_dir=tmp_path)
            assert twice == once


async def test_block_list_is_saved_as_json(tmp_path: Path) -> None:
    blocks = (TextBlock(lines(30_000)), TextBlock("é" + lines(30_000)))
    out = await finalize_result(SizedTool(), ToolResult("toolu_j", blocks), session_dir=tmp_path)
    path = tmp_path / "tool-results" / "toolu_j.json"
    saved = path.read_text(encoding="utf-8")
    assert json.loads(saved) == [{"type": "text", "text": b.text} for b in blocks]
    assert saved.startswith('[\n  {\n    "type": "text",\n    "text": "xxx')
    assert "é" in saved
    assert isinstance(out.content, str)
    assert f"Output too large ({format_size(len(saved))}). Full output saved to: {path}\n" in (
        out.content
    )
    assert content_size(blocks) == 60_001


async def test_unwritable_session_dir_keeps_result_inline(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder", encoding="utf-8")
    result = ToolResult("toolu_w", lines(60_000))
    with caplog.at_level(logging.WARNING, logger="trioexec.results"):
        out = await finalize_result(SizedTool(), result, session_dir=blocker)
    assert out is result
    assert "toolu_w" in caplog.text


async def test_cancelled_before_write_leaves_no_file(tmp_path: Path) -> None:
    with trio.CancelScope() as scope:
        scope.cancel(reason="test")
        await finalize_result(
            SizedTool(), ToolResult("toolu_c", lines(60_000)), session_dir=tmp_path
        )
    assert scope.cancelled_caught
    assert not (tmp_path / "tool-results" / "toolu_c.txt").exists()


# -- preview -----------------------------------------------------------------------------------


def test_preview_cuts_at_newline_after_character_1000() -> None:
    text = "a" * 1001 + "\n" + "b" * 3000
    assert generate_preview(text) == ("a" * 1001, True)


def test_preview_ignores_newline_at_character_1000() -> None:
    text = "a" * 1000 + "\n" + "b" * 3000
    assert generate_preview(text) == (text[:2000], True)


def test_preview_without_newline_takes_2000() -> None:
    text = "c" * 5000
    assert generate_preview(text) == ("c" * 2000, True)


def test_preview_uses_last_newline_in_first_2000() -> None:
    text = "a" * 1500 + "\n" + "b" * 498 + "\n" + "c" * 10
    # The newline at index 1999 is inside the first 2,000 characters.
    assert generate_preview(text + "d" * 100) == (text[:1999], True)
    # A newline at index 2000 is not.
    text2 = "a" * 1500 + "\n" + "b" * 499 + "\n" + "c" * 100
    assert generate_preview(text2) == (text2[:1500], True)


def test_preview_of_short_text_is_whole() -> None:
    assert generate_preview("x" * 2000) == ("x" * 2000, False)
    assert generate_preview("x" * 2001) == ("x" * 2000, True)


def test_wrapper_byte_for_byte() -> None:
    text = "line one\n" + "z" * 1200 + "\n" + "tail" * 1000
    plan = plan_persistence(text, "toolu_01", Path("/s"))
    assert plan.path == Path("/s/tool-results/toolu_01.txt")
    assert plan.data == text
    assert plan.replacement == (
        "<persisted-output>\n"
        "Output too large (5.1KB). Full output saved to: /s/tool-results/toolu_01.txt\n"
        "\n"
        "Preview (first 2KB):\n"
        "line one\n" + "z" * 1200 + "\n"
        "...\n"
        "</persisted-output>"
    )
    assert persisted_output_message(size=3, path="p", preview="abc", has_more=False) == (
        "<persisted-output>\nOutput too large (3 bytes). Full output saved to: p\n\n"
        "Preview (first 2KB):\nabc\n</persisted-output>"
    )


# -- sizes -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("size", "text"),
    [
        (0, "0 bytes"),
        (1023, "1023 bytes"),
        (1024, "1KB"),
        (1280, "1.3KB"),  # 1.25 rounds half up, as JavaScript's toFixed(1)
        (2000, "2KB"),
        (40_000, "39.1KB"),
        (50_001, "48.8KB"),
        (1024 * 1024 - 1, "1024KB"),
        (1024 * 1024, "1MB"),
        (1_572_864, "1.5MB"),
        (1024**3, "1GB"),
        (5 * 1024**3 + 1024**3 // 10 + 1, "5.1GB"),
    ],
)
def test_format_size(size: int, text: str) -> None:
    assert format_size(size) == text


# -- file names --------------------------------------------------------------------------------

HOSTILE_IDS = [
    "../x",
    "a/b",
    "..",
    ".",
    "",
    "x" * 10_000,
    "a\\b",
    "/etc/passwd",
    "%",
    "%2E",
    "%%",
    "é",
    "nul\x00byte",
    "C:",
    "a" * 200,
    "a" * 201,
    "./" * 100,
    "\ud800",
]


@pytest.mark.parametrize("tool_use_id", HOSTILE_IDS, ids=lambda s: repr(s)[:30])
async def test_hostile_id_stays_inside_tool_results(tmp_path: Path, tool_use_id: str) -> None:
    root = (tmp_path / "tool-results").resolve()
    for is_json in (False, True):
        path = tool_result_path(tmp_path, tool_use_id, is_json=is_json)
        assert path.parent == tmp_path / "tool-results"
        assert path.resolve().parent == root
        assert len(path.name.encode()) < 255
    out = await finalize_result(
        SizedTool(), ToolResult(tool_use_id, lines(60_000)), session_dir=tmp_path
    )
    assert isinstance(out.content, str)
    assert out.content.startswith("<persisted-output>")
    written = listing(tmp_path / "tool-results")
    assert [p.resolve().parent for p in written] == [root]
    assert listing(tmp_path) == [tmp_path / "tool-results"]


def test_plain_ids_are_used_as_is() -> None:
    assert safe_file_stem("toolu_01A09q90qw90lq917835lq9") == "toolu_01A09q90qw90lq917835lq9"
    assert safe_file_stem("a-b_C") == "a-b_C"
    assert safe_file_stem("a" * 200) == "a" * 200


def test_encoded_ids() -> None:
    assert safe_file_stem("../x") == "%2E%2E%2Fx"
    assert safe_file_stem("a/b") == "a%2Fb"
    assert safe_file_stem("..") == "%2E%2E"
    assert safe_file_stem("%") == "%25"
    assert safe_file_stem("é") == "%C3%A9"
    assert safe_file_stem("").startswith("%%")
    assert safe_file_stem("x" * 10_000).startswith("%%")
    assert len(safe_file_stem("x" * 10_000)) == 66


def test_hostile_ids_get_distinct_names() -> None:
    stems = [safe_file_stem(i) for i in HOSTILE_IDS]
    assert len(set(stems)) == len(HOSTILE_IDS)


@given(st.lists(st.text(max_size=120), unique=True, max_size=30))
def test_file_stems_are_injective_and_safe(ids: list[str]) -> None:
    stems = [safe_file_stem(i) for i in ids]
    assert len(set(stems)) == len(ids)
    for stem in stems:
        assert stem
        assert set(stem) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-%")
        assert len(stem) <= 200


# -- persisted files: virtual time, failed writes, reuse (SPEC §7) -------------------------------


async def test_persisting_a_result_does_not_move_virtual_time(
    autojump_clock: trio.testing.MockClock, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A disk that answers in real time: the worker thread is busy for up to one
    # real second, or until virtual time reaches 0.75 if persisting let it move.
    disk = threading.Event()
    real_open = trio.open_file

    async def slow_disk_open(*args: Any, **kwargs: Any) -> Any:
        await trio.to_thread.run_sync(disk.wait, 1.0)
        return await real_open(*args, **kwargs)

    monkeypatch.setattr(trio, "open_file", slow_disk_open)
    scenario = parse_scenario(
        {
            "trioexec_scenario": 1,
            "tools": [{"name": "Grep", "concurrency_safe": True}],
            "calls": [
                {"id": "big", "name": "Grep", "input": {"sleep": 0.5, "output_size": 60_000}},
                {"id": "slow", "name": "Grep", "input": {"sleep": 2.0, "output": "s"}},
            ],
        }
    )

    async def later_deadline() -> None:
        await trio.sleep(0.75)
        disk.set()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(later_deadline)
        run = await run_scenario(scenario, session_dir=tmp_path)
    completed = [e.t for e in run.events if e.tool_use_id == "big" and e.kind == "completed"]
    assert run.results[0].text.startswith("<persisted-output>")
    assert completed == [0.5]


class _FullDisk:
    """An async file whose write stores half the data and then fails (a full disk)."""

    def __init__(self, file: Any) -> None:
        self._file = file

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._file.aclose()

    async def write(self, data: str) -> int:
        await self._file.write(data[: len(data) // 2])
        raise OSError(errno.ENOSPC, "No space left on device")


async def test_a_failed_write_never_leaves_a_file_that_is_reused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    grep = ScriptedTool("Grep", concurrency_safe=True)
    text = "0123456789\n" * 6_000
    real_open = trio.open_file

    async def full_disk_open(*args: Any, **kwargs: Any) -> Any:
        return _FullDisk(await real_open(*args, **kwargs))

    with monkeypatch.context() as patch:
        patch.setattr(trio, "open_file", full_disk_open)
        first = await finalize_result(grep, ToolResult("toolu_1", text), session_dir=tmp_path)
    assert first.content == text  # the failed write keeps the result inline, as documented
    out = await apply_message_budget(
        [first], state=ContentReplacementState(), session_dir=tmp_path, budget=10_000
    )
    saved = tool_result_path(tmp_path, "toolu_1", is_json=False)
    assert out[0].content == text or saved.read_text("utf-8") == text


async def test_an_existing_file_with_other_contents_is_not_reused(tmp_path: Path) -> None:
    grep = ScriptedTool("Grep", concurrency_safe=True)
    saved = tool_result_path(tmp_path, "toolu_1", is_json=False)
    saved.parent.mkdir(parents=True)
    saved.write_text("an older result of another run", encoding="utf-8")
    text = "new line\n" * 7_000
    out = await finalize_result(grep, ToolResult("toolu_1", text), session_dir=tmp_path)
    assert out.content == text or saved.read_text("utf-8") == text


async def test_output_that_only_starts_like_a_wrapper_is_still_persisted(tmp_path: Path) -> None:
    bash = ScriptedTool("Bash")
    text = "<persisted-output>\n" + "log line\n" * 30_000  # e.g. `cat` of a saved transcript
    per_call = await finalize_result(bash, ToolResult("toolu_1", text), session_dir=tmp_path)
    budget = await apply_message_budget(
        [ToolResult("toolu_2", text)], state=ContentReplacementState(), session_dir=tmp_path
    )
    assert len(per_call.text) < 10_000
    assert len(budget[0].text) < 10_000


# -- bounded by default: no session folder ---------------------------------------------------


@trioexec.function_tool(concurrency_safe=True)
async def flood(size: int) -> str:
    """Print ``size`` characters."""
    return lines(size)


async def test_a_5_000_000_character_result_through_run_tools_without_session_dir_is_bounded() -> (
    None
):
    uses = [trioexec.ToolUse("toolu_big", "flood", {"size": 5_000_000})]
    outcome = await trioexec.run_tools(uses, [flood])
    message = await trioexec.build_user_message(
        outcome.updates, state=ContentReplacementState(), session_dir=None
    )
    (block,) = message.to_api()["content"]  # type: ignore[misc]
    content = block["content"]  # type: ignore[index]
    assert isinstance(content, str)
    assert len(content) <= MAX_WRAPPER_CHARS
    assert content.startswith("<truncated-output>\nOutput too large (4.8MB) and not kept")
    assert "the other 4,998," in content  # how much was cut, in characters


async def test_the_message_budget_bounds_results_under_the_per_call_threshold_too() -> None:
    uses = [trioexec.ToolUse(f"toolu_{i}", "flood", {"size": 45_000}) for i in range(6)]
    async with trioexec.open_streaming_executor([flood]) as executor:
        for use in uses:
            executor.add_tool(use)
        released = [u async for u in executor.remaining() if isinstance(u, trioexec.ResultUpdate)]
    assert all(content_size(u.result.content) == 45_000 for u in released)  # each under 50,000
    message = await trioexec.build_user_message(
        released, state=ContentReplacementState(), session_dir=None
    )
    assert sum(content_size(r.content) for r in message.results) <= 200_000
    assert sum(is_persisted(r.content) for r in message.results) == 2  # 270,000 -> 2 cut
