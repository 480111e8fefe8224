"""The sandbox holds: real bubblewrap, a throwaway workspace, a fake HOME.

Each test runs ``Bash`` calls through the tool with the sandbox enabled and
checks, outside, that what the command tried did not happen (or, for
ordinary work, that it did, inside a new PID namespace).  Run the file with
``TRIOEXEC_TEST_SANDBOX_OFF=1`` and every test fails: the same commands,
unconfined, do what the sandbox stops.  Real processes, so real time.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
from pathlib import Path
from typing import Any

import pytest
import trio

from trioexec import ConfigurationError
from trioexec._contract._tool import CallContext
from trioexec._guard._rails import GuardRails
from trioexec._guard._sandbox import probe_bwrap
from trioexec._models import ToolUse
from trioexec.tools import BashTool, ShellError, ShellTimeoutError
from trioexec.tools._bash import BashInput

OFF = os.environ.get("TRIOEXEC_TEST_SANDBOX_OFF") == "1"
_WHY = probe_bwrap(None)
pytestmark = pytest.mark.skipif(_WHY is not None, reason=f"bubblewrap cannot run: {_WHY}")

_GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.org",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.org",
    "GIT_CONFIG_NOSYSTEM": "1",
}
SECRET = "s3cr3t-value"


class Box:
    """A workspace, a fake HOME and a place outside both, with Bash calls into them."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.home = root / "home"
        self.ws = root / "ws"
        self.outside = root / "outside"
        for d in (self.home, self.ws, self.outside):
            d.mkdir()
        self.env = {**os.environ, **_GIT_ENV, "HOME": str(self.home)}
        (self.home / ".bashrc").write_text("# rc\n", encoding="utf-8")
        (self.home / ".gitconfig").write_text("[user]\n\tname = t\n", encoding="utf-8")
        self.git("init", "-q")
        (self.ws / "f.txt").write_text("hello\n", encoding="utf-8")
        self.git("add", "f.txt")
        self.git("commit", "-qm", "init")

    def git(self, *args: str, cwd: Path | None = None) -> None:
        subprocess.run(["git", *args], cwd=cwd or self.ws, env=self.env, check=True)

    def private_repository(self) -> Path:
        """``~/private``: a repository whose only copy of ``key`` is in its objects."""
        private = self.home / "private"
        private.mkdir()
        self.git("init", "-q", cwd=private)
        (private / "key").write_text(SECRET, encoding="utf-8")
        self.git("add", "key", cwd=private)
        self.git("commit", "-qm", "k", cwd=private)
        (private / "key").unlink()
        return private

    def guard(self, settings: dict[str, Any] | None = None, **sandbox: Any) -> GuardRails:
        data = dict(settings or {})
        data["sandbox"] = {"enabled": not OFF, **sandbox}
        return GuardRails.from_settings(data)

    async def run(
        self,
        command: str,
        guard: GuardRails | None = None,
        *,
        limit_ms: int | None = None,
    ) -> tuple[int, str]:
        guard = guard or self.guard()
        tool = BashTool(env=self.env, kill_grace=0.2)
        ctx = CallContext(
            ToolUse("toolu_1", "Bash", {"command": command}),
            cwd=self.ws,
            permissions=guard.permissions,
        )
        with trio.fail_after(60):
            try:
                out = await tool.call(BashInput(command, limit_ms), ctx, lambda _: None)
            except ShellError as exc:
                return exc.exit_code, str(exc)
        return 0, str(out)


