"""Protected paths: write targets that always need a person's approval.

Some files make programs run code on their own: git runs the hooks and the
programs its configuration names (``core.fsmonitor``, ``core.sshCommand``,
a diff driver), a shell runs its start-up files, an editor runs the tasks of
its workspace folder, Claude Code runs the hooks of ``.claude/``.  Writing one
of them is a way to run a program later, outside every rule, so such writes
always *ask*: in bypass mode too, and whatever allow rule or hook answers.

:func:`protected_path_reason` says whether a write target is protected and
why.  It is a plain function (no trio; it only calls ``os.path.realpath``,
``os.lstat`` and ``os.stat``, which do not block on a local file system), so
the file tools, the permission chain and the shell analysis (for a
redirection's target: ``> ~/.bashrc``, ``tee .git/config``) share one list.

A path is protected when, **as written** (``~`` expanded, joined to the
working directory, ``.`` and ``..`` folded) **or with every symlink resolved**:

- one of its components is a directory of :data:`PROTECTED_DIRS` (``.git``,
  ``.claude``, ``.vscode``, ``.idea``, ``.husky``), at any depth, the
  directory itself included (a ``.git`` *file* points git at another
  repository); a component ending in ``.git`` before the last one (a bare
  repository, ``project.git/config``) counts too;
- its file name is one of :data:`PROTECTED_FILES` (shell start-up files such as
  ``.bashrc``, ``.zshrc``, ``.profile``; ``.gitconfig``, ``.gitmodules``,
  ``.mcp.json``...), in any directory;
- it lies in a configuration directory of :data:`PROTECTED_CONFIG_DIRS`
  (``.config/git/``, ``.config/fish/``) at any depth, or under
  ``$XDG_CONFIG_HOME/git`` / ``$XDG_CONFIG_HOME/fish``;
- it is a system-wide start-up file or git configuration
  (:data:`PROTECTED_SYSTEM_PATHS`: ``/etc/profile``, ``/etc/profile.d/``,
  ``/etc/bash.bashrc``, ``/etc/zsh/``, ``/etc/gitconfig``...).

Names are compared case-insensitively, and with trailing dots and spaces and
an NTFS stream suffix (``:...``) removed, because case-insensitive and Windows
file systems treat ``.GIT`` and ``.git.`` as ``.git``.  This is stricter than
needed on Linux (a directory really named ``.Git`` is protected too).

Deliberate limits (see docs/guard-rails.md): a hard link gives a file a second
name that no path check can see (the file tools never write through one: they
replace the file; a shell redirection does, so :func:`protected_path_reason`
takes ``hard_links=True`` to treat every multiply-linked file as protected); a
repository may name a hooks directory of its own (``core.hooksPath``), which
is not read; ``~/.ssh`` and other credentials are not on the list (deny them
with ``Edit(~/.ssh/**)``).
"""

from __future__ import annotations

import errno
import os
import stat
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = [
    "PROTECTED_CONFIG_DIRS",
    "PROTECTED_DIRS",
    "PROTECTED_FILES",
    "PROTECTED_SYSTEM_PATHS",
    "protected_path_reason",
    "protected_reason_resolved",
]

PROTECTED_DIRS: dict[str, str] = {
    ".git": "git runs the hooks and programs configured there",
    ".claude": "Claude Code runs the hooks configured there",
    ".vscode": "the editor runs the tasks configured there",
    ".idea": "the IDE runs the tools configured there",
    ".husky": "husky installs these scripts as git hooks",
}
"""Directories whose contents are protected at any depth (name -> why)."""

_SHELL_START_UP = "a shell start-up file"
PROTECTED_FILES: dict[str, str] = {
    **dict.fromkeys(
        [
            ".bashrc",
            ".bash_profile",
            ".bash_login",
            ".bash_logout",
            ".bash_aliases",
            ".profile",
            ".login",
            ".logout",
            ".zshrc",
            ".zshenv",
            ".zprofile",
            ".zlogin",
            ".zlogout",
            ".kshrc",
            ".mkshrc",
            ".cshrc",
            ".tcshrc",
        ],
        _SHELL_START_UP,
    ),
    ".gitconfig": "git configuration (it can name programs git runs)",
    ".gitmodules": "git submodule configuration",
    ".ripgreprc": "ripgrep configuration (it can name programs ripgrep runs)",
    ".mcp.json": "MCP server configuration (it names programs to start)",
    ".claude.json": "Claude Code configuration",
}
"""File names protected in any directory (name -> why)."""

