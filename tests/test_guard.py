"""authorize_call / after_call end to end with Python hooks (SPEC §4 steps 5-7 and 10, §5, §6)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
import pytest
import trio
import trio.testing
from helpers import call_context, needs, proves, real_bash

import trioexec
from trioexec import (
    Attachment,
    CallContext,
    ConfigurationError,
    GuardRails,
    PermissionResult,
    ProgressSender,
    Tool,
    ToolResult,
    ToolUse,
    function_tool,
    run_tools,
)
from trioexec._contract._permission_context import PermissionContext
from trioexec._guard._after import PostToolUseVerdict, after_call
from trioexec._guard._bash_rules import match_bash_rule
from trioexec._guard._rails import PreToolUseVerdict, authorize_call
from trioexec._hooks._config import HookInput, HookSet
from trioexec._hooks._output import HookBlockingError, HookOutput
from trioexec._texts import REJECT_MESSAGE
from trioexec.tools import (
    BashInput,
    BashTool,
    default_tools,
)

if TYPE_CHECKING:
    from collections.abc import Mapping

    from trioexec._contract._function_tool import RuleMatcher
    from trioexec._contract._rules import RuleBehavior
    from trioexec._hooks._config import PythonHook
    from trioexec._models import JSONValue
    from trioexec.permissions import PermissionModeName

Input = dict[str, Any]
DENIED = "Permission to use Bash has been denied."
NOT_GRANTED = "Claude requested permissions to use Bash, but you haven't granted it yet."


class Shell(Tool[Input]):
    """A Bash-like tool: rules match the command, its own check is scripted and recorded."""

    name = "Bash"

    def __init__(self, own: PermissionResult | None = None) -> None:
        self.input_schema = {
            "type": "object",
            "properties": {"command": {"type": "string"}},
            "required": ["command"],
            "additionalProperties": False,
        }
        self.own = own if own is not None else PermissionResult.passthrough()
        self.checked: list[Input] = []
        self.seen_permissions: list[object] = []

    async def check_permissions(self, input: Input, ctx: CallContext) -> PermissionResult:  # noqa: A002
        self.checked.append(input)
        self.seen_permissions.append(ctx.permissions)
        return self.own

    def match_rule_content(
        self,
        content: str,
        input: Input,  # noqa: A002
        ctx: CallContext,
        *,
        behavior: RuleBehavior,
    ) -> bool:
        return match_bash_rule(content, input["command"], behavior=behavior)


class Recorder:
    """A ``can_use_tool`` callback that records the asks and answers with ``answer``."""

    def __init__(self, answer: PermissionResult) -> None:
        self.answer = answer
        self.asks: list[tuple[str, Mapping[str, JSONValue], str]] = []

    async def __call__(
        self, tool_name: str, tool_input: Mapping[str, JSONValue], tool_use_id: str
    ) -> PermissionResult:
        self.asks.append((tool_name, tool_input, tool_use_id))
        return self.answer


def hook_returning(output: HookOutput | None, delay: float = 0) -> PythonHook:
    async def hook(data: HookInput) -> HookOutput | None:
        if delay:
            await trio.sleep(delay)
        return output

    return hook


def pre(decision: str | None = None, **fields: Any) -> HookOutput:
    return HookOutput(permission_decision=decision, **fields)  # type: ignore[arg-type]


def guard(
    *hooks: PythonHook,
    allow: tuple[str, ...] = (),
    ask: tuple[str, ...] = (),
    deny: tuple[str, ...] = (),
    mode: str = "default",
    can_use_tool: Recorder | None = None,
) -> GuardRails:
    hook_set = HookSet()
    for hook in hooks:
        hook_set = hook_set.with_python_hook("PreToolUse", "Bash", hook)
    return GuardRails(
        permissions=PermissionContext(allow=allow, ask=ask, deny=deny, mode=mode),  # type: ignore[arg-type]
        hooks=hook_set,
        can_use_tool=can_use_tool,
        session_id="sess",
    )


async def authorize(
    rails: GuardRails, command: str = "ls", tool: Shell | None = None, **extra: JSONValue
) -> PreToolUseVerdict:
    use = ToolUse("toolu_1", "Bash", {"command": command, **extra})
    raw = dict(use.input)
    return await authorize_call(rails, tool or Shell(), use, raw, CallContext(use, cwd=Path("/w")))


# --- no guard ---------------------------------------------------------------------------------


async def test_default_guard_the_tool_decides() -> None:
    verdict = await authorize(GuardRails(), tool=Shell(PermissionResult.allow()))
    assert verdict == PreToolUseVerdict(True, {"command": "ls"}, None)
    verdict = await authorize(GuardRails(), tool=Shell())
    assert verdict == PreToolUseVerdict(False, {"command": "ls"}, NOT_GRANTED)
    verdict = await authorize(GuardRails(), tool=Shell(PermissionResult.deny("not here")))
    assert (verdict.allowed, verdict.message) == (False, "not here")


async def test_the_tool_sees_the_rules_in_its_context() -> None:
    tool = Shell(PermissionResult.allow())
    rails = guard(allow=("Bash(ls:*)",))
    await authorize(rails, tool=tool)
    assert tool.seen_permissions == [rails.permissions]


# --- hook decisions against settings ----------------------------------------------------


async def test_hook_allow_vs_settings_deny_is_denied() -> None:
    callback = Recorder(PermissionResult.allow())
    rails = guard(hook_returning(pre("allow")), deny=("Bash",), can_use_tool=callback)
    verdict = await authorize(rails)
    assert (verdict.allowed, verdict.message) == (False, DENIED)
    assert callback.asks == []
    rails = guard(hook_returning(pre("allow")), deny=("Bash(rm:*)",), can_use_tool=callback)
    assert (await authorize(rails, "rm -rf /tmp/x")).message == DENIED


async def test_hook_allow_vs_settings_ask_goes_to_can_use_tool() -> None:
    callback = Recorder(PermissionResult.allow())
    rails = guard(hook_returning(pre("allow")), ask=("Bash",), can_use_tool=callback)
    verdict = await authorize(rails)
    assert verdict.allowed
    assert callback.asks == [("Bash", {"command": "ls"}, "toolu_1")]


async def test_hook_allow_vs_settings_ask_without_callback_is_denied() -> None:
    verdict = await authorize(
        guard(hook_returning(pre("allow")), ask=("Bash(git push:*)",)), "git push"
    )
    assert (verdict.allowed, verdict.message) == (False, NOT_GRANTED)


async def test_hook_allow_vs_the_tools_own_deny() -> None:
    tool = Shell(PermissionResult.deny("outside the workspace"))
    verdict = await authorize(guard(hook_returning(pre("allow"))), tool=tool)
    assert (verdict.allowed, verdict.message) == (False, "outside the workspace")


async def test_hook_allow_lets_a_passthrough_call_run() -> None:
    verdict = await authorize(guard(hook_returning(pre("allow"))))
    assert verdict.allowed


async def test_hook_deny_denies_despite_allow_rules_and_bypass() -> None:
    rails = guard(
        hook_returning(pre("deny", permission_decision_reason="no")), allow=("Bash",), mode="bypass"
    )
    verdict = await authorize(rails, tool=Shell(PermissionResult.allow()))
    assert (verdict.allowed, verdict.message) == (False, "no")


async def test_can_use_tool_answers() -> None:
    rails = guard(ask=("Bash",), can_use_tool=Recorder(PermissionResult.deny("")))
    assert (await authorize(rails)).message == REJECT_MESSAGE
    rails = guard(ask=("Bash",), can_use_tool=Recorder(PermissionResult.deny("not today")))
    assert (await authorize(rails)).message == "not today"
    rails = guard(
        ask=("Bash",), can_use_tool=Recorder(PermissionResult.allow({"command": "ls -1"}))
    )
    verdict = await authorize(rails)
    assert (verdict.allowed, verdict.input) == (True, {"command": "ls -1"})
    rails = guard(ask=("Bash",), can_use_tool=Recorder(PermissionResult.ask()))
    assert (await authorize(rails)).message == REJECT_MESSAGE


# --- Bash rules through the whole path ---------------------------------------------------


async def test_npm_run_test_rule_against_compound_and_plain_commands() -> None:
    rails = GuardRails.from_settings({"permissions": {"allow": ["Bash(npm run test:*)"]}})
    compound = await authorize(rails, "npm run test && rm -rf /")
    assert (compound.allowed, compound.message) == (False, NOT_GRANTED)
    watch = await authorize(rails, "npm run test -- --watch")
    assert watch.allowed


async def test_a_denied_subcommand_denies_the_compound_command_even_in_bypass_mode() -> None:
    rails = GuardRails.from_settings(
        {"permissions": {"deny": ["Bash(rm:*)"], "defaultMode": "bypassPermissions"}}
    )
    verdict = await authorize(rails, "npm run test && rm -rf /")
    assert (verdict.allowed, verdict.message) == (False, DENIED)
    assert (await authorize(rails, "npm run test")).allowed


async def test_and_and_inside_a_quoted_argument_is_one_command() -> None:
    rails = GuardRails.from_settings({"permissions": {"allow": ["Bash(git commit:*)"]}})
    assert (await authorize(rails, 'git commit -m "build && test"')).allowed
    assert not (await authorize(rails, 'git commit -m "build" && test')).allowed


# --- several hooks ------------------------------------------------------------------------


async def test_hooks_disagreeing_deny_beats_ask_beats_allow() -> None:
    allow, ask = hook_returning(pre("allow")), hook_returning(pre("ask"))
    deny = hook_returning(pre("deny"))
    callback = Recorder(PermissionResult.allow())
    verdict = await authorize(guard(allow, ask, deny, can_use_tool=callback))
    assert (verdict.allowed, verdict.message) == (False, "Hook PreToolUse:Bash denied this tool")
    assert callback.asks == []
    verdict = await authorize(
        guard(allow, ask, can_use_tool=callback), tool=Shell(PermissionResult.allow())
    )
    assert verdict.allowed
    assert len(callback.asks) == 1  # ask won over allow: the application was asked


async def test_updated_input_from_an_allowing_hook() -> None:
    rewrite = hook_returning(pre("allow", updated_input={"command": "ls -la"}))
    verdict = await authorize(guard(rewrite))
    assert (verdict.allowed, verdict.input) == (True, {"command": "ls -la"})


async def test_updated_input_from_an_allowing_hook_is_still_checked_against_deny_rules() -> None:
    rewrite = hook_returning(pre("allow", updated_input={"command": "rm -rf /"}))
    verdict = await authorize(guard(rewrite, deny=("Bash(rm:*)",)), "ls")
    assert (verdict.allowed, verdict.message) == (False, DENIED)


async def test_updated_input_from_a_hook_without_decision() -> None:
    # The input is replaced, then the normal flow decides on the new input.
    fix = hook_returning(HookOutput(updated_input={"command": "npm run test"}))
    tool = Shell()
    verdict = await authorize(
        guard(fix, allow=("Bash(npm run test:*)",)), "npm run tset", tool=tool
    )
    assert (verdict.allowed, verdict.input) == (True, {"command": "npm run test"})
    assert tool.checked == [{"command": "npm run test"}]
    other = hook_returning(HookOutput(updated_input={"command": "make"}))
    verdict = await authorize(guard(other, allow=("Bash(npm run test:*)",)), "npm run test")
    assert (verdict.allowed, verdict.input, verdict.message) == (
        False,
        {"command": "make"},
        NOT_GRANTED,
    )


async def test_updated_input_from_a_denying_hook_is_ignored() -> None:
    deny = hook_returning(pre("deny", updated_input={"command": "echo safe"}))
    verdict = await authorize(guard(deny), "rm -rf /")
    assert (verdict.allowed, verdict.input) == (False, {"command": "rm -rf /"})


async def test_an_updated_input_that_does_not_validate_is_denied() -> None:
    bad = hook_returning(pre("allow", updated_input={"cmd": "ls"}))
    verdict = await authorize(guard(bad))
    assert not verdict.allowed
    assert verdict.input == {"cmd": "ls"}
    assert verdict.message == (
        "<tool_use_error>InputValidationError: Bash failed due to the following issues:\n"
        "The required parameter `command` is missing\n"
        "An unexpected parameter `cmd` was provided</tool_use_error>"
    )


async def test_two_additional_contexts_are_both_kept() -> None:
    one = hook_returning(HookOutput(additional_context="repo uses pnpm"))
    two = hook_returning(HookOutput(additional_context="CI is red", permission_decision="allow"))
    verdict = await authorize(guard(one, two))
    assert verdict.allowed
    assert verdict.attachments == (
        Attachment("toolu_1", "additional_context", "repo uses pnpm", "PreToolUse:Bash"),
        Attachment("toolu_1", "additional_context", "CI is red", "PreToolUse:Bash"),
    )


async def test_a_hook_timing_out_gives_no_decision_and_the_tool_proceeds(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async def forever(data: HookInput) -> HookOutput:
        await trio.sleep_forever()
        raise AssertionError

    rails = GuardRails(hooks=HookSet().with_python_hook("PreToolUse", "*", forever, timeout=30))
    start = trio.current_time()
    verdict = await authorize(rails, tool=Shell(PermissionResult.allow()))
    assert trio.current_time() - start == 30
    assert verdict.allowed
    assert verdict.hook_errors == (
        f"PreToolUse:Bash hook [{forever.__qualname__}] failed: timed out after 30 s",
    )


async def test_failing_hooks_never_block() -> None:
    async def crash(data: HookInput) -> HookOutput:
        raise RuntimeError("bug in hook")

    verdict = await authorize(guard(crash), tool=Shell(PermissionResult.allow()))
    assert verdict.allowed
    assert "raised RuntimeError: bug in hook" in verdict.hook_errors[0]


async def test_a_blocking_error_denies() -> None:
    async def block(data: HookInput) -> HookOutput:
        raise HookBlockingError("use the deploy script")

    verdict = await authorize(guard(block, allow=("Bash",)))
    assert (verdict.allowed, verdict.message) == (
        False,
        "PreToolUse:Bash hook error: use the deploy script",
    )
    assert verdict.attachments == ()  # the text is the tool_result itself


async def test_prevent_continuation() -> None:
    stop = hook_returning(HookOutput(continue_=False))
    verdict = await authorize(guard(stop), tool=Shell(PermissionResult.allow()))
    assert verdict.allowed  # the tool may still run
    assert verdict.stop_reason == "Execution stopped by hook"
    assert verdict.attachments == (
        Attachment(
            "toolu_1", "hook_stopped_continuation", "Execution stopped by hook", "PreToolUse:Bash"
        ),
    )


async def test_a_denial_without_message_after_a_stop_names_the_stop() -> None:
    stop = hook_returning(HookOutput(continue_=False, stop_reason="budget spent"))
    rails = guard(stop, ask=("Bash",), can_use_tool=Recorder(PermissionResult.deny("")))
    verdict = await authorize(rails)
    assert verdict.message == "Execution stopped by PreToolUse hook: budget spent"
    assert verdict.stop_reason == "budget spent"
    bare = guard(
        hook_returning(HookOutput(continue_=False)),
        ask=("Bash",),
        can_use_tool=Recorder(PermissionResult.deny("")),
    )
    assert (await authorize(bare)).message == "Execution stopped by PreToolUse hook"


async def test_system_messages_are_for_the_user() -> None:
    note = hook_returning(HookOutput(system_message="Bash is audited"))
    verdict = await authorize(guard(note), tool=Shell(PermissionResult.allow()))
    assert verdict.system_messages == ("Bash is audited",)
    assert verdict.attachments == ()


async def test_hooks_get_the_call() -> None:
    seen: list[HookInput] = []

    async def spy(data: HookInput) -> None:
        seen.append(data)

    await authorize(guard(spy, mode="bypass"), "pwd")
    assert seen == [
        HookInput(
            session_id="sess",
            transcript_path="",
            cwd="/w",
            permission_mode="bypassPermissions",
            hook_event_name="PreToolUse",
            tool_name="Bash",
            tool_input={"command": "pwd"},
            tool_use_id="toolu_1",
        )
    ]


async def test_hooks_of_other_tools_do_not_run() -> None:
    ran: list[str] = []

    async def spy(data: HookInput) -> None:
        ran.append(data.tool_name)

    rails = GuardRails(hooks=HookSet().with_python_hook("PreToolUse", "Read|Edit", spy))
    await authorize(rails)
    assert ran == []


# --- speculative permission checks ----------------------------------------------------


class Classified(Shell):
    """A shell tool with a speculative check (a command classifier)."""

    def __init__(self, answer: PermissionResult | None, *, gate: trio.Event | None = None) -> None:
        super().__init__(PermissionResult.passthrough())
        self.answer = answer
        self.gate = gate
        self.speculated: list[Input] = []
        self.cancelled = False

    async def speculative_permission_check(
        self, tool_input: Input, ctx: CallContext
    ) -> PermissionResult | None:
        self.speculated.append(tool_input)
        try:
            if self.gate is not None:
                self.gate.set()
            if self.answer is None:
                await trio.sleep_forever()
            return self.answer
        except trio.Cancelled:
            self.cancelled = True
            raise


async def test_the_speculative_check_runs_concurrently_with_the_hooks(
    autojump_clock: trio.testing.MockClock,
) -> None:
    gate = trio.Event()

    async def waits_for_classifier(data: HookInput) -> None:
        await gate.wait()  # only returns if the classifier started meanwhile

    tool = Classified(PermissionResult.allow(), gate=gate)
    rails = GuardRails(
        hooks=HookSet().with_python_hook("PreToolUse", "*", waits_for_classifier, timeout=5)
    )
    verdict = await authorize(rails, tool=tool)
    assert verdict.hook_errors == ()  # the hook did not time out
    assert verdict.allowed  # the classifier's allow stood where the tool's check goes
    assert tool.checked == []


async def test_the_speculative_answer_takes_the_place_of_the_tools_check() -> None:
    tool = Classified(PermissionResult.deny("classifier: destructive"))
    verdict = await authorize(guard(hook_returning(None), allow=("Bash",)), tool=tool)
    assert (verdict.allowed, verdict.message) == (False, "classifier: destructive")
    without_hooks = Classified(PermissionResult.allow())
    assert (await authorize(GuardRails(), tool=without_hooks)).allowed
    assert without_hooks.checked == []


async def test_the_speculative_check_is_cancelled_when_a_hook_denies() -> None:
    tool = Classified(None)
    verdict = await authorize(guard(hook_returning(pre("deny"))), tool=tool)
    assert not verdict.allowed
    assert tool.cancelled


async def test_the_speculative_answer_is_dropped_when_a_hook_replaces_the_input() -> None:
    tool = Classified(None)
    tool.own = PermissionResult.allow()
    rewrite = hook_returning(HookOutput(updated_input={"command": "ls -1"}))
    verdict = await authorize(guard(rewrite), tool=tool)
    assert verdict.allowed
    assert tool.cancelled
    assert tool.checked == [{"command": "ls -1"}]  # the real check judged the new input


async def test_a_failing_speculative_check_falls_back_to_the_tools_check() -> None:
    class Broken(Shell):
        async def speculative_permission_check(
            self, tool_input: Input, ctx: CallContext
        ) -> PermissionResult:
            raise RuntimeError("classifier down")

    tool = Broken(PermissionResult.allow())
    verdict = await authorize(guard(hook_returning(None)), tool=tool)
    assert verdict.allowed
    assert tool.checked == [{"command": "ls"}]

    class NoOpinion(Shell):
        async def speculative_permission_check(self, tool_input: Input, ctx: CallContext) -> None:
            return None

    quiet = NoOpinion(PermissionResult.deny("checked for real"))
    assert (await authorize(guard(hook_returning(None)), tool=quiet)).message == "checked for real"
    assert (await authorize(GuardRails(), tool=quiet)).message == "checked for real"


# --- cancellation ----------------------------------------------------------------------------


async def test_aborting_during_hooks_propagates_cancelled(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async def slow(data: HookInput) -> None:
        await trio.sleep(100)

    tool = Classified(None)
    results: list[PreToolUseVerdict] = []
    with trio.move_on_after(1) as turn:
        results.append(await authorize(guard(slow, slow), tool=tool))
    assert turn.cancelled_caught
    assert results == []
    assert tool.cancelled


async def test_an_aborted_turn_stops_before_any_hook(
    autojump_clock: trio.testing.MockClock,
) -> None:
    ran: list[str] = []

    async def spy(data: HookInput) -> None:
        ran.append("ran")

    with trio.CancelScope() as turn:
        turn.cancel()
        await authorize(guard(spy))
    assert ran == []


# --- after the call ---------------------------------------------------------------------------


def post_guard(event: str, *hooks: PythonHook) -> GuardRails:
    hook_set = HookSet()
    for hook in hooks:
        hook_set = hook_set.with_python_hook(event, None, hook)  # type: ignore[arg-type]
    return GuardRails(hooks=hook_set)


USE = ToolUse("toolu_9", "Bash", {"command": "make"})


async def test_post_tool_use_records() -> None:
    seen: list[HookInput] = []

    async def lint(data: HookInput) -> HookOutput:
        seen.append(data)
        return HookOutput(additional_context="2 warnings", continue_=False, stop_reason="review")

    async def block(data: HookInput) -> HookOutput:
        raise HookBlockingError("tests failed")

    async def legacy(data: HookInput) -> HookOutput:
        return HookOutput(decision="block", reason="format the file")

    rails = post_guard("PostToolUse", lint, block, legacy)
    result = ToolResult("toolu_9", "built")
    verdict = await after_call(rails, Shell(), USE, USE.input, response=result, cwd=Path("/w"))
    assert verdict == PostToolUseVerdict(
        (
            Attachment("toolu_9", "additional_context", "2 warnings", "PostToolUse:Bash"),
            Attachment(
                "toolu_9",
                "hook_blocking_error",
                "tests failed",
                "PostToolUse:Bash",
                block.__qualname__,
            ),
            Attachment(
                "toolu_9",
                "hook_blocking_error",
                "format the file",
                "PostToolUse:Bash",
                legacy.__qualname__,
            ),
            Attachment("toolu_9", "hook_stopped_continuation", "review", "PostToolUse:Bash"),
        ),
        "review",
    )
    assert seen[0].hook_event_name == "PostToolUse"
    assert seen[0].tool_response == "built"
    assert seen[0].cwd == "/w"


async def test_post_tool_use_failure() -> None:
    seen: list[HookInput] = []

    async def spy(data: HookInput) -> HookOutput:
        seen.append(data)
        return HookOutput(additional_context="retry with -j1")

    rails = post_guard("PostToolUseFailure", spy)
    success = await after_call(rails, Shell(), USE, USE.input, response=ToolResult("toolu_9", "ok"))
    assert success == PostToolUseVerdict()  # only failures run these hooks
    verdict = await after_call(
        rails, Shell(), USE, USE.input, response=None, error="Exit code 2", is_interrupt=False
    )
    assert verdict.attachments == (
        Attachment("toolu_9", "additional_context", "retry with -j1", "PostToolUseFailure:Bash"),
    )
    assert (seen[0].hook_event_name, seen[0].error, seen[0].is_interrupt) == (
        "PostToolUseFailure",
        "Exit code 2",
        False,
    )


async def test_after_call_without_hooks_or_arguments() -> None:
    result = ToolResult("toolu_9", "ok")
    assert (
        await after_call(GuardRails(), Shell(), USE, USE.input, response=result)
        == PostToolUseVerdict()
    )
    with pytest.raises(ValueError, match="response or an error"):
        await after_call(GuardRails(), Shell(), USE, USE.input, response=None)


# --- rules on tools that do not read rule content -----------------------------------------


def shell_tool(ran: list[str], rule_matcher: RuleMatcher[Input] | None = None) -> Tool[Any]:
    @function_tool(name="shell", rule_matcher=rule_matcher, input_schema=Shell().input_schema)
    async def shell(args: Input, ctx: CallContext, progress: ProgressSender) -> str:
        ran.append(args["command"])
        return "done"

    return shell


async def test_a_content_deny_rule_stops_a_function_tool_without_a_matcher() -> None:
    ran: list[str] = []
    rails = GuardRails.from_settings({"permissions": {"deny": ["shell(rm:*)"]}})
    uses = [ToolUse("toolu_1", "shell", {"command": "rm -rf /"})]
    outcome = await trioexec.run_tools(uses, [shell_tool(ran)], guard=rails)
    assert outcome.results == (
        ToolResult("toolu_1", "Permission to use shell has been denied.", is_error=True),
    )
    assert ran == []


async def test_a_function_tool_with_a_matcher_is_denied_only_what_the_rule_covers() -> None:
    ran: list[str] = []

    def matcher(content: str, args: Input, behavior: RuleBehavior) -> bool:
        return trioexec.permissions.match_bash_rule(content, args["command"], behavior=behavior)

    rails = GuardRails.from_settings({"permissions": {"deny": ["shell(rm:*)"]}})
    uses = [
        ToolUse("toolu_1", "shell", {"command": "rm -rf /"}),
        ToolUse("toolu_2", "shell", {"command": "ls"}),
    ]
    outcome = await trioexec.run_tools(uses, [shell_tool(ran, matcher)], guard=rails)
    assert outcome.results == (
        ToolResult("toolu_1", "Permission to use shell has been denied.", is_error=True),
        ToolResult("toolu_2", "done"),
    )
    assert ran == ["ls"]


# --- modes --------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["bypass", "bypassPermissions"])
async def test_from_settings_accepts_both_spellings_of_bypass(mode: Any) -> None:
    rails = GuardRails.from_settings({"permissions": {"defaultMode": "default"}}, mode=mode)
    assert rails.permissions.mode == "bypass"
    assert (await authorize(rails)).allowed  # a passthrough call runs without asking
    seen: list[HookInput] = []

    async def spy(data: HookInput) -> None:
        seen.append(data)

    hooked = attrs.evolve(rails, hooks=rails.hooks.with_python_hook("PreToolUse", "Bash", spy))
    await authorize(hooked)
    assert [data.permission_mode for data in seen] == ["bypassPermissions"]


@pytest.mark.parametrize("mode", ["dontask", "Auto", "Bypass", ""])
def test_from_settings_refuses_an_unknown_mode(mode: Any) -> None:
    with pytest.raises(ConfigurationError, match=f"not {mode!r}"):
        GuardRails.from_settings(mode=mode)


# -- rules hold against what a real shell does (hidden commands, wrappers, quotes, symlinks) -----


@needs("bash")
@pytest.mark.parametrize(
    "command",
    [
        "cat x #'\ntouch pwned #'",
        "cat $'\\'' x; touch pwned #'",
        "cat <<EOF\ncat '\nEOF\ntouch pwned #'",
    ],
    ids=["comment", "ansi-c-quote", "here-doc"],
)
async def test_a_prefix_allow_rule_never_covers_a_hidden_second_command(
    command: str, tmp_path: Path
) -> None:
    (tmp_path / "x").write_text("x\n")
    await real_bash(command, tmp_path)
    proves((tmp_path / "pwned").exists(), "bash ran the hidden touch")
    guard = GuardRails(PermissionContext(allow=["Bash(cat:*)"]))
    use = ToolUse("toolu_1", "Bash", {"command": command})
    verdict = await authorize_call(
        guard, BashTool(), use, BashInput(command), call_context("Bash", tmp_path)
    )
    assert not verdict.allowed


@needs("bash")
@pytest.mark.parametrize(
    ("rule", "mode", "command"),
    [
        ("rm:*", "bypass", "'rm' -f victim"),
        ("rm:*", "bypass", "\\rm -f victim"),
        ("rm:*", "bypass", "nice rm -f victim"),
        ("rm:*", "bypass", "env -i rm -f victim"),
        ("rm:*", "bypass", "timeout -s KILL 5 rm -f victim"),
        ("rm:*", "bypass", "command -p rm -f victim"),
        ("cat:*", "default", "'cat' victim"),
    ],
)
async def test_deny_rule_catches_wrapped_and_quoted_commands(
    rule: str, mode: PermissionModeName, command: str, tmp_path: Path
) -> None:
    (tmp_path / "victim").write_text("VICTIM\n")
    out = await real_bash(command, tmp_path)
    proves(not (tmp_path / "victim").exists() or "VICTIM" in out, f"{command} ran")
    guard = GuardRails(PermissionContext(deny=[f"Bash({rule})"], mode=mode))
    use = ToolUse("toolu_1", "Bash", {"command": command})
    verdict = await authorize_call(
        guard, BashTool(), use, BashInput(command), call_context("Bash", tmp_path)
    )
    assert not verdict.allowed


def secrets_project(tmp_path: Path) -> Path:
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "key.txt").write_text("TOKEN=abc\n")
    (tmp_path / "docs").symlink_to("secrets")
    return tmp_path


SECRET_DENY = GuardRails(PermissionContext(deny=["Read(./secrets/**)", "Grep(./secrets/**)"]))


async def test_read_deny_rule_holds_for_the_real_path(tmp_path: Path) -> None:
    """The deny rule itself works when the path is written plainly."""
    cwd = secrets_project(tmp_path)
    use = ToolUse("toolu_1", "Read", {"file_path": "secrets/key.txt"})
    outcome = await run_tools([use], default_tools(cwd), cwd=cwd, guard=SECRET_DENY)
    denied = cwd / "secrets" / "key.txt"
    assert outcome.results[0].content == f"Permission to read {denied} has been denied."


async def test_read_deny_rule_holds_through_a_symlink(tmp_path: Path) -> None:
    cwd = secrets_project(tmp_path)
    use = ToolUse("toolu_1", "Read", {"file_path": "docs/key.txt"})
    outcome = await run_tools([use], default_tools(cwd), cwd=cwd, guard=SECRET_DENY)
    assert "TOKEN" not in str(outcome.results[0].content)


async def test_grep_of_a_parent_directory_hides_denied_files(tmp_path: Path) -> None:
    cwd = secrets_project(tmp_path)
    use = ToolUse("toolu_1", "Grep", {"pattern": "TOKEN", "output_mode": "content"})
    outcome = await run_tools([use], default_tools(cwd), cwd=cwd, guard=SECRET_DENY)
    assert "TOKEN=abc" not in str(outcome.results[0].content)


async def test_post_tool_use_failure_hooks_get_the_run_cwd(tmp_path: Path) -> None:
    seen: dict[str, str] = {}

    async def record(event: HookInput) -> HookOutput | None:
        seen[event.hook_event_name] = event.cwd
        return None

    @function_tool(name="Job")
    async def job(args: dict[str, Any], ctx: CallContext, progress: ProgressSender) -> str:
        if args.get("fail"):
            raise RuntimeError("boom")
        return "ok"

    hooks = (
        HookSet()
        .with_python_hook("PostToolUse", "*", record)
        .with_python_hook("PostToolUseFailure", "*", record)
    )
    uses = [ToolUse("toolu_1", "Job", {}), ToolUse("toolu_2", "Job", {"fail": True})]
    await run_tools(uses, [job], cwd=tmp_path, guard=GuardRails(hooks=hooks))
    proves(seen.get("PostToolUse") == str(tmp_path), "PostToolUse hooks see the run's cwd")
    assert seen.get("PostToolUseFailure") == str(tmp_path)
