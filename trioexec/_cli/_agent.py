"""``trioexec agent``: a small terminal coding agent on the Anthropic SDK and the standard tools.

::

    trioexec agent [--cwd DIR] [--settings FILE]... [--model M] [--max-turns N]
                   [--permission-mode MODE] [--policy PRESET] [--sandbox]
                   [--transcript FILE | --no-transcript] [--json] PROMPT

The SDK reads ``ANTHROPIC_API_KEY`` (or ``ANTHROPIC_AUTH_TOKEN``; with
neither the command stops with a usage error before any request) and
``ANTHROPIC_BASE_URL``; the model is
``--model``, else ``ANTHROPIC_MODEL``, else :data:`DEFAULT_MODEL`.  Settings
are discovered as Claude Code does (:func:`~trioexec.default_settings_paths`),
then each ``--settings`` file (highest precedence last).  An ``ask`` is put
to the user on a terminal and refused when stdin is not one (the model then
reads the ask's own reason, as in Claude Code's ``-p`` mode).  Ctrl-C at
such a question answers it no; otherwise the first Ctrl-C interrupts the
turn (naming what runs on), the second aborts it.

Exit status: 0 when the model ends its turn, 1 on an API error or when
``--max-turns`` is reached (one line on stderr), 2 on a usage error, 130
after Ctrl-C.

Each message is written to a transcript (``--transcript FILE``, by default
:func:`~trioexec._anthropic._transcript.default_transcript_path` under
``$XDG_STATE_HOME/trioexec/projects``) whose path hooks get as
``transcript_path``; ``--no-transcript`` writes none.

Extra tools come from *tool providers*: callables taking the
:class:`AgentSetup` and returning an async context manager that yields tools
(and closes whatever backs them, such as server processes, on exit).  The
command itself uses one: the approved MCP servers of the project's
``.mcp.json`` (``trioexec._cli._agent_mcp``; approval as in Claude Code).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import sys
import tempfile
from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, TypeAlias

import attrs
import trio

from .._anthropic._transcript import Transcript, default_transcript_path
from .._contract._permission_context import MODE_SPELLINGS
from .._contract._registry import ToolRegistry
from .._contract._tool import Tool
from .._core._policy import Policy
from .._errors import ConfigurationError, ToolDefinitionError
from .._guard._rails import GuardRails
from .._guard._settings import default_settings_paths
from ._agent_terminal import Display, Prompter, is_terminal

if TYPE_CHECKING:
    from collections.abc import Mapping

    from .._models import JSONValue

__all__ = [
    "DEFAULT_MAX_TURNS",
    "DEFAULT_MODEL",
    "AgentSetup",
    "ToolProvider",
    "add_agent_command",
    "run_agent",
]

DEFAULT_MODEL = "claude-sonnet-4-5"
"""The model when neither ``--model`` nor ``ANTHROPIC_MODEL`` names one."""

DEFAULT_MAX_TURNS = 50
"""Assistant turns at most unless ``--max-turns`` says otherwise."""

SYSTEM_PROMPT = (
    "You are a coding agent working in the directory {cwd}. Use the tools to read, "
    "search and edit files there and to run shell commands; calls you make in one "
    "message run concurrently where that is safe. Be brief."
)


@attrs.frozen
class AgentSetup:
    """What a tool provider is told about the run.

    Attributes:
        cwd: the working directory (absolute).
        guard: the guard rails in force.
        stderr: where to report problems (a provider never writes to stdout).
    """

    cwd: Path
    guard: GuardRails
    stderr: TextIO


ToolProvider: TypeAlias = Callable[[AgentSetup], AbstractAsyncContextManager[Sequence[Tool[Any]]]]
"""``provider(setup)`` -> an async context manager yielding extra tools for the agent."""


def add_agent_command(subparsers: Any) -> None:  # noqa: ANN401 - argparse's private type
    """Register ``trioexec agent`` on the command line's subparsers."""
    modes = ", ".join(dict.fromkeys(name for pair in MODE_SPELLINGS for name in pair))
    agent = subparsers.add_parser(
        "agent",
        help="a small terminal coding agent: the model streams, the standard tools run",
        description=(
            "Run an agent loop against the Anthropic Messages API with the standard tools "
            "(Read, Write, Edit, Glob, Grep, Bash) rooted at --cwd. Tool calls start while "
            "the model is still streaming. Reads ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL. "
            "Exit status: 0 when the model ends its turn, 1 on an API error or when "
            "--max-turns is reached, 2 on a usage error, 130 after Ctrl-C."
        ),
    )
    agent.add_argument("prompt", nargs="+", metavar="PROMPT", help="what to do")
    agent.add_argument("--cwd", default=".", metavar="DIR", help="the working directory")
    agent.add_argument(
        "--settings",
        action="append",
        default=[],
        metavar="FILE",
        help="a settings file on top of the discovered ones (repeatable, last wins)",
    )
    agent.add_argument(
        "--model",
        default=None,
        metavar="M",
        help=f"the model (default: $ANTHROPIC_MODEL, else {DEFAULT_MODEL})",
    )
    agent.add_argument(
        "--max-turns",
        type=_positive_int,
        default=DEFAULT_MAX_TURNS,
        metavar="N",
        help=f"assistant turns at most (default {DEFAULT_MAX_TURNS})",
    )
    agent.add_argument(
        "--permission-mode", default=None, metavar="MODE", help=f"the permission mode: {modes}"
    )
    agent.add_argument(
        "--approve-mcp",
        action="append",
        default=[],
        metavar="NAME",
        help="start the MCP server NAME of the project's .mcp.json without asking (repeatable)",
    )
    agent.add_argument(
        "--approve-all-mcp",
        action="store_true",
        help="start every MCP server of the project's .mcp.json without asking "
        "(except those disabledMcpjsonServers names)",
    )
    agent.add_argument(
        "--policy",
        default="trioexec",
        choices=Policy.preset_names(),
        metavar="PRESET",
        help=(
            "the run policy, where trioexec and Claude Code differ (docs/policies.md): "
            + ", ".join(Policy.preset_names())
            + " (default trioexec)"
        ),
    )
    where = agent.add_mutually_exclusive_group()
    where.add_argument(
        "--transcript",
        default=None,
        metavar="FILE",
        help=(
            "write each message to FILE as JSON lines, passed to hooks as transcript_path "
            "(default: $XDG_STATE_HOME/trioexec/projects/<cwd>/<session id>.jsonl)"
        ),
    )
    where.add_argument(
        "--no-transcript",
        action="store_true",
        help="write no transcript (hooks get an empty transcript_path)",
    )
    agent.add_argument(
        "--sandbox",
        action="store_true",
        help=(
            "run Bash commands in the OS sandbox (bubblewrap; docs/sandbox.md), as the "
            'settings\' "sandbox": {"enabled": true} does'
        ),
    )
    agent.add_argument(
        "--json",
        action="store_true",
        help='print one JSON object at the end: {"messages", "turns", "stop_reason"}',
    )
    agent.set_defaults(func=_command, usage_parser=agent)


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def _command(args: argparse.Namespace) -> int:
    from ._agent_mcp import mcp_json_provider

    cwd = Path(args.cwd).expanduser().absolute()
    found = (file.path for file in default_settings_paths(cwd))
    settings = [*found, *(Path(f) for f in args.settings)]
    provider = mcp_json_provider(
        settings,
        approve=getattr(args, "approve_mcp", None) or (),
        approve_all=bool(getattr(args, "approve_all_mcp", False)),
    )
    return run_agent(args, tool_providers=(provider,))