PROTECTED_CONFIG_DIRS: dict[tuple[str, str], str] = {
    (".config", "git"): "git configuration (it can name programs git runs)",
    (".config", "fish"): "fish start-up files and functions",
}
"""Two-component directory sequences protected at any depth (``~/.config/git/config``)."""

_XDG_CONFIG_SUBDIRS: dict[str, str] = {
    "git": PROTECTED_CONFIG_DIRS[".config", "git"],
    "fish": PROTECTED_CONFIG_DIRS[".config", "fish"],
}

PROTECTED_SYSTEM_PATHS: dict[str, str] = {
    **dict.fromkeys(
        [
            "/etc/profile",
            "/etc/profile.d",
            "/etc/bash.bashrc",
            "/etc/bashrc",
            "/etc/bash_completion.d",
            "/etc/environment",
            "/etc/zshrc",
            "/etc/zshenv",
            "/etc/zprofile",
            "/etc/zlogin",
            "/etc/zlogout",
            "/etc/zsh",
            "/etc/fish",
            "/etc/csh.cshrc",
            "/etc/csh.login",
        ],
        "a system-wide shell start-up file",
    ),
    "/etc/gitconfig": "system-wide git configuration",
}
"""Absolute paths protected themselves and everything below them."""


def _canonical(name: str) -> str:
    """The name a case-insensitive or Windows file system would see (``.GIT.`` -> ``.git``)."""
    folded = name.split(":", 1)[0].casefold().rstrip(". ")
    return folded or name.casefold()


_MARKERS = tuple(sorted({*PROTECTED_DIRS, *PROTECTED_FILES, ".config/", ".git/", "/etc/"}, key=len))
"""Every protected path's case-folded text contains one of these (a quick first test)."""


def _lexical_reason(path: str, xdg_config_home: str | None) -> str | None:
    """Why the absolute, normalised ``path`` is protected (None: it is not)."""
    folded_path = path.casefold()
    if not any(marker in folded_path for marker in _MARKERS) and not xdg_config_home:
        return None
    parts = [_canonical(p) for p in path.split("/") if p]
    for index, part in enumerate(parts):
        why = PROTECTED_DIRS.get(part)
        if why is not None:
            where = "a" if index == len(parts) - 1 else "inside a"
            return f"{where} {part} directory: {why}"
        if part.endswith(".git") and index < len(parts) - 1:
            return f"inside a bare git repository ({part}): {PROTECTED_DIRS['.git']}"
        if index + 1 < len(parts):
            why = PROTECTED_CONFIG_DIRS.get((part, parts[index + 1]))
            if why is not None:
                return f"in {part}/{parts[index + 1]}: {why}"
    if parts:
        why = PROTECTED_FILES.get(parts[-1])
        if why is not None:
            return f"{parts[-1]} is {why}" if why.startswith("a ") else f"{parts[-1]}: {why}"
    folded = "/" + "/".join(parts)
    for system, why in PROTECTED_SYSTEM_PATHS.items() if folded.startswith("/etc/") else ():
        if folded == system:
            return f"{system} is {why}"
        if folded.startswith(system + "/"):
            return f"in {system}: {why}"
    if xdg_config_home:
        base = os.path.normpath(xdg_config_home)
        if os.path.isabs(base):
            rel = os.path.relpath(path, base)
            if rel != os.curdir and not rel.startswith(os.pardir):
                head = _canonical(rel.split(os.sep, 1)[0])
                why = _XDG_CONFIG_SUBDIRS.get(head)
                if why is not None:
                    return f"in $XDG_CONFIG_HOME/{head}: {why}"
    return None


