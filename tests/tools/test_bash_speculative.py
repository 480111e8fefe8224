"""Bash's classifier is the speculative permission check (SPEC §4 step 5).

It starts beside the PreToolUse hooks, its answer stands in for
``check_permissions``, and a hook's deny cancels it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import trio

from trioexec import GuardRails, PermissionResult, ToolUse, run_tools
from trioexec.hooks import HookInput, HookOutput, HookSet
from trioexec.tools import BashInput, BashTool, _bash

if TYPE_CHECKING:
    from pathlib import Path

    import pytest

    from trioexec import CallContext


def guard_with(hook: object) -> GuardRails:
    return GuardRails(hooks=HookSet().with_python_hook("PreToolUse", "Bash", hook))  # type: ignore[arg-type]


async def test_the_classifier_runs_while_the_hooks_still_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    classified = trio.Event()
    real = _bash.judge_paths

    def judge_paths(
        command: str,
        cwd: Path,
        rules: tuple[str, ...],
        *,
        budget: int | None = None,
        allow_rules: tuple[str, ...] = (),
    ) -> PermissionResult:
        # Bash judges in place unless it must glob or walk far (then in a worker thread).
        if trio.lowlevel.in_trio_task():
            classified.set()
        else:
            trio.from_thread.run_sync(classified.set)
        return real(command, cwd, rules, budget=budget, allow_rules=allow_rules)

    monkeypatch.setattr(_bash, "judge_paths", judge_paths)

    seen: list[bool] = []

    async def hook(_: HookInput) -> None:
        with trio.move_on_after(5):  # waits for the classifier: it must run beside this hook
            await classified.wait()
        seen.append(classified.is_set())

    outcome = await run_tools(
        [ToolUse("toolu_1", "Bash", {"command": "ls"})],
        [BashTool()],
        cwd=tmp_path,
        guard=guard_with(hook),
    )
    (result,) = outcome.results
    assert seen == [True]
    assert not result.is_error  # allowed by the classifier's (speculative) answer


class SlowCheckBash(BashTool):
    """A Bash whose own check never finishes; records how it ended."""

    def __init__(self) -> None:
        super().__init__()
        self.started = trio.Event()
        self.cancelled = False
        self.checks = 0

    async def check_permissions(self, input: BashInput, ctx: CallContext) -> PermissionResult:  # noqa: A002
        self.checks += 1
        self.started.set()
        try:
            await trio.sleep_forever()
        except trio.Cancelled:
            self.cancelled = True
            raise
        raise AssertionError("unreachable")


async def test_a_hooks_deny_cancels_the_speculative_check(tmp_path: Path) -> None:
    tool = SlowCheckBash()

    async def deny(_: HookInput) -> HookOutput:
        await tool.started.wait()  # the check is under way when the hook answers
        return HookOutput(permission_decision="deny", permission_decision_reason="no shell today")

    with trio.fail_after(10):
        outcome = await run_tools(
            [ToolUse("toolu_1", "Bash", {"command": "ls"})],
            [tool],
            cwd=tmp_path,
            guard=guard_with(deny),
        )
    (result,) = outcome.results
    assert (result.is_error, result.content) == (True, "no shell today")
    assert tool.cancelled
    assert tool.checks == 1  # the chain did not ask again


async def test_without_hooks_the_answer_is_the_classifiers(tmp_path: Path) -> None:
    uses = [
        ToolUse("toolu_1", "Bash", {"command": "ls"}),
        ToolUse("toolu_2", "Bash", {"command": "touch made"}),
    ]
    ok, refused = (await run_tools(uses, [BashTool()], cwd=tmp_path, guard=GuardRails())).results
    assert not ok.is_error
    assert refused.is_error
    assert refused.content == (
        "Claude requested permissions to use Bash, but you haven't granted it yet."
    )
    assert not (tmp_path / "made").exists()
