"""The examples run and print what their docstrings promise; the API reference names everything.

Each ``examples/*.py`` runs in a subprocess from the repository root, as a
reader would run it.  The examples on trio's MockClock finish at once; only
``standard_tools.py`` spawns real processes, so the 60 s timeout is a bound
on a hung run, not a timing assertion.
"""

from __future__ import annotations

import importlib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from trioexec._guard._sandbox import probe_bwrap

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
API_DOC = ROOT / "docs" / "api.md"

# Lines (or parts of lines) each example must print: the point of the example.
EXPECTED: dict[str, list[str]] = {
    "batch.py": [
        "safe batch : ['toolu_1', 'toolu_2']",
        "toolu_3 is_error=False: noted 'both looked up'; cities so far: ['Copenhagen', 'Oslo']",
        "toolu_4 is_error=True: <tool_use_error>InputValidationError: weather failed",
        "The required parameter `city` is missing",  # Zod's order: missing, then unexpected
        "An unexpected parameter `town` was provided</tool_use_error>",
    ],
    "streaming.py": [
        "t=3.00s progress toolu_fast: https://b.example: half done",
        "t=3.90s stream ended; not yet released: ['toolu_fast', 'toolu_slow']",
        "t=5.20s result   toolu_slow: contents of https://a.example\n"
        "  t=5.20s result   toolu_fast: contents of https://b.example",
    ],
    "interrupt_and_abort.py": [
        "interrupt at t=1 s; run_tools returned at t=2 s",
        "toolu_2 download is_error=False  download done after 2 s",
        "abort at t=1 s; run_tools returned at t=1 s",
        "toolu_2 download is_error=True   Interrupted by the user while running: download had star",
        "toolu_3 edit     is_error=True   Not run: the user interrupted the turn before edit start",
    ],
    "sibling_error.py": [
        "toolu_1 is_error=False  (contents of notes.txt)",
        "toolu_2 is_error=True   <tool_use_error>Cancelled: parallel tool call "
        "shell(ls deploy) errored. shell had started and was stopped before it finished, so it "
        "may have done part of its work (check before you retry); the user did not stop it.",
        "toolu_3 is_error=True   Exit code 2 | ls: cannot access 'deploy'",
        "toolu_5 is_error=True   <tool_use_error>Cancelled: parallel tool call shell(ls deploy) "
        "errored. shell was not started, so it did nothing; the user did not stop it.",
        "next run on the same turn: (contents of notes.txt) (<Turn running>)",
    ],
    "policies.py": [
        "trioexec (done after 1 s)\n"
        "  toolu_1 is_error=True   <tool_use_error>Cancelled: parallel tool call Bash(ls dist/)",
        "claude-code-2.1.88 (done after 1 s)\n"
        "  toolu_2 is_error=False  (contents of CHANGELOG.md)\n"
        "  toolu_3 is_error=True   Exit code 2 | ls: cannot access 'dist/'\n"
        "  toolu_1 is_error=True   <tool_use_error>Cancelled: parallel tool call Bash(ls dist/)",
        "claude-code-2.1.161 (done after 3 s)\n"
        "  toolu_2 is_error=False  (contents of CHANGELOG.md)\n"
        "  toolu_3 is_error=True   Exit code 2 | ls: cannot access 'dist/'\n"
        "  toolu_1 is_error=False  240 passed",
        "claude-code-2.1.161, results in call order (done after 3 s)\n"
        "  toolu_1 is_error=False  240 passed",
        "unknown policy 'claude-code-3': the presets are 'trioexec', 'claude-code-2.1.88',",
    ],
    "sandbox.py": [
        "echo built > out.txt && cat out.txt -> built",
        "echo x > {tmp}/escaped.txt       -> Exit code 1 | ",
        "{tmp}/escaped.txt: Read-only file system",
        "    - a write outside the writable paths (Read-only file system)",
        "cat secrets/token; echo \"[$?]\"   -> cat: secrets/token: No such file or directory | [1]",
        "git push origin main             -> Permission to use Bash with command git push origin "
        "main has been denied.",
    ],
    "guard_rails.py": [
        "npm run test -- --watch    -> (ran npm run test -- --watch)",
        "npm run test && rm -rf /   -> Permission to use Bash has been denied.",
        "curl https://x.example     -> Permission to use Bash has been denied.",
        "./deploy prod              -> PreToolUse:Bash hook error: commands touching prod",
        "git push origin main       -> Not now: the release branch is frozen.",
        "ls -la                     -> (ran ls -la)",
        "+ additional_context: The test suite takes about a minute.",
    ],
    "background_hooks.py": [
        "  npm run test             -> (ran npm run test)",
        "  git push origin main     -> Permission to use Bash has been denied because Claude Code "
        "is running in don't ask mode.",
        "turn 2:\n  npm run test -- -k api   -> (ran npm run test -- -k api)\n"
        "                              + additional_context from PostToolUse:Bash: "
        "lint: 2 warnings in app.py",
    ],
    "file_rules.py": [
        "toolu_1 Write       -> Permission to edit {workspace}/vendor/lib.py has been denied.",
        "toolu_2 Write       -> Permission to edit {workspace}/third_party/lib.py has been denied.",
        "toolu_3 append_note -> Permission to edit {workspace}/vendor/NOTES has been denied.",
        "toolu_4 Glob        -> src/app.py\n",
        "toolu_5 Grep        -> src/app.py:1 |  | Found 1 total occurrence across 1 file.",
        "(can_use_tool asked about Write .git/hooks/pre-commit: no)",
        "toolu_6 Write       -> Not without a review.",
        "toolu_7 append_note -> appended to src/notes.txt",
        ".git/hooks/pre-commit written: False",
    ],
    "results_budget.py": [
        "Output too large (58.6KB). Full output saved to: {session}/tool-results/toolu_big.txt",
        "toolu_a    2,155 chars  persisted",
        "toolu_b   35,000 chars  inline",
        "files: ['toolu_a.txt', 'toolu_big.txt']",
        "rebuilt with the same state, same bytes: True",
    ],
    "observers.py": [
        "t=0.00  -- interruptible: True",
        "t=0.50  -- interruptible: False",
        "t=0.75  toolu_1  cancelled (user_interrupted): Interrupted by the user while running",
        "t=1.50  toolu_2  progress: halfway",
        "t=2.50  toolu_2  completed: build finished",
    ],
    "mcp_servers.py": [
        "tools: ['mcp__notes__add_note', 'mcp__notes__clear_notes', 'mcp__notes__list_notes']",
        "toolu_1 is_error=False: noted (1 so far)",
        "toolu_3 is_error=False: buy milk",
        "toolu_4 is_error=True: Claude requested permissions to use mcp__notes__clear_notes",
        "server stopped; failures: {}",
    ],
    "standard_tools.py": [
        "one batch of concurrency-safe calls: True",
        "2\t    # TODO: use the preferred name",
        "src/app.py:2:    # TODO: use the preferred name",
        "3 src/app.py",
        "Path ../elsewhere.txt is outside the workspace root {workspace}",
        "Exit code 1\n    cat: missing.txt: No such file or directory",
    ],
    "three_tools.py": [
        'toolu_1 is_error=False  {"city": "Oslo", "high": 21, "unit": "C", "sky": "clear"}',
        'toolu_2 is_error=False  {"in_stock": 56}',
        "toolu_3 is_error=False  deployed to staging\n  + note for toolu_3: additional_context",
        "toolu_4 is_error=True  Permission to use deploy has been denied.",
        "toolu_5 is_error=True  <tool_use_error>Cancelled: tool call deploy was denied permission,",
        'audited: deploy {"target": "staging"}; deploy {"target": "prod"}',
    ],
}


