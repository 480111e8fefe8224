"""What a command may run (``_shell_commands``): the short cut for a command running itself."""

from __future__ import annotations

import json
from pathlib import Path

from trioexec._shell._syntax import analyse
from trioexec._shell._views import _all_views, _plain_views, _runs_itself, _views

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
            if command.words and _runs_itself(command.words):
                assert list(_views(command.words, command, 0)) == [command.words], line
                checked += 1
    assert checked > 500  # the short cut covers most commands of the corpus


def test_wrappers_shells_and_git_global_options_are_never_short_cut() -> None:
    for line in ("git -C sub push", "sudo rm x", "bash -c 'rm x'", "/bin/rm x", "$x rm",
                 "find . -exec rm {} +", "env rm x", "git $x push"):  # fmt: skip
        words = analyse(line).commands[0].words
        assert not _runs_itself(words), line


def test_a_line_of_such_commands_has_their_words_as_its_views_and_hands_on_no_script() -> None:
    short = 0
    for line in [*LINES, "ls; cat x | wc -l", "ls <<EOF\nrm x\nEOF", "(( $(rm x) ))", "x=1; ls"]:
        analysis = analyse(line)
        plain = _plain_views(analysis)
        if plain is not None:
            assert plain == tuple(_all_views(analysis)), line
            short += 1
    assert short > 300
