"""The ``Bash`` tool: run a shell command in its own process group.

Its cancellation story is the point of this module: the command runs in a
new process group, and whether it ends normally, times out or is cancelled
(a sibling error, an abort), the whole group is terminated (SIGTERM, a short
grace, SIGKILL) before the call returns or ``Cancelled`` propagates.  Output
is streamed as progress while the command runs.  With the OS sandbox in
force (``ctx.permissions.sandbox``), the same process group runs bubblewrap
around the shell (:func:`~trioexec._guard._sandbox._confined.run_confined`).
"""

from __future__ import annotations

import functools
import os
import re
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import attrs
import trio

from .._contract._tool import CallContext, InterruptBehavior, PermissionResult, ProgressSender, Tool
from .._guard._bash_rules import match_bash_rule, match_bash_rules
from .._guard._sandbox import Sandbox
from .._guard._sandbox._confined import run_confined
from .._process import DEFAULT_KILL_GRACE, Stream, run_process_group
from .._shell._read_only import is_read_only_command
from .._shell._views import too_complex
from .._texts import command_denied_message
from ._bash_paths import WalkTooLong, judge_paths, may_glob
from ._responses import Reported, reported_response

if TYPE_CHECKING:
    from collections.abc import Awaitable, Mapping, Sequence

    from .._contract._rules import RuleBehavior
    from .._models import JSONObject, JSONValue
    from .._process import ProcessResult

__all__ = [
    "BashInput",
    "BashProgress",
    "BashTool",
    "ShellError",
    "ShellSpawnError",
    "ShellTimeoutError",
]

DEFAULT_TIMEOUT_MS = 120_000
MAX_TIMEOUT_MS = 600_000
MAX_OUTPUT_BYTES = 1_048_576
_READ = ("Read",)
_IN_PLACE_PATHS = 64
"""How many paths the permission check may look at in the event loop thread (names,
and what a named directory holds) before it starts again in a worker thread."""


@attrs.frozen
class BashInput:
    """Input of ``Bash``."""

    command: str = attrs.field(metadata={"description": "The command to execute"})
    timeout: int | None = attrs.field(
        default=None,
        metadata={
            "description": f"Optional timeout in milliseconds (max {MAX_TIMEOUT_MS}, "
            f"default {DEFAULT_TIMEOUT_MS})"
        },
    )
    description: str | None = attrs.field(
        default=None,
        metadata={"description": "A short description of what the command does"},
    )
    dangerouslyDisableSandbox: bool | None = attrs.field(  # Claude Code's spelling
        default=None,
        metadata={
            "description": "Set this to true to run the command outside the sandbox "
            "(only after it failed because the sandbox refused something; it may need "
            "the user's approval)"
        },
    )


@attrs.frozen
class BashProgress:
    """Progress of a running ``Bash`` call.

    The first update has ``stream=None`` and announces the process (its pid is
    also its process-group id); each later one carries a chunk of output as it
    arrived.  ``total_bytes`` counts stdout and stderr bytes so far.
    """

    pid: int
    stream: Stream | None
    text: str
    total_bytes: int


class ShellError(Exception):
    """The command exited with a non-zero code.

    ``str()`` is the model-facing text: ``Exit code N``, then stderr, then
    stdout, each on its own lines, empty parts left out.  A ``note`` (the
    timeout message) opens stderr, so readers of the ``exit_code`` /
    ``stderr`` / ``stdout`` attributes build the same text.
    """

    def __init__(
        self, exit_code: int, stdout: str, stderr: str, *, note: str | None = None
    ) -> None:
        self.exit_code = exit_code
        self.stdout = stdout.rstrip()
        self.stderr = "\n".join(p for p in (note, stderr.rstrip()) if p)
        self.note = note
        parts = (f"Exit code {exit_code}", self.stderr, self.stdout)
        super().__init__("\n".join(p for p in parts if p))


class ShellTimeoutError(ShellError):
    """The command ran past its timeout; its process group was terminated."""


class ShellSpawnError(Exception):
    """The shell could not be started (a missing working directory, for example)."""