NEEDS_A_MODEL = {"agent.py"}
"""Examples that talk to the Messages API: run against a local replaying server below."""


def test_every_example_has_expectations() -> None:
    found = sorted(path.name for path in EXAMPLES.glob("*.py"))
    assert found == sorted([*EXPECTED, *NEEDS_A_MODEL])


def test_the_readme_shows_the_agent_example_as_it_is() -> None:
    example = (EXAMPLES / "agent.py").read_text(encoding="utf-8")
    code = example[example.index("import os") :].rstrip()
    assert f"```python\n{code}\n```" in (ROOT / "README.md").read_text(encoding="utf-8")


@pytest.mark.filterwarnings("ignore:Async generator '(anthropic|httpx|httpcore):ResourceWarning")
def test_the_agent_example_runs_against_a_local_messages_server() -> None:
    from messages_server import MessagesServer, response, text, tool_use

    calls = response(
        text(0, "Counting."),
        tool_use(1, "toolu_1", "word_count", {"text": "one two three"}),
        stop_reason="tool_use",
    )
    with MessagesServer([calls, response(text(0, "Three words."))]) as server:
        env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
        env.update(ANTHROPIC_BASE_URL=server.url, ANTHROPIC_API_KEY="dummy-key")
        done = subprocess.run(
            [sys.executable, str(EXAMPLES / "agent.py"), "count", "the", "words"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=120,
            check=False,
            env=env,
        )
    assert done.returncode == 0, done.stderr
    assert "Counting.\n  [word_count] {'text': 'one two three'}\nThree words." in done.stdout
    assert "end_turn after 2 turns, 4 messages" in done.stdout
    first, second = server.requests
    assert first["messages"] == [{"role": "user", "content": "count the words"}]
    assert [t["name"] for t in first["tools"]][-1] == "word_count"
    (answer,) = second["messages"][-1]["content"]
    assert (answer["tool_use_id"], answer["content"]) == ("toolu_1", "3")


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_example_runs(name: str) -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / name)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    expected = EXPECTED[name]
    if name == "sandbox.py" and probe_bwrap(None) is not None:
        expected = ["bubblewrap cannot run here: "]  # the example says so and stops
    for line in expected:
        assert line in done.stdout, f"{name} did not print {line!r}:\n{done.stdout}"


@pytest.mark.parametrize(
    "package",
    [
        "trioexec",
        "trioexec.anthropic",
        "trioexec.hooks",
        "trioexec.lowlevel",
        "trioexec.mcp",
        "trioexec.permissions",
        "trioexec.results",
        "trioexec.testing",
        "trioexec.tools",
    ],
)
def test_api_reference_names_every_export(package: str) -> None:
    text = API_DOC.read_text(encoding="utf-8")
    module = importlib.import_module(package)
    missing = [name for name in module.__all__ if not re.search(rf"`{re.escape(name)}\b", text)]
    assert not missing, f"{package} names missing from docs/api.md: {missing}"


def _anchors(markdown: str) -> set[str]:
    """The anchors GitHub gives the headings of a Markdown page."""
    anchors = set()
    for heading in re.findall(r"^#{1,6} (.+)$", markdown, flags=re.MULTILINE):
        text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
        anchors.add(text.replace(" ", "-"))
    return anchors


def test_api_reference_links_resolve() -> None:
    text = API_DOC.read_text(encoding="utf-8")
    links = re.findall(r"\]\(([^)#\s]*)(?:#([^)\s]+))?\)", text)
    assert links
    for target, anchor in links:
        if target.startswith(("http://", "https://")):
            continue
        path = (API_DOC.parent / target) if target else API_DOC
        assert path.exists(), f"docs/api.md links to a missing {target}"
        if anchor:
            assert anchor in _anchors(path.read_text(encoding="utf-8")), f"{target}#{anchor}"
