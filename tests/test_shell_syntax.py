"""The shell analysis: what it reads from a line does not depend on how the line is spelt."""

from __future__ import annotations

from hypothesis import assume, given
from hypothesis import strategies as st

from trioexec._shell._syntax import analyse, split_bash_command

_PLAIN = st.text(alphabet="abcdefgrstmx019_./,:+%@-", min_size=1, max_size=8)
_BLANKS = st.sampled_from([" ", "  ", "\t", " \t "])
_GLUE = st.sampled_from([" | ", " && ", " || ", "; ", "\n", " |& ", " & "])


@st.composite
def _spellings(draw: st.DrawFn) -> tuple[str, str, list[str]]:
    """A line of plain words, the same line with every word single-quoted, and its commands."""
    commands = draw(st.lists(st.lists(_PLAIN, min_size=1, max_size=5), min_size=1, max_size=4))
    plain: list[str] = []
    quoted: list[str] = []
    for words in commands:
        blanks = [draw(_BLANKS) for _ in words[1:]]
        plain.append(words[0] + "".join(b + w for b, w in zip(blanks, words[1:], strict=True)))
        quoted.append(
            f"'{words[0]}'" + "".join(f"{b}'{w}'" for b, w in zip(blanks, words[1:], strict=True))
        )
    glue = [draw(_GLUE) for _ in commands[1:]]
    line = plain[0] + "".join(g + p for g, p in zip(glue, plain[1:], strict=True))
    spelt = quoted[0] + "".join(g + q for g, q in zip(glue, quoted[1:], strict=True))
    return line, spelt, plain


@given(_spellings())
def test_a_plain_word_reads_the_same_quoted_or_not(spellings: tuple[str, str, list[str]]) -> None:
    line, spelt, commands = spellings
    bare, quoted = analyse(line), analyse(spelt)
    assume(not bare.unparsed)  # the grammar rejects a few such words (`1@`): fail closed
    assert not quoted.unparsed
    assert bare.unmodelled == quoted.unmodelled
    assert [c.words for c in bare.commands] == [c.words for c in quoted.commands]
    assert [c.text for c in bare.commands] == commands
    for command in bare.commands:
        assert all(w.static and not w.expands and w.raw == w.text for w in command.words)
    assert len(split_bash_command(line)) == len(split_bash_command(spelt))


def test_a_pipeline_of_three_commands_reads_alike_with_or_without_a_final_newline() -> None:
    for line in ("cat a | grep b | head -2", "cat a | grep b | head -2\n"):
        analysis = analyse(line)
        assert analysis.plain
        assert [[w.text for w in c.words] for c in analysis.commands] == [
            ["cat", "a"], ["grep", "b"], ["head", "-2"],
        ]  # fmt: skip


def test_a_line_ending_in_a_backslash_is_never_joined_to_a_next_line() -> None:
    """bash keeps the backslash that ends a ``-c`` script (``echo rm\\`` prints ``rm\\``):
    the analysis must not read it as a line continuation; the grammar rejects it (fail closed)."""
    assert analyse("echo rm\\").unparsed
