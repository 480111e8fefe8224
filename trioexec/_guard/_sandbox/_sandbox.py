"""The sandbox in force: settings, a usable bubblewrap, and what one command runs as.

:class:`Sandbox` is built once, with the guard rails
(:meth:`Sandbox.from_settings`): that is where an unusable bubblewrap is
found, and either refused (``failIfUnavailable``: one
:class:`~trioexec.ConfigurationError`) or warned about once (then commands
run unconfined, as Claude Code does).  For each ``Bash`` call it answers
whether the command is confined (:meth:`Sandbox.confines`) and prepares the
``bwrap`` command line (:meth:`Sandbox.prepare`).
"""

from __future__ import annotations

import atexit
import functools
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from ..._errors import ConfigurationError
from ._bwrap import MountPlan, bwrap_argv
from ._mounts import Watch, plan_mounts
from ._proxy import PROXY_PORT
from ._rule_paths import rule_paths
from ._seccomp import unix_socket_filter
from ._settings import SandboxSettings

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from ..._contract._permission_context import PermissionContext

__all__ = ["Confinement", "Sandbox", "probe_bwrap"]

logger = logging.getLogger("trioexec.sandbox")

_START_RELAY = (
    # Inside the sandbox: relay 127.0.0.1:PORT to the proxy's Unix socket, wait
    # (at most ~1 s) until it listens, then run the command in place of this shell.
    '"$1" TCP-LISTEN:{port},bind=127.0.0.1,fork,reuseaddr "UNIX-CONNECT:$2" '
    "</dev/null >/dev/null 2>&1 &\n"
    "i=0\n"
    "while ! grep -q ' {hex_address} 00000000:0000 0A' /proc/net/tcp 2>/dev/null; do\n"
    '  i=$((i + 1)); [ "$i" -gt 500 ] && break; sleep 0.002\n'
    "done\n"
    'shift 2; exec "$@"'
)
_SECCOMP_FD = 9
_WITH_SECCOMP_FD = f'exec "$@" {_SECCOMP_FD}<"$0"'
"""Outside: open the filter file on fd 9 for bwrap's ``--seccomp 9``, then become bwrap."""
_APPLY_SECCOMP = """\
import ctypes, os, sys
data = open(sys.argv[1], "rb").read()
buffer = ctypes.create_string_buffer(data, len(data))
class Program(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]
program = Program(len(data) // 8, ctypes.addressof(buffer))
libc = ctypes.CDLL(None, use_errno=True)
if libc.prctl(38, 1, 0, 0, 0) or libc.prctl(22, 2, ctypes.byref(program), 0, 0):
    sys.exit(f"sandbox: cannot install the seccomp filter: {os.strerror(ctypes.get_errno())}")
os.execvp(sys.argv[2], sys.argv[2:])
"""
"""Inside, after the proxy relay has connected out: PR_SET_NO_NEW_PRIVS, then the
filter (PR_SET_SECCOMP, SECCOMP_MODE_FILTER), then the command."""
_PROBE_TIMEOUT = 10.0
_PROBE_ARGS = (
    *("--die-with-parent", "--unshare-pid", "--unshare-net"),
    *("--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--", "true"),
)
_warned: set[str] = set()
_warned_lock = threading.Lock()


