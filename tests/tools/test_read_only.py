"""The read-only classifier that decides whether a Bash call may run in parallel."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from helpers import (
    bash_auto_allowed,
    needs,
    proves,
    real_bash,
)
from hypothesis import given
from hypothesis import strategies as st

from trioexec._shell._read_only import Word, split_command, stays_in_working_directory
from trioexec.tools import (
    BashInput,
    BashTool,
    is_read_only_command,
)

if TYPE_CHECKING:
    from pathlib import Path

SAFE = [
    "ls",
    "ls -la src",
    "cat a | grep b",
    "git status",
    "git log --oneline -5",
    "git diff HEAD~1 -- src/",
    "git show HEAD@{1}",
    "git branch",
    "git branch -a --list 'feat/*'",
    "git tag -l",
    "git remote -v",
    "git stash list",
    "head -n 20 README.md",
    "tail -5 log.txt",
    "wc -l *.py",
    "grep -rn 'TODO' src",
    "find . -name '*.py' -type f",
    "find src -maxdepth 2 -newer x",
    "ls 2>/dev/null",
    "ls -la 2>&1 | head",
    "cat < input.txt",
    "pwd && ls",
    "ls || echo none",
    "ls; pwd",
    "ls\npwd",
    "cd src && ls",
    "echo '$HOME is literal here'",
    "echo \\$HOME",
    'echo "plain text"',
    "sed -n '1,20p' file.txt",
    "sed 's/a/b/g' file.txt",
    "sort -u names.txt | uniq -c",
    "date +%Y-%m-%d",
    "date -d yesterday +%s",
    "rg --files-with-matches TODO",
    "jq '.name' package.json",
    "[ -f setup.py ] && echo yes",
    "diff a.txt b.txt",
    "tree -L 2",
    "du -sh .",
    "ls \\\n  -la",
    "git log -p -- 'src/*.py'",
    "git log --oneline --output-indicator-new=+ HEAD",
    "git grep -in TODO",
    "git reflog --oneline",
    "git worktree list",
    "uniq -c -- in",
    "xxd -l 16 -- in",
    "date --date=yesterday +%s",
    "date --da yesterday +%s",
    "echo 'a{b,c}'",
]

UNSAFE = [
    "rm x",
    "echo hi > f",
    "echo hi >> f",
    "ls; rm x",
    "ls && rm -rf /",
    "cat a | tee b",
    "cat $(rm x)",
    "cat `rm x`",
    "echo $HOME",
    'echo "$HOME"',
    "echo ${HOME}",
    "echo $((1+2))",
    "echo $'\\x41'",
    "find . -delete",
    "find . -name x -exec rm {} ;",
    "find . -execdir ls ;",
    "find . -fprint out",
    "find . -name *.py",
    "sed -i s/a/b/ f",
    "sed --in-place 's/a/b/' f",
    "sed 's/a/b/w out' f",
    "sed -f script.sed f",
    "sed e f",
    "git push",
    "git commit -m x",
    "git checkout main",
    "git branch new-branch",
    "git branch -D old",
    "git tag v1.0",
    "git stash",
    "git remote add origin url",
    "git config user.name x",
    "git config --get user.name",  # git config in any form: issue 30
    "git -c core.pager=evil log",
    "git -C sub status",
    "cd sub && git status",
    "git diff --textconv",
    "git log -p --textconv",
    "git cat-file --textconv HEAD:x",
    "rg --hostname-bin=sh TODO",
    "rg --pre sh TODO",
    "rg -z TODO",
    "rg -iz TODO",
    "rg --search-zip TODO",
    "git diff --output=patch.txt",
    "git grep -O vim TODO",
    "sort -o out.txt in.txt",
    "sort --compress-program=sh in.txt",
    "uniq in.txt out.txt",
    "xxd -r dump bin",
    "rg --pre=sh TODO",
    "tree -o out.txt",
    "date -s '2020-01-01'",
    "diff <(ls a) <(ls b)",
    "cat <<EOF\nhi\nEOF",
    "cat <<< hi",
    "ls &",
    "sleep 5 & ls",
    "ls |& grep x",
    "(ls)",
    "{ ls; }",
    "FOO=bar ls",
    "/bin/ls",
    "ls # comment",
    "ls >&file",
    "ls > /dev/null2",
    "cat 'unterminated",
    "python -c 'print(1)'",
    "npm test",
    "xargs rm",
    "env rm x",
    "awk '{print}' f",
    "",
    "   ",
    "if true; then ls; fi",
    "find . {-delete,}",
    # unique prefixes of long options that write or run a program
    "sort --outp=out in.txt",
    "sort --o out in.txt",
    "sort -S 1K --compress-prog=sh in.txt",
    "file --comp -m magic",
    "date --se=2000-01-01",
    "date --s 2000-01-01",
    "rg --pr=sh TODO",
    "git diff --out=patch.txt",
    "git log --ext HEAD",
    "git grep --open='touch x' TODO",
    "git grep --o=vim TODO",
    "git grep -iO'touch x' TODO",
    "git grep -nO vim TODO",
    # the first argument, not the first operand, selects the subcommand
    "git stash -- list",
    "git stash -q list",
    "git worktree -- list",
    "git reflog -- expire",
    # '--' ends the options before operands are counted
    "uniq -- -f out",
    "uniq -c -- in out",
    "xxd -- -r out",
    "xxd -rev dump bin",
    # brace expansion is refused, not checked word by word
    "cat {..,x}/f",
    "ls {a,b}",
    "cd {..,x} && ls",
]


@pytest.mark.parametrize("command", SAFE)
def test_read_only_commands_are_safe(command: str) -> None:
    assert is_read_only_command(command)


@pytest.mark.parametrize("command", UNSAFE)
def test_other_commands_are_unsafe(command: str) -> None:
    assert not is_read_only_command(command)


def test_the_table_is_large_enough() -> None:
    assert len(SAFE) + len(UNSAFE) >= 40
    assert not set(SAFE) & set(UNSAFE)


def test_split_respects_quotes_and_operators() -> None:
    assert split_command("grep 'a && b' f | wc -l; ls") == [
        [Word("grep"), Word("a && b"), Word("f")],
        [Word("wc"), Word("-l")],
        [Word("ls")],
    ]


def test_split_marks_unquoted_globs_and_braces() -> None:
    parts = split_command("ls *.py '*.txt' {a,b} x{1}")
    assert parts == [
        [
            Word("ls"),
            Word("*.py", expands=True),
            Word("*.txt"),
            Word("{a,b}", expands=True),
            Word("x{1}"),
        ]
    ]


def test_split_drops_allowed_redirections() -> None:
    assert split_command("ls 2>/dev/null >&2 < in") == [[Word("ls")]]


def test_split_refuses_what_it_does_not_model() -> None:
    for command in ["echo $x", "a > f", "(ls)", "ls &", "cat <<EOF", "echo 'open", "ls #c"]:
        assert split_command(command) is None, command


def test_escaped_newline_joins_lines_but_a_newline_separates() -> None:
    assert split_command("ls \\\n-la") == [[Word("ls"), Word("-la")]]
    assert split_command("ls\n-la") == [[Word("ls")], [Word("-la")]]


def test_bash_tool_uses_the_classifier_per_input() -> None:
    tool = BashTool()
    assert tool.is_concurrency_safe(BashInput("git status"))
    assert not tool.is_concurrency_safe(BashInput("git push"))


@given(st.text(alphabet=" \t\n;&|<>()$`'\"\\#*?[]{},.-=abcdlrsgit/", max_size=40))
def test_classifier_never_raises(command: str) -> None:
    assert is_read_only_command(command) in (True, False)


@given(
    st.sampled_from(SAFE),
    st.sampled_from(["rm x", "echo a > f", "git push", "touch y", "cat $(id)"]),
    st.sampled_from(["; ", " && ", " || ", " | ", "\n"]),
)
def test_one_unsafe_subcommand_makes_the_whole_command_unsafe(
    safe: str, unsafe: str, glue: str
) -> None:
    assert not is_read_only_command(safe + glue + unsafe)
    assert not is_read_only_command(unsafe + glue + safe)


@pytest.mark.parametrize(
    ("command", "inside"),
    [
        ("ls", True),
        ("cat src/a.py | grep b", True),
        ("git diff HEAD~1..HEAD", True),
        ("cd src && ls", True),
        ("wc -l < notes.txt", True),
        ("cat /etc/passwd", False),
        ("cat ~/.ssh/id_rsa", False),
        ("cat ../secret", False),
        ("cat src/../../secret", False),
        ("wc -l < /etc/passwd", False),
        ("grep -f/etc/passwd x", False),
        ("git -C /other status", False),
        ("cat .*/x", False),
        ("cd", False),
        ("cd -", False),
        ("cd .. && ls", False),
        ("echo $HOME", False),
        ("cat {..,x}/outside.txt", False),
        ("cat {/etc/passwd,x}", False),
        ("cd {..,} && ls", False),
        ("cat 'a{b,c}'", True),
    ],
)
def test_stays_in_working_directory(command: str, inside: bool) -> None:
    assert stays_in_working_directory(command) is inside


# -- commands proven against a real shell to write or run programs are never read-only -----------


@needs("git", "bash")
@pytest.mark.parametrize(
    "command",
    ["git grep -iO'touch pwned' hello", "git grep --open='touch pwned' hello"],
    ids=["short-cluster", "abbreviated"],
)
async def test_git_grep_with_a_pager_option_runs_a_program_so_is_never_read_only(
    command: str, tmp_path: Path
) -> None:
    (tmp_path / "f").write_text("hello\n")
    await real_bash("git init -q . && git add f", tmp_path)
    await real_bash(command, tmp_path)
    proves((tmp_path / "pwned").exists(), f"{command} ran its pager string")
    assert not is_read_only_command(command)
    assert not await bash_auto_allowed(command, tmp_path)


@needs("bash", "sort", "file", "date")
@pytest.mark.parametrize(
    ("command", "probe", "effect"),
    [
        ("sort --outp=out data", "sort --outp=out data", "out"),
        (
            "sort -S 1K --compress-prog=sh data",
            "sort -S 1K --compress-prog=sh data",
            "pwned",
        ),
        ("file --comp -m magic", "file --comp -m magic", "magic.mgc"),
        # Never run: it would set the clock.  The probe shows --se is taken for --set.
        ("date --se=2000-01-01", "date --se 2>&1 | grep -q -e --set && touch set", "set"),
    ],
    ids=["sort-output", "sort-compress-program", "file-compile", "date-set"],
)
async def test_an_abbreviated_long_option_that_writes_is_not_read_only(
    command: str, probe: str, effect: str, tmp_path: Path
) -> None:
    (tmp_path / "data").write_text("touch pwned\n" * 300)
    (tmp_path / "magic").write_text("0\tstring\thello\tHELLO\n")
    await real_bash(probe, tmp_path)
    proves((tmp_path / effect).exists(), f"{probe!r} created {effect}")
    assert not is_read_only_command(command)


@needs("git", "bash")
async def test_git_stash_dashdash_list_is_a_push_so_not_read_only(tmp_path: Path) -> None:
    (tmp_path / "list").write_text("committed\n")
    await real_bash("git init -q . && git add list && git commit -qm init", tmp_path)
    (tmp_path / "list").write_text("changed\n")
    await real_bash("git stash -- list", tmp_path)
    proves((tmp_path / "list").read_text() == "committed\n", "git stash -- list reverted it")
    assert not is_read_only_command("git stash -- list")


@needs("bash", "uniq")
async def test_uniq_operands_after_dashdash_are_an_output_file_so_not_read_only(
    tmp_path: Path,
) -> None:
    (tmp_path / "-f").write_text("a\na\n")
    await real_bash("uniq -- -f out", tmp_path)
    proves((tmp_path / "out").exists(), "uniq wrote its second operand")
    assert not is_read_only_command("uniq -- -f out")
