"""What known programs do with their words: the tables :mod:`._views` reads.

Which commands run another command after their own options (and how those
options are read), which are shells, which run code the line does not show,
which environment variables a program runs or lets change what runs, and
git's global options.  Data only.
"""

from __future__ import annotations

import attrs

__all__ = [
    "ALWAYS_UNSURE",
    "APPENDS_ARGUMENTS",
    "ARITHMETIC_COMMANDS",
    "CHANGES_WHAT_RUNS",
    "DECLARATIONS",
    "FIND_RUNS",
    "GIT_FLAGS",
    "GIT_SAFE_CONFIG",
    "GIT_VALUED",
    "OPAQUE_WRAPPERS",
    "PERMUTED",
    "RUNS_VALUE",
    "SCRIPT_FIRST_OPERAND",
    "SCRIPT_OPERANDS",
    "SHELLS",
    "SHELL_LONG_ARGS",
    "SHELL_LONG_FLAGS",
    "WRAPPERS",
    "Options",
    "opts",
]


@attrs.frozen
class Options:
    """How a wrapper reads its options before the command it runs."""

    short_flags: str = ""
    short_args: str = ""
    long_flags: frozenset[str] = frozenset()
    long_args: frozenset[str] = frozenset()
    operands: int = 0
    """Words after the options before the command (``timeout``'s duration)."""
    assignments: bool = False
    """``NAME=VALUE`` words may follow the options (``env``, ``sudo``)."""
    numeric: bool = False
    """``-N`` is an option (``nice -5``)."""
    scripts: str = ""
    """Short options whose value is a shell script (``flock -c``, ``script -c``)."""
    long_scripts: frozenset[str] = frozenset()


def opts(
    short_flags: str = "",
    short_args: str = "",
    long_flags: str = "",
    long_args: str = "",
    *,
    operands: int = 0,
    assignments: bool = False,
    numeric: bool = False,
    scripts: str = "",
    long_scripts: str = "",
) -> Options:
    return Options(
        short_flags,
        short_args + scripts,
        frozenset(long_flags.split()),
        frozenset((long_args + " " + long_scripts).split()),
        operands,
        assignments,
        numeric,
        scripts,
        frozenset(long_scripts.split()),
    )


WRAPPERS: dict[str, Options] = {
    "nice": opts("", "n", "", "adjustment", numeric=True),
    "env": opts(
        "iv0", "uCP", "ignore-environment null debug", "unset chdir", assignments=True,
        scripts="S", long_scripts="split-string",
    ),
    "timeout": opts("v", "sk", "preserve-status foreground verbose", "signal kill-after",
                     operands=1),
    "command": opts("p"),
    "builtin": opts(),
    "exec": opts("cl", "a"),
    "sudo": opts(
        "AbEHiKklnPSsVv", "ugCDhprtTUR",
        "askpass background preserve-env set-home login remove-timestamp reset-timestamp "
        "list non-interactive preserve-groups stdin shell validate",
        "user group close-from chdir host prompt role type command-timeout other-user chroot",
        assignments=True,
    ),
    "doas": opts("ns", "uC"),
    "stdbuf": opts("", "ioe", "", "input output error"),
    "nohup": opts(),
    "setsid": opts("cfw", "", "ctty fork wait"),
    "time": opts("pavq", "fo", "portability append verbose quiet", "format output"),
    "ionice": opts("tu", "cnp", "ignore", "class classdata pid"),
    "chrt": opts("abdefiormRv", "TPD", "all-tasks batch deadline fifo idle other rr "
                  "reset-on-fork verbose", "sched-runtime sched-period sched-deadline",
                  operands=1),
    "taskset": opts("ac", "", "all-tasks cpu-list", operands=1),
    "flock": opts("sxunoFe", "wEc", "shared exclusive unlock nonblock close no-fork verbose",
                   "timeout wait conflict-exit-code", operands=1, scripts="c",
                   long_scripts="command"),
    "caffeinate": opts("dimsu", "tw"),
    "unbuffer": opts("p"),
    "busybox": opts(),
    "chroot": opts("", "", "skip-chdir", "userspec groups", operands=1),
    "runuser": opts("lmpf", "ugGs", "login preserve-environment", "user group supp-group "
                     "shell", scripts="c", long_scripts="command session-command"),
    "su": opts("lmpf", "gGsw", "login preserve-environment", "group supp-group shell "
                "whitelist-environment", scripts="c", long_scripts="command session-command"),
    "xargs": opts(
        "0prtxeil", "adEILnPs",
        "null interactive no-run-if-empty verbose exit open-tty",
        "arg-file delimiter max-lines max-args max-procs max-chars replace eof process-slot-var",
    ),
    "watch": opts("bcdeghprtx", "nq", "beep color differences errexit chgexit exec no-title "
                   "precise no-linewrap", "interval equexit"),
    "script": opts("aefqkETBIOm", "tT", "append echo flush force quiet return",
                    "timing log-io log-in log-out log-timing logging-format output-limit",
                    scripts="c", long_scripts="command"),
    "parallel": opts("0qkv", "jSI", "null quote keep-order verbose", "jobs sshlogin"),
}  # fmt: skip
"""Commands that run the command named by their first operand (after options)."""

