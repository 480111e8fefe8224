"""trioexec.testing.ScriptedHook: a Python hook whose answer is data."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio
import trio.testing

from trioexec import CallContext, ToolUse
from trioexec._guard._after import after_call
from trioexec._guard._rails import GuardRails, authorize_call
from trioexec._hooks._config import HookInput, HookSet
from trioexec._hooks._output import HookBlockingError, HookOutput
from trioexec._models import ToolResult
from trioexec.testing import ScriptedHook, ScriptedHookError, ScriptedTool

HOOK_INPUT = HookInput(
    session_id="",
    transcript_path="",
    cwd="/",
    permission_mode="default",
    hook_event_name="PreToolUse",
    tool_name="Bash",
    tool_input={"command": "ls"},
    tool_use_id="toolu_1",
)


async def test_answers_with_its_fields_after_sleeping(
    autojump_clock: trio.testing.MockClock,
) -> None:
    hook = ScriptedHook(
        sleep=2,
        decision="deny",
        reason="no",
        updated_input={"command": "pwd"},
        additional_context="ctx",
        continue_=False,
        stop_reason="stop",
    )
    start = trio.current_time()
    output = await hook(HOOK_INPUT)
    assert trio.current_time() - start == 2
    assert output == HookOutput(
        continue_=False,
        stop_reason="stop",
        permission_decision="deny",
        permission_decision_reason="no",
        updated_input={"command": "pwd"},
        additional_context="ctx",
    )


async def test_no_fields_means_no_opinion() -> None:
    assert await ScriptedHook()(HOOK_INPUT) is None


async def test_errors_blocking_or_not() -> None:
    with pytest.raises(ScriptedHookError, match="crashed"):
        await ScriptedHook(error="crashed")(HOOK_INPUT)
    with pytest.raises(HookBlockingError, match="blocked"):
        await ScriptedHook(error="blocked", blocking=True)(HOOK_INPUT)


def test_identity_and_repr() -> None:
    assert ScriptedHook() != ScriptedHook()
    assert (
        repr(ScriptedHook(decision="ask", sleep=1.0)) == "ScriptedHook(sleep=1.0, decision='ask')"
    )


def ctx(tool_use: ToolUse) -> CallContext:
    return CallContext(tool_use=tool_use, cwd=Path("/repo"))


async def test_in_guard_rails_a_blocking_pre_hook_denies(
    autojump_clock: trio.testing.MockClock,
) -> None:
    hooks = (
        HookSet()
        .with_python_hook("PreToolUse", "Bash", ScriptedHook(additional_context="first"))
        .with_python_hook("PreToolUse", "Bash", ScriptedHook(error="policy", blocking=True))
    )
    tool = ScriptedTool("Bash")
    use = ToolUse("toolu_1", "Bash", {"command": "ls"})
    verdict = await authorize_call(GuardRails(hooks=hooks), tool, use, dict(use.input), ctx(use))
    assert not verdict.allowed
    assert verdict.message == "PreToolUse:Bash hook error: policy"
    assert [a.text for a in verdict.attachments] == ["first"]


async def test_in_guard_rails_a_failing_hook_never_blocks() -> None:
    hooks = HookSet().with_python_hook("PreToolUse", None, ScriptedHook(error="crashed"))
    tool = ScriptedTool("Read")
    use = ToolUse("toolu_1", "Read", {})
    verdict = await authorize_call(GuardRails(hooks=hooks), tool, use, {}, ctx(use))
    assert verdict.allowed
    assert verdict.hook_errors


async def test_post_hook_records() -> None:
    hooks = HookSet().with_python_hook(
        "PostToolUse", "Read", ScriptedHook(error="too big", blocking=True)
    )
    tool = ScriptedTool("Read")
    use = ToolUse("toolu_1", "Read", {})
    verdict = await after_call(
        GuardRails(hooks=hooks), tool, use, {}, response=ToolResult("toolu_1", "x")
    )
    assert [(a.kind, a.text) for a in verdict.attachments] == [("hook_blocking_error", "too big")]
