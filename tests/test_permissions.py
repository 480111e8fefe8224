"""The permission chain of SPEC §6, called directly: rule order, modes, hook decisions."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import pytest

import trioexec
from trioexec import CallContext, ConfigurationError, PermissionResult, Tool, ToolUse, function_tool
from trioexec._contract._permission_context import PermissionContext
from trioexec._contract._rules import PermissionRule, RuleBehavior
from trioexec._guard._bash_rules import match_bash_rule
from trioexec._guard._chain import check_permission_chain
from trioexec._guard._path_rules import match_path_rule
from trioexec._texts import permission_denied_message, permission_not_granted_message

if TYPE_CHECKING:
    from pathlib import Path

    from trioexec import ProgressSender
    from trioexec._contract._function_tool import RuleMatcher

Input = dict[str, Any]


class Shell(Tool[Input]):
    """A Bash-like tool: content rules match the command; its own check is scripted."""

    def __init__(
        self,
        own: PermissionResult | None = None,
        *,
        name: str = "Bash",
        aliases: tuple[str, ...] = (),
    ) -> None:
        self.name = name
        self.input_schema = {"type": "object", "properties": {"command": {"type": "string"}}}
        self.aliases = aliases
        self.own = own if own is not None else PermissionResult.passthrough()
        self.checked: list[Input] = []

    async def check_permissions(self, input: Input, ctx: CallContext) -> PermissionResult:  # noqa: A002
        self.checked.append(input)
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


def ctx_for(command: str) -> CallContext:
    return CallContext(ToolUse("toolu_1", "Bash", {"command": command}))


async def decide(
    tool: Shell,
    command: str,
    *,
    allow: tuple[str, ...] = (),
    ask: tuple[str, ...] = (),
    deny: tuple[str, ...] = (),
    mode: str = "default",
    hook: str | None = None,
    tool_check: PermissionResult | None = None,
) -> PermissionResult:
    permissions = PermissionContext(allow=allow, ask=ask, deny=deny, mode=mode)  # type: ignore[arg-type]
    return await check_permission_chain(
        tool,
        {"command": command},
        ctx_for(command),
        permissions,
        hook_decision=hook,  # type: ignore[arg-type]
        tool_check=tool_check,
    )


DENIED = PermissionResult.deny(permission_denied_message("Bash"))
ASK = PermissionResult.ask()
ALLOW = PermissionResult.allow()


def test_messages() -> None:
    assert permission_denied_message("Bash") == "Permission to use Bash has been denied."
    assert permission_not_granted_message("Edit") == (
        "Claude requested permissions to use Edit, but you haven't granted it yet."
    )


async def test_no_rules_the_tool_decides() -> None:
    assert await decide(Shell(ALLOW), "ls") == ALLOW
    assert await decide(Shell(), "ls") == ASK  # passthrough -> ask
    assert await decide(Shell(PermissionResult.ask("why")), "ls") == PermissionResult.ask("why")
    assert await decide(Shell(PermissionResult.deny("no")), "ls") == PermissionResult.deny("no")


async def test_whole_tool_deny_comes_first() -> None:
    tool = Shell(ALLOW)
    assert await decide(tool, "ls", deny=("Bash",), ask=("Bash",), allow=("Bash",)) == DENIED
    assert tool.checked == []  # the tool's own check is not needed


async def test_whole_tool_ask_before_the_tools_own_check() -> None:
    tool = Shell(PermissionResult.deny("own deny"))
    assert await decide(tool, "ls", ask=("Bash",)) == ASK
    assert tool.checked == []


async def test_content_deny_beats_a_whole_tool_allow() -> None:
    assert await decide(Shell(ALLOW), "rm -rf /", deny=("Bash(rm:*)",), allow=("Bash",)) == DENIED
    assert await decide(Shell(ALLOW), "ls", deny=("Bash(rm:*)",), allow=("Bash",)) == ALLOW


async def test_specificity_never_changes_the_order() -> None:
    # A precise allow does not beat a broad deny.
    assert await decide(Shell(), "npm test", deny=("Bash",), allow=("Bash(npm test)",)) == DENIED
    # A precise allow does not beat a broad ask.
    assert await decide(Shell(), "npm test", ask=("Bash(npm:*)",), allow=("Bash(npm test)",)) == ASK


async def test_the_tools_own_deny_beats_allow_rules_and_bypass() -> None:
    tool = Shell(PermissionResult.deny("dangerous"))
    result = await decide(tool, "x", allow=("Bash",), mode="bypass")
    assert result == PermissionResult.deny("dangerous")
    empty = Shell(PermissionResult.deny(""))
    assert await decide(empty, "x") == DENIED  # a deny without text gets the standard one


async def test_a_deny_rule_catches_any_part_of_a_compound_command() -> None:
    deny = ("Bash(rm:*)",)
    assert await decide(Shell(), "ls && rm -rf /", deny=deny, mode="bypass") == DENIED
    assert await decide(Shell(), "echo $(rm -rf /)", deny=deny, allow=("Bash",)) == DENIED
    assert await decide(Shell(ALLOW), "ls && sudo rm -rf /", deny=deny, hook="allow") == DENIED
    assert await decide(Shell(ALLOW), "ls && echo 'rm'", deny=deny) == ALLOW


async def test_an_ask_rule_catches_any_part_of_a_compound_command() -> None:
    ask = ("Bash(git push:*)",)
    assert await decide(Shell(ALLOW), "git add . && git push", ask=ask, mode="bypass") == ASK


async def test_content_ask_survives_bypass_and_allow_rules() -> None:
    result = await decide(
        Shell(ALLOW), "git push origin", ask=("Bash(git push:*)",), allow=("Bash",), mode="bypass"
    )
    assert result == ASK


async def test_bypass_allows_what_no_deny_or_ask_stops() -> None:
    assert await decide(Shell(), "anything", mode="bypass") == ALLOW
    assert await decide(Shell(PermissionResult.ask()), "anything", mode="bypass") == ALLOW
    assert await decide(Shell(), "rm x", deny=("Bash(rm:*)",), mode="bypass") == DENIED


async def test_allow_rules() -> None:
    npm = ("Bash(npm run test:*)",)
    assert await decide(Shell(), "ls", allow=("Bash",)) == ALLOW
    assert await decide(Shell(), "npm run test -- --watch", allow=npm) == ALLOW
    assert await decide(Shell(), "npm run test && rm -rf /", allow=npm) == ASK
    assert await decide(Shell(), 'git commit -m "a && b"', allow=("Bash(git commit:*)",)) == ALLOW


async def test_allowed_input_replaced_by_the_tools_check_is_kept() -> None:
    replaced = PermissionResult.allow({"command": "ls -1"})
    assert await decide(Shell(replaced), "ls") == replaced
    assert await decide(Shell(replaced), "ls", mode="bypass") == replaced
    assert await decide(Shell(replaced), "ls", allow=("Bash",)) == replaced


async def test_hook_allow_never_overrides_deny_or_ask_rules_nor_the_tools_deny() -> None:
    assert await decide(Shell(), "ls", deny=("Bash",), hook="allow") == DENIED
    assert await decide(Shell(), "rm x", deny=("Bash(rm:*)",), hook="allow") == DENIED
    assert await decide(Shell(), "ls", ask=("Bash",), hook="allow") == ASK
    assert await decide(Shell(), "git push", ask=("Bash(git push:*)",), hook="allow") == ASK
    own_deny = PermissionResult.deny("tool says no")
    assert await decide(Shell(own_deny), "ls", hook="allow") == own_deny


async def test_hook_allow_overrides_passthrough_and_the_tools_ask() -> None:
    assert await decide(Shell(), "ls", hook="allow") == ALLOW
    assert await decide(Shell(PermissionResult.ask()), "ls", hook="allow") == ALLOW


async def test_hook_ask_asks_even_when_rules_allow() -> None:
    assert await decide(Shell(ALLOW), "ls", allow=("Bash",), hook="ask") == ASK
    assert await decide(Shell(ALLOW), "ls", mode="bypass", hook="ask") == ASK
    # ... but a deny rule still wins over it.
    assert await decide(Shell(ALLOW), "ls", deny=("Bash",), hook="ask") == DENIED


async def test_a_known_answer_replaces_the_tools_check() -> None:
    tool = Shell(ALLOW)
    result = await decide(tool, "ls", tool_check=PermissionResult.deny("speculative"))
    assert result == PermissionResult.deny("speculative")
    assert tool.checked == []


async def test_rules_naming_a_deprecated_alias_apply() -> None:
    tool = Shell(ALLOW, name="Shell", aliases=("Bash",))
    assert await decide(tool, "ls", deny=("Bash",)) == PermissionResult.deny(
        permission_denied_message("Shell")
    )
    assert await decide(tool, "rm x", deny=("Bash(rm:*)",)) == PermissionResult.deny(
        permission_denied_message("Shell")
    )


async def test_other_tools_rules_do_not_apply() -> None:
    assert await decide(Shell(ALLOW), "ls", deny=("Read", "Bash2", "Bas")) == ALLOW


class Reader(Tool[Input]):
    """A Read-like tool: content rules are gitignore-style path patterns."""

    name = "Read"

    async def check_permissions(self, input: Input, ctx: CallContext) -> PermissionResult:  # noqa: A002
        return PermissionResult.allow()

    def match_rule_content(
        self,
        content: str,
        input: Input,  # noqa: A002
        ctx: CallContext,
        *,
        behavior: RuleBehavior,
    ) -> bool:
        return match_path_rule(content, input["file_path"], cwd=ctx.cwd)


async def test_path_rules_for_file_tools(tmp_path: Path) -> None:
    permissions = PermissionContext(deny=["Read(./secrets/**)"], ask=["Read(//etc/**)"])

    async def read(path: str) -> PermissionResult:
        use = ToolUse("toolu_1", "Read", {"file_path": path})
        ctx = CallContext(use, cwd=tmp_path)
        return await check_permission_chain(Reader(), dict(use.input), ctx, permissions)

    assert await read(str(tmp_path / "secrets" / "key.pem")) == PermissionResult.deny(
        permission_denied_message("Read")
    )
    assert await read("secrets/nested/token") == PermissionResult.deny(
        permission_denied_message("Read")
    )
    assert await read("/etc/passwd") == ASK
    assert await read("src/app.py") == ALLOW


def test_permission_context_rules() -> None:
    perms = PermissionContext(
        allow=["Bash(ls:*)", PermissionRule("Read")],
        deny=["Bash(rm:*)", "Bash(rm:*)", "Bash(curl:*)"],
    )
    assert perms.rule_contents("Bash", "deny") == ("rm:*", "curl:*")
    assert perms.rule_contents("Bash", "ask") == ()
    assert perms.rules_for(("Bash",), "allow") == (False, ("ls:*",))
    assert perms.with_mode("bypass").mode == "bypass"
    assert perms.with_mode("bypass").allow == perms.allow


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"allow": ["Bash(ls"]}, ValueError),
        ({"mode": "dontask"}, ConfigurationError),
        ({"mode": "Bypass"}, ConfigurationError),
        ({"mode": None}, ConfigurationError),
        ({"deny": "Bash"}, TypeError),
    ],
)
def test_permission_context_rejects_bad_values(kwargs: dict[str, Any], error: type) -> None:
    with pytest.raises(error):
        PermissionContext(**kwargs)


def test_both_spellings_of_bypass_are_accepted() -> None:
    assert PermissionContext(mode="bypassPermissions").mode == "bypass"
    assert PermissionContext(mode="bypass").mode == "bypass"
    assert PermissionContext().with_mode("bypassPermissions").mode == "bypass"
    assert PermissionContext(mode="bypass").with_mode("default").mode == "default"


def test_an_unknown_mode_is_a_configuration_error_naming_the_choices() -> None:
    message = (
        r"'default', 'bypass', 'bypassPermissions', 'acceptEdits', 'plan', 'dontAsk' or 'auto', "
        r"not 'yolo'"
    )
    with pytest.raises(ConfigurationError, match=message):
        PermissionContext(mode="yolo")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match=message):
        PermissionContext().with_mode("yolo")  # type: ignore[arg-type]


# --- tools that cannot interpret rule content -------------------------------------------


def shell_tool(rule_matcher: RuleMatcher[Input] | None = None) -> Tool[Any]:
    """A function tool named ``shell`` (its own check allows every call)."""

    @function_tool(name="shell", rule_matcher=rule_matcher)
    async def shell(args: Input, ctx: CallContext, progress: ProgressSender) -> str:
        return "ran"

    return shell


async def chain(tool: Tool[Any], command: str, permissions: PermissionContext) -> PermissionResult:
    use = ToolUse("toolu_1", tool.name, {"command": command})
    return await check_permission_chain(tool, dict(use.input), CallContext(use), permissions)


SHELL_DENIED = PermissionResult.deny("Permission to use shell has been denied.")


async def test_a_content_deny_rule_on_a_tool_without_a_matcher_denies_every_call() -> None:
    tool = shell_tool()
    deny = PermissionContext(deny=["shell(rm:*)"])
    assert await chain(tool, "rm -rf /", deny) == SHELL_DENIED
    assert await chain(tool, "ls", deny) == SHELL_DENIED  # fail closed: every call
    assert await chain(tool, "ls", deny.with_mode("bypass")) == SHELL_DENIED
    # Rules of other tools still do not apply.
    assert await chain(tool, "rm -rf /", PermissionContext(deny=["Bash(rm:*)"])) == ALLOW


async def test_a_content_ask_rule_on_a_tool_without_a_matcher_asks_every_call() -> None:
    tool = shell_tool()
    ask = PermissionContext(ask=["shell(git push:*)"], allow=["shell"])
    assert await chain(tool, "git push", ask) == ASK
    assert await chain(tool, "ls", ask) == ASK
    assert await chain(tool, "ls", ask.with_mode("bypass")) == ASK


class Opaque(Tool[Input]):
    """A subclass that passes in its own check and does not implement match_rule_content."""

    name = "opaque"

    async def check_permissions(self, input: Input, ctx: CallContext) -> PermissionResult:  # noqa: A002
        return PermissionResult.passthrough()


async def test_a_content_allow_rule_on_a_tool_without_a_matcher_never_allows() -> None:
    allow = PermissionContext(allow=["opaque(ls:*)", "opaque(*ls*)"])
    assert await chain(Opaque(), "ls", allow) == ASK
    assert await chain(Opaque(), "ls", PermissionContext(allow=["opaque"])) == ALLOW
    # The same holds for any Tool subclass without match_rule_content, deny included.
    opaque_denied = PermissionResult.deny(permission_denied_message("opaque"))
    assert await chain(Opaque(), "ls", PermissionContext(deny=["opaque(rm:*)"])) == opaque_denied


async def test_a_function_tool_with_a_rule_matcher_matches_content() -> None:
    seen: list[tuple[str, Input]] = []

    def matcher(content: str, args: Input, behavior: RuleBehavior) -> bool:
        seen.append((content, args))
        return trioexec.permissions.match_bash_rule(content, args["command"], behavior=behavior)

    tool = shell_tool(rule_matcher=matcher)
    deny = PermissionContext(deny=["shell(rm:*)"])
    assert await chain(tool, "rm -rf /", deny) == SHELL_DENIED
    assert await chain(tool, "rm", deny) == SHELL_DENIED
    assert await chain(tool, "ls && sudo rm -rf /", deny) == SHELL_DENIED  # any part
    assert await chain(tool, "rmdir build", deny) == ALLOW  # a prefix of words, not letters
    assert await chain(tool, "ls", deny) == ALLOW
    assert seen[0] == ("rm:*", {"command": "rm -rf /"})
    assert tool.match_rule_content("ls:*", {"command": "ls -la"}, ctx_for("ls"), behavior="allow")
    assert not tool.match_rule_content(
        "ls:*", {"command": "lsof"}, ctx_for("lsof"), behavior="allow"
    )


async def test_an_ask_rule_on_a_function_tool_with_a_matcher() -> None:
    def matcher(content: str, args: Input, behavior: RuleBehavior) -> bool:
        return trioexec.permissions.match_bash_rule(content, args["command"], behavior=behavior)

    tool = shell_tool(rule_matcher=matcher)
    ask = PermissionContext(ask=["shell(git push:*)"])
    assert await chain(tool, "git status", ask) == ALLOW
    assert await chain(tool, "git add . && git push", ask) == ASK


async def test_the_warning_is_logged_once_per_tool_and_rule(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="trioexec.permissions")
    tool = shell_tool()
    permissions = PermissionContext(deny=["shell(rm:*)", "shell(curl:*)"], allow=["Bash(x)"])
    for command in ("rm -rf /", "ls", "rm x"):
        assert await chain(tool, command, permissions) == SHELL_DENIED
    messages = [r.getMessage() for r in caplog.records if r.name == "trioexec.permissions"]
    assert messages == [
        "tool shell cannot interpret rule content (no match_rule_content), "
        "so the deny rule shell(rm:*) is applied to every call",
        "tool shell cannot interpret rule content (no match_rule_content), "
        "so the deny rule shell(curl:*) is applied to every call",
    ]
    assert all(r.levelno == logging.WARNING for r in caplog.records)

    caplog.clear()
    allow = PermissionContext(allow=["opaque(ls:*)"])
    for _ in range(3):
        assert await chain(Opaque(), "ls", allow) == ASK
    assert [r.getMessage() for r in caplog.records] == [
        "tool opaque cannot interpret rule content (no match_rule_content), "
        "so the allow rule opaque(ls:*) never matches"
    ]


async def test_no_warning_for_tools_that_interpret_content(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="trioexec.permissions")
    matcher = shell_tool(
        rule_matcher=lambda c, a, b: trioexec.permissions.match_bash_rule(
            c, a["command"], behavior=b
        )
    )
    assert await chain(matcher, "ls", PermissionContext(deny=["shell(rm:*)"])) == ALLOW
    assert await decide(Shell(ALLOW), "ls", deny=("Bash(rm:*)",)) == ALLOW
    assert caplog.records == []


class PartlyReadable(Tool[Input]):
    """Reads ``cmd:*`` prefixes only; any other content it cannot interpret (None)."""

    name = "partly"

    def __init__(self) -> None:
        self.asked: list[tuple[str, RuleBehavior]] = []

    async def check_permissions(self, input: Input, ctx: CallContext) -> PermissionResult:  # noqa: A002
        return PermissionResult.passthrough()

    def match_rule_content(
        self,
        content: str,
        input: Input,  # noqa: A002
        ctx: CallContext,
        *,
        behavior: RuleBehavior,
    ) -> bool | None:
        self.asked.append((content, behavior))
        if not content.endswith(":*"):
            return None
        return match_bash_rule(content, input["command"], behavior=behavior)


async def test_the_chain_tells_the_tool_which_behavior_each_rule_has() -> None:
    tool = PartlyReadable()
    rules = PermissionContext(deny=["partly(rm:*)"], ask=["partly(git:*)"], allow=["partly(ls:*)"])
    assert await chain(tool, "ls", rules) == ALLOW
    assert tool.asked == [("rm:*", "deny"), ("git:*", "ask"), ("ls:*", "allow")]


async def test_a_content_the_tool_cannot_interpret_fails_closed_alone() -> None:
    tool = PartlyReadable()
    deny = PermissionContext(deny=["partly(rm:*)", "partly(/etc/**)"])
    denied = PermissionResult.deny(permission_denied_message("partly"))
    assert await chain(tool, "ls", deny) == denied  # the unreadable rule applies to every call
    allow = PermissionContext(allow=["partly(/etc/**)", "partly(ls:*)"])
    assert await chain(tool, "ls -la", allow) == ALLOW  # the readable allow rule still allows
    assert await chain(tool, "cat x", allow) == ASK  # the unreadable one never matches


def test_a_tool_by_default_cannot_interpret_rule_content() -> None:
    use = ToolUse("toolu_1", "opaque", {"command": "ls"})
    ctx = CallContext(use)
    for behavior in ("allow", "ask", "deny"):
        assert Opaque().match_rule_content("ls:*", {}, ctx, behavior=behavior) is None  # type: ignore[arg-type]
        assert shell_tool().match_rule_content("ls:*", {}, ctx, behavior=behavior) is None  # type: ignore[arg-type]


class _Delegating(Tool[Any]):
    """A tool that forwards what it does not define to a wrapped ``Bash`` and matches
    rules its own way: every deny rule applies to it."""

    def __init__(self) -> None:
        from trioexec.tools import BashTool

        self._inner = BashTool()
        self.name = "Bash"
        self.input_schema = self._inner.input_schema

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def check_permissions(self, input: Any, ctx: CallContext) -> PermissionResult:  # noqa: A002
        return PermissionResult.passthrough()

    def match_rule_content(
        self,
        content: str,
        input: Any,  # noqa: A002
        ctx: CallContext,
        *,
        behavior: RuleBehavior,
    ) -> bool:
        return behavior == "deny"


async def test_a_tool_forwarding_attributes_to_bash_keeps_its_own_rule_matching() -> None:
    from trioexec.tools._bash import BashInput

    permissions = PermissionContext(deny=("Bash(rm:*)",))
    verdict = await check_permission_chain(
        _Delegating(), BashInput("ls"), ctx_for("ls"), permissions
    )
    assert verdict == DENIED
