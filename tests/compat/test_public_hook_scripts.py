"""Real hook scripts written for Claude Code, run unchanged through ``run_tools``.

The scripts under ``hooks/`` are copied byte for byte from public
repositories (each directory keeps the licence and a PROVENANCE file naming
the repository, path and commit).  Each test installs them as a project
would (``.claude/hooks/`` and a ``.claude/settings.json`` naming them with
``$CLAUDE_PROJECT_DIR``) and runs the standard tools through them, so what
they rely on is exercised exactly: ``read -r`` of a newline-terminated
stdin line, ``jq`` on the compact JSON, ``.tool_response.stdout``, the JSON
``permissionDecision``, ``updatedInput`` and ``additionalContext`` answers,
and exit code 2 with stderr.  They need ``bash`` and ``jq`` (``.ci/run``
installs jq); without them the tests are skipped.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
import trio

from trioexec import GuardRails, ToolUse, run_tools
from trioexec._guard._settings import default_settings_paths
from trioexec._results._message import record_text
from trioexec.tools import default_tools

HOOKS = Path(__file__).parent / "hooks"

pytestmark = [
    pytest.mark.skipif(shutil.which("jq") is None, reason="the scripts need jq"),
    pytest.mark.skipif(shutil.which("bash") is None, reason="the scripts need bash"),
    pytest.mark.skipif(sys.platform == "win32", reason="shell scripts"),
]

SCRIPTS = {
    "block-dangerous-commands.sh": HOOKS / "living-architecture" / "block-dangerous-commands.sh",
    "convention-guardrails.sh": HOOKS / "living-architecture" / "convention-guardrails.sh",
    "block-grep.sh": HOOKS / "kyzooghost-skills" / "block-grep.sh",
    "enforce-uv.sh": HOOKS / "kyzooghost-skills" / "enforce-uv.sh",
    "rtk-rewrite.sh": HOOKS / "rtk" / "rtk-rewrite.sh",
}


def project(tmp_path: Path, hooks: dict[str, list[tuple[str, str]]]) -> Path:
    """A project whose ``.claude/settings.json`` runs ``hooks`` (event -> [(matcher, script)])."""
    root = tmp_path / "project"
    (root / ".claude" / "hooks").mkdir(parents=True)
    settings: dict[str, Any] = {"hooks": {}}
    for event, entries in hooks.items():
        for matcher, name in entries:
            installed = root / ".claude" / "hooks" / name
            shutil.copy2(SCRIPTS[name], installed)  # the bytes and the mode, unchanged
            command = f"$CLAUDE_PROJECT_DIR/.claude/hooks/{name}"
            group = {"matcher": matcher, "hooks": [{"type": "command", "command": command}]}
            settings["hooks"].setdefault(event, []).append(group)
    (root / ".claude" / "settings.json").write_text(json.dumps(settings, indent=2))
    return root


async def run(root: Path, *commands: str) -> Any:
    guard = GuardRails.from_settings(*default_settings_paths(root, home=root / "no-home"))
    uses = [ToolUse(f"toolu_{i}", "Bash", {"command": c}) for i, c in enumerate(commands, 1)]
    with trio.fail_after(60):
        return await run_tools(uses, default_tools(), cwd=root, guard=guard)


def test_the_vendored_scripts_are_unchanged_and_licensed() -> None:
    for directory in {path.parent for path in SCRIPTS.values()}:
        provenance = (directory / "PROVENANCE").read_text()
        assert "repository: https://github.com/" in provenance
        assert "commit: " in provenance
        licence = (directory / "LICENSE").read_text()
        assert "MIT License" in licence or "Apache License" in licence
    for name, path in SCRIPTS.items():
        assert f"{name}: " in (path.parent / "PROVENANCE").read_text()
        assert path.stat().st_mode & 0o111, f"{name} is executable, as in its repository"


async def test_a_read_r_and_jq_guard_denies_with_its_reason_and_allows_the_rest(
    tmp_path: Path,
) -> None:
    """living-architecture's ``block-dangerous-commands.sh``: ``read -r input`` (needs the
    newline Claude Code writes), ``jq -r '.tool_input.command'``, then a JSON
    ``permissionDecision`` of ``deny`` (with a reason) or ``allow``."""
    root = project(tmp_path, {"PreToolUse": [("Bash", "block-dangerous-commands.sh")]})
    outcome = await run(root, "git push --force")
    assert outcome.results[0].content == (
        "Blocked: This command bypasses safety checks (--no-verify, --force, --hard)"
    )
    assert outcome.results[0].is_error
    # The hook's "allow" lets a command run that would otherwise need asking.
    outcome = await run(root, "touch made-by-allowed-command")
    assert not outcome.results[0].is_error
    assert (root / "made-by-allowed-command").exists()


async def test_a_post_tool_use_script_reads_tool_response_stdout(tmp_path: Path) -> None:
    """living-architecture's ``convention-guardrails.sh``:
    ``jq -r '.tool_response.stdout // ""'`` and an ``additionalContext`` answer."""
    root = project(tmp_path, {"PostToolUse": [("Bash", "convention-guardrails.sh")]})
    outcome = await run(root, "echo 'error  max-lines  File has too many lines'")
    (record,) = outcome.attachments
    assert record_text(record) == (
        "<system-reminder>\nPostToolUse:Bash hook additional context: REMINDER: max-lines is "
        "design feedback. Split the file or use it.each. Never skip tests. See "
        "docs/conventions/anti-patterns.md\n</system-reminder>"
    )


async def test_exit_2_guards_block_with_their_stderr(tmp_path: Path) -> None:
    """kyzooghost/skills' ``block-grep.sh`` and ``enforce-uv.sh``: ``jq`` reads stdin,
    ``exit 2`` with a reason on stderr blocks; anything else passes."""
    root = project(tmp_path, {"PreToolUse": [("Bash", "block-grep.sh"), ("Bash", "enforce-uv.sh")]})
    (root / "notes.txt").write_text("TODO\n")
    outcome = await run(root, "grep TODO notes.txt")
    grep_hook = "$CLAUDE_PROJECT_DIR/.claude/hooks/block-grep.sh"
    assert outcome.results[0].content == (
        f"PreToolUse:Bash hook error: [{grep_hook}]: BLOCKED: Use rg (ripgrep) instead of grep\n"
    )
    outcome = await run(root, "pip install requests")
    uv_hook = "$CLAUDE_PROJECT_DIR/.claude/hooks/enforce-uv.sh"
    assert outcome.results[0].content == (
        f"PreToolUse:Bash hook error: [{uv_hook}]: BLOCKED: use uv instead\n"
    )
    outcome = await run(root, "cat notes.txt")
    assert outcome.results[0].content == "TODO"


async def test_an_updated_input_rewriter_changes_the_command_that_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """rtk's ``rtk-rewrite.sh``: rewrites ``git status`` to ``rtk git status`` with
    ``permissionDecision: allow`` and ``updatedInput`` (all input fields kept).  A stand-in
    ``rtk`` on PATH shows which command ran.  ``git status`` was admitted as
    concurrency-safe beside ``pwd``; ``rtk git status`` is a command the classifier
    cannot prove safe, so it runs alone (re-partitioned as unsafe), as Claude Code runs it."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "rtk"
    fake.write_text('#!/bin/sh\necho "rtk ran: $*"\n')
    fake.chmod(0o755)
    monkeypatch.setenv(
        "PATH", f"{bin_dir}:{Path(shutil.which('jq') or '/usr/bin/jq').parent}:/usr/bin:/bin"
    )
    root = project(tmp_path, {"PreToolUse": [("Bash", "rtk-rewrite.sh")]})
    outcome = await run(root, "git status --short", "pwd")
    assert [r.content for r in outcome.results] == ["rtk ran: git status --short", str(root)]
    assert not any(r.is_error for r in outcome.results)
    outcome = await run(root, "cargo test --workspace")
    assert outcome.results[0].content == "rtk ran: cargo test --workspace"
    outcome = await run(root, "echo untouched")
    assert outcome.results[0].content == "untouched"
