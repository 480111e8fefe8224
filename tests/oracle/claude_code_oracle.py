"""Run the real Claude Code CLI and ``trioexec agent`` side by side on scripted turns.

Both programs talk to their own local fake Messages API (``messages_server``),
which replays the same scripted assistant turns (tool calls), and records each
request; what the program sent back after each turn (the user turn: its
``tool_result`` blocks and any other blocks), what every hook read on stdin,
and the files left in the working directory are the *observation*.  Two
observations are compared after normalising only what must differ between
two runs: the temporary directories, session ids and transcript paths.

Claude Code is ``@anthropic-ai/claude-code`` at :data:`VERSION`, installed on
demand with npm into :func:`cache_dir`.  Facts needed to drive it offline:
``-p --output-format stream-json --verbose``, a temporary ``HOME``,
``ANTHROPIC_BASE_URL``, ``IS_SANDBOX=1`` (bypass mode as root), the bundled
``rg`` made executable, and the streaming tool executor switched on by the
feature gate ``tengu_streaming_tool_execution2`` in ``~/.claude.json``
(telemetry stays on so the gate is read; ``HTTPS_PROXY`` points at the local
server, which refuses ``CONNECT``, so nothing leaves the machine).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import platform
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import attrs
from messages_server import MessagesServer, response, text, tool_use

VERSION = "2.1.88"
PACKAGE = "@anthropic-ai/claude-code"
ROOT = Path(__file__).resolve().parents[2]
HOOK = Path(__file__).with_name("hook.py")
RUN_TIMEOUT = 120.0

JSON = Any


@attrs.frozen
class Hook:
    """One command hook: on ``event`` for tools matching ``matcher``, answer with ``answer``
    (``{"stdout": str | object, "stderr": str, "exit": int}``)."""

    event: str
    matcher: str = ""
    answer: dict[str, JSON] = attrs.field(factory=dict)


@attrs.frozen
class Case:
    """One scripted conversation.

    Attributes:
        name: the case's id.
        turns: the assistant turns, each a list of ``(tool_use_id, tool, input)``;
            an input is a dict (``"{cwd}"`` in a string is the working
            directory) or raw JSON text (sent as is, maybe broken).
        files: the working directory's files before the run (path -> text).
        mtimes: seconds to add to a file's modification time (a set order).
        permissions: the ``permissions`` object of the settings file.
        hooks: command hooks.
        mode: the permission mode (Claude Code's names).
        differs: under trioexec's default policy the observation differs, for
            the reason named here (a ``docs/policies.md`` knob); None: the same.
        known: even under the ``claude-code-2.1.88`` preset the observation
            differs, for the reason named here (not reproduced yet); None: the same.
    """

    name: str
    turns: list[list[tuple[str, str, JSON]]]
    files: dict[str, str] = attrs.field(factory=dict)
    mtimes: dict[str, int] = attrs.field(factory=dict)
    permissions: dict[str, JSON] = attrs.field(factory=dict)
    hooks: list[Hook] = attrs.field(factory=list)
    mode: str = "bypassPermissions"
    differs: str | None = None
    known: str | None = None


def cache_dir() -> Path:
    """Where the CLI is installed: ``$TRIOEXEC_ORACLE_CACHE`` or ``~/.cache/trioexec-oracle``."""
    chosen = os.environ.get("TRIOEXEC_ORACLE_CACHE")
    return Path(chosen) if chosen else Path.home() / ".cache" / "trioexec-oracle"


def package_dir() -> Path:
    return cache_dir() / "node_modules" / "@anthropic-ai" / "claude-code"


def _installed_version(pkg: Path) -> str | None:
    try:
        return str(json.loads((pkg / "package.json").read_text())["version"])
    except (OSError, ValueError, KeyError):
        return None


def ensure_cli() -> tuple[Path | None, str]:
    """The CLI's ``cli.js``, installing it if needed; ``(None, why)`` when it cannot run."""
    if shutil.which("node") is None:
        return None, "node is not on PATH"
    pkg = package_dir()
    if _installed_version(pkg) != VERSION:
        npm = shutil.which("npm")
        if npm is None:
            return None, f"{PACKAGE}@{VERSION} is not installed and npm is not on PATH"
        cache_dir().mkdir(parents=True, exist_ok=True)
        done = subprocess.run(
            [npm, "install", "--prefix", str(cache_dir()), "--no-audit", "--no-fund",
             "--loglevel=error", f"{PACKAGE}@{VERSION}"],
            capture_output=True, text=True, timeout=600, check=False,
        )  # fmt: skip
        if done.returncode != 0 or _installed_version(pkg) != VERSION:
            why = (done.stderr.strip().splitlines() or ["no output"])[-1]
            return None, f"npm could not install {PACKAGE}@{VERSION}: {why}"
    machine = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}
    arch = machine.get(platform.machine().lower(), platform.machine().lower())
    rg = pkg / "vendor" / "ripgrep" / f"{arch}-{sys.platform}" / "rg"
    if rg.exists() and not os.access(rg, os.X_OK):
        rg.chmod(0o755)  # the package ships it without the execute bit
    return pkg / "cli.js", ""


