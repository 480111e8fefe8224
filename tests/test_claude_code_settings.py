"""Claude Code's settings contract: modes, managed settings, newer hook fields, typo warnings.

Each test is named after the Claude Code behaviour it pins and quotes the
source line (v2.1.88) or documentation sentence stating it.
"""

from __future__ import annotations

import functools
import json
import logging
from typing import TYPE_CHECKING, Any

import pytest
import trio

from trioexec import GuardRails, Tool, ToolUse, run_tools
from trioexec._guard._settings import SettingsFile, default_settings_paths, load_settings
from trioexec.tools import default_tools

if TYPE_CHECKING:
    from pathlib import Path

RUN_LIMIT = 60


def write(path: Path, data: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def script(directory: Path, name: str, body: str) -> str:
    path = directory / name
    path.write_text("#!/bin/sh\n" + body, encoding="utf-8")
    path.chmod(0o755)
    return str(path)


async def run(cwd: Path, guard: GuardRails, *uses: ToolUse, tools: Any = None) -> Any:
    with trio.fail_after(RUN_LIMIT):
        return await run_tools(list(uses), tools or default_tools(), cwd=cwd, guard=guard)


# --- 4. permission modes ----------------------------------------------------------------------


async def test_plan_mode_runs_no_tool_that_changes_anything(tmp_path: Path) -> None:
    """Plan mode: "Claude can analyze but not modify files or execute commands"
    (permission modes documentation); reads still run, writes and non-read-only
    commands are refused even when rules allow them."""
    (tmp_path / "a.txt").write_text("hello\n")
    guard = GuardRails.from_settings(
        {"permissions": {"defaultMode": "plan", "allow": ["Bash", "Write"]}}
    )
    uses = [
        ToolUse("toolu_1", "Read", {"file_path": "a.txt"}),
        ToolUse("toolu_2", "Bash", {"command": "ls"}),
        ToolUse("toolu_3", "Bash", {"command": "touch made"}),
        ToolUse("toolu_4", "Write", {"file_path": "b.txt", "content": "x"}),
    ]
    texts = [str((await run(tmp_path, guard, use)).results[0].content) for use in uses]
    assert "hello" in texts[0]
    assert "a.txt" in texts[1]
    for text, tool in ((texts[2], "Bash"), (texts[3], "Write")):
        assert text.startswith(f"Permission to use {tool} has been denied because trioexec is")
    assert not (tmp_path / "made").exists()
    assert not (tmp_path / "b.txt").exists()


async def test_accept_edits_allows_edits_inside_the_working_directory(tmp_path: Path) -> None:
    """``// 3. If in acceptEdits or sandboxBashMode mode, allow all writes in original cwd``
    (src/utils/permissions/filesystem.ts): after deny and ask rules, before asking."""
    work = tmp_path / "w"
    work.mkdir()
    guard = GuardRails.from_settings(
        {"permissions": {"defaultMode": "acceptEdits", "deny": ["Write(*.lock)"]}}
    )
    uses = [
        ToolUse("toolu_1", "Write", {"file_path": "in.txt", "content": "x"}),
        ToolUse("toolu_2", "Write", {"file_path": "../out.txt", "content": "x"}),
        ToolUse("toolu_3", "Write", {"file_path": "deps.lock", "content": "x"}),
        ToolUse("toolu_4", "Bash", {"command": "touch made"}),
    ]
    outcome = await run(work, guard, *uses)
    texts = [str(r.content) for r in outcome.results]
    assert texts[0] == "File created successfully at: in.txt"
    assert texts[1] == (  # the file tool's own ask reason, as Claude Code's filesystem.ts
        f"Claude requested permissions to write to {tmp_path / 'out.txt'}, "
        "but you haven't granted it yet."
    )
    assert texts[2] == f"Permission to edit {work / 'deps.lock'} has been denied."
    assert texts[3] == "Claude requested permissions to use Bash, but you haven't granted it yet."
    assert not (tmp_path / "out.txt").exists()


async def test_hooks_receive_the_real_permission_mode(tmp_path: Path) -> None:
    """``permission_mode: permissionMode`` from ``appState.toolPermissionContext.mode``
    (createBaseHookInput): hooks see ``plan``, ``acceptEdits``, ... as they are."""
    seen = tmp_path / "stdin.json"
    cmd = script(tmp_path, "dump.sh", f'cat > "{seen}"\n')
    hooks = {"PreToolUse": [{"matcher": "", "hooks": [{"type": "command", "command": cmd}]}]}
    for mode in ("plan", "acceptEdits", "bypassPermissions", "default"):
        guard = GuardRails.from_settings({"hooks": hooks, "permissions": {"defaultMode": mode}})
        await run(tmp_path, guard, ToolUse("toolu_1", "Glob", {"pattern": "*.json"}))
        assert json.loads(seen.read_text())["permission_mode"] == mode


# --- 8. newer hook fields ---------------------------------------------------------------------


def test_a_hook_type_trioexec_cannot_run_is_skipped_with_one_warning_and_the_rules_stay(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Hook types ``prompt``, ``agent`` (src/schemas/hooks.ts) and ``mcp_tool`` need a model
    or an MCP client: each such handler is skipped with one warning naming it; its
    siblings and the file's deny rules still load."""
    caplog.set_level(logging.WARNING, logger="trioexec.settings")
    data = {
        "permissions": {"deny": ["Bash(rm:*)"]},
        "hooks": {
            "PreToolUse": [
                {
                    "matcher": "Bash",
                    "hooks": [
                        {"type": "prompt", "prompt": "Is this safe? $ARGUMENTS"},
                        {"type": "command", "command": "true"},
                        {"type": "agent", "prompt": "check"},
                        {"type": "mcp_tool", "server": "s", "tool": "t"},
                    ],
                }
            ]
        },
    }
    settings = load_settings(data)
    assert [str(r) for r in settings.permissions.deny] == ["Bash(rm:*)"]
    assert [e.label for e in settings.hooks.entries] == ["true"]
    at = "<settings #1>: hooks.PreToolUse[0].hooks"
    assert settings.problems == (
        f"{at}[0].type: hook type 'prompt' is not supported by trioexec; skipped",
        f"{at}[2].type: hook type 'agent' is not supported by trioexec; skipped",
        f"{at}[3].type: hook type 'mcp_tool' is not supported by trioexec; skipped",
    )
    assert caplog.messages == list(settings.problems)


@pytest.mark.parametrize(
    ("matcher", "matched"),
    [
        ("Edit, Write", {"Edit", "Write"}),
        ("Edit,Write", {"Edit", "Write"}),
        ("Edit|Write", {"Edit", "Write"}),
    ],
)
def test_matcher_lists_separated_by_commas_match_each_name(matcher: str, matched: set[str]) -> None:
    """Hooks reference: a matcher of "letters, digits, ``_``, ``-``, spaces, ``,`` and
    ``|`` only" is an exact string or a list of them: ``Edit|Write`` and ``Edit, Write``
    match either name."""
    from trioexec._hooks._config import compile_matcher

    matches = compile_matcher(matcher)
    assert {name for name in ("Edit", "Write", "Read", "Edit,Write") if matches(name)} == matched


async def test_http_hook_posts_the_hook_json_and_reads_the_body_like_stdout(
    tmp_path: Path,
) -> None:
    """``execHttpHook(hook, hookEvent, jsonInput, signal)``: a POST of the same JSON with
    ``'Content-Type': 'application/json'``; the body is parsed as the hook's JSON output
    (src/utils/hooks/execHttpHook.ts).  Served here on 127.0.0.1."""
    received: list[bytes] = []

    async def serve(stream: trio.SocketStream) -> None:
        data = b""
        while b"\r\n\r\n" not in data:
            data += await stream.receive_some(65536)
        head, _, body = data.partition(b"\r\n\r\n")
        length = next(
            int(line.split(b":")[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length")
        )
        while len(body) < length:
            body += await stream.receive_some(65536)
        received.append(head + b"\r\n\r\n" + body)
        answer = json.dumps(
            {
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": "deny",
                    "permissionDecisionReason": "denied over HTTP",
                }
            }
        ).encode()
        await stream.send_all(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
            + str(len(answer)).encode()
            + b"\r\n\r\n"
            + answer
        )
        await stream.aclose()

    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(
            functools.partial(trio.serve_tcp, serve, 0, host="127.0.0.1")
        )
        port = listeners[0].socket.getsockname()[1]
        settings = {
            "hooks": {
                "PreToolUse": [
                    {
                        "matcher": "Bash",
                        "hooks": [
                            {
                                "type": "http",
                                "url": f"http://127.0.0.1:{port}/hook",
                                "headers": {"X-Token": "$HOOK_TOKEN", "X-Other": "$HOME"},
                                "allowedEnvVars": ["HOOK_TOKEN"],
                                "timeout": 20,
                            }
                        ],
                    }
                ]
            }
        }
        guard = GuardRails.from_settings(settings)
        import os

        os.environ["HOOK_TOKEN"] = "s3cret"
        try:
            outcome = await run(tmp_path, guard, ToolUse("toolu_1", "Bash", {"command": "ls"}))
        finally:
            del os.environ["HOOK_TOKEN"]
        nursery.cancel_scope.cancel(reason="test done")
    assert outcome.results[0].content == "denied over HTTP"
    head, _, body = received[0].partition(b"\r\n\r\n")
    assert head.startswith(b"POST /hook HTTP/1.1\r\n")
    assert b"Content-Type: application/json" in head
    assert b"X-Token: s3cret" in head
    assert b"X-Other: \r\n" in head + b"\r\n"  # not allowed: interpolated as nothing
    assert json.loads(body)["tool_input"] == {"command": "ls"}


def test_allowed_http_hook_urls_keeps_only_the_http_hooks_it_matches() -> None:
    """``allowedHttpHookUrls``: "Allowlist of URL patterns that HTTP hooks may target.
    Supports * as a wildcard. When set, hooks with non-matching URLs are blocked.
    Undefined = no restriction, empty array = block all HTTP hooks. Arrays merge across
    settings sources." (settings reference)."""

    def http(url: str, env: list[str] | None = None) -> dict[str, object]:
        handler: dict[str, object] = {"type": "http", "url": url}
        if env is not None:
            handler["allowedEnvVars"] = env
        return handler

    handlers = [
        http("https://hooks.example.com/audit", ["TOKEN", "HOME"]),
        http("http://127.0.0.1:8080/hook"),
        http("https://evil.example.net/x"),
        {"type": "command", "command": "true"},
    ]
    project = {"hooks": {"PreToolUse": [{"matcher": "", "hooks": handlers}]}}
    urls = [e.label for e in load_settings(project).hooks.entries]
    assert urls == [
        "https://hooks.example.com/audit",
        "http://127.0.0.1:8080/hook",
        "https://evil.example.net/x",
        "true",
    ]  # undefined: no restriction
    user = {"allowedHttpHookUrls": ["https://hooks.example.com/*"]}
    managed = {"allowedHttpHookUrls": ["http://127.0.0.1:*"], "httpHookAllowedEnvVars": ["TOKEN"]}
    settings = load_settings(user, project, managed)
    kept = settings.hooks.entries
    assert [e.label for e in kept] == [
        "https://hooks.example.com/audit",
        "http://127.0.0.1:8080/hook",
        "true",
    ]
    assert getattr(kept[0].hook, "allowed_env_vars", None) == ("TOKEN",)  # the intersection
    (problem,) = settings.problems
    assert "allowedHttpHookUrls" in problem
    assert "'https://evil.example.net/x'" in problem
    blocked = load_settings({"allowedHttpHookUrls": []}, project).hooks.entries
    assert [e.label for e in blocked] == ["true"]  # an empty list blocks every http hook


async def test_an_http_hook_that_cannot_be_reached_never_blocks(tmp_path: Path) -> None:
    """``if (httpResult.error || !httpResult.ok) { ... succeeded: false ... blocked: false }``:
    a failed HTTP hook is a non-blocking error."""
    with trio.socket.socket() as sock:  # a port nobody listens on
        await sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    handler = {"type": "http", "url": f"http://127.0.0.1:{port}/", "timeout": 5}
    guard = GuardRails.from_settings(
        {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [handler]}]}}
    )
    outcome = await run(tmp_path, guard, ToolUse("toolu_1", "Bash", {"command": "echo ok"}))
    assert outcome.results[0].content == "ok"


