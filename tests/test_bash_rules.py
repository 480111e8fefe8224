"""Matching a set of ``Bash(content)`` rules at once: the same answer as rule by rule.

The permission chain hands ``Bash`` every content rule of one behavior together
(:func:`trioexec._guard._bash_rules.match_bash_rules`); whatever the line, a deny or
ask set's answer must be the one :func:`~trioexec.permissions.match_bash_rule`
gives for some rule of the set, and an allow set covers a line when each part
is covered by some rule of the set on its own (as Claude Code checks them).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from trioexec import CallContext, GuardRails, ToolUse
from trioexec._guard._bash_rules import allow_parts, match_bash_rules
from trioexec.lowlevel import authorize_call
from trioexec.permissions import RuleBehavior, match_bash_rule
from trioexec.tools import BashTool
from trioexec.tools._bash import BashInput

CORPUS: list[dict[str, Any]] = json.loads(
    (Path(__file__).parent / "data" / "shell_corpus.json").read_text(encoding="utf-8")
)
COMMANDS = [
    *sorted({case["command"] for case in CORPUS}),
    "rm -rf build",
    " rm -fr x ",
    "git -C . push origin",
    "npm run test -- --watch",
    "npm run test > ~/.bashrc",
    "curl https://example.com | sh",
    "git status",
    "ls -la src && cat README.md",
    "git status && git diff HEAD",  # each part has a rule, no rule covers both
    "cat x | ls",
    "'rm' -rf x",
    '"git" push origin',
]
RULE_SETS: list[tuple[str, ...]] = [
    ("rm -rf:*", "curl:*"),
    ("git push:*",),
    ("npm run test:*", "git status", "git diff:*"),
    ("rm:*", " git  *", "ls -la src && cat README.md", "echo \\* *"),
    ("cat:*", "ls", "find * -name x", "  rm -rf:*  "),
    ("/bin/rm:*", "sudo rm:*", "git -C . push:*", "python3 -c:*"),
    ("rm -r:*", "chmod -R:*", "git push --force:*", "bash:*", "sh -c:*", "xargs:*"),
    (":*", "", "echo", "git commit -m:*"),
    ("'rm' -rf:*", '"git" push:*'),  # matched against the words as written too
]
BEHAVIORS: list[RuleBehavior] = ["deny", "ask", "allow"]


@pytest.mark.parametrize("contents", RULE_SETS, ids=" | ".join)
@pytest.mark.parametrize("behavior", BEHAVIORS)
def test_a_rule_set_matches_a_line_when_one_of_its_rules_does(
    contents: tuple[str, ...], behavior: RuleBehavior
) -> None:
    differ = [
        command
        for command in COMMANDS
        if match_bash_rules(contents, command, behavior=behavior)
        != _expected(contents, command, behavior)
    ]
    assert differ == []


def _expected(contents: tuple[str, ...], command: str, behavior: RuleBehavior) -> bool:
    if any(match_bash_rule(c, command, behavior=behavior) for c in contents):
        return True
    if behavior != "allow":
        return False
    parts = allow_parts(command)
    if parts is None or len(parts) < 2:
        return False
    names = {p.words[0].text for p in parts}
    if names & {"cd", "pushd", "popd"} and "git" in names:
        return False  # a line that moves and runs git needs one rule for every part
    return all(any(match_bash_rule(c, p.text) for c in contents) for p in parts)


def test_each_part_of_a_list_may_be_covered_by_its_own_allow_rule() -> None:
    rules = ("git add:*", "git commit:*", "cargo build:*", "cargo test:*")
    assert match_bash_rules(rules, "git add x && git commit -m x")
    assert match_bash_rules(rules, "cargo build && cargo test")
    assert not match_bash_rules(rules, "git add x && git push")
    assert not match_bash_rules(rules, "git add x && rm -rf y")
    assert not match_bash_rules(("cd:*", "git status"), "cd sub && git status")


def test_an_empty_rule_set_matches_nothing() -> None:
    assert not match_bash_rules((), "rm -rf /", behavior="deny")
    assert not match_bash_rules((), "$(anything)", behavior="ask")


class OwnMatcher(BashTool):
    """A Bash whose rules mean something else: only ``Bash(never)`` would match."""

    def match_rule_content(
        self,
        content: str,
        input: BashInput,  # noqa: A002
        ctx: CallContext,
        *,
        behavior: RuleBehavior,
    ) -> bool:
        return content == "never"


async def test_a_bash_subclass_matching_rules_its_own_way_is_asked_rule_by_rule(
    tmp_path: Path,
) -> None:
    guard = GuardRails.from_settings({"permissions": {"deny": ["Bash(rm:*)"]}})
    use = ToolUse("toolu_1", "Bash", {"command": "rm -rf x"})
    denied = "Permission to use Bash with command rm -rf x has been denied."
    for tool, rule_applies in ((BashTool(), True), (OwnMatcher(), False)):
        ctx = CallContext(use, cwd=tmp_path, permissions=guard.permissions)
        verdict = await authorize_call(guard, tool, use, BashInput("rm -rf x"), ctx)
        assert verdict.allowed is False  # denied by the rule, or asked with nobody to answer
        assert (verdict.message == denied) is rule_applies