def _fill(value: JSON, cwd: str) -> JSON:
    if isinstance(value, str):
        return value.replace("{cwd}", cwd)
    if isinstance(value, list):
        return [_fill(v, cwd) for v in value]
    if isinstance(value, dict):
        return {k: _fill(v, cwd) for k, v in value.items()}
    return value


def _scripts(case: Case, cwd: str) -> list[list[Any]]:
    scripts = []
    for n, turn in enumerate(case.turns):
        blocks = [
            tool_use(i, tool_id, name, raw if isinstance(raw, str) else _fill(raw, cwd))
            for i, (tool_id, name, raw) in enumerate(turn)
        ]
        scripts.append(response(*blocks, stop_reason="tool_use", message_id=f"msg_{n}"))
    scripts.append(response(text(0, "done"), message_id="msg_end"))
    return scripts


@attrs.frozen
class Side:
    """One program's run directory: ``work`` (its cwd), ``home``, settings, hook log."""

    root: Path

    @property
    def work(self) -> Path:
        return self.root / "work"

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def settings(self) -> Path:
        return self.root / "settings.json"

    @property
    def hook_log(self) -> Path:
        return self.root / "hooks.jsonl"

    def prepare(self, case: Case) -> None:
        self.work.mkdir(parents=True)
        self.home.mkdir()
        base = 1_700_000_000
        for name, content in case.files.items():
            path = self.work / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(content)
            stamp = base + case.mtimes.get(name, 0)
            os.utime(path, (stamp, stamp))
        hooks: dict[str, list[JSON]] = {}
        for hook in case.hooks:
            command = " ".join(
                [sys.executable, str(HOOK), str(self.hook_log), _quote(json.dumps(hook.answer))]
            )
            hooks.setdefault(hook.event, []).append(
                {"matcher": hook.matcher, "hooks": [{"type": "command", "command": command}]}
            )
        settings: dict[str, JSON] = {}
        if case.permissions:
            settings["permissions"] = _fill(case.permissions, str(self.work))
        if hooks:
            settings["hooks"] = hooks
        self.settings.write_text(json.dumps(settings))
        (self.home / ".claude.json").write_text(
            json.dumps(
                {
                    "hasCompletedOnboarding": True,
                    "cachedGrowthBookFeatures": {"tengu_streaming_tool_execution2": True},
                }
            )
        )

    def observe(self, server: MessagesServer, returncode: int, stderr: str) -> JSON:
        turns = [_normal(body["messages"][-1]["content"]) for body in server.requests[1:]]
        hooks = []
        if self.hook_log.exists():
            hooks = [json.loads(line)["stdin"] for line in self.hook_log.read_text().splitlines()]
        hooks = sorted(
            (_normal(h) for h in hooks),
            key=lambda h: (h.get("tool_use_id", ""), h.get("hook_event_name", "")),
        )
        files = {
            str(p.relative_to(self.work)): p.read_text(errors="replace")
            for p in sorted(self.work.rglob("*"))
            if p.is_file()
        }
        subs = [(str(HOOK), "{hook}"), (sys.executable, "{python}"),
                (str(self.work.resolve()), "{cwd}"), (str(self.work), "{cwd}"),
                (str(self.home.resolve()), "{home}"), (str(self.root), "{root}")]  # fmt: skip
        observed = _substitute({"turns": turns, "hooks": hooks, "files": files}, subs)
        observed["requests"] = len(server.requests)
        return observed


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def _normal(value: JSON) -> JSON:
    """Drop what differs between any two runs: cache hints, session ids, transcripts."""
    if isinstance(value, list):
        return [_normal(v) for v in value]
    if not isinstance(value, dict):
        return value
    out = {}
    for key, item in value.items():
        if key == "cache_control" or (key == "is_error" and item is False):
            continue
        if key in ("session_id", "transcript_path"):
            item = f"<{key}>"
        out[key] = _normal(item)
    return out


