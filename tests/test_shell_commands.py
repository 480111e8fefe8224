"""What a command may run (``_shell._views``): the short cut for a command running itself."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from trioexec._shell._carriers import CARRIERS, GIT_CARRIERS
from trioexec._shell._itself import runs_itself
from trioexec._shell._syntax import analyse
from trioexec._shell._views import _all_views, _plain_views, _views

CORPUS = json.loads(
    (Path(__file__).parent / "data" / "shell_corpus.json").read_text(encoding="utf-8")
)
LINES = [case["command"] for case in CORPUS] + [
    "git",
    "git status",
    "git -C sub push",
    "git --no-pager log",
    "git $x push",
    "'git' -c core.pager=sh log",
    "/bin/ls -la",
    "sudo ls",
    "env A=1 ls",
    "find . -exec rm {} \\;",
    "bash -c 'rm x'",
    "$cmd x",
    "ls *.py",
    "{ls,-la}",
    "x=1 ls",
    "timeout 5 rm x",
]


def test_a_command_said_to_run_only_itself_has_no_other_view() -> None:
    checked = 0
    for line in LINES:
        for command in analyse(line).commands:
            if command.words and runs_itself(command.words):
                assert list(_views(command.words, command, 0)) == [command.words], line
                checked += 1
    assert checked > 500  # the short cut covers most commands of the corpus


def test_wrappers_shells_and_git_global_options_are_never_short_cut() -> None:
    for line in ("git -C sub push", "sudo rm x", "bash -c 'rm x'", "/bin/rm x", "$x rm",
                 "find . -exec rm {} +", "env rm x", "git $x push"):  # fmt: skip
        words = analyse(line).commands[0].words
        assert not runs_itself(words), line


def test_a_line_of_such_commands_has_their_words_as_its_views_and_hands_on_no_script() -> None:
    short = 0
    for line in [*LINES, "ls; cat x | wc -l", "ls <<EOF\nrm x\nEOF", "(( $(rm x) ))", "x=1; ls"]:
        analysis = analyse(line)
        plain = _plain_views(analysis)
        if plain is not None:
            assert plain == tuple(_all_views(analysis)), line
            short += 1
    assert short > 300


_PROGRAMS = st.sampled_from(
    [*CARRIERS, *(f"git {sub}" for sub in GIT_CARRIERS), "git status", "ls"]
)
_OPTION_WORDS = st.sampled_from(
    [
        *(f"--{name}" for carrier in CARRIERS.values() for name in carrier.long),
        *(f"--{name}=x" for carrier in CARRIERS.values() for name in carrier.long),
        *(f"-{letter}" for carrier in CARRIERS.values() for letter in carrier.short),
        *(exact for carrier in CARRIERS.values() for exact in carrier.exact),
        *(f"--{key}" for table in GIT_CARRIERS.values() for key in table if len(key) > 1),
        *(f"-{key}x" for table in GIT_CARRIERS.values() for key in table if len(key) == 1),
        "--pr", "--p", "--e", "--ex", "--", "-", "-n", "-la", "-vo", "-xO", "+x", "+!x",
        "--oneline", "-10", "src", "x", "exec:rm", "run", "foreach", "-c", "alias.p=push",
        "--upload", "-uP", "'$x'", "$x", "-$x",
    ]
)  # fmt: skip


@settings(max_examples=2000, deadline=None)
@given(_PROGRAMS, st.lists(_OPTION_WORDS, max_size=5))
def test_a_carrier_said_to_run_only_itself_carries_nothing(program: str, words: list[str]) -> None:
    line = " ".join([program, *words])
    for command in analyse(line).commands:
        if command.words and runs_itself(command.words):
            assert list(_views(command.words, command, 0)) == [command.words], line
