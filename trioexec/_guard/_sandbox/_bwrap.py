"""The bubblewrap command line for one sandboxed command: pure, from a :class:`MountPlan`.

Nothing here looks at the file system or runs anything: :func:`bwrap_argv`
turns a plan (which paths are writable, which stay read-only inside them,
which are hidden) into the argument list, so the order of the mounts (the
thing that makes the boundary hold) is testable on its own.

The order, each later mount on top of the earlier ones:

1. ``--ro-bind / /``: the whole file system, read-only;
2. ``--dev /dev``, ``--proc /proc``: a fresh minimal ``/dev`` and the
   ``/proc`` of the new PID namespace;
3. ``--bind W W`` for each writable root (the working directory, the
   sandbox's temporary directory, ``allowWrite``);
4. ``--ro-bind P P`` for each path that stays read-only inside them
   (``denyWrite``, the protected paths);
5. the hidden paths (``denyRead``): an empty read-only ``tmpfs`` over a
   directory, ``/dev/null`` over a file;
6. ``--ro-bind R R`` for each ``allowRead`` path inside a hidden directory;
7. the extra binds (the proxy's Unix socket).

Namespaces: a new mount, PID, IPC, UTS and network namespace (and cgroup
where the kernel allows); ``--die-with-parent`` kills the sandbox's init
when the ``bwrap`` process dies, and the kernel then kills every process of
the PID namespace: nothing started inside outlives the call, ``setsid``,
``nohup`` and double forks included.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

__all__ = ["MountPlan", "bwrap_argv"]


@attrs.frozen
class MountPlan:
    """What one sandboxed command may see and change (absolute paths, symlinks resolved).

    Attributes:
        writable: roots bound read-write.
        read_only: existing paths bound read-only on top (inside writable roots).
        empty_dirs: directories hidden by an empty read-only tmpfs (they must
            exist, or lie inside a directory hidden before them).
        empty_files: files hidden by ``/dev/null``.
        readable: paths bound read-only again inside a hidden directory.
        binds: ``(source, destination)`` pairs bound read-write last.
    """

    writable: tuple[str, ...] = ()
    read_only: tuple[str, ...] = ()
    empty_dirs: tuple[str, ...] = ()
    empty_files: tuple[str, ...] = ()
    readable: tuple[str, ...] = ()
    binds: tuple[tuple[str, str], ...] = ()


def bwrap_argv(
    bwrap: str,
    plan: MountPlan,
    command: Sequence[str],
    *,
    cwd: str,
    setenv: Mapping[str, str] | None = None,
    share_network: bool = False,
    seccomp_fd: int | None = None,
) -> list[str]:
    """The full ``bwrap`` command line that runs ``command`` confined by ``plan``.

    Args:
        bwrap: the bubblewrap executable.
        plan: the mounts.
        command: the program and its arguments, run inside.
        cwd: the working directory inside (the same path as outside).
        setenv: environment variables set inside, on top of the inherited ones.
        share_network: keep the host's network (only for a command the
            settings let through unconfined network; never by default).
        seccomp_fd: a file descriptor bwrap reads a seccomp program from
            (it must be open in the bwrap process).

    Returns:
        The argument list, ``bwrap`` first.
    """
    argv = [
        bwrap,
        "--die-with-parent",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
    ]
    if not share_network:
        argv.append("--unshare-net")
    argv += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    for path in plan.writable:
        argv += ["--bind", path, path]
    for path in plan.read_only:
        argv += ["--ro-bind", path, path]
    for path in plan.empty_dirs:
        argv += ["--perms", "0555", "--tmpfs", path, "--remount-ro", path]
    for path in plan.empty_files:
        argv += ["--ro-bind", "/dev/null", path]
    for path in plan.readable:
        argv += ["--ro-bind", path, path]
    for source, destination in plan.binds:
        argv += ["--bind", source, destination]
    for name, value in (setenv or {}).items():
        argv += ["--setenv", name, value]
    if seccomp_fd is not None:
        argv += ["--seccomp", str(seccomp_fd)]
    argv += ["--chdir", cwd, "--", *command]
    return argv