def protected_path_reason(
    path: str | os.PathLike[str],
    *,
    cwd: str | os.PathLike[str],
    home: str | os.PathLike[str] | None = None,
    environ: Mapping[str, str] | None = None,
    hard_links: bool = False,
) -> str | None:
    """Why writing ``path`` must be approved by a person, or None when it need not be.

    The path is checked as written (``~`` expanded, a relative path joined to
    ``cwd``, ``.`` and ``..`` folded without touching the file system) and
    with every symlink resolved (``os.path.realpath``; a path that does not
    exist yet is resolved as far as it exists), so neither ``a/../.git/config``
    nor a symlink ``docs -> .git`` leads around the list.  The answer is a
    short, model-readable reason, such as ``"inside a .git directory: git runs
    the hooks and programs configured there"`` or ``".bashrc is a shell
    start-up file"``; symlinked targets add ``" (the path resolves to ...)"``.

    The file tools call this for the path they write; the shell analysis calls
    it for every output redirection and every file a command writes
    (``tee FILE``, ``sed -i``, ``sort -o FILE``).  A caller that cannot tell
    what a target is (a variable, a glob) must treat it as protected itself:
    this function only judges a path it is given.

    Args:
        path: the write target, absolute or relative to ``cwd``; ``~`` and
            ``~/x`` are expanded (with ``home`` when given).
        cwd: the working directory relative paths are joined to.
        home: the home directory ``~`` means (default: ``$HOME`` via
            ``os.path.expanduser``).
        environ: where ``XDG_CONFIG_HOME`` is read from (default ``os.environ``).
        hard_links: also call a regular file protected when it has more than
            one hard link (its other names cannot be seen, and may be
            protected).  For writers that write *into* an existing file
            (a shell's ``>``); the file tools replace the file instead, which
            leaves other links alone.

    Returns:
        The reason, or None.

    Raises:
        Nothing for a path that cannot be resolved: an ``OSError`` while
        resolving (a symlink loop, no permission) makes the path protected,
        with a reason that says so.  A path containing a NUL byte raises
        ``ValueError``, as the file system calls do.
    """
    raw = os.fspath(path)
    if "\0" in raw:
        raise ValueError("a path cannot contain a NUL byte")
    expanded = _expand_home(raw, home)
    written = os.path.normpath(os.path.join(os.fspath(cwd), expanded))
    if not os.path.isabs(written):
        written = os.path.abspath(written)
    try:
        real = os.path.realpath(written, strict=False)
    except OSError as exc:  # pragma: no cover - realpath(strict=False) rarely raises
        return f"the path cannot be resolved ({exc.strerror or exc}), so it is treated as protected"
    reason = protected_reason_resolved(written, real, environ=environ)
    if reason is None and hard_links and _has_other_links(real):
        return (
            "the file has other hard links (names this check cannot see), "
            "so it is treated as protected"
        )
    return reason


def protected_reason_resolved(
    written: str, real: str, *, environ: Mapping[str, str] | None = None
) -> str | None:
    """:func:`protected_path_reason` for a caller that already has both paths.

    Args:
        written: the target as written, absolute and normalised
            (``os.path.normpath``; ``~`` already expanded).
        real: ``os.path.realpath(written)``.
        environ: where ``XDG_CONFIG_HOME`` is read from (default ``os.environ``).

    Returns:
        The reason, or None.  Hard links are not looked at.
    """
    env = os.environ if environ is None else environ
    xdg = env.get("XDG_CONFIG_HOME")
    reason = _lexical_reason(written, xdg)
    if reason is not None:
        return reason
    if real != written:
        reason = _lexical_reason(real, xdg)
        if reason is not None:
            return f"{reason} (the path resolves to {real})"
    if os.path.islink(real) and _is_symlink_loop(real):  # realpath stopped at a loop
        return "the path is a symlink that cannot be resolved, so it is treated as protected"
    return None


def _expand_home(raw: str, home: str | os.PathLike[str] | None) -> str:
    if home is None or not raw.startswith("~"):
        return os.path.expanduser(raw)
    if raw == "~":
        return os.fspath(home)
    if raw.startswith("~/"):
        return os.path.join(os.fspath(home), raw[2:])
    return os.path.expanduser(raw)  # ~user/...


def _is_symlink_loop(path: str) -> bool:
    """Whether ``path`` is (or passes through) a symlink that never resolves."""
    try:
        os.stat(path)
    except OSError as exc:
        return exc.errno == errno.ELOOP
    return False


def _has_other_links(path: str) -> bool:
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISREG(info.st_mode) and info.st_nlink > 1