class BashTool(Tool[BashInput]):
    """Run a shell command.

    * Concurrency-safe only when :func:`is_read_only_command` says so.
    * ``interrupt_behavior = "block"``: a user interrupt lets it finish;
      only an abort or a sibling error cancels it.
    * ``cancels_siblings_on_error = True``: a failure (for example a non-zero
      exit) cancels the other calls of its run (shell commands often depend on
      each other).
    * A non-zero exit raises :class:`ShellError`, a timeout
      :class:`ShellTimeoutError`; both read ``Exit code N`` first.

    Args:
        shell: the shell to run commands with (default: ``bash``, else ``sh``).
        env: the environment of the commands (default: inherited).
        kill_grace: seconds between SIGTERM and SIGKILL when ending the group.
        max_output_bytes: per stream, output beyond this is cut in the middle.
    """

    name = "Bash"
    description = (
        "Executes a shell command in the working directory, with an optional timeout "
        f"(default {DEFAULT_TIMEOUT_MS // 1000} s, max {MAX_TIMEOUT_MS // 1000} s). "
        "Returns stdout and stderr; a non-zero exit code is an error. Background "
        "processes do not outlive the command."
    )
    input_type = BashInput
    interrupt_behavior: InterruptBehavior = "block"
    cancels_siblings_on_error = True
    max_result_size_chars = 30_000

    def __init__(
        self,
        *,
        shell: str | None = None,
        env: Mapping[str, str] | None = None,
        kill_grace: float = DEFAULT_KILL_GRACE,
        max_output_bytes: int = MAX_OUTPUT_BYTES,
    ) -> None:
        self.shell = shell or shutil.which("bash") or "/bin/sh"
        self.env = dict(env) if env is not None else None
        self.kill_grace = kill_grace
        self.max_output_bytes = max_output_bytes

    def is_concurrency_safe(self, input: BashInput) -> bool:  # noqa: A002
        return is_read_only_command(input.command)

    def is_read_only(self, input: BashInput) -> bool:  # noqa: A002
        """The read-only classifier's answer (what it cannot read with certainty is not)."""
        return is_read_only_command(input.command)

    async def validate_input(self, input: BashInput, ctx: CallContext) -> str | None:  # noqa: A002
        if not input.command.strip():
            return "command is empty"
        if input.timeout is not None and not 0 < input.timeout <= MAX_TIMEOUT_MS:
            return f"timeout must be between 1 and {MAX_TIMEOUT_MS} milliseconds"
        sandbox = _sandbox_of(ctx)
        if (
            input.dangerouslyDisableSandbox
            and sandbox is not None
            and sandbox.active
            and not sandbox.settings.allows_unsandboxed
        ):
            return UNSANDBOXED_REFUSED
        return None

    async def check_permissions(self, input: BashInput, ctx: CallContext) -> PermissionResult:  # noqa: A002
        """Deny reads of Read-denied paths; allow read-only commands that stay in the
        working directory; pass the rest.

        With ``Read`` deny rules in force, every path the command names (see
        :func:`~trioexec.tools._bash_paths.denied_read`) that one covers denies
        the call (``Permission to read {path} has been denied.``); a computed
        word (``cat $F``) that could name one asks.  A write to a protected path
        (``> .git/config``, ``tee ~/.bashrc``, ``sed -i`` on ``.claude/...``, in
        a ``-c`` script too) or to a target the shell computes asks as a safety
        check: neither bypass mode nor an allow rule nor a hook skips it, and so
        does a line too complex to check (too long, too deep, too many commands).
        A list or pipeline whose every part a ``Bash(...)`` allow rule covers or is
        read-only and stays inside is allowed (each part on its own).

        "Stay" is checked twice: lexically (no absolute path, no ``..``, no
        brace expansion), then on disk: every argument, option value, glob
        match and ``< file`` target, resolved with symlinks followed against
        the working directory (and every ``cd`` target), must lie inside it.
        "Pass" (passthrough) leaves the decision to the permission chain:
        rules, mode, then the application (ask).  A check that globs, or that
        would look at more than 64 paths (a large directory walked for the Read
        deny rules), runs in a worker thread (cancellation abandons it); the
        others are a few ``lstat`` and ``realpath`` calls, made in place.

        With the OS sandbox in force (``ctx.permissions.sandbox``) and
        ``autoAllowBashIfSandboxed`` (the default), a command that will run
        confined is allowed unless that reading denies it: the sandbox is the
        boundary, and the chain still applies deny and content ask rules.
        """
        judged = await self._judge(input, ctx)
        sandbox = _sandbox_of(ctx)
        if (
            sandbox is not None
            and judged.behavior != "deny"
            and sandbox.auto_allows(input.command, disable=bool(input.dangerouslyDisableSandbox))
        ):
            return PermissionResult.allow()
        return judged

    def sandbox_auto_allows(self, input: BashInput, sandbox: Sandbox) -> bool:  # noqa: A002
        """Whether the sandbox lets this call skip a whole-tool ``Bash`` ask rule.

        As Claude Code: with ``autoAllowBashIfSandboxed``, a command that runs
        confined does not ask because of a bare ``Bash`` ask rule; one that
        runs unconfined (excluded, or ``dangerouslyDisableSandbox``) still does.
        """
        return sandbox.auto_allows(input.command, disable=bool(input.dangerouslyDisableSandbox))

    async def _judge(self, input: BashInput, ctx: CallContext) -> PermissionResult:  # noqa: A002
        rules: tuple[str, ...] = ()
        allow: tuple[str, ...] = ()
        if ctx.permissions:
            read_rules = ctx.permissions.rules_for(_READ, "deny")
            rules = ("**",) if read_rules.whole else read_rules.contents
            allow = ctx.permissions.rules_for((self.name,), "allow").contents
        cwd = ctx.cwd if isinstance(ctx.cwd, Path) else Path(ctx.cwd)
        command = input.command
        judge = functools.partial(judge_paths, command, cwd, rules, allow_rules=allow)
        if not may_glob(command):
            try:  # a few stat and realpath calls: cheaper than a thread hop
                return judge(budget=_IN_PLACE_PATHS)
            except WalkTooLong:
                pass  # a larger directory: walked afresh in a worker thread
        return await trio.to_thread.run_sync(judge)

    async def speculative_permission_check(
        self,
        input: BashInput,  # noqa: A002
        ctx: CallContext,
    ) -> PermissionResult:
        """SPEC §4 step 5: the classifier's answer, worked out while the PreToolUse hooks run.

        The lifecycle starts this beside the hooks and uses its answer in place
        of :meth:`check_permissions` (the same answer: the read-only classifier,
        then the on-disk check).  A hook that denies, or replaces the input,
        cancels it; so does an abort of the turn.
        """
        return await self.check_permissions(input, ctx)

    def match_rule_content(
        self,
        content: str,
        input: BashInput,  # noqa: A002
        ctx: CallContext,
        *,
        behavior: RuleBehavior,
    ) -> bool:
        """Match a ``Bash(content)`` rule (prefix ``cmd:*``, wildcard or exact).

        A deny or ask rule catches the command when any part of it matches;
        an allow rule must cover every part (:func:`~trioexec.permissions.match_bash_rule`).
        A line too complex to check matches no deny or ask rule here: the tool's own
        check asks about it as a safety check, in every mode.
        """
        if behavior != "allow" and too_complex(input.command):
            return False
        return match_bash_rule(content, input.command, behavior=behavior)

    def match_rule_contents(
        self,
        contents: Sequence[str],
        input: BashInput,  # noqa: A002
        ctx: CallContext,
        *,
        behavior: RuleBehavior,
    ) -> bool | None:
        """Whether one of ``contents`` matches, the command read once for all of them.

        A subclass that matches rules its own way (overrides
        :meth:`match_rule_content`) is asked rule by rule instead.
        """
        if type(self).match_rule_content is not BashTool.match_rule_content:
            return super().match_rule_contents(contents, input, ctx, behavior=behavior)
        if behavior != "allow" and too_complex(input.command):
            return False  # asked about by the tool's own check (a safety check)
        return match_bash_rules(tuple(contents), input.command, behavior=behavior)

    def rule_denial_message(self, input: BashInput, ctx: CallContext) -> str:  # noqa: A002
        """``Permission to use Bash with command {command} has been denied.``"""
        return command_denied_message(self.name, input.command)

    async def call(self, input: BashInput, ctx: CallContext, progress: ProgressSender) -> str:  # noqa: A002
        """Run the command and return its output (stderr merged into stdout, in write order).

        Cancellation: the whole process group is terminated (shielded) before
        ``Cancelled`` propagates.

        Raises:
            ShellError: non-zero exit.
            ShellTimeoutError: the timeout passed.
            ShellSpawnError: the shell could not be started.
        """
        timeout_ms = input.timeout if input.timeout is not None else DEFAULT_TIMEOUT_MS
        pid = 0

        def started(process_id: int) -> None:
            nonlocal pid
            pid = process_id
            progress(BashProgress(pid, None, "", 0))

        def output(stream: Stream, text: str, total: int) -> None:
            progress(BashProgress(pid, stream, text, total))

        deadline = trio.current_time() + timeout_ms / 1000

        def run(argv: list[str], env: dict[str, str] | None) -> Awaitable[ProcessResult]:
            return run_process_group(
                argv,
                cwd=ctx.cwd,
                env=env,
                deadline=deadline,
                on_start=started,
                on_output=output,
                max_output_bytes=self.max_output_bytes,
                kill_grace=self.kill_grace,
                merge_stderr=True,
            )

        argv = [self.shell, "-c", input.command]
        sandbox = _sandbox_of(ctx)
        try:
            if sandbox is not None and sandbox.confines(
                input.command, disable=bool(input.dangerouslyDisableSandbox)
            ):  # in bubblewrap (docs/sandbox.md)
                result = await run_confined(
                    sandbox,
                    argv,
                    cwd=Path(ctx.cwd),
                    env=self.env,
                    permissions=ctx.permissions,
                    run=run,
                )
            else:
                result = await run(argv, self.env)
        except OSError as exc:
            raise ShellSpawnError(
                f"Cannot run the command in {os.fspath(ctx.cwd)}: {exc.strerror or exc}"
            ) from None
        if result.timed_out:
            raise ShellTimeoutError(
                result.exit_code,
                result.stdout,
                result.stderr,
                note=f"Command timed out after {_duration(timeout_ms)}",
            )
        if result.exit_code != 0:
            raise ShellError(result.exit_code, result.stdout, result.stderr)
        stdout, stderr = result.stdout.rstrip(), result.stderr.rstrip()
        text = "\n".join(p for p in (stdout, stderr) if p)
        response: JSONObject = {
            "stdout": stdout,
            "stderr": stderr,
            "interrupted": False,
            "isImage": False,
            "noOutputExpected": is_silent_command(input.command),
        }
        return Reported(text, response)

    def tool_response(self, input: BashInput, output: object) -> JSONValue:  # noqa: A002
        """``{stdout, stderr, interrupted, isImage, noOutputExpected}``, as Claude Code's Bash
        reports it (stderr is merged into stdout, so ``stderr`` is empty)."""
        return reported_response(output)


