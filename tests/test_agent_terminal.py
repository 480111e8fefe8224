"""``trioexec agent`` on a real terminal: Ctrl-C at a question, during a tool, during a hook.

tmux runs the agent against a local replaying Messages API server; capture-pane
reads the screen and send-keys presses Ctrl-C.  Skipped where tmux is missing.
Real time: a real program runs, and the screen is read every few tens of
milliseconds.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import sys
from typing import TYPE_CHECKING, Any

import pytest
from messages_server import MessagesServer, response, text, tool_use
from tmux_pane import TMUX, Pane, open_pane

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path

pytestmark = [
    pytest.mark.skipif(TMUX is None, reason="tmux is not installed"),
    pytest.mark.filterwarnings(
        "ignore:Async generator '(anthropic|httpx|httpcore):ResourceWarning"
    ),
]


@contextlib.asynccontextmanager
async def agent_pane(server: MessagesServer, tmp_path: Path, *args: str) -> AsyncIterator[Pane]:
    """``trioexec agent --cwd tmp_path ARGS`` in a terminal; ``EXIT=<status>`` printed after."""
    env = {
        "LANG": "C.UTF-8",
        "ANTHROPIC_BASE_URL": server.url,
        "ANTHROPIC_API_KEY": "dummy-key",
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
    }
    assignments = " ".join(f"{key}={shlex.quote(value)}" for key, value in env.items())
    agent = shlex.join([sys.executable, "-m", "trioexec", "agent", "--cwd", str(tmp_path), *args])
    command = f'env -u ANTHROPIC_AUTH_TOKEN {assignments} {agent}; echo "EXIT=$?"; sleep 600'
    async with open_pane(command, window="agent", width=200, height=50) as pane:
        yield pane


def exited(screen: str) -> bool:
    return "EXIT=" in screen


def settings_file(tmp_path: Path, document: dict[str, Any]) -> str:
    path = tmp_path / "settings.json"
    path.write_text(json.dumps(document))
    return str(path)


async def test_ctrl_c_at_a_question_answers_no_and_says_so(tmp_path: Path) -> None:
    settings = settings_file(tmp_path, {"permissions": {"ask": ["Bash"]}})
    turn_1 = response(
        tool_use(0, "toolu_sh", "Bash", {"command": "touch made"}), stop_reason="tool_use"
    )
    with MessagesServer([turn_1, response(text(0, "Understood."))]) as server:
        async with agent_pane(server, tmp_path, "--settings", settings, "go") as pane:
            await pane.wait_for_history(lambda screen: "Allow Bash(touch made)? [y/N]" in screen)
            await pane.ctrl_c()
            screen = await pane.wait_for_history(exited)
    # (the terminal echoes the key as ^C)
    assert (
        "Allow Bash(touch made)? [y/N] ^Cno  [Ctrl-C answered no; Ctrl-C again interrupts the "
        "turn]\n  ✗ Bash(touch made)  "
    ) in screen
    assert "▶ Bash(touch made)" not in screen  # refused: the tool itself never ran
    assert "EXIT=0" in screen  # the question was answered; the turn went on
    assert not (tmp_path / "made").exists()
    (answer,) = server.requests[1]["messages"][-1]["content"]
    assert answer["is_error"] is True
    assert answer["content"].startswith("The user doesn't want to proceed with this tool use.")


async def test_ctrl_c_during_bash_names_what_runs_on_and_a_second_stops_it(tmp_path: Path) -> None:
    turn_1 = response(
        tool_use(0, "toolu_sleep", "Bash", {"command": "sleep 30"}), stop_reason="tool_use"
    )
    with MessagesServer([turn_1]) as server:
        async with agent_pane(server, tmp_path, "go") as pane:
            await pane.wait_for_history(lambda screen: "▶ Bash(sleep 30)" in screen)
            await pane.ctrl_c()
            await pane.wait_for_history(lambda screen: "Ctrl-C again stops everything]" in screen)
            await pane.ctrl_c()
            screen = await pane.wait_for_history(exited)
    lines = screen.splitlines()
    first = lines.index(
        "[interrupting the turn: nothing new starts; still running: Bash(sleep 30). "
        "Ctrl-C again stops everything]"
    )
    # (the terminal echoes the second key as ^C on a line of its own)
    assert lines[first + 1 : first + 3] == [
        "^C",
        "[stopping everything: every running tool and hook is cancelled]",
    ]
    assert any(line.startswith("  ⊘ Bash(sleep 30)") for line in lines[first:])
    assert "EXIT=130" in screen
    assert len(server.requests) == 1


async def test_a_running_hook_is_shown_as_the_hook_and_ctrl_c_names_it(tmp_path: Path) -> None:
    hook = {"type": "command", "command": "sleep 30"}
    settings = settings_file(
        tmp_path,
        {
            "permissions": {"allow": ["Bash(echo:*)"]},
            "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [hook]}]},
        },
    )
    turn_1 = response(tool_use(0, "toolu_echo", "Bash", {"command": "echo hi"}))
    with MessagesServer([turn_1]) as server:
        async with agent_pane(server, tmp_path, "--settings", settings, "go") as pane:
            shown = await pane.wait_for_history(lambda screen: "⚙ PreToolUse hook of" in screen)
            await pane.ctrl_c()
            await pane.wait_for_history(lambda screen: "Ctrl-C again stops everything]" in screen)
            await pane.ctrl_c()
            screen = await pane.wait_for_history(exited)
    assert "  ⚙ PreToolUse hook of Bash(echo hi): sleep 30" in shown
    assert "▶ Bash(echo hi)" not in screen  # the tool itself never ran
    assert (
        "still running: the PreToolUse hook of Bash(echo hi). Ctrl-C again stops everything]"
    ) in screen
    assert "EXIT=130" in screen
