"""A seccomp filter that refuses new Unix sockets inside the sandbox.

A read-only mount does not stop ``connect()`` on a Unix socket file: a
sandboxed command could reach the host's Docker daemon (and through it
everything) at ``/var/run/docker.sock``.  The network namespace cuts only
the abstract ones.  So, unless ``allowAllUnixSockets`` is set, bubblewrap
installs this classic-BPF program (``--seccomp FD``): ``socket(AF_UNIX, ...)``
fails with ``EPERM``; every other call is allowed.  ``socketpair`` stays
allowed (an unnamed pair connects only the processes that share it).

The program checks the architecture first: a system call made through
another ABI than the native one (32-bit ``int 0x80``, x32) is refused or
kills the process, so ``socketcall`` cannot go around the filter.
Built for x86-64 and AArch64; elsewhere :func:`unix_socket_filter` returns
None and the sandbox runs without it (said once, in a warning).
"""

from __future__ import annotations

import platform
import socket
import struct

__all__ = ["unix_socket_filter"]

_LD_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JGE = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_RET = 0x06  # BPF_RET | BPF_K
_ALLOW = 0x7FFF0000  # SECCOMP_RET_ALLOW
_EPERM = 0x00050000 | 1  # SECCOMP_RET_ERRNO | EPERM
_KILL = 0x80000000  # SECCOMP_RET_KILL_PROCESS
_X32_BIT = 0x40000000

_ARCHES = {
    # machine: (AUDIT_ARCH_*, __NR_socket, has the x32 ABI)
    "x86_64": (0xC000003E, 41, True),
    "aarch64": (0xC00000B7, 198, False),
    "arm64": (0xC00000B7, 198, False),
}


def _insn(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("<HBBI", code, jt, jf, k)


def unix_socket_filter(machine: str | None = None) -> bytes | None:
    """The compiled filter for ``machine`` (default: this one), or None if not supported.

    Returns:
        ``struct sock_filter`` instructions, little-endian, as ``bwrap --seccomp`` reads them.
    """
    found = _ARCHES.get((machine or platform.machine()).lower())
    if found is None:
        return None
    arch, socket_nr, x32 = found
    # Offsets into struct seccomp_data: nr 0, arch 4, args[0] 16 (its low half).
    program = [
        _insn(_LD_ABS, 4),
        _insn(_JEQ, arch, 1, 0),  # the native ABI: go on; any other: kill
        _insn(_RET, _KILL),
        _insn(_LD_ABS, 0),
    ]
    if x32:
        program.append(_insn(_JGE, _X32_BIT, 4, 0))  # an x32 call: refused (to EPERM)
    program += [
        _insn(_JEQ, socket_nr, 0, 2),  # socket(): look at the family; else allow
        _insn(_LD_ABS, 16),
        _insn(_JEQ, socket.AF_UNIX, 1, 0),
        _insn(_RET, _ALLOW),
        _insn(_RET, _EPERM),
    ]
    return b"".join(program)
