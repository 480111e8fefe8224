"""``trioexec agent`` with a project ``.mcp.json``: approved servers' tools reach the model.

A real subprocess on the real SDK against the local replaying Messages server,
and a real MCP server started from the project's ``.mcp.json``.
"""

from __future__ import annotations

import io
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
import trio
from messages_server import MessagesServer, response, text, tool_use

pytest.importorskip("mcp")

from trioexec._cli._agent_mcp import McpApproval
from trioexec.mcp import McpServerConfig

SERVER = Path(__file__).parent / "data" / "mcp_test_server.py"

pytestmark = pytest.mark.filterwarnings(
    "ignore:Async generator '(anthropic|httpx|httpcore):ResourceWarning"
)


@pytest.fixture(autouse=True)
def _state_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Transcripts go to a temporary state home, never the user's."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("state")))


def _project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    markers = tmp_path / "markers"
    project.mkdir()
    markers.mkdir()
    (project / ".mcp.json").write_text(
        json.dumps(
            {
                "mcpServers": {
                    "test": {"command": sys.executable, "args": [str(SERVER), str(markers)]},
                    "broken": {"type": "sse", "url": "http://127.0.0.1:9/sse"},
                }
            }
        )
    )
    return project


async def _agent(server: MessagesServer, *args: str) -> Any:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env.update(ANTHROPIC_BASE_URL=server.url, ANTHROPIC_API_KEY="dummy-key")
    with trio.fail_after(60):
        return await trio.run_process(
            [sys.executable, "-m", "trioexec", "agent", *args],
            stdin=b"",
            capture_stdout=True,
            capture_stderr=True,
            check=False,
            env=env,
        )


async def test_an_approved_project_server_gives_the_agent_its_tools(tmp_path: Path) -> None:
    project = _project(tmp_path)
    settings = tmp_path / "settings.json"
    settings.write_text(
        json.dumps(
            {
                "enabledMcpjsonServers": ["test"],
                "permissions": {"allow": ["mcp__test__wipe"]},
            }
        )
    )
    turn_1 = response(
        tool_use(0, "toolu_fail", "mcp__test__fail", {"reason": "none"}),
        tool_use(1, "toolu_wipe", "mcp__test__wipe", {"target": "cache"}),
        stop_reason="tool_use",
    )
    with MessagesServer([turn_1, response(text(0, "Done."))]) as server:
        done = await _agent(
            server, "--cwd", str(project), "--settings", str(settings), "--json", "go"
        )
    assert done.returncode == 0, done.stderr
    names = {tool["name"] for tool in server.requests[0]["tools"]}
    assert {"mcp__test__fail", "mcp__test__wipe", "Read", "Bash"} <= names
    answers = json.loads(done.stdout)["messages"][2]["content"]
    assert [a["tool_use_id"] for a in answers] == ["toolu_fail", "toolu_wipe"]
    assert answers[0]["is_error"] is True
    assert "failed on purpose: none" in answers[0]["content"]
    assert answers[1]["content"] == "wiped cache"
    err = done.stderr.decode()
    assert 'mcpServers.broken: "type": "sse"' in err  # a bad entry is one line; the rest go on


async def test_an_unapproved_project_server_is_not_started_without_a_terminal(
    tmp_path: Path,
) -> None:
    project = _project(tmp_path)
    with MessagesServer([response(text(0, "Nothing to do."))]) as server:
        done = await _agent(server, "--cwd", str(project), "--json", "go")
    assert done.returncode == 0, done.stderr
    names = {tool["name"] for tool in server.requests[0]["tools"]}
    assert not any(name.startswith("mcp__") for name in names)
    assert "MCP server 'test' of .mcp.json" in done.stderr.decode()
    assert "not started" in done.stderr.decode()
    assert not (tmp_path / "markers" / "pid-server").exists()


@pytest.mark.parametrize(
    "flags", [["--approve-mcp", "test"], ["--approve-all-mcp"]], ids=["by-name", "all"]
)
async def test_a_command_line_flag_approves_a_project_server(
    tmp_path: Path, flags: list[str]
) -> None:
    project = _project(tmp_path)
    with MessagesServer([response(text(0, "Nothing to do."))]) as server:
        done = await _agent(server, "--cwd", str(project), "--json", *flags, "go")
    assert done.returncode == 0, done.stderr
    names = {tool["name"] for tool in server.requests[0]["tools"]}
    assert "mcp__test__hang" in names
    assert "not started" not in done.stderr.decode()


async def test_approving_an_unknown_server_says_which_servers_there_are(tmp_path: Path) -> None:
    project = _project(tmp_path)
    with MessagesServer([response(text(0, "Nothing to do."))]) as server:
        done = await _agent(server, "--cwd", str(project), "--approve-mcp", "tset", "go")
    assert done.returncode == 0, done.stderr
    assert (
        "trioexec agent: --approve-mcp tset: no such server in .mcp.json "
        "(its servers: test)"  # the broken entry is no server
    ) in done.stderr.decode()


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_disabled_server_never_starts_and_a_terminal_answer_decides(tmp_path: Path) -> None:
    settings = tmp_path / "s.json"
    settings.write_text(
        json.dumps({"enableAllProjectMcpServers": True, "disabledMcpjsonServers": ["off"]})
    )
    approval = McpApproval([settings])
    assert approval.approves(McpServerConfig(name="any", command="x"))
    assert not approval.approves(McpServerConfig(name="off", command="x"))
    err = io.StringIO()
    asked = McpApproval([], stdin=_Terminal("y\n"), stderr=err)
    assert asked.approves(McpServerConfig(name="s", command="run", args=("me",)))
    assert err.getvalue() == "Start MCP server 's' of .mcp.json (run me)? [y/N] "
    refused = McpApproval([], stdin=_Terminal("\n"), stderr=io.StringIO())
    assert not refused.approves(McpServerConfig(name="s", command="run"))