def _substitute(value: JSON, subs: list[tuple[str, str]]) -> JSON:
    if isinstance(value, str):
        for old, new in subs:
            value = value.replace(old, new)
        return value
    if isinstance(value, list):
        return [_substitute(v, subs) for v in value]
    if isinstance(value, dict):
        return {_substitute(k, subs): _substitute(v, subs) for k, v in value.items()}
    return value


def _env(side: Side, server: MessagesServer) -> dict[str, str]:
    keep = ("PATH", "LANG", "LC_ALL", "TMPDIR", "TERM")
    env = {k: os.environ[k] for k in keep if k in os.environ}
    env.update(
        HOME=str(side.home),
        ANTHROPIC_BASE_URL=server.url,
        ANTHROPIC_API_KEY="oracle-key",
        XDG_STATE_HOME=str(side.root / "state"),
        XDG_CONFIG_HOME=str(side.home / ".config"),
    )
    return env


def run_claude_code(cli: Path, case: Case, root: Path) -> JSON:
    """Claude Code's observation of ``case`` (run in ``root``, a fresh directory)."""
    side = Side(root)
    side.prepare(case)
    with MessagesServer(_scripts(case, str(side.work))) as server:
        env = _env(side, server)
        env.update(IS_SANDBOX="1", HTTPS_PROXY=server.url, NO_PROXY="127.0.0.1,localhost")
        done = subprocess.run(
            ["node", str(cli), "-p", "--output-format", "stream-json", "--verbose",
             "--settings", str(side.settings), "--permission-mode", case.mode, "go"],
            cwd=side.work, env=env, stdin=subprocess.DEVNULL, capture_output=True,
            text=True, timeout=RUN_TIMEOUT, check=False,
        )  # fmt: skip
        return side.observe(server, done.returncode, done.stderr)


def run_trioexec(case: Case, root: Path, policy: str | None, *, in_process: bool = False) -> JSON:
    """``trioexec agent``'s observation of ``case`` under ``policy`` (None: the default).

    ``in_process``: run the command in this process (the main thread; it sets
    and restores a few environment variables), saving an interpreter start.
    """
    side = Side(root)
    side.prepare(case)
    with MessagesServer(_scripts(case, str(side.work))) as server:
        env = _env(side, server)
        chosen = ["--policy", policy] if policy else []
        argv = ["agent", "--cwd", str(side.work), "--no-transcript", "--json",
                "--settings", str(side.settings), "--permission-mode", case.mode,
                *chosen, "go"]  # fmt: skip
        if in_process:
            status, stderr = _in_process(argv, env)
        else:
            env["PYTHONPATH"] = str(ROOT)
            done = subprocess.run(
                [sys.executable, "-m", "trioexec", *argv], cwd=side.work, env=env,
                stdin=subprocess.DEVNULL, capture_output=True, text=True,
                timeout=RUN_TIMEOUT, check=False,
            )  # fmt: skip
            status, stderr = done.returncode, done.stderr
        if status == 2:
            raise RuntimeError(f"trioexec agent: usage error: {stderr}")
        return side.observe(server, status, stderr)


_PASSED = ("HOME", "ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "XDG_STATE_HOME", "XDG_CONFIG_HOME")


def _in_process(argv: list[str], env: dict[str, str]) -> tuple[int, str]:
    from trioexec._cli import main

    saved = {key: os.environ.get(key) for key in os.environ if key.startswith("ANTHROPIC_")}
    saved.update({key: os.environ.get(key) for key in _PASSED})
    out, err = io.StringIO(), io.StringIO()
    try:
        for key in saved:
            os.environ.pop(key, None)
        os.environ.update({key: env[key] for key in _PASSED})
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = main(argv)
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    return status, err.getvalue()


def run_both(cli: Path, case: Case, root: Path, policy: str | None) -> tuple[JSON, JSON]:
    """Both observations, the two programs running at the same time."""
    got: dict[str, JSON] = {}

    def claude() -> None:
        try:
            got["claude"] = run_claude_code(cli, case, root / "claude-code")
        except Exception as exc:  # reported in the calling thread
            got["error"] = exc

    thread = threading.Thread(target=claude)
    thread.start()
    try:
        mine = run_trioexec(case, root / "trioexec", policy)
    finally:
        thread.join()
    if "error" in got:
        raise got["error"]
    return got["claude"], mine