# --- 9. settings sources and rules ------------------------------------------------------------


async def test_disable_all_hooks_turns_hooks_off_but_not_managed_ones(tmp_path: Path) -> None:
    """ "If disableAllHooks is set in non-managed settings, only managed hooks are returned
    (non-managed settings cannot disable managed hooks)"; "If disableAllHooks is set in
    policySettings, no hooks are returned" (hooksConfigSnapshot.ts)."""
    hook = {"PreToolUse": [{"matcher": "", "hooks": [{"type": "command", "command": "true"}]}]}
    managed_hook = {"PreToolUse": [{"hooks": [{"type": "command", "command": "echo managed"}]}]}
    user = write(tmp_path / "user.json", {"hooks": hook, "disableAllHooks": True})
    policy = write(tmp_path / "managed.json", {"hooks": managed_hook})
    settings = load_settings(user, SettingsFile(policy, "managed"))
    assert [e.label for e in settings.hooks.entries] == ["echo managed"]
    off = write(tmp_path / "off.json", {"disableAllHooks": True})
    assert load_settings(user, SettingsFile(policy, "managed"), SettingsFile(off, "managed"))
    assert (
        load_settings(
            user, SettingsFile(policy, "managed"), SettingsFile(off, "managed")
        ).hooks.entries
        == ()
    )


