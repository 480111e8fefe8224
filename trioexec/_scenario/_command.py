"""The ``trioexec scenario`` subcommands: ``run`` and ``validate``.

Bad input (a missing or unreadable file, invalid JSON, a schema violation, a
cross-field rule) is reported on stderr as one line naming the file and the
field at fault, with exit code 2 and no traceback.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._errors import ConfigurationError
from ._load import ScenarioError, check_document, load_scenario, read_document
from ._runner import run_scenario_sync
from ._timeline import render_timeline
from ._trace import dumps_trace

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable

__all__ = ["add_scenario_commands", "scenario_run", "scenario_validate"]

EXIT_BAD_INPUT = 2


def add_scenario_commands(subparsers: Any) -> None:  # noqa: ANN401 - argparse's private type
    """Register ``scenario run`` and ``scenario validate``; each sets ``func``."""
    scenario = subparsers.add_parser(
        "scenario",
        help="run or check a scenario file (one scripted turn on virtual time)",
        description="Scenario files describe one turn of scripted tool calls (docs/scenarios.md).",
    )
    commands = scenario.add_subparsers(dest="scenario_command", metavar="SUBCOMMAND")
    scenario.set_defaults(func=_help(scenario))

    run = commands.add_parser(
        "run",
        help="run a scenario on trio's MockClock and print the JSON result",
        description="Run a scenario on virtual time and print its results and events as JSON.",
    )
    run.add_argument("file", metavar="FILE", help="the scenario file (JSON)")
    run.add_argument(
        "--session-dir",
        metavar="DIR",
        help="where oversized results are persisted (default: a fresh temporary folder)",
    )
    run.add_argument(
        "--timeline",
        action="store_true",
        help="print a text Gantt chart (one row per call) instead of the JSON",
    )
    run.add_argument(
        "--trace-out",
        metavar="TRACE.json",
        help="also write a Chrome Trace Event Format file (Perfetto, chrome://tracing)",
    )
    run.set_defaults(func=scenario_run)

    validate = commands.add_parser(
        "validate",
        help="check a scenario file against the scenario JSON Schema",
        description="Check a scenario file; every problem is printed on a line of its own.",
    )
    validate.add_argument("file", metavar="FILE", help="the scenario file (JSON)")
    validate.set_defaults(func=scenario_validate)


def _help(parser: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    def show(args: argparse.Namespace) -> int:
        parser.print_help()
        return 0

    return show


def scenario_run(args: argparse.Namespace) -> int:
    """``trioexec scenario run FILE [--session-dir DIR] [--timeline] [--trace-out F]``."""
    try:
        scenario = load_scenario(args.file)
        run = run_scenario_sync(scenario, session_dir=args.session_dir)
    except ConfigurationError as exc:
        return _fail("scenario run", _with_source(exc, args.file))
    if args.trace_out:
        try:
            Path(args.trace_out).write_text(dumps_trace(run), encoding="utf-8")
        except OSError as exc:
            reason = exc.strerror or type(exc).__name__
            return _fail("scenario run", f"cannot write {args.trace_out}: {reason}")
    _write(render_timeline(run) if args.timeline else run.dumps())
    return 0


def scenario_validate(args: argparse.Namespace) -> int:
    """``trioexec scenario validate FILE``: print ``FILE: ok`` or every issue."""
    try:
        document = read_document(args.file)
    except ScenarioError as exc:
        return _fail("scenario validate", str(exc))
    issues = check_document(document)
    if not issues:
        _write(f"{args.file}: ok\n")
        return 0
    for issue in issues:
        print(f"{args.file}: {issue}", file=sys.stderr)
    return EXIT_BAD_INPUT


def _with_source(exc: ConfigurationError, source: str) -> str:
    if isinstance(exc, ScenarioError) and exc.source:
        return str(exc)
    return f"{source}: {exc}"


def _fail(command: str, message: str) -> int:
    print(f"trioexec {command}: error: {message}", file=sys.stderr)
    return EXIT_BAD_INPUT


def _write(text: str) -> None:
    """Write UTF-8 whatever the locale, so output bytes match on every machine."""
    stream = sys.stdout
    buffer = getattr(stream, "buffer", None)
    if buffer is None:
        stream.write(text)
    else:
        stream.flush()
        buffer.write(text.encode("utf-8"))
        buffer.flush()
