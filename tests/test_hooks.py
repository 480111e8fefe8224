"""Hooks (SPEC §5): matchers, hook sets, JSON output, aggregation, running Python hooks."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio
import trio.testing

from trioexec import ConfigurationError
from trioexec._hooks._config import (
    CommandHook,
    HookEntry,
    HookInput,
    HookSet,
    compile_matcher,
    run_hooks,
)
from trioexec._hooks._output import (
    HookBlockingError,
    HookOutcome,
    HookOutput,
    HookResult,
    aggregate,
    parse_hook_json,
    result_from_output,
)

# --- matchers -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("matcher", "tool", "expected"),
    [
        (None, "Bash", True),
        ("", "Bash", True),
        ("*", "mcp__x__y", True),
        ("Bash", "Bash", True),
        ("Bash", "BashOutput", False),  # exact names, not a prefix
        ("Bash|Edit", "Edit", True),
        ("Bash|Edit", "Write", False),
        ("mcp__github__create_issue", "mcp__github__create_issue", True),
        ("Edit.*", "Edit", True),
        ("Edit.*", "MultiEdit", True),  # a regex is unanchored
        ("^Edit$", "MultiEdit", False),
        ("mcp__.*__write", "mcp__fs__write_file", True),
        ("Notebook.*|Bash", "NotebookEdit", True),
        ("[unclosed", "[unclosed", False),  # an invalid regex matches nothing
    ],
)
def test_matcher(matcher: str | None, tool: str, expected: bool) -> None:
    assert compile_matcher(matcher)(tool) is expected


# --- hook sets ------------------------------------------------------------------------------


async def noop(hook_input: HookInput) -> HookOutput | None:
    return None


async def other(hook_input: HookInput) -> HookOutput | None:
    return None


def test_hook_set_from_settings_and_python_hooks() -> None:
    settings = {
        "hooks": {
            "PreToolUse": [
                {"matcher": "Bash", "hooks": [{"type": "command", "command": "a.sh"}]},
                {"hooks": [{"type": "command", "command": "b.sh", "timeout": 5}]},
            ],
            "PostToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "c.sh"}]}],
        }
    }
    hooks = HookSet.from_settings(settings).with_python_hook("PreToolUse", "Bash", noop, timeout=2)
    assert [(e.event, e.matcher, e.label, e.timeout) for e in hooks.entries] == [
        ("PreToolUse", "Bash", "a.sh", 600.0),
        ("PreToolUse", None, "b.sh", 5.0),
        ("PostToolUse", "*", "c.sh", 600.0),
        ("PreToolUse", "Bash", "noop", 2.0),
    ]
    # the bare "hooks" section is accepted too
    assert HookSet.from_settings(settings["hooks"]) == HookSet.from_settings(settings)
    assert [e.label for e in hooks.matching("PreToolUse", "Bash")] == ["a.sh", "b.sh", "noop"]
    assert [e.label for e in hooks.matching("PreToolUse", "Read")] == ["b.sh"]
    assert [e.label for e in hooks.matching("PostToolUseFailure", "Bash")] == []


def test_identical_hooks_run_once() -> None:
    hooks = (
        HookSet()
        .with_command_hook("PreToolUse", "Bash", "check.sh", timeout=1)
        .with_command_hook("PreToolUse", "*", "check.sh", timeout=9)
        .with_command_hook("PreToolUse", "*", "other.sh")
        .with_python_hook("PreToolUse", None, noop)
        .with_python_hook("PreToolUse", "Bash", noop)
        .with_python_hook("PreToolUse", "Bash", other)
    )
    matching = hooks.matching("PreToolUse", "Bash")
    assert [(e.label, e.timeout) for e in matching] == [
        ("check.sh", 1.0),
        ("other.sh", 600.0),
        ("noop", 600.0),
        ("other", 600.0),
    ]
    assert hooks + HookSet() == hooks


@pytest.mark.parametrize(
    ("event", "timeout"), [("Stop", 1.0), ("PreToolUse", 0.0), ("PreToolUse", -1.0)]
)
def test_with_python_hook_rejects_bad_values(event: str, timeout: float) -> None:
    with pytest.raises(ValueError, match="hook"):
        HookSet().with_python_hook(event, None, noop, timeout=timeout)  # type: ignore[arg-type]


def test_from_settings_names_the_source() -> None:
    with pytest.raises(ConfigurationError, match=r"^proj\.json: hooks\.PreToolUse\[0\]\.hooks"):
        HookSet.from_settings({"hooks": {"PreToolUse": [{}]}}, source="proj.json")


# --- hook input -----------------------------------------------------------------------------


def hook_input(event: str = "PreToolUse", **extra: object) -> HookInput:
    return HookInput(
        session_id="sess",
        transcript_path="/t.jsonl",
        cwd="/proj",
        permission_mode="default",
        hook_event_name=event,  # type: ignore[arg-type]
        tool_name="Bash",
        tool_input={"command": "ls"},
        tool_use_id="toolu_1",
        **extra,  # type: ignore[arg-type]
    )


def test_hook_input_json_per_event() -> None:
    base = {
        "session_id": "sess",
        "transcript_path": "/t.jsonl",
        "cwd": "/proj",
        "permission_mode": "default",
        "tool_name": "Bash",
        "tool_input": {"command": "ls"},
        "tool_use_id": "toolu_1",
    }
    assert hook_input().to_json() == {**base, "hook_event_name": "PreToolUse"}
    post = hook_input("PostToolUse", tool_response="out").to_json()
    assert post == {**base, "hook_event_name": "PostToolUse", "tool_response": "out"}
    failure = hook_input("PostToolUseFailure", error="boom", is_interrupt=True).to_json()
    assert failure == {
        **base,
        "hook_event_name": "PostToolUseFailure",
        "error": "boom",
        "is_interrupt": True,
    }


# --- JSON output ----------------------------------------------------------------------------


def test_parse_full_pre_tool_use_output() -> None:
    output = parse_hook_json(
        {
            "continue": False,
            "stopReason": "enough",
            "decision": "approve",
            "reason": "r",
            "systemMessage": "hi user",
            "suppressOutput": True,
            "unknownField": 1,
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "ask",
                "permissionDecisionReason": "check",
                "updatedInput": {"command": "ls -1"},
                "additionalContext": "ctx",
            },
        },
        "PreToolUse",
    )
    assert output == HookOutput(
        continue_=False,
        stop_reason="enough",
        decision="approve",
        reason="r",
        system_message="hi user",
        suppress_output=True,
        permission_decision="ask",
        permission_decision_reason="check",
        updated_input={"command": "ls -1"},
        additional_context="ctx",
    )


def test_parse_post_tool_use_ignores_pre_only_fields() -> None:
    output = parse_hook_json(
        {
            "hookSpecificOutput": {
                "hookEventName": "PostToolUse",
                "additionalContext": "lint: 2 warnings",
                "permissionDecision": "deny",
            }
        },
        "PostToolUse",
    )
    assert output == HookOutput(additional_context="lint: 2 warnings")
    assert parse_hook_json({"stopReason": None}, "PostToolUse") == HookOutput()


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([], "expected a JSON object"),
        ({"continue": "no"}, "continue: expected a boolean, got str"),
        ({"decision": "allow"}, "decision: expected 'approve' or 'block'"),
        ({"systemMessage": 3}, "systemMessage: expected a string"),
        ({"hookSpecificOutput": []}, "hookSpecificOutput: expected an object"),
        (
            {"hookSpecificOutput": {"hookEventName": "PostToolUse"}},
            "hookSpecificOutput.hookEventName: expected 'PreToolUse', got 'PostToolUse'",
        ),
        (
            {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "yes"}},
            "hookSpecificOutput.permissionDecision: expected 'allow', 'deny' or 'ask'",
        ),
        (
            {"hookSpecificOutput": {"hookEventName": "PreToolUse", "updatedInput": "ls"}},
            "hookSpecificOutput.updatedInput: expected an object",
        ),
    ],
)
def test_parse_rejects_bad_output(data: object, message: str) -> None:
    with pytest.raises(ValueError, match="^" + message.replace("(", r"\(").replace(".", r"\.")):
        parse_hook_json(data, "PreToolUse")


def test_result_from_output_decisions() -> None:
    def pre(**fields: object) -> HookResult:
        return result_from_output(HookOutput(**fields), "PreToolUse", "h")  # type: ignore[arg-type]

    assert pre().decision is None
    assert pre(decision="approve").decision == "allow"
    blocked = pre(decision="block", reason="no")
    assert (blocked.decision, blocked.reason) == ("deny", "no")
    both = pre(decision="approve", permission_decision="deny", permission_decision_reason="x")
    assert (both.decision, both.reason) == ("deny", "x")  # permissionDecision takes precedence
    stopped = pre(continue_=False, stop_reason="why")
    assert (stopped.prevent_continuation, stopped.stop_reason) == (True, "why")
    post = result_from_output(HookOutput(decision="block"), "PostToolUse", "h")
    assert (post.decision, post.blocking_error) == (None, "Blocked by hook")
    post = result_from_output(
        HookOutput(decision="block", reason="fix lint", updated_input={"a": 1}), "PostToolUse", "h"
    )
    assert (post.blocking_error, post.updated_input) == ("fix lint", None)


# --- aggregation ----------------------------------------------------------------------------


def r(**fields: object) -> HookResult:
    return HookResult(label=str(fields.pop("label", "h")), **fields)  # type: ignore[arg-type]


def pre(*results: HookResult) -> HookOutcome:
    return aggregate(results, "PreToolUse", "Bash")


def test_deny_beats_ask_beats_allow_in_any_order() -> None:
    allow, ask, deny = r(decision="allow"), r(decision="ask"), r(decision="deny")
    for order in ([allow, ask, deny], [deny, ask, allow], [ask, deny, allow]):
        assert pre(*order).decision == "deny"
    assert pre(allow, ask).decision == "ask"
    assert pre(ask, allow).decision == "ask"
    assert pre(allow, r()).decision == "allow"
    assert pre(r(), r()).decision is None
    assert pre().decision is None


def test_deny_messages() -> None:
    assert pre(r(decision="deny")).deny_message == "Hook PreToolUse:Bash denied this tool"
    assert pre(r(decision="deny", reason="no rm")).deny_message == "no rm"
    blocked = pre(r(decision="allow"), r(blocking_error="[x.sh]: nope"))
    assert (blocked.decision, blocked.deny_message) == (
        "deny",
        "PreToolUse:Bash hook error: [x.sh]: nope",
    )
    first = pre(r(decision="deny", reason="first"), r(decision="deny", reason="second"))
    assert first.deny_message == "first"
    assert pre(r(decision="allow")).deny_message is None


def test_updated_input_rules() -> None:
    a, b = {"command": "a"}, {"command": "b"}
    # from an allowing hook: goes with the decision
    assert pre(r(decision="allow", updated_input=a)).updated_input == a
    # from a hook with no decision: replaces the input, no decision
    plain = pre(r(updated_input=a))
    assert (plain.decision, plain.updated_input) == (None, a)
    # from a denying hook: ignored
    assert pre(r(decision="deny", updated_input=a)).updated_input is None
    assert pre(r(decision="allow"), r(decision="deny", updated_input=a)).updated_input is None
    # among several, the last in hook order wins
    assert pre(r(decision="allow", updated_input=a), r(updated_input=b)).updated_input == b
    assert pre(r(updated_input=b), r(decision="ask", updated_input=a)).updated_input == a


def test_contexts_stop_and_messages_are_all_kept() -> None:
    outcome = pre(
        r(additional_context="one", system_message="m1"),
        r(additional_context="two", prevent_continuation=True),
        r(prevent_continuation=True, stop_reason="later"),
        r(label="bad.sh", error="timed out after 1 s"),
    )
    assert outcome.additional_contexts == ("one", "two")
    assert outcome.prevent_continuation
    assert outcome.stop_reason == "later"
    assert outcome.system_messages == ("m1",)
    assert outcome.errors == ("PreToolUse:Bash hook [bad.sh] failed: timed out after 1 s",)
    assert outcome.decision is None


def test_blocking_errors_after_the_call_are_records() -> None:
    outcome = aggregate(
        [r(blocking_error="[a.sh]: x"), r(blocking_error="second")], "PostToolUse", "Bash"
    )
    assert outcome.blocking_errors == ("[a.sh]: x", "second")
    assert outcome.decision is None


# --- running Python hooks -------------------------------------------------------------------


def entries(*hooks: tuple[object, float]) -> tuple[HookEntry, ...]:
    return tuple(HookEntry("PreToolUse", None, h, t) for h, t in hooks)  # type: ignore[arg-type]


async def forever(data: HookInput) -> HookOutput:
    """A hook that never answers (until it is cancelled)."""
    await trio.sleep_forever()
    raise AssertionError


async def test_python_hooks_run_concurrently_results_in_hook_order(
    autojump_clock: trio.testing.MockClock,
) -> None:
    seen: list[HookInput] = []

    def sleeper(delay: float, context: str) -> object:
        async def hook(data: HookInput) -> HookOutput:
            seen.append(data)
            await trio.sleep(delay)
            return HookOutput(additional_context=context)

        return hook

    start = trio.current_time()
    results = await run_hooks(
        entries((sleeper(3, "slow"), 10), (sleeper(1, "fast"), 10)), hook_input(), cwd=Path()
    )
    assert trio.current_time() - start == 3  # concurrent: the longest, not the sum
    assert [x.additional_context for x in results] == ["slow", "fast"]
    assert seen == [hook_input(), hook_input()]


async def test_a_python_hook_that_times_out_gives_no_decision(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async def allow(data: HookInput) -> HookOutput:
        return HookOutput(permission_decision="allow")

    results = await run_hooks(entries((forever, 5), (allow, 5)), hook_input(), cwd=Path())
    assert results[0] == HookResult(label=forever.__qualname__, error="timed out after 5 s")
    assert results[1].decision == "allow"


async def test_python_hook_failures() -> None:
    async def blocking(data: HookInput) -> HookOutput:
        raise HookBlockingError("not on Fridays")

    async def crashing(data: HookInput) -> HookOutput:
        raise RuntimeError("bug")

    async def wrong_type(data: HookInput) -> object:
        return {"continue": False}

    async def nothing(data: HookInput) -> None:
        return None

    results = await run_hooks(
        entries((blocking, 1), (crashing, 1), (wrong_type, 1), (nothing, 1)),
        hook_input(),
        cwd=Path(),
    )
    assert results[0].blocking_error == "not on Fridays"
    assert results[1].error == "raised RuntimeError: bug"
    assert results[1].decision is None
    assert results[2].error == "returned dict, not HookOutput"
    assert results[3] == HookResult(label=nothing.__qualname__)


async def test_cancelling_hooks_raises_a_plain_cancelled(
    autojump_clock: trio.testing.MockClock,
) -> None:
    with trio.move_on_after(1) as scope:
        try:
            await run_hooks(entries((forever, 600), (forever, 600)), hook_input(), cwd=Path())
        except trio.Cancelled:
            raise
        except BaseException as exc:  # pragma: no cover - the failure being tested for
            pytest.fail(f"expected a plain Cancelled, got {exc!r}")
    assert scope.cancelled_caught


async def test_run_hooks_with_nothing_to_run() -> None:
    assert await run_hooks((), hook_input(), cwd=Path()) == ()


def test_command_hook_label() -> None:
    assert HookEntry("PostToolUse", "Bash", CommandHook("lint.sh")).label == "lint.sh"