def test_managed_settings_have_the_highest_precedence(tmp_path: Path) -> None:
    """ "Managed settings ... Nothing below can override these"; on Linux they are
    ``/etc/claude-code/managed-settings.json`` (``getManagedFilePath``: ``'/etc/claude-code'``)."""
    from trioexec._guard._settings import MANAGED_SETTINGS_DIR

    assert str(MANAGED_SETTINGS_DIR) in (
        "/etc/claude-code",
        "/Library/Application Support/ClaudeCode",
    )
    home, project, managed = tmp_path / "home", tmp_path / "p", tmp_path / "etc"
    write(
        project / ".claude" / "settings.json", {"permissions": {"defaultMode": "bypassPermissions"}}
    )
    write(
        managed / "managed-settings.json",
        {"permissions": {"defaultMode": "default", "deny": ["WebFetch"]}},
    )
    guard = GuardRails.from_settings(
        *default_settings_paths(project, home=home, managed_dir=managed)
    )
    assert guard.permissions.mode == "default"
    assert [str(r) for r in guard.permissions.deny] == ["WebFetch"]


async def test_a_leading_slash_in_a_user_settings_rule_is_rooted_at_the_claude_config_dir(
    tmp_path: Path,
) -> None:
    """``case 'userSettings': return resolve(getClaudeConfigHomeDir())`` in
    ``getSettingsRootPathForSource`` (settings.ts): ``Read(/secrets/**)`` in
    ``~/.claude/settings.json`` means ``~/.claude/secrets/**``; in project settings it
    is the working directory."""
    home, project = tmp_path / "home", tmp_path / "project"
    (home / ".claude" / "secrets").mkdir(parents=True)
    (home / ".claude" / "secrets" / "k").write_text("K")
    (project / "secrets").mkdir(parents=True)
    (project / "secrets" / "k").write_text("P")
    write(home / ".claude" / "settings.json", {"permissions": {"deny": ["Read(/secrets/**)"]}})
    guard = GuardRails.from_settings(*default_settings_paths(project, home=home))
    uses = [
        ToolUse("toolu_1", "Read", {"file_path": str(home / ".claude" / "secrets" / "k")}),
        ToolUse("toolu_2", "Read", {"file_path": "secrets/k"}),
    ]
    outcome = await run(project, guard, *uses, tools=default_tools())
    assert outcome.results[0].is_error
    assert "has been denied" in str(outcome.results[0].content)
    assert "P" in str(outcome.results[1].content)