APPENDS_ARGUMENTS = frozenset(["xargs", "parallel"])
"""Wrappers that add words the analysis cannot see to the command they run."""
SCRIPT_OPERANDS = frozenset(["watch", "parallel", "su", "runuser"])
"""Wrappers that (also) hand their remaining words to a shell as one script."""
OPAQUE_WRAPPERS = frozenset(
    ["fakeroot", "pkexec", "systemd-run", "unshare", "nsenter", "setarch", "firejail", "proot",
     "xvfb-run", "dbus-run-session", "strace", "ltrace", "valgrind", "catchsegv", "sg",
     "torsocks", "proxychains", "proxychains4", "nix-shell", "direnv", "chronic", "ssh-agent",
     "systemd-inhibit", "numactl", "cgexec", "prlimit", "faketime", "rlwrap"]
)  # fmt: skip
"""Commands that run a command after options this module does not model: every later
word may start the command."""
SHELLS = frozenset(
    ["sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "rbash", "yash", "posh",
     "csh", "tcsh", "lksh", "oksh", "loksh", "pdksh", "elvish", "nu", "xonsh"]
)  # fmt: skip
SHELL_LONG_FLAGS = frozenset(
    ["norc", "noprofile", "login", "posix", "restricted", "verbose", "noediting", "debugger",
     "dump-strings", "dump-po-strings", "help", "version", "protected", "interactive",
     "no-config", "private", "no-execute", "print-rpath"]
)  # fmt: skip
SHELL_LONG_ARGS = frozenset(["rcfile", "init-file"])
ALWAYS_UNSURE = frozenset(["source", ".", "coproc", "exec-as", "enable"])
"""Commands that run code the command line does not show."""
SCRIPT_FIRST_OPERAND = frozenset(["eval", "trap", "alias"])


RUNS_VALUE = frozenset(
    ["GIT_SSH_COMMAND", "GIT_SSH", "GIT_PAGER", "PAGER", "MANPAGER", "EDITOR", "VISUAL",
     "GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "LESSOPEN", "LESSCLOSE", "GIT_EXTERNAL_DIFF",
     "GIT_ASKPASS", "SSH_ASKPASS", "SUDO_ASKPASS", "PROMPT_COMMAND", "BROWSER",
     "GIT_PROXY_COMMAND", "RSYNC_RSH", "CVS_RSH", "FCEDIT", "SYSTEMD_PAGER", "DIFFTOOL"]
)  # fmt: skip
"""Environment variables whose value a program runs as a command."""
CHANGES_WHAT_RUNS = frozenset(
    ["LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "DYLD_INSERT_LIBRARIES",
     "DYLD_LIBRARY_PATH", "BASH_ENV", "ENV", "IFS", "SHELLOPTS", "BASHOPTS", "PS4",
     "PERL5OPT", "PERL5LIB", "PYTHONSTARTUP", "PYTHONPATH", "PYTHONHOME", "NODE_OPTIONS",
     "RUBYOPT", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG", "GIT_CONFIG_GLOBAL",
     "GIT_CONFIG_SYSTEM", "GIT_CONFIG_COUNT", "GIT_EXEC_PATH", "GIT_DIR", "GIT_WORK_TREE",
     "GIT_TEMPLATE_DIR", "GIT_CEILING_DIRECTORIES", "ZDOTDIR", "HISTFILE", "INPUTRC",
     "RIPGREP_CONFIG_PATH", "NPM_CONFIG_SCRIPT_SHELL"]
)  # fmt: skip
"""Environment variables that make programs run code the line does not show."""


DECLARATIONS = frozenset(["export", "declare", "typeset", "local", "readonly", "env", "sudo"])


PERMUTED = frozenset(["su", "runuser", "flock", "script"])
"""Wrappers whose script option may follow their operands."""


FIND_RUNS = frozenset(["-exec", "-execdir", "-ok", "-okdir"])


GIT_VALUED = frozenset(
    ["-C", "-c", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--config-env",
     "--attr-source", "--list-cmds", "--exec-path"]
)  # fmt: skip
GIT_FLAGS = frozenset(
    ["--no-pager", "-P", "-p", "--paginate", "--bare", "--no-replace-objects",
     "--literal-pathspecs", "--glob-pathspecs", "--noglob-pathspecs", "--icase-pathspecs",
     "--no-optional-locks", "--no-lazy-fetch", "--no-advice", "--html-path", "--man-path",
     "--info-path", "--version", "--help", "--exec-path"]
)  # fmt: skip
GIT_SAFE_CONFIG = (
    "color.", "advice.", "user.", "i18n.", "column.", "status.", "init.defaultbranch",
    "core.quotepath", "core.autocrlf", "core.safecrlf", "core.longpaths", "core.ignorecase",
    "core.abbrev", "pull.rebase", "pull.ff", "push.default", "merge.conflictstyle",
    "rebase.autosquash", "protocol.version", "log.date", "log.decorate", "safe.directory",
)  # fmt: skip
"""``git -c`` keys that run no program; any other key may (``core.pager``,
``core.fsmonitor``, ``alias.x=!cmd``, ``diff.x.textconv``...)."""


ARITHMETIC_COMMANDS = frozenset(
    ["let", "declare", "typeset", "local", "readonly", "export", "printf", "read", "unset",
     "mapfile", "readarray", "test", "[", "[[", "printf"]
)  # fmt: skip
