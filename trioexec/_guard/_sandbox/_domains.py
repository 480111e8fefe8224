"""Which hosts a sandboxed command may reach: ``allowedDomains`` / ``deniedDomains``.

Claude Code's wildcard rules: ``example.com`` matches that host alone;
``*.example.com`` matches every subdomain (``api.example.com``,
``a.b.example.com``) but not ``example.com`` itself; ``host:port`` matches
that port only.  Names compare case-insensitively, a trailing dot ignored.
A denied match wins over an allowed one; a host no rule allows is refused
(nobody is asked: trioexec's proxy has no one to ask).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = ["domain_allowed", "domain_matches"]


def _split(pattern: str) -> tuple[str, int | None]:
    """``(host pattern, port or None)``; a bare IPv6 address has no port."""
    text = pattern.strip().lower()
    if text.startswith("["):  # [::1]:443
        host, _, rest = text[1:].partition("]")
        return host, int(rest[1:]) if rest.startswith(":") and rest[1:].isdigit() else None
    head, sep, tail = text.rpartition(":")
    if sep and tail.isdigit() and ":" not in head:
        return head, int(tail)
    return text, None


def domain_matches(host: str, port: int, pattern: str) -> bool:
    """Whether ``pattern`` (an allowedDomains or deniedDomains rule) covers ``host:port``."""
    name = host.lower().rstrip(".").strip("[]")
    wanted, wanted_port = _split(pattern)
    if wanted_port is not None and wanted_port != port:
        return False
    if wanted.startswith("*."):
        return name.endswith(wanted[1:]) and len(name) > len(wanted) - 1
    return name == wanted.rstrip(".")


def domain_allowed(host: str, port: int, allowed: Iterable[str], denied: Iterable[str]) -> bool:
    """Whether a sandboxed command may connect to ``host:port``: denied first, then allowed."""
    if any(domain_matches(host, port, p) for p in denied):
        return False
    return any(domain_matches(host, port, p) for p in allowed)