class _McpTool(Tool[Any]):
    def __init__(self, name: str) -> None:
        self.name = name

    async def call(self, input: Any, ctx: Any, progress: Any) -> str:  # noqa: A002
        return "ran"


@pytest.mark.parametrize("rule", ["mcp__github", "mcp__github__*"])
async def test_a_server_rule_covers_every_tool_of_that_mcp_server(
    tmp_path: Path, rule: str
) -> None:
    """``toolMatchesRule``: a rule ``mcp__server`` (or ``mcp__server__*``) matches every
    tool of that server (src/utils/permissions/permissions.ts)."""
    tools = [_McpTool("mcp__github__create_issue"), _McpTool("mcp__gitlab__create_issue")]
    guard = GuardRails.from_settings({"permissions": {"deny": [rule]}})
    uses = [
        ToolUse("toolu_1", "mcp__github__create_issue", {}),
        ToolUse("toolu_2", "mcp__gitlab__create_issue", {}),
    ]
    outcome = await run(tmp_path, guard, *uses, tools=tools)
    assert (
        outcome.results[0].content == "Permission to use mcp__github__create_issue has been denied."
    )
    assert outcome.results[1].content == "ran"


# --- settings never fail silently -------------------------------------------------------------


def test_typos_are_warned_about_with_the_file_the_key_and_the_likely_intended_one(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Each of these loads without a word in Claude Code and switches a guard rail off;
    here each is a warning naming the file, the key and the likely intended one."""
    caplog.set_level(logging.WARNING, logger="trioexec.settings")
    bad = write(
        tmp_path / "settings.json",
        {
            "permisions": {"allow": []},
            "permissions": {"dney": ["Bash"], "deny": ["bash(rm:*)"]},
            "hooks": {
                "PreToolUze": [],
                "PreToolUse": [
                    {
                        "matcher": "Bash",
                        "hooks": [{"type": "command", "command": "true", "timout": 5}],
                    }
                ],
            },
        },
    )
    problems = load_settings(bad).problems
    assert problems == (
        f"{bad}: permisions: unknown setting (did you mean 'permissions'?); it is ignored",
        f"{bad}: permissions.dney: unknown key (did you mean 'deny'?); it is ignored",
        f"{bad}: permissions.deny[0]: rule 'bash(rm:*)' names no Claude Code tool "
        "(did you mean 'Bash'?); it matches no call of one",
        f"{bad}: hooks.PreToolUze: unknown hook event (did you mean 'PreToolUse'?); "
        "its hooks never run",
        f"{bad}: hooks.PreToolUse[0].hooks[0].timout: unknown key (did you mean 'timeout'?); "
        "it is ignored",
    )
    assert caplog.messages == list(problems)


def test_a_clean_file_has_no_problems(tmp_path: Path) -> None:
    clean = write(
        tmp_path / "settings.json",
        {
            "$schema": "https://json.schemastore.org/claude-code-settings.json",
            "model": "opus",
            "permissions": {"allow": ["Bash(npm test:*)"], "deny": ["Read(./.env)"]},
            "hooks": {
                "PostToolUse": [
                    {"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "true"}]}
                ]
            },
        },
    )
    assert load_settings(clean).problems == ()


async def test_an_async_hook_cannot_block(tmp_path: Path) -> None:
    """Hooks reference: "Async hooks cannot block tool calls or return decisions"; an
    ``async: true`` hook that exits 2 or denies leaves the call to the other guard rails."""
    block = script(tmp_path, "block.sh", "echo no >&2\nexit 2\n")
    deny = script(
        tmp_path,
        "deny.sh",
        'echo \'{"hookSpecificOutput": {"hookEventName": "PreToolUse", '
        '"permissionDecision": "deny"}}\'\n',
    )
    handlers = [
        {"type": "command", "command": block, "async": True},
        {"type": "command", "command": deny, "async": True},
    ]
    guard = GuardRails.from_settings(
        {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": handlers}]}}
    )
    assert [e.run_async for e in guard.hooks.entries] == [True, True]
    outcome = await run(tmp_path, guard, ToolUse("toolu_1", "Bash", {"command": "echo ran"}))
    assert outcome.results[0].content == "ran"
