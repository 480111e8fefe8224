"""Plain lines read without the grammar give the grammar's analysis, field by field."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from trioexec._shell._plain import MAX_PLAIN, read_plain
from trioexec._shell._syntax import _analyse, analyse

CORPUS = Path(__file__).parent / "data" / "shell_corpus.json"


def _fields(value: object) -> Any:
    """Every field, ``eq=False`` ones too (a Word's ``raw`` and ``static``)."""
    if attrs.has(type(value)):
        names = [field.name for field in attrs.fields(type(value))]  # type: ignore[arg-type]
        return tuple((name, _fields(getattr(value, name))) for name in names)
    if isinstance(value, tuple):
        return tuple(_fields(item) for item in value)
    return value


def _agrees_with_the_grammar(command: str) -> bool | None:
    """None when the line is not plain; else whether both readings are the same."""
    plain = read_plain(command)
    if plain is None:
        return None
    return bool(_fields(plain) == _fields(_analyse(command)))


def test_every_plain_line_of_the_corpus_reads_as_the_grammar_reads_it() -> None:
    commands = [case["command"] for case in json.loads(CORPUS.read_text(encoding="utf-8"))]
    answers = [(command, _agrees_with_the_grammar(command)) for command in commands]
    plain = [command for command, agrees in answers if agrees is not None]
    assert len(plain) > len(commands) // 3  # the fast path is the common path
    assert [command for command, agrees in answers if agrees is False] == []


@pytest.mark.parametrize(
    "command",
    [
        "git status",
        "cat README.md | grep -n TODO | head -20",
        "find . -name '*.py' -type f",
        "rg -n 'def main' src",
        'git commit -m "fix: the gate" && git push',
        "echo a'b'\"c\" x''y",
        "ls ~/x HEAD~1 a@b %1 x,y a:b +x --opt=v",
        "ls;x || y\t&&z",
    ],
)
def test_typical_lines_are_read_plain_and_as_the_grammar_reads_them(command: str) -> None:
    assert _agrees_with_the_grammar(command) is True


@pytest.mark.parametrize(
    "command",
    [
        "",
        "   ",
        "ls;",  # ends in an operator
        "ls |",
        "| ls",
        "ls && && x",
        "ls & x",  # background
        "ls |& x",
        "ls\nx",
        "ls # note",
        "X=1 ls",
        "ls > out",
        "echo $HOME",
        'echo "$HOME"',
        'echo "a\\"b"',
        "echo `id`",
        "ls *.py",
        "ls {a,b}",
        "if true; then ls; fi",
        "for'a b' x",  # the grammar splits the reserved word off
        "declare x",
        "export x",
        "coproc% x",
        "a@ x",
        "- a@",
        "'ls' x",  # a quoted command name is left to the grammar
        'git " "push origin',  # the grammar reads `" "` as empty
        'echo x"\t"y',
        "echo é",
        "ls " + "x" * MAX_PLAIN,
        " && ".join(["ls"] * 100),  # more operators than read here
    ],
)
def test_other_lines_are_left_to_the_grammar(command: str) -> None:
    assert read_plain(command) is None


_PIECES = st.sampled_from(
    [
        "ls", "git", "status", "-la", "--x=1", "a", "if", "then", "fi", "for", "in", "do",
        "done", "case", "esac", "while", "function", "time", "coproc", "declare", "export",
        "local", "unset", "readonly", "let", "eval", "test", "select", "until", "elif", "!",
        "{", "}", "[[", "(", ")", "'a b'", "'x'", "''", '""', '"a b"', "'\"'", "~", "~/x",
        "==", "=~", "!=", "--f=%h", "x=", "=x", "a~b", "%1", "-", "--", "+x", "x:y", "a,b",
        "@a", "a@", "./x", "/x", "=", "a=b",
        "#", "a#b", "\\x", "$x", "*", "?", "&", "|", "&&", "||", ";", ";;", "|&", ">", "<",
        "2>&1", "\t", " ", "\n", "é", "'$(x)'", '"`x`"', "'a|b'", '"a;b"', "x''", "a'b'c",
        "'", '"', "HEAD~1", "'*.py'", "{a,b}", "1", ".", "..", ":", ",", "%", "+",
        '" "', '"\t"', '"  "', '" a "',
    ]
)  # fmt: skip


@settings(max_examples=3000, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    st.lists(_PIECES, min_size=1, max_size=8),
    st.lists(st.sampled_from(["", " ", "\t", " | ", " && ", " || ", "; ", "|"]), min_size=8),
)
@example(["-", "a@"], [" ", ""])
@example(["for", "'a b'"], ["", ""])
@example(["coproc", "%"], ["", ""])
@example(["git", '" "', "push"], [" ", "", ""])
def test_a_line_read_plain_is_read_as_the_grammar_reads_it(
    pieces: list[str], separators: list[str]
) -> None:
    command = "".join(piece + blank for piece, blank in zip(pieces, separators, strict=False))
    assert _agrees_with_the_grammar(command) is not False


@settings(max_examples=500, deadline=None)
@given(st.text(max_size=300))
def test_read_plain_never_raises(command: str) -> None:
    plain = read_plain(command)
    assert plain is None or plain == analyse(command)
