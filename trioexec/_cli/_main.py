"""The ``trioexec`` command line."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from .._scenario._command import add_scenario_commands
from .._version import __version__
from ._agent import add_agent_command
from ._settings import add_settings_commands

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["main"]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser; subcommands register themselves here."""
    parser = argparse.ArgumentParser(
        prog="trioexec",
        description="A trio-native, structured-concurrency runtime for an LLM's tool calls.",
    )
    parser.add_argument("--version", action="version", version=f"trioexec {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    demo = subparsers.add_parser(
        "demo",
        help="run a recorded model response against the real tools (offline, a few seconds)",
        description=(
            "Stream a recorded assistant message through the streaming executor against "
            "the standard tools in a temporary workspace: parallel reads, a persisted large "
            "output, an edit, and a failing shell command that cancels its siblings."
        ),
    )
    demo.add_argument("--json", action="store_true", help="print results and events as JSON")
    demo.set_defaults(func=_demo, usage_parser=demo)
    add_scenario_commands(subparsers)
    add_agent_command(subparsers)
    add_settings_commands(subparsers)
    return parser


def _demo(args: argparse.Namespace) -> int:
    from ._demo import run_demo  # imports the standard tools only when needed

    return run_demo(as_json=bool(args.json))


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    parser = build_parser()
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        # parse_args() would blame the top-level parser and print its usage; the
        # subcommand's own usage (set as ``usage_parser``) is the helpful one.
        owner: argparse.ArgumentParser = getattr(args, "usage_parser", parser)
        owner.error(f"unrecognized arguments: {' '.join(unknown)}")
    if args.command is None:
        parser.print_help()
        return 0
    func = getattr(args, "func", None)
    if func is None:
        return 0
    try:
        return int(func(args))
    except BaseException as exc:
        if not _only_interrupts(exc):
            raise
        # Ctrl-C: the run has already cancelled and cleaned up (trio unwound every
        # task, each shell command's process group was killed); say so in one line.
        print(f"trioexec {args.command}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


EXIT_INTERRUPTED = 130
"""128 + SIGINT, what a shell reports for a command ended by Ctrl-C."""


def _only_interrupts(exc: BaseException) -> bool:
    """A KeyboardInterrupt, or a group holding nothing else (as a trio nursery raises it)."""
    if isinstance(exc, KeyboardInterrupt):
        return True
    if isinstance(exc, BaseExceptionGroup):
        return all(_only_interrupts(inner) for inner in exc.exceptions)
    return False


if __name__ == "__main__":
    sys.exit(main())