class _UsageError(Exception):
    """A problem with the command line or the environment: exit 2."""


def run_agent(
    args: argparse.Namespace,
    *,
    tool_providers: Sequence[ToolProvider] = (),
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
    stdin: TextIO | None = None,
) -> int:
    """Run ``trioexec agent`` with parsed arguments; returns the exit status.

    ``tool_providers`` add tools beside the standard ones (see the module docstring).
    """
    out = stdout or sys.stdout
    err = stderr or sys.stderr
    try:
        cwd = Path(args.cwd).expanduser().resolve()
        if not cwd.is_dir():
            raise _UsageError(f"--cwd {args.cwd}: not a directory")
        prompter = Prompter(stdin or sys.stdin, err)
        try:
            guard = GuardRails.from_settings(
                *default_settings_paths(cwd),
                *(Path(f) for f in args.settings),
                # Nobody to ask when stdin is not a terminal: an ask is refused with its
                # own reason, as Claude Code's -p mode does.
                can_use_tool=prompter.ask if is_terminal(stdin or sys.stdin) else None,
                mode=args.permission_mode,
                sandbox=True if getattr(args, "sandbox", False) else None,
            )
        except ConfigurationError as exc:
            raise _UsageError(str(exc)) from None
        if not (os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_AUTH_TOKEN")):
            raise _UsageError(
                "no API key: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN for a bearer token)"
            )
        return trio.run(
            _run,
            args,
            AgentSetup(cwd, guard, err),
            prompter,
            tool_providers,
            out,
        )
    except _UsageError as exc:
        print(f"trioexec agent: {exc}", file=err)
        return 2
    except BaseException as exc:
        if not _is_keyboard_interrupt(exc):
            raise
        print("trioexec agent: aborted", file=err)
        return 130


def _open_transcript(
    args: argparse.Namespace, cwd: Path, session_id: str
) -> contextlib.AbstractContextManager[Transcript | None]:
    """The run's transcript (None with ``--no-transcript``); a bad path is a usage error."""
    if getattr(args, "no_transcript", False):
        return contextlib.nullcontext()
    chosen = getattr(args, "transcript", None)
    path = Path(chosen) if chosen else default_transcript_path(cwd, session_id)
    try:
        return Transcript(path, session_id=session_id, cwd=cwd)
    except ConfigurationError as exc:
        raise _UsageError(f"--transcript: {exc}" if chosen else str(exc)) from None


def _is_keyboard_interrupt(exc: BaseException) -> bool:
    """A Ctrl-C, bare or as the only content of an exception group."""
    if isinstance(exc, BaseExceptionGroup):
        rest = exc.split(KeyboardInterrupt)[1]
        return rest is None
    return isinstance(exc, KeyboardInterrupt)


async def _run(
    args: argparse.Namespace,
    setup: AgentSetup,
    prompter: Prompter,
    providers: Sequence[ToolProvider],
    out: TextIO,
) -> int:
    try:
        import anthropic

        from .._anthropic._agent import Agent
        from .._anthropic._turn import ModelStreamError
        from ..tools import default_tools
    except ImportError as exc:  # the extra is not installed
        raise _UsageError(
            f"needs the anthropic SDK ({exc}); install it with: pip install 'trioexec[anthropic]'"
        ) from None
    cwd, guard, err = setup.cwd, setup.guard, setup.stderr
    try:
        client = anthropic.AsyncAnthropic()
    except anthropic.AnthropicError as exc:
        raise _UsageError(f"{exc} (set ANTHROPIC_API_KEY)") from None
    model = args.model or os.environ.get("ANTHROPIC_MODEL") or DEFAULT_MODEL
    display = Display(out, err, quiet=bool(args.json), hooks=guard.hooks)
    policy = Policy.preset(getattr(args, "policy", None) or "trioexec")
    session_dir = Path(tempfile.mkdtemp(prefix="trioexec-agent-"))
    async with contextlib.AsyncExitStack() as stack:
        # Removed on the way out unless a result was persisted there (the
        # transcript's tool_results point at those files).
        stack.callback(_remove_if_empty, session_dir)
        tools: list[Tool[Any]] = list(
            default_tools(cwd, read_before_write=policy.read_before_write)
        )
        for provider in providers:
            tools.extend(await stack.enter_async_context(provider(setup)))
        try:
            registry = ToolRegistry.coerce(tools)
        except ToolDefinitionError as exc:
            raise _UsageError(str(exc)) from None
        # Opened last, once no usage error can follow: a usage error writes nothing.
        transcript = stack.enter_context(_open_transcript(args, cwd, guard.session_id))
        try:
            agent = Agent(
                client,
                tools=registry,
                model=model,
                max_turns=args.max_turns,
                policy=policy,
                request={"system": SYSTEM_PROMPT.format(cwd=cwd)},
                guard=guard,
                cwd=cwd,
                session_dir=session_dir,
                observers=[display],
                on_text=display.text,
                on_tool_use=display.describe,
                on_update=display.update,
                on_retry=display.retry,
                on_stream_failure=display.stream_failed,
                transcript=transcript,
            )
        except (ToolDefinitionError, ConfigurationError) as exc:
            raise _UsageError(str(exc)) from None
        prompter.display = display
        async with trio.open_nursery() as nursery:
            stops = {tool.name: tool.interrupt_behavior == "cancel" for tool in registry}
            nursery.start_soon(_watch_ctrl_c, agent, err, prompter, display, stops)
            try:
                result = await agent.run(" ".join(args.prompt))
            except ModelStreamError as exc:
                display.end()
                if args.json:
                    _print_json(out, agent.messages, None, "api_error", str(exc))
                kind = "API error" if _is_api_error(exc) else "stream error"
                print(f"trioexec agent: {kind}: {_cause(exc)}", file=err)
                return 1
            finally:
                nursery.cancel_scope.cancel(reason="the agent finished")
    display.end()
    if args.json:
        _print_json(out, result.messages, result.turns, result.stop_reason, None)
    if result.stop_reason == "max_turns":
        print(
            f"trioexec agent: stopped after {result.turns} turns (--max-turns) while the "
            "model still called tools",
            file=err,
        )
        return 1
    if result.stop_reason in ("interrupted", "aborted"):
        print(f"trioexec agent: {result.stop_reason}", file=err)
        return 130
    return 0


def _is_api_error(exc: BaseException) -> bool:
    """The request was refused or failed in the API, not in the stream's transport or format."""
    import anthropic

    return isinstance(exc.__cause__, anthropic.APIStatusError)


def _remove_if_empty(folder: Path) -> None:
    """Remove ``folder`` (and its empty subfolders) unless it holds a file."""
    if any(path.is_file() or path.is_symlink() for path in folder.rglob("*")):
        return
    shutil.rmtree(folder, ignore_errors=True)


def _cause(exc: BaseException) -> str:
    cause = exc.__cause__
    text = f"{type(cause).__name__}: {cause}" if cause is not None else str(exc)
    return " ".join(text.split())


def _print_json(
    out: TextIO,
    messages: Sequence[Mapping[str, JSONValue]] | Sequence[dict[str, JSONValue]],
    turns: int | None,
    stop_reason: str,
    error: str | None,
) -> None:
    document: dict[str, object] = {
        "messages": list(messages),
        "turns": turns
        if turns is not None
        else sum(1 for m in messages if m.get("role") == "assistant"),
        "stop_reason": stop_reason,
    }
    if error is not None:
        document["error"] = error
    out.write(json.dumps(document, ensure_ascii=False) + "\n")
    out.flush()


async def _watch_ctrl_c(
    agent: Any,  # noqa: ANN401 - an Agent
    err: TextIO,
    prompter: Prompter,
    display: Display,
    stops: Mapping[str, bool],
) -> None:
    """Ctrl-C at a question answers no; otherwise the first interrupts, the second aborts.

    ``stops``: tool name -> whether an interrupt stops its running calls
    (``interrupt_behavior == "cancel"``); what would go on running is named.
    A third Ctrl-C stops at once.
    """
    with trio.open_signal_receiver(signal.SIGINT) as signals:
        count = 0
        async for _ in signals:
            if prompter.refuse():
                continue  # the question is answered no (and says so); nothing else stops
            count += 1
            if count == 1:
                going_on = display.running(stops)
                if going_on:
                    line = (
                        "\n[interrupting the turn: nothing new starts; still running: "
                        f"{', '.join(going_on)}. Ctrl-C again stops everything]"
                    )
                else:
                    line = "\n[interrupting the turn; Ctrl-C again stops everything]"
                print(line, file=err, flush=True)
                agent.interrupt()
            elif count == 2:
                print(
                    "\n[stopping everything: every running tool and hook is cancelled]",
                    file=err,
                    flush=True,
                )
                agent.abort()
            else:
                raise KeyboardInterrupt