@pytest.fixture
def box(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Box:
    made = Box(tmp_path)
    monkeypatch.setenv("HOME", str(made.home))
    return made


IN_NEW_PID_NAMESPACE = 'test "$(cat /proc/1/comm)" = bwrap || { echo "not confined"; exit 99; }'


@pytest.mark.parametrize(
    "command",
    [
        "echo x > {out}",
        "echo x | tee {out}",
        "cp f.txt {out}",
        "ln -s /etc/passwd {out}",
        "python3 -c \"open('{out}', 'w').write('x')\"",
        "printf 'echo x > {out}\\n' > script.sh && chmod +x script.sh && ./script.sh",
        "cd .. && echo x > {out}",
        "echo x > ~/new-file; echo x > {out}",
    ],
    ids=["redirect", "tee", "cp", "ln-s", "python", "own-script", "cd-up", "home"],
)
async def test_a_command_cannot_write_outside_the_writable_paths(box: Box, command: str) -> None:
    out = box.outside / "written"
    await box.run(command.format(out=out))
    assert not out.is_symlink()
    assert not out.exists()
    assert not (box.home / "new-file").exists()


async def test_a_background_job_cannot_write_after_the_call_returned(box: Box) -> None:
    late = box.ws / "late.txt"
    command = (
        "setsid sh -c 'sleep 0.5; echo late > late.txt' </dev/null >/dev/null 2>&1 &\n"
        "sleep 0.2"  # the job has left the session by the time the command returns
    )
    await box.run(command)
    await trio.sleep(1.0)  # real processes: give an escaped job time to write
    assert not late.exists()


async def test_no_process_is_left_behind(box: Box) -> None:
    marker = "1234.5"  # an unusual duration names our processes in /proc
    command = (
        f"nohup sleep {marker} >/dev/null 2>&1 & setsid sleep {marker} & "
        f"( ( sleep {marker} & ) & ) ; echo started"
    )
    try:
        _, text = await box.run(command)
        assert "started" in text
        await trio.sleep(0.2)
        assert _sleepers(marker) == []
    finally:
        for pid in _sleepers(marker):
            os.kill(pid, signal.SIGKILL)


def _sleepers(marker: str) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{name}/cmdline").read_bytes().split(b"\0")
            state = Path(f"/proc/{name}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        if cmdline[:2] == [b"sleep", marker.encode()] and state != b"Z":
            found.append(int(name))
    return found


@pytest.mark.parametrize(
    ("command", "path", "before"),
    [
        ("echo '[core] fsmonitor = evil' >> .git/config", ".git/config", None),
        ("echo 'evil' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit", None, None),
        ("git config core.fsmonitor evil", ".git/config", None),
        ("mkdir -p .claude && echo '{{}}' > .claude/settings.json", ".claude/settings.json", None),
        ("echo '{{\"mcpServers\": {{}}}}' > .mcp.json", ".mcp.json", None),
        ("echo evil >> ~/.bashrc", "~/.bashrc", None),
        ("git config --global core.pager evil", "~/.gitconfig", None),
        (
            "mv .git .git-old && mkdir -p .git/hooks && echo evil > .git/hooks/pre-commit",
            None,
            None,
        ),
    ],
    ids=[
        "git-config",
        "git-hook",
        "git-config-cmd",
        "claude-settings",
        "mcp-json",
        "bashrc",
        "gitconfig",
        "rename-git",
    ],
)
async def test_protected_paths_stay_as_they_were(
    box: Box, command: str, path: str | None, before: None
) -> None:
    watched = [
        box.ws / ".git" / "config",
        box.ws / ".git" / "hooks" / "pre-commit",
        box.ws / ".claude" / "settings.json",
        box.ws / ".mcp.json",
        box.home / ".bashrc",
        box.home / ".gitconfig",
    ]
    snapshot = {p: p.read_bytes() if p.exists() else None for p in watched}
    await box.run(command)
    after = {p: p.read_bytes() if p.exists() else None for p in watched}
    assert after == snapshot
    assert (box.ws / ".git" / "HEAD").exists()  # the repository is still there


async def test_an_existing_claude_directory_is_read_only(box: Box) -> None:
    settings = box.ws / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text("{}", encoding="utf-8")
    code, text = await box.run("echo '{\"hooks\": {}}' > .claude/settings.json")
    assert settings.read_text(encoding="utf-8") == "{}"
    assert code != 0
    assert "<sandbox_violations>" in text


async def test_a_deny_read_path_is_unreadable(box: Box) -> None:
    secrets = box.home / "secrets"
    secrets.mkdir()
    (secrets / "key").write_text(SECRET, encoding="utf-8")
    (box.ws / "link").symlink_to(secrets / "key")
    guard = box.guard(filesystem={"denyRead": ["~/secrets"]})
    for command in (
        "cat ~/secrets/key",
        "cat link",
        "grep -r . ~/secrets",
        "cp link copy; cat copy",
    ):
        _, text = await box.run(command, guard)
        assert SECRET not in text, command


async def test_a_read_denied_file_is_unreadable(box: Box) -> None:
    (box.ws / ".env").write_text(SECRET, encoding="utf-8")
    (box.ws / "sub").mkdir()
    (box.ws / "sub" / ".env").write_text(SECRET, encoding="utf-8")
    (box.ws / "env-link").symlink_to(box.ws / ".env")
    guard = box.guard({"permissions": {"deny": ["Read(.env)"]}})
    for command in (
        "cat .env",
        "cat sub/.env",
        "cat env-link",
        "python3 -c 'print(open(\".env\").read())'",
    ):
        _, text = await box.run(command, guard)
        assert SECRET not in text, command


async def test_git_show_cannot_read_a_denied_repository(box: Box) -> None:
    box.private_repository()
    guard = box.guard(filesystem={"denyRead": ["~/private"]})
    _, text = await box.run("git -C ~/private show HEAD:key", guard)
    assert SECRET not in text


async def test_the_hosts_loopback_is_out_of_reach(box: Box) -> None:
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    port = listeners[0].socket.getsockname()[1]

    async def serve(stream: trio.SocketStream) -> None:
        async with stream:
            await stream.send_all(b"hello-from-host\n")

    async with trio.open_nursery() as nursery:
        nursery.start_soon(trio.serve_listeners, serve, listeners)
        command = f"exec 3<>/dev/tcp/127.0.0.1/{port} && head -1 <&3"
        _, text = await box.run(command)
        nursery.cancel_scope.cancel(reason="the test is over")
    assert "hello-from-host" not in text


async def test_ordinary_work_still_works(box: Box) -> None:
    steps = [
        "git status --short",
        "echo more >> f.txt && git commit -qam 'more' && git log --oneline | wc -l",
        "python3 -m venv --without-pip venv && ./venv/bin/python -c 'print(6*7)'",
        "mkdir -p pkg && printf 'def test_x():\\n    assert 1\\n' > pkg/t.py && python3 -c "
        "'import runpy; runpy.run_path(\"pkg/t.py\")' && echo tests-ran",
        'tmp=$(mktemp) && echo scratch > "$tmp" && cat "$tmp"',
    ]
    outputs = []
    for step in steps:
        code, text = await box.run(f"{IN_NEW_PID_NAMESPACE}\n{step}")
        assert code == 0, text
        outputs.append(text)
    assert outputs[1].strip().endswith("2")
    assert "42" in outputs[2]
    assert "tests-ran" in outputs[3]
    assert "scratch" in outputs[4]


@pytest.mark.skipif(shutil.which("rg") is None, reason="needs rg")
async def test_ripgrep_works_inside(box: Box) -> None:
    code, text = await box.run(f"{IN_NEW_PID_NAMESPACE}\nrg -n hello")
    assert code == 0, text
    assert "f.txt:1:hello" in text


async def test_exit_codes_timeouts_and_cancellation_work_as_unconfined(box: Box) -> None:
    code, text = await box.run(f"{IN_NEW_PID_NAMESPACE}\necho out; echo err >&2; exit 3")
    assert code == 3
    assert "out" in text
    assert "err" in text
    tool = BashTool(env=box.env, kill_grace=0.1)
    guard = box.guard()
    ctx = CallContext(ToolUse("t", "Bash", {}), cwd=box.ws, permissions=guard.permissions)
    with pytest.raises(ShellTimeoutError, match="timed out"):
        await tool.call(
            BashInput(f"{IN_NEW_PID_NAMESPACE}\nsleep 1234.25", timeout=300), ctx, lambda _: None
        )
    assert _sleepers("1234.25") == []
    with trio.move_on_after(0.5) as scope:
        await box.run(f"{IN_NEW_PID_NAMESPACE}\nsleep 1234.75")
    assert scope.cancelled_caught
    assert _sleepers("1234.75") == []


async def test_the_model_is_told_what_was_refused(box: Box) -> None:
    code, text = await box.run(f"echo x > {box.outside / 'x'}")
    assert code != 0
    assert "<sandbox_violations>" in text
    assert "Read-only file system" in text
    assert str(box.ws) in text  # what is writable
    assert '"dangerouslyDisableSandbox": true' in text


async def test_dangerously_disable_sandbox_is_refused_when_unsandboxed_commands_are_not_allowed(
    box: Box,
) -> None:
    guard = box.guard(allowUnsandboxedCommands=False)
    tool = BashTool(env=box.env)
    ctx = CallContext(ToolUse("t", "Bash", {}), cwd=box.ws, permissions=guard.permissions)
    refused = await tool.validate_input(
        BashInput(f"echo x > {box.outside / 'x'}", dangerouslyDisableSandbox=True), ctx
    )
    assert refused is not None
    assert "allowUnsandboxedCommands is false" in refused


async def test_fail_if_unavailable_passes_where_bubblewrap_runs(box: Box) -> None:
    try:
        guard = box.guard(failIfUnavailable=True)
    except ConfigurationError:  # pragma: no cover - bubblewrap runs here (see the skip)
        pytest.fail("bubblewrap runs here, failIfUnavailable must not refuse")
    code, _ = await box.run(IN_NEW_PID_NAMESPACE, guard)
    assert code == 0


def test_agent_sandbox_turns_the_sandbox_on_without_a_settings_file() -> None:
    from trioexec._cli._main import build_parser

    args = build_parser().parse_args(["agent", "--sandbox", "do it"])
    assert args.sandbox is True
    guard = GuardRails.from_settings(sandbox=True)
    assert guard.sandbox is not None
    assert guard.sandbox.active
    assert GuardRails.from_settings({"sandbox": {"enabled": True}}, sandbox=False).sandbox is None


def test_the_demo_shows_the_sandbox_refusing_a_write(capsys: pytest.CaptureFixture[str]) -> None:
    from trioexec._cli import main

    assert main(["demo"]) == 0
    text = capsys.readouterr().out
    assert "the OS sandbox: Bash under bubblewrap" in text
    assert "../outside.txt: Read-only file system" in text


@pytest.mark.parametrize("proxied", [False, True], ids=["no-network", "with-proxy"])
async def test_a_unix_socket_on_the_host_cannot_be_reached(box: Box, proxied: bool) -> None:
    path = box.outside / "daemon.sock"
    listener = trio.socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    await listener.bind(str(path))
    listener.listen(1)
    network = {"allowedDomains": ["localhost"]} if proxied else {}
    command = (
        'python3 -c "import socket; s = socket.socket(socket.AF_UNIX); '
        f"s.connect('{path}'); print('connected')\""
    )
    with listener:
        _, text = await box.run(command, box.guard(network=network))
        _, allowed = await box.run(command, box.guard(network={"allowAllUnixSockets": True}))
    assert "connected" not in text
    assert "connected" in allowed  # allowAllUnixSockets lifts the filter
