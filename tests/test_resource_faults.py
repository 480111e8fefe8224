"""Resource faults in trioexec's own steps: the call keeps its tool's real result.

Persisting a large result is trioexec's work, not the tool's: when it fails
(a full disk, no memory for the copy, any other error) the tool had
returned, so the call is answered with its real result, kept inline (as
Claude Code does when the file cannot be written; the failure is logged),
the run goes on, and its other calls get their own answers.
"""

from __future__ import annotations

import errno
import logging
from typing import TYPE_CHECKING, Any

import pytest
import trio
import trio.testing
from helpers import REJECT, make_tool, use

from trioexec import ContentReplacementState, ToolResult, Update, run_tools
from trioexec._results import _persist as _results
from trioexec.results import apply_message_budget

if TYPE_CHECKING:
    from pathlib import Path

_BIG = "0123456789\n" * 10_000  # past the persistence threshold of a 100,000-char tool

_FAULTS = {
    "MemoryError": MemoryError(),
    "ENOSPC": OSError(errno.ENOSPC, "No space left on device"),
    "a bug": ValueError("unexpected"),
}


@pytest.mark.parametrize("fault", sorted(_FAULTS))
@pytest.mark.parametrize("where", ["plan_persistence", "write_exclusive"])
async def test_a_persistence_fault_keeps_the_tools_real_result_and_the_run_going(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    fault: str,
    where: str,
) -> None:
    def failing(*args: Any, **kwargs: Any) -> Any:
        raise _FAULTS[fault]

    async def failing_async(*args: Any, **kwargs: Any) -> Any:
        raise _FAULTS[fault]

    monkeypatch.setattr(
        _results, where, failing_async if where == "write_exclusive" else failing
    )
    tool = make_tool("T", safe=False)  # one after the other: the later call must still run
    send, receive = trio.open_memory_channel[Update](float("inf"))
    with caplog.at_level(logging.WARNING, logger="trioexec"):
        outcome = await run_tools(
            [use("a", "T", output=_BIG), use("b", "T", output="small")],
            [tool],
            session_dir=tmp_path,
            updates=send,
        )
    assert [r.content for r in outcome.results] == [_BIG, "small"]
    assert not any(r.is_error for r in outcome.results)
    assert REJECT not in [r.content for r in outcome.results]
    assert "could not persist the result of 'a'" in caplog.text
    receive.close()


@pytest.mark.parametrize("fault", sorted(_FAULTS))
async def test_a_persistence_fault_in_the_message_budget_keeps_the_result_inline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fault: str
) -> None:
    async def failing(*args: Any, **kwargs: Any) -> Any:
        raise _FAULTS[fault]

    monkeypatch.setattr("trioexec._results._budget.write_exclusive", failing)
    results = [ToolResult("a", _BIG), ToolResult("b", _BIG)]
    out = await apply_message_budget(
        results, state=ContentReplacementState(), session_dir=tmp_path, budget=10_000
    )
    assert [r.content for r in out] == [_BIG, _BIG]
