"""The adversarial shell corpus: deny/ask rules, allow rules and the read-only check.

``tests/data/shell_corpus.json`` holds command lines, each tagged with where it
comes from (``issue-11``: the bypass classes of the guard-rails issue;
``codex:command_safety``: the cases of Codex's command-safety tests;
``claude-code#N``: public Claude Code permission-bypass reports;
``shell-knowledge``: further ways a command hides in bash), and what must hold:

- ``deny``: each rule, as a deny and as an ask rule, applies (zero bypasses);
- ``not_deny``: each rule, as a deny rule, does not apply (no false alarm);
- ``allow`` / ``not_allow``: each rule, as an allow rule, covers / never covers it;
- ``read_only``: what the read-only classifier must answer;
- ``read_denied``: in a workspace holding ``secrets/key.pem`` (under a
  ``Read(./secrets/**)`` deny rule) and ``docs/key.pem -> ../secrets/key.pem``,
  whether ``Bash``'s own check denies the line or asks as a safety check
  (``true``) or lets it reach the rules (``false``);
- ``protected``: in a workspace with ``.git/``, ``.claude/`` and ``.vscode/``,
  whether ``Bash``'s own check asks as a safety check (a protected or unknown
  write target, a line too complex or unreadable), in bypass mode too.

Sources added for the second round (issue 30): ``gtfobins:PROGRAM`` (program
execution and file reads the GTFOBins catalogue lists), ``git-docs:PAGE`` (git's
documentation of options that write or execute), ``bash-manual:SECTION``
(hashing, expansion, arithmetic, redirections), ``claude-code#66176``,
``vscode#329237`` (option abbreviations), ``coreutils-docs`` and ``issue-30``
(the red-team round's own classes).

``stricter`` names a case where trioexec is deliberately stricter than the
command needs (a false positive); the note lists them.
"""

from __future__ import annotations

import json
import shlex
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trioexec._shell._syntax import analyse
from trioexec.permissions import match_bash_rule
from trioexec.tools import is_read_only_command
from trioexec.tools._bash_paths import judge_paths

CORPUS: list[dict[str, Any]] = json.loads(
    (Path(__file__).parent / "data" / "shell_corpus.json").read_text(encoding="utf-8")
)
KEYS = {
    "command",
    "source",
    "deny",
    "not_deny",
    "allow",
    "not_allow",
    "read_only",
    "note",
    "stricter",
    "read_denied",
    "protected",
}


def _id(case: dict[str, Any]) -> str:
    return f"{case['source']}:{case['command'][:60]!r}"


@pytest.mark.parametrize("case", CORPUS, ids=[_id(c) for c in CORPUS])
def test_shell_corpus_case(case: dict[str, Any]) -> None:
    command = case["command"]
    for rule in case.get("deny", ()):
        assert match_bash_rule(rule, command, behavior="deny"), f"deny {rule!r} bypassed"
        assert match_bash_rule(rule, command, behavior="ask"), f"ask {rule!r} bypassed"
    for rule in case.get("not_deny", ()):
        assert not match_bash_rule(rule, command, behavior="deny"), f"deny {rule!r} misfired"
    for rule in case.get("allow", ()):
        assert match_bash_rule(rule, command, behavior="allow"), f"allow {rule!r} missed"
    for rule in case.get("not_allow", ()):
        assert not match_bash_rule(rule, command, behavior="allow"), f"allow {rule!r} covers it"
    if "read_only" in case:
        assert is_read_only_command(command) is case["read_only"]


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("corpus")
    (root / "secrets").mkdir()
    (root / "secrets" / "key.pem").write_text("TOP SECRET")
    (root / "docs").mkdir()
    (root / "docs" / "key.pem").symlink_to(root / "secrets" / "key.pem")
    (root / "docs" / "guide.md").write_text("guide")
    (root / "src").mkdir()
    (root / "src" / "main.py").write_text("print(1)")
    for folder in (".git/hooks", ".claude", ".vscode"):
        (root / folder).mkdir(parents=True)
    (root / ".git" / "config").write_text("[core]\n")
    (root / ".claude" / "settings.json").write_text("{}")
    (root / "README.md").write_text("hello")
    return root


