"""What the model is told when the sandbox refused something a command tried.

bubblewrap has no violation log: a refused write shows as the command's own
``Read-only file system`` error, a refused connection as a failed name
lookup or an unreachable network, a refused domain as the proxy's answer.
:func:`violation_note` reads those signs in the command's output (and the
protected paths removed after it, and the connections the proxy refused)
and returns the ``<sandbox_violations>`` block appended to the result, as
Claude Code appends violation details to a failed command's output: what
was refused, what is allowed, and how to ask for more.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ._bwrap import MountPlan
    from ._settings import SandboxSettings

__all__ = ["violation_note"]

_WRITE_SIGNS = ("Read-only file system",)
_NETWORK_SIGNS = (
    "Network is unreachable",
    "Could not resolve host",
    "Temporary failure in name resolution",
    "Name or service not known",
    "No address associated with hostname",
    "getaddrinfo",
    "nodename nor servname",
)


def violation_note(
    output: str,
    *,
    plan: MountPlan,
    settings: SandboxSettings,
    tmpdir: str,
    removed: Sequence[str] = (),
    refused_hosts: Sequence[str] = (),
) -> str | None:
    """The ``<sandbox_violations>`` block for one confined command, or None (nothing seen).

    Args:
        output: the command's stderr and stdout.
        plan: the command's mounts (to list what was writable).
        settings: the sandbox settings (to name what may be asked for).
        tmpdir: the sandbox's temporary directory.
        removed: protected paths the command created, removed after it.
        refused_hosts: ``host:port`` the proxy refused during the command.
    """
    lines = []
    if any(sign in output for sign in _WRITE_SIGNS):
        writable = [p for p in plan.writable if p != tmpdir and not p.endswith("/.git")]
        shown = ", ".join([*writable, f"$TMPDIR ({tmpdir})"])
        lines.append(
            f"- a write outside the writable paths (Read-only file system); writable: {shown}; "
            "read-only inside them: .git/hooks, .git/config, .claude/, .mcp.json, shell "
            "start-up files and the other protected paths"
        )
    lines += [
        f"- a connection to {host}: the domain is not in sandbox.network.allowedDomains"
        for host in dict.fromkeys(refused_hosts)
    ]
    if not refused_hosts and any(sign in output for sign in _NETWORK_SIGNS):
        allowed = ", ".join(settings.allowed_domains) or "none"
        lines.append(
            "- network access: the sandbox has no network but its proxy, which reaches only "
            f"sandbox.network.allowedDomains ({allowed})"
        )
    lines += [
        f"- creating the protected path {path}: it was removed after the command"
        for path in removed
    ]
    if not lines:
        return None
    ask = (
        'If the command needs this, retry it with "dangerouslyDisableSandbox": true (the user '
        "may be asked to approve it), or ask the user to allow it in the sandbox settings "
        "(sandbox.filesystem.allowWrite, sandbox.network.allowedDomains)."
        if settings.allows_unsandboxed
        else "Commands cannot run outside the sandbox here (sandbox.allowUnsandboxedCommands "
        "is false); ask the user to allow it in the sandbox settings "
        "(sandbox.filesystem.allowWrite, sandbox.network.allowedDomains)."
    )
    body = "\n".join(["The command ran in a sandbox, which refused:", *lines, ask])
    return f"<sandbox_violations>\n{body}\n</sandbox_violations>"