@functools.cache
def probe_bwrap(bwrap: str | None) -> str | None:
    """Why ``bwrap`` cannot confine a command here, or None when it can.

    Runs it once (cached per path): a read-only root, new PID and network
    namespaces, ``true``.  Blocks for a few milliseconds.
    """
    if not sys.platform.startswith("linux"):
        return (
            f"the sandbox is implemented on Linux only (bubblewrap); not on {sys.platform} "
            "(macOS Seatbelt is not implemented)"
        )
    found = bwrap if bwrap is not None else shutil.which("bwrap")
    if found is None:
        return "bubblewrap (bwrap) is not installed (apt-get install bubblewrap)"
    try:
        done = subprocess.run(
            [found, *_PROBE_ARGS],
            capture_output=True,
            timeout=_PROBE_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{found} cannot run: {exc}"
    if done.returncode != 0:
        why = done.stderr.decode(errors="replace").strip() or f"exit status {done.returncode}"
        return f"{found} cannot create a sandbox here: {why}"
    return None


def _warn_once(text: str) -> None:
    with _warned_lock:
        if text in _warned:
            return
        _warned.add(text)
    logger.warning("%s", text)


@attrs.frozen
class Confinement:
    """One confined command: what to run, and what to check once it has ended.

    Attributes:
        argv: the ``bwrap`` command line.
        env: the environment to start it with.
        plan: the mounts.
        watch: protected paths that did not exist (see :class:`Watch`).
    """

    argv: list[str]
    env: dict[str, str] | None
    plan: MountPlan
    watch: Watch


@attrs.define(eq=False)
class Sandbox:
    """The ``sandbox`` settings in force, with the executables that enforce them.

    Attributes:
        settings: the merged settings.
        bwrap: the bubblewrap that runs commands; None when it cannot
            (:attr:`unavailable` says why) or the sandbox is not enabled.
        unavailable: why commands run unconfined although the settings enable
            the sandbox (None: they are confined).
    """

    settings: SandboxSettings
    bwrap: str | None = None
    unavailable: str | None = None
    socat: str | None = None
    _tmpdir: str | None = attrs.field(default=None, init=False, repr=False)
    _proxy_dir: str | None = attrs.field(default=None, init=False, repr=False)
    _filter: str | None = attrs.field(default=None, init=False, repr=False)
    _read_cache: dict[tuple[str, tuple[str, ...]], list[Path]] = attrs.field(
        factory=dict, init=False, repr=False
    )

    @classmethod
    def from_settings(cls, settings: SandboxSettings, *, enable: bool = False) -> Sandbox:
        """The sandbox the settings ask for (``enable``: as if ``enabled: true``).

        When the sandbox is enabled, bubblewrap is looked for (``bwrapPath``
        of managed settings, else ``bwrap`` on ``PATH``) and tried once.

        Raises:
            ConfigurationError: the sandbox is enabled, ``failIfUnavailable`` is
                true, and bubblewrap cannot run here (the message says why).
                Without ``failIfUnavailable`` the reason is logged once on
                ``trioexec.sandbox`` and commands run unconfined.
        """
        if enable:
            settings = settings.with_enabled()
        if not settings.is_enabled:
            return cls(settings)
        problem = probe_bwrap(settings.bwrap_path)
        if problem is None:
            bwrap = settings.bwrap_path or shutil.which("bwrap")
            socat = None
            if settings.allowed_domains:
                socat = settings.socat_path or shutil.which("socat")
                if socat is None or not os.access(socat, os.X_OK):
                    socat = None
                    _warn_once(
                        "sandbox.network.allowedDomains is set, but socat is not installed "
                        "(apt-get install socat): sandboxed commands have no network"
                    )
            if settings.allow_unix_sockets and not settings.allow_all_unix_sockets:
                _warn_once(
                    "sandbox.network.allowUnixSockets cannot allow single sockets on Linux: "
                    "new Unix sockets stay refused (allowAllUnixSockets allows them all)"
                )
            return cls(settings, bwrap, socat=socat)
        if settings.fail_if_unavailable:
            raise ConfigurationError(
                f"sandbox.enabled and sandbox.failIfUnavailable are true, but {problem}"
            )
        _warn_once(f"sandbox.enabled is true, but {problem}: commands run unconfined")
        return cls(settings, None, problem)

    @property
    def active(self) -> bool:
        """Whether sandboxed commands are confined (enabled, and bubblewrap works)."""
        return self.bwrap is not None

    def excluded(self, command: str) -> bool:
        """Whether an ``excludedCommands`` pattern matches any part of ``command``."""
        patterns = self.settings.excluded_commands
        if not patterns:
            return False
        from .._bash_rules import match_bash_rules

        return match_bash_rules(patterns, command, behavior="deny")

    def confines(self, command: str, *, disable: bool = False) -> bool:
        """Whether ``command`` runs confined.

        Not when the sandbox is inactive, when ``command`` is excluded, or when
        the model asked (``disable``: ``dangerouslyDisableSandbox``) and
        ``allowUnsandboxedCommands`` lets it.
        """
        if self.bwrap is None:
            return False
        if disable and self.settings.allows_unsandboxed:
            return False
        return not self.excluded(command)

    def auto_allows(self, command: str, *, disable: bool = False) -> bool:
        """Whether ``autoAllowBashIfSandboxed`` lets ``command`` run without an ask."""
        return self.settings.auto_allow and self.confines(command, disable=disable)

    @property
    def wants_proxy(self) -> bool:
        """Whether confined commands get the filtering proxy (domains allowed, socat found)."""
        return self.socat is not None and bool(self.settings.allowed_domains)

    @property
    def proxy_dir(self) -> str:
        """Where the proxies' Unix sockets are made (read-only inside the sandbox), made once."""
        if self._proxy_dir is None:
            self._proxy_dir = tempfile.mkdtemp(prefix="trioexec-proxy-")
            atexit.register(shutil.rmtree, self._proxy_dir, True)
        return self._proxy_dir

    def seccomp_filter(self) -> str | None:
        """The file holding the Unix-socket filter (:mod:`._seccomp`), written once;
        None with ``allowAllUnixSockets`` or on an architecture it is not built for."""
        if self.settings.allow_all_unix_sockets:
            return None
        if self._filter is None:
            program = unix_socket_filter()
            if program is None:
                _warn_once(
                    "the sandbox's Unix-socket filter is not built for this architecture: "
                    "sandboxed commands can connect to Unix sockets they can see"
                )
                return None
            path = os.path.join(self.proxy_dir, "unix-sockets.bpf")
            with open(path, "wb") as out:
                out.write(program)
            self._filter = path
        return self._filter

    @property
    def tmpdir(self) -> str:
        """The sandbox's temporary directory (writable, ``$TMPDIR`` inside), made once."""
        if self._tmpdir is None:
            self._tmpdir = tempfile.mkdtemp(prefix="trioexec-sandbox-")
            atexit.register(shutil.rmtree, self._tmpdir, True)
        return self._tmpdir

    def needs_thread(self, permissions: PermissionContext | None) -> bool:
        """Whether :meth:`prepare` may walk directories (a ``Read`` pattern not expanded yet)."""
        return bool(permissions and permissions.rule_contents("Read", "deny"))

    def prepare(
        self,
        command: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str] | None,
        permissions: PermissionContext | None = None,
        home: Path | None = None,
        proxy_socket: str | None = None,
    ) -> Confinement:
        """The confined form of ``command`` for a call in ``cwd``.

        With ``proxy_socket`` (a proxy listening there: :func:`~._proxy.open_proxy`),
        ``socat`` inside relays ``127.0.0.1:3128`` to it and the proxy
        variables (``HTTP_PROXY``, ``HTTPS_PROXY``, ``ALL_PROXY`` and their
        lower-case forms) point there.

        Looks at the file system (``stat``, ``realpath``; the expansion of
        ``Read`` deny patterns, cached per working directory), runs nothing.

        Raises:
            RuntimeError: the sandbox is not active.
            FileNotFoundError: ``cwd`` is not a directory (as unconfined, the
                command cannot start there).
        """
        if self.bwrap is None:
            raise RuntimeError("the sandbox is not active")
        if not cwd.is_dir():
            raise FileNotFoundError(2, "No such file or directory", os.fspath(cwd))
        home = home if home is not None else Path(os.path.expanduser("~"))
        settings = self.settings
        resolved = [
            [p.resolve(cwd, home) for p in entries]
            for entries in (
                settings.allow_write,
                settings.deny_write,
                settings.deny_read,
                settings.allow_read,
            )
        ]
        allow_write, deny_write, deny_read, allow_read = resolved
        if permissions is not None:
            edits = permissions.rule_contents("Edit", "allow")
            allow_write += rule_paths(edits, cwd, home, expand=False)
            reads = permissions.rule_contents("Read", "deny")
            if reads:
                key = (os.fspath(cwd), reads)
                cached = self._read_cache.get(key)
                if cached is None:
                    cached = self._read_cache[key] = rule_paths(reads, cwd, home, expand=True)
                deny_read += cached
        plan, watch = plan_mounts(
            cwd=cwd,
            tmpdir=Path(self.tmpdir),
            allow_write=allow_write,
            deny_write=deny_write,
            deny_read=deny_read,
            allow_read=allow_read,
        )
        tmp = self.tmpdir
        setenv = {"TMPDIR": tmp, "TMP": tmp, "TEMP": tmp}
        seccomp = self.seccomp_filter()
        proxied = proxy_socket is not None and self.socat is not None
        if seccomp is not None and proxied:  # after the relay connected out: installed inside
            command = [sys.executable, "-I", "-S", "-c", _APPLY_SECCOMP, seccomp, *command]
        if proxied:
            assert proxy_socket is not None
            assert self.socat is not None
            http, socks = f"http://127.0.0.1:{PROXY_PORT}", f"socks5h://127.0.0.1:{PROXY_PORT}"
            for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
                setenv[name] = http
            setenv.update(ALL_PROXY=socks, all_proxy=socks, NO_PROXY="", no_proxy="")
            address = f"0100007F:{PROXY_PORT:04X}"
            script = _START_RELAY.format(port=PROXY_PORT, hex_address=address)
            command = ["/bin/sh", "-c", script, "sh", self.socat, proxy_socket, *command]
        by_bwrap = None if proxied else seccomp  # no relay inside: bwrap installs it
        argv = bwrap_argv(
            self.bwrap,
            plan,
            command,
            cwd=os.path.realpath(cwd),
            setenv=setenv,
            seccomp_fd=_SECCOMP_FD if by_bwrap is not None else None,
        )
        if by_bwrap is not None:
            argv = ["/bin/sh", "-c", _WITH_SECCOMP_FD, by_bwrap, *argv]
        return Confinement(argv, dict(env) if env is not None else None, plan, watch)
