"""Permission rule parsing, shell command splitting, Bash and path rule matching (SPEC §6)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trioexec._contract._rules import PermissionRule
from trioexec._guard._bash_rules import match_bash_rule
from trioexec._guard._path_rules import match_path_rule
from trioexec._shell._syntax import split_bash_command

# --- parsing ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "tool", "content"),
    [
        ("Bash", "Bash", None),
        ("Bash()", "Bash", None),
        ("Bash(*)", "Bash", None),
        ("  Read  ", "Read", None),
        ("Bash(npm run test:*)", "Bash", "npm run test:*"),
        ("Read(./secrets/**)", "Read", "./secrets/**"),
        (r"Bash(echo \(hi\))", "Bash", "echo (hi)"),
        (r"Bash(echo a\\b)", "Bash", r"echo a\b"),
        (r"Bash(echo \*)", "Bash", r"echo \*"),
        ("Bash(python -c 'print(1)')", "Bash", "python -c 'print(1)'"),
        ("mcp__github__create_issue", "mcp__github__create_issue", None),
    ],
)
def test_parse_rule(text: str, tool: str, content: str | None) -> None:
    rule = PermissionRule.parse(text)
    assert rule == PermissionRule(tool, content)


@pytest.mark.parametrize(
    "text",
    ["", "(ls)", "Bash(ls", "Bash(ls) extra", "Bash ls)", "Ba sh", r"Bash\(ls\)"],
)
def test_parse_rule_rejects_malformed(text: str) -> None:
    with pytest.raises(ValueError, match="rule"):
        PermissionRule.parse(text)


@pytest.mark.parametrize(
    "rule",
    [
        PermissionRule("Bash"),
        PermissionRule("Bash", "echo (a) \\ b"),
        PermissionRule("Read", "./x/**"),
    ],
)
def test_rule_text_round_trips(rule: PermissionRule) -> None:
    assert PermissionRule.parse(str(rule)) == rule


# --- splitting ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "parts"),
    [
        ("npm run test && rm -rf /", ("npm run test", "rm -rf /")),
        ("a || b ; c | d |& e", ("a", "b", "c", "d", "e")),
        ("a & b", ("a", "b")),
        ("a\nb\n\n", ("a", "b")),
        ('git commit -m "fix && test"', ('git commit -m "fix && test"',)),
        ("echo 'a; b | c'", ("echo 'a; b | c'",)),
        ('echo "say \\"x && y\\""', ('echo "say \\"x && y\\""',)),
        ("echo a\\;b", ("echo a\\;b",)),
        ("make 2>&1 | tee log", ("make 2>&1", "tee log")),
        ("cmd &> out && next", ("cmd &> out", "next")),
        ("cmd >&2", ("cmd >&2",)),
        ("first \\\n  second", ("first   second",)),
        ("", ()),
        ("  ;  ", ()),
    ],
)
def test_split_bash_command(command: str, parts: tuple[str, ...]) -> None:
    assert split_bash_command(command) == parts


# --- Bash rules -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "command", "expected"),
    [
        # prefix
        ("npm run test:*", "npm run test", True),
        ("npm run test:*", "npm run test -- --watch", True),
        ("npm run test:*", "  npm run test -- x  ", True),
        ("npm run test:*", "npm run test && rm -rf /", False),
        ("npm run test:*", "npm run testing", False),
        ("npm run test:*", "npm run", False),
        ("npm run test:*", "npm run test; npm run test -- b", True),
        ("npm run test:*", "npm run test | grep ok", False),
        ("npm run test:*", "npm run test & rm -rf /", False),
        ("npm run test:*", "npm run test\nrm -rf /", False),
        ("npm run test:*", "npm run test || rm -rf /", False),
        # && inside a quoted argument is one command
        ("git commit:*", 'git commit -m "a && rm -rf /"', True),
        ("git commit:*", "git commit -m 'a; rm -rf /'", True),
        # exact
        ("npm test", "npm test", True),
        ("npm test", "npm test --watch", False),
        ("npm test", "npm test && npm test", True),
        ("ls && rm -rf /", "ls && rm -rf /", True),
        # wildcard
        ("git * --force", "git push --force", True),
        ("git * --force", "git push origin main --force", True),
        ("git * --force", "git push", False),
        ("git *", "git", True),
        ("git *", "git status", True),
        ("git *", "gitk", False),
        ("git *", "git status && rm -rf /", False),
        ("* --version", "python --version", True),
        (r"echo \*", "echo *", True),
        (r"echo \*", "echo a", False),
        (r"echo \* *", "echo * b", True),
        # command substitution is never covered by a prefix or wildcard rule
        ("echo:*", "echo $(rm -rf /)", False),
        ("echo:*", 'echo "$(rm -rf /)"', False),
        ("echo:*", "echo `rm -rf /`", False),
        ("diff:*", "diff <(ls a) <(ls b)", False),
        ("echo:*", "echo '$(not run)'", True),
        ("echo *", "echo $(rm -rf /)", False),
        # an unterminated quote is never covered either
        ("echo:*", "echo 'oops", False),
        ("echo:*", "", False),
    ],
)
def test_match_bash_rule(content: str, command: str, expected: bool) -> None:
    assert match_bash_rule(content, command) is expected


@pytest.mark.parametrize(
    ("content", "command", "expected"),
    [
        ("rm:*", "rm -rf /", True),
        ("rm:*", "ls && rm -rf /", True),
        ("rm:*", "ls; rm x", True),
        ("rm:*", "cat x | rm y", True),
        ("rm:*", "ls && sudo rm -rf /", True),
        ("rm:*", "FOO=1 BAR='a b' rm -rf x", True),
        ("rm:*", "timeout 5 rm x", True),
        ("rm:*", "nice -n 10 rm x", True),
        ("rm:*", "env rm x", True),
        ("rm:*", "find . -name '*.o' | xargs rm", True),
        ("rm:*", "(cd /tmp && rm -rf x)", True),
        ("rm:*", "{ rm -rf x; }", True),
        ("rm:*", "if true; then rm -rf /; fi", True),
        ("rm:*", "echo $(rm -rf /)", True),
        ("rm:*", 'echo "$(echo $(rm -rf /))"', True),
        ("rm:*", "echo `rm -rf /`", True),
        ("rm:*", "diff <(rm x) y", True),
        ("rm:*", "echo 'rm -rf /'", False),  # quoted text runs nothing
        ("rm:*", "echo '$(rm -rf /)'", False),
        ("rm:*", "rmdir x", False),
        ("rm:*", "ls -la", False),
        ("git push:*", "git add . && git push origin main", True),
        ("curl *", "ls && curl http://x", True),
        ("rm -rf /", "ls && rm -rf /", True),
    ],
)
def test_deny_and_ask_rules_match_any_part(content: str, command: str, expected: bool) -> None:
    assert match_bash_rule(content, command, behavior="deny") is expected
    assert match_bash_rule(content, command, behavior="ask") is expected


def test_a_rule_matches_as_an_allow_rule_unless_told_otherwise() -> None:
    assert not match_bash_rule("rm:*", "ls && rm x")
    assert match_bash_rule("rm:*", "ls && rm x", behavior="deny")


_words = st.text(alphabet="abcxyz-_./ =", min_size=1, max_size=12)


@given(content=st.sampled_from(["ls:*", "git *", "npm test", "echo *"]), a=_words, b=_words)
def test_compound_is_covered_only_if_each_part_is(content: str, a: str, b: str) -> None:
    for op in ("&&", "||", ";", "|", "\n"):
        compound = f"{a} {op} {b}"
        if match_bash_rule(content, compound) and compound.strip() != content:
            assert match_bash_rule(content, a)
            assert match_bash_rule(content, b)


@given(suffix=st.text(alphabet="abc -_=./", max_size=20))
def test_prefix_rule_covers_its_prefix_followed_by_arguments(suffix: str) -> None:
    assert match_bash_rule("npm run test:*", "npm run test " + suffix)


# --- path rules -----------------------------------------------------------------------------

CWD = Path("/proj")


@pytest.mark.parametrize(
    ("content", "path", "expected"),
    [
        ("./secrets/**", "/proj/secrets/key.pem", True),
        ("./secrets/**", "/proj/secrets/a/b/c", True),
        ("./secrets/**", "secrets/key.pem", True),
        ("./secrets/**", "./sub/../secrets/key", True),
        ("./secrets/**", "/proj/secrets", False),
        ("./secrets/**", "/proj/other/secrets/key", False),
        ("./secrets/**", "/elsewhere/secrets/key", False),
        ("./secrets", "/proj/secrets/key", True),
        ("/secrets/**", "/proj/secrets/key", True),
        ("/secrets/**", "/secrets/key", False),
        ("//etc/**", "/etc/passwd", True),
        ("//etc/passwd", "/etc/passwd", True),
        ("//etc/passwd", "/proj/etc/passwd", False),
        ("*.env", "/proj/.env", True),  # as in gitignore, * may be empty
        ("*.env", "/proj/prod.env", True),
        ("*.env", "/proj/deep/down/prod.env", True),
        (".env", "/proj/deep/.env", True),
        ("*.env", "/other/prod.env", False),
        ("src/*.py", "/proj/src/a.py", True),
        ("src/*.py", "/proj/src/pkg/a.py", False),
        ("src/*.py", "/proj/lib/src/a.py", False),
        ("src/**/*.py", "/proj/src/a.py", True),
        ("src/**/*.py", "/proj/src/x/y/a.py", True),
        ("**/node_modules/**", "/proj/a/node_modules/x/index.js", True),
        ("file?.txt", "/proj/file1.txt", True),
        ("file?.txt", "/proj/file10.txt", False),
        ("file[0-9].txt", "/proj/file7.txt", True),
        ("file[!0-9].txt", "/proj/file7.txt", False),
        ("file[!0-9].txt", "/proj/fileA.txt", True),
        (r"\*.txt", "/proj/*.txt", True),
        (r"\*.txt", "/proj/a.txt", False),
        ("build/", "/proj/build/out.o", True),
        ("build/", "/proj/build", False),
        ("build/", "/proj/build/", True),
        ("**", "/proj/anything/at/all", True),
        ("", "/proj/x", False),
    ],
)
def test_match_path_rule(content: str, path: str, expected: bool) -> None:
    assert match_path_rule(content, path, cwd=CWD) is expected


def test_match_path_rule_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    assert match_path_rule("~/.ssh/**", tmp_path / ".ssh" / "id_ed25519", cwd=CWD)
    assert match_path_rule("~/.ssh/**", "~/.ssh/config", cwd=CWD)
    assert not match_path_rule("~/.ssh/**", "/proj/.ssh/config", cwd=CWD)


# --- comments, $'...' quotes and here-docs ----------------------------------------------


@pytest.mark.parametrize(
    ("command", "parts"),
    [
        ("cat x #'\ntouch pwned #'", ("cat x", "touch pwned")),
        ("cat x # a; b\nls", ("cat x", "ls")),
        ("echo a#b; ls", ("echo a#b", "ls")),
        ("echo ${#x}; ls", ("echo ${#x}", "ls")),
        ("cat $'\\'' x; touch pwned #'", ("cat $'\\'' x", "touch pwned")),
        ("echo $'a;b' ; ls", ("echo $'a;b'", "ls")),
        ("cat <<EOF\nx; y\nEOF\nls", ("cat <<EOF", "ls")),
        ("cat <<-'E' | wc\n\tbody\n\tE\nls", ("cat <<-'E'", "wc", "ls")),
        ("cat <<<'a;b'; ls", ("cat <<<'a;b'", "ls")),
    ],
)
def test_split_knows_comments_ansi_c_quotes_and_here_docs(
    command: str, parts: tuple[str, ...]
) -> None:
    assert split_bash_command(command) == parts


@pytest.mark.parametrize(
    "command",
    [
        "cat x #'\ntouch pwned #'",
        "cat $'\\'' x; touch pwned #'",
        "cat <<EOF\ncat '\nEOF\ntouch pwned #'",
        "cat <<EOF\nhello\nEOF",
        "cat <<-EOF\n\thello\n\tEOF",
    ],
)
def test_prefix_allow_rule_never_covers_a_hidden_command_or_a_here_doc(command: str) -> None:
    assert not match_bash_rule("cat:*", command)
    assert not match_bash_rule("cat *", command)


def test_exact_rule_still_covers_a_here_doc_written_exactly() -> None:
    command = "cat <<EOF\nhello\nEOF"
    assert match_bash_rule(command, command)


def test_comment_does_not_stop_an_allow_rule() -> None:
    assert match_bash_rule("ls:*", "ls -la # list")


# --- deny rules: quote removal and wrappers with options ---------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "'rm' -f victim",
        '"rm" -f victim',
        "\\rm -f victim",
        "r''m -f victim",
        "nice rm x",
        "nice -n 5 rm x",
        "nice -5 rm x",
        "nice --adjustment=3 rm x",
        "env -i rm x",
        "env -u HOME A=1 rm x",
        "env - rm x",
        "timeout 5 rm x",
        "timeout -s KILL 5 rm x",
        "timeout --signal=KILL -k 2 5 rm x",
        "command -p rm x",
        "sudo -u root rm x",
        "sudo -E -- rm x",
        "stdbuf -oL rm x",
        "nohup nice -n 1 env -i rm x",
        "xargs -0 -n 1 rm",
        "time -p rm x",
        "exec -a name rm x",
        "/bin/rm x",
        "X=1 >out rm x",
        "bash -c 'rm x'",
        "eval 'rm x'",
        "$CMD x",
        "`echo rm` x",
        "timeout --unknown-option 5 rm x",
        "ls && (rm x)",
        "cat <<EOF\n$(rm x)\nEOF",
        "cat <<EOF\n'\nEOF\nrm x #'",
    ],
)
def test_deny_rule_sees_through_quotes_and_wrappers(command: str) -> None:
    assert match_bash_rule("rm:*", command, behavior="deny")
    assert match_bash_rule("rm:*", command, behavior="ask")
    assert not match_bash_rule("rm:*", command)


def test_a_redirection_is_checked_on_its_own_not_as_part_of_the_command_text() -> None:
    assert match_bash_rule("rm:*", "2>/dev/null rm x", behavior="deny")
    assert match_bash_rule("rm:*", "2>/dev/null rm x")  # /dev/null is no write
    assert not match_bash_rule("rm:*", "2>../log rm x")


@pytest.mark.parametrize("command", ["ls; echo rm", "grep rm file", "timeout 5 echo rm"])
def test_deny_rule_does_not_match_rm_as_an_argument(command: str) -> None:
    assert not match_bash_rule("rm:*", command, behavior="deny")


def test_deny_rule_reads_every_line_of_a_command_with_a_here_doc() -> None:
    """A here-doc body is read as commands too: fail closed if the body was misjudged."""
    assert match_bash_rule("rm:*", "cat <<'EOF'\nrm\nEOF", behavior="deny")
