"""Bounded work and no exception on any input: lines too long, too deep or too busy.

Past :data:`~trioexec._shell._syntax.MAX_SOURCE` characters, a syntax tree deeper
than :data:`~trioexec._shell._syntax.MAX_DEPTH` or more than
:data:`~trioexec._shell._syntax.MAX_COMMANDS` simple commands the analysis stops
and says why; every consumer fails closed (deny and ask rules match, no allow
rule covers, never read-only) and ``Bash`` asks as a safety check, in bypass
mode too, instead of raising or denying with an odd message.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trioexec import GuardRails, ToolUse, run_tools
from trioexec._shell._syntax import MAX_COMMANDS, MAX_DEPTH, MAX_SOURCE, analyse
from trioexec._shell._views import too_complex
from trioexec.permissions import match_bash_rule, split_bash_command
from trioexec.tools import BashTool, is_read_only_command
from trioexec.tools._bash_paths import judge_paths

if TYPE_CHECKING:
    from pathlib import Path

DEEP = {
    "nested $(": "echo " + "$(echo " * 150 + "x; rm x" + ")" * 150,
    "nested quoted $(": "echo " + '"$(echo ' * 150 + "rm x" + ')"' * 150,
    "&& chain": " && ".join(["ls"] * (MAX_DEPTH + 5)) + " && rm x",
    "subshells": "(" * 400 + "rm x" + ")" * 400,
    "if": "if true; then " * 200 + "rm x" + "; fi" * 200,
    "arithmetic": "echo $((" + "(" * 400 + "1" + ")" * 400 + ")); rm x",
    "parameter defaults": 'echo "${x:-' * 300 + "$(rm x)" + '}"' * 300,
    "-c in -c": "bash -c " + repr("echo " + "$(echo " * 150 + "rm x" + ")" * 150),
}
BUSY = {
    "pipes": " | ".join(["cat"] * (MAX_COMMANDS + 10)) + " | rm x",
    "lists": "; ".join(["ls"] * (MAX_COMMANDS + 10)) + "; rm x",
    "too long": "ls " + "a " * (MAX_SOURCE // 2) + "; rm x",
}


@pytest.mark.parametrize(
    "command",
    ["! ! ! rm x", "cat <<EOF\n" + "ls\n" * 20_000 + "EOF\nrm x", "ls " + "a " * 40_000],
    ids=["negations", "long here-doc", "many words"],
)
def test_a_long_flat_line_is_read_whole(command: str) -> None:
    assert not too_complex(command)
    assert match_bash_rule("rm:*", command, behavior="deny") == ("rm x" in command)
    assert not match_bash_rule("mv:*", command, behavior="deny")


@pytest.mark.parametrize("command", [*DEEP.values(), *BUSY.values()], ids=[*DEEP, *BUSY])
def test_a_line_too_complex_to_read_fails_closed_without_raising(command: str) -> None:
    assert too_complex(command)
    assert analyse(command).unparsed or command.startswith("bash -c")
    assert match_bash_rule("rm:*", command, behavior="deny")
    assert match_bash_rule("nothing-like-it:*", command, behavior="ask")
    assert not match_bash_rule("ls:*", command)
    assert not is_read_only_command(command)
    assert split_bash_command(command)


def test_the_reasons_name_the_limit_passed() -> None:
    assert "nested more than" in analyse(DEEP["nested $("]).too_complex
    assert "commands" in analyse(BUSY["pipes"]).too_complex
    assert "characters" in analyse(BUSY["too long"]).too_complex
    assert analyse("ls | grep x && echo $(echo $(echo y))").too_complex == ""


def test_a_line_just_inside_the_limits_is_read() -> None:
    nested = "echo " + "$(echo " * 20 + "x; rm x" + ")" * 20
    assert not too_complex(nested)
    assert match_bash_rule("rm:*", nested, behavior="deny")
    assert not match_bash_rule("mv:*", nested, behavior="deny")


@pytest.mark.parametrize("command", [DEEP["nested $("], BUSY["pipes"]], ids=["deep", "busy"])
def test_bash_asks_about_a_line_too_complex_to_check(tmp_path: Path, command: str) -> None:
    result = judge_paths(command, tmp_path, ("./secrets/**",))
    assert result.behavior == "ask"
    assert result.safety_check
    assert "too complex to check" in (result.message or "")


@pytest.mark.parametrize("mode", ["default", "bypassPermissions"])
async def test_a_too_complex_line_is_asked_about_not_denied_nor_run(
    tmp_path: Path, mode: str
) -> None:
    victim = tmp_path / "x"
    victim.write_text("keep me")
    command = DEEP["nested $("]
    guard = GuardRails.from_settings(
        {"permissions": {"deny": ["Bash(rm:*)"], "allow": ["Bash"], "defaultMode": mode}}
    )
    outcome = await run_tools(
        [ToolUse("toolu_1", "Bash", {"command": command})], [BashTool()], cwd=tmp_path, guard=guard
    )
    (result,) = outcome.results
    assert result.is_error
    assert "too complex to check" in str(result.content)
    assert victim.read_text() == "keep me"


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "$(",
                "`",
                "(",
                ")",
                "{ ",
                "}",
                '"',
                "'",
                "${x:-",
                "$((",
                "))",
                "! ",
                " && ",
                " | ",
                "; ",
                "<<E\n",
                "\nE\n",
                "rm x",
                "ls",
                "<>",
                "[[ ",
                " ]]",
                "if ",
                " then ",
                " fi",
                "\\\n",
                "bash -c '",
            ]
        ),
        max_size=400,
    )
)
def test_no_line_makes_a_check_raise(
    tmp_path_factory: pytest.TempPathFactory, parts: list[str]
) -> None:
    command = "".join(parts)
    is_read_only_command(command)
    match_bash_rule("rm:*", command, behavior="deny")
    match_bash_rule("ls:*", command)
    split_bash_command(command)
    judge_paths(command, tmp_path_factory.getbasetemp(), ("./secrets/**",))