_SILENT_COMMANDS = frozenset(
    {"mv", "cp", "rm", "mkdir", "rmdir", "chmod", "chown", "chgrp", "touch", "ln", "cd",
     "export", "unset", "wait"}
)  # fmt: skip
_NEUTRAL_COMMANDS = frozenset({"echo", "printf", "true", "false", ":"})
_OPERATORS = re.compile(r"(\|\||&&|\||;|>>|>&|>)")


def is_silent_command(command: str) -> bool:
    """Whether every command of ``command`` usually prints nothing on success (``mv``,
    ``mkdir``, ...; an ``|| echo`` fallback aside): Claude Code's ``noOutputExpected``."""
    found = False
    operator = None
    skip_target = False
    for part in _OPERATORS.split(command):
        if skip_target and part.strip():
            skip_target = False
            continue
        if part in (">", ">>", ">&"):
            skip_target = True
            continue
        if part in ("||", "&&", "|", ";"):
            operator = part
            continue
        words = part.split()
        if not words:
            continue
        if operator == "||" and words[0] in _NEUTRAL_COMMANDS:
            continue
        found = True
        if words[0] not in _SILENT_COMMANDS:
            return False
    return found


UNSANDBOXED_REFUSED = (
    "dangerouslyDisableSandbox cannot be used: sandbox.allowUnsandboxedCommands is false, "
    "so every command runs in the sandbox. Run the command without it, or ask the user to "
    "allow what the sandbox refused in their sandbox settings."
)


def _sandbox_of(ctx: CallContext) -> Sandbox | None:
    """The sandbox in force for this call (None: none, or not enabled)."""
    permissions = ctx.permissions
    sandbox = permissions.sandbox if permissions is not None else None
    return sandbox if isinstance(sandbox, Sandbox) else None


def _duration(ms: int) -> str:
    if ms % 1000:
        return f"{ms} ms"
    seconds = ms // 1000
    return f"{seconds // 60}m {seconds % 60}s" if seconds >= 60 else f"{seconds}s"