DISK_CASES = [c for c in CORPUS if "read_denied" in c or "protected" in c]


@pytest.mark.parametrize("case", DISK_CASES, ids=[_id(c) for c in DISK_CASES])
def test_shell_corpus_case_on_disk(case: dict[str, Any], workspace: Path) -> None:
    command = case["command"]
    if "read_denied" in case:
        result = judge_paths(command, workspace, ("./secrets/**",))
        stopped = result.behavior == "deny" or (result.behavior == "ask" and result.safety_check)
        assert stopped is case["read_denied"], (result.behavior, result.message)
    if "protected" in case:
        result = judge_paths(command, workspace, ())
        asked = result.behavior == "ask" and result.safety_check
        assert asked is case["protected"], (result.behavior, result.message)


def test_the_corpus_is_large_tagged_and_well_formed() -> None:
    assert len(CORPUS) >= 400
    sources = Counter(case["source"].split("#")[0].split(":")[0] for case in CORPUS)
    assert {"issue-11", "codex", "claude-code", "shell-knowledge"} <= set(sources)
    for case in CORPUS:
        assert set(case) <= KEYS, case
        assert set(case) - {"command", "source", "note", "stricter"}, f"asserts nothing: {case}"


def test_every_fail_closed_case_is_never_read_only() -> None:
    """A command a deny rule must catch is never judged read-only (it would run unasked)."""
    for case in CORPUS:
        if "rm:*" in case.get("deny", ()):
            assert not is_read_only_command(case["command"]), case["command"]


WRAPPERS = [
    "sudo", "sudo -u root --", "doas", "env -i", "env FOO=1", "timeout 5", "timeout -s KILL 5",
    "nice -n 5", "nohup", "stdbuf -oL", "ionice -c3", "chrt -o 0", "taskset -c 0",
    "flock /tmp/l", "setsid", "command", "exec", "time -p", "busybox", "xargs", "watch",
]  # fmt: skip
SHELLS = ["sh -c", "bash -c", "bash -lc", "sh -ec", "bash --norc -c", "zsh -c", "eval"]
GLUE = ["; ", " && ", " || ", " | ", "\n"]


@given(
    wrappers=st.lists(st.sampled_from(WRAPPERS), max_size=3),
    shell=st.sampled_from([None, *SHELLS]),
    before=st.sampled_from(["", "ls", "git status", "echo 'a; b'"]),
    glue=st.sampled_from(GLUE),
    inner=st.sampled_from(["rm x", "rm -rf x", "'rm' x", "\\rm x", "/bin/rm -f x"]),
)
def test_no_chain_of_wrappers_and_shells_hides_a_denied_command(
    wrappers: list[str], shell: str | None, before: str, glue: str, inner: str
) -> None:
    command = " ".join([*wrappers, inner])
    if shell is not None:
        command = f"{shell} {shlex.quote(command)}"
    if before:
        command = before + glue + command
    assert match_bash_rule("rm:*", command, behavior="deny"), command
    assert match_bash_rule("rm:*", command, behavior="ask"), command
    if wrappers or shell:  # an allow rule for the command never covers it wrapped
        assert not match_bash_rule("rm:*", command), command
    assert not is_read_only_command(command), command


@given(st.text(alphabet=" \t\n;&|<>()$`'\"\\#*?[]{},.-=~!abcdgilmrst/", max_size=60))
def test_the_analysis_never_raises_and_read_only_lines_run_only_known_programs(text: str) -> None:
    analysis = analyse(text)
    if is_read_only_command(text):
        assert analysis.plain
        assert all(c.words and c.words[0].static for c in analysis.commands)
