"""A call stopped because a cascading sibling was *denied* says so (``trioexec`` texts);
Claude Code's presets keep their bytes."""

from __future__ import annotations

import attrs
import pytest

from trioexec import GuardRails, Policy, ToolUse, function_tool, run_tools
from trioexec.permissions import PermissionContext

ran: list[str] = []


@function_tool(cancels_siblings_on_error=True)
async def deploy(command: str) -> str:
    """Deploy."""
    ran.append(command)
    return f"deployed {command}"


@function_tool
async def notify(channel: str) -> str:
    """Notify."""
    ran.append(channel)
    return "sent"


EXPLAINED = attrs.evolve(Policy.preset("trioexec"), synthetic_texts="trioexec")
"""The ``trioexec`` policy with its explained texts (whatever its default texts are)."""

CALLS = [ToolUse("t1", "deploy", {"command": "prod"}), ToolUse("t2", "notify", {"channel": "ops"})]
DENIED = GuardRails(PermissionContext(deny=["deploy"], allow=["notify"]))


@pytest.fixture(autouse=True)
def _nothing_ran_yet() -> None:
    ran.clear()


async def test_a_call_after_a_denied_sibling_reads_denied_not_errored() -> None:
    outcome = await run_tools(CALLS, [deploy, notify], guard=DENIED, policy=EXPLAINED)
    first, second = outcome.results
    assert first.text == "Permission to use deploy has been denied."
    assert second.is_error
    assert second.text == (
        "<tool_use_error>Cancelled: tool call deploy(prod) was denied permission, so it did "
        "not run. notify was not started, so it did nothing; the user did not stop it."
        "</tool_use_error>"
    )
    assert "parallel" not in second.text
    assert ran == []


async def test_a_call_after_a_sibling_that_errored_still_reads_errored() -> None:
    @function_tool(name="deploy", cancels_siblings_on_error=True)
    async def failing(command: str) -> str:
        raise RuntimeError("boom")

    outcome = await run_tools(CALLS, [failing, notify], guard=GuardRails(), policy=EXPLAINED)
    assert outcome.results[1].text.startswith(
        "<tool_use_error>Cancelled: parallel tool call deploy(prod) errored. notify was not started"
    )


async def test_claude_code_texts_keep_their_bytes_after_a_denial() -> None:
    claude_code_words = attrs.evolve(EXPLAINED, synthetic_texts="claude-code")
    outcome = await run_tools(CALLS, [deploy, notify], guard=DENIED, policy=claude_code_words)
    assert outcome.results[1].text == (
        "<tool_use_error>Cancelled: parallel tool call deploy(prod) errored</tool_use_error>"
    )
