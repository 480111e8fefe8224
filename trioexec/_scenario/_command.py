"""The ``trioexec scenario`` subcommands: ``run``, ``diff`` and ``validate``.

Every error of both commands is reported on stderr in one format, the one
argparse uses for its own errors, one problem per line::

    trioexec scenario run: error: FILE: calls[2] (id "toolu_3").at: must be a time >= 0, got -1

``FILE`` is the file at fault: the scenario file (a missing or unreadable
file, invalid JSON, a schema violation, a cross-field rule), the
``--session-dir`` folder, or the ``--trace-out`` file (``--policy`` for an
unknown preset).  The exit code is 2, and there is no traceback.  Every input
and output path is checked before the run starts, so a typo costs no run.

Without ``--session-dir`` the run persists large results in a fresh
temporary folder, removed when the command ends unless ``--keep-session-dir``
is given (then its path is said on stderr).

``--policy NAME`` runs the scenario under that preset instead of the file's
policy (the file's ``policy``, ``result_order`` and ``synthetic_texts`` are
then ignored).  ``scenario diff FILE --policy A --policy B [...]`` runs it
under each and prints the timelines and what differs per call; its exit code
is 0 when the runs agree, 1 when they differ (as diff(1)), 2 for bad input.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from .._core._policy import Policy
from .._errors import ConfigurationError
from ._diff import differing_calls, render_diff
from ._load import (
    ScenarioError,
    ScenarioIssue,
    check_document,
    load_scenario,
    read_document,
)
from ._runner import run_scenario_sync
from ._timeline import render_timeline
from ._trace import dumps_trace

if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence

    from ._model import Scenario

__all__ = ["add_scenario_commands", "scenario_diff", "scenario_run", "scenario_validate"]

EXIT_DIFFERENT = 1
EXIT_BAD_INPUT = 2
_PRESETS = ", ".join(Policy.preset_names())


def add_scenario_commands(subparsers: Any) -> None:  # noqa: ANN401 - argparse's private type
    """Register ``scenario run``, ``scenario diff`` and ``scenario validate``.

    Each sets ``func`` (what runs) and ``usage_parser`` (whose usage an
    unrecognized argument shows).
    """
    scenario = subparsers.add_parser(
        "scenario",
        help="run or check a scenario file (one scripted turn on virtual time)",
        description="Scenario files describe one turn of scripted tool calls (docs/scenarios.md).",
    )
    # Required: a bare ``trioexec scenario`` is a usage error (exit 2), not a help request.
    commands = scenario.add_subparsers(dest="scenario_command", metavar="SUBCOMMAND", required=True)
    scenario.set_defaults(usage_parser=scenario)

    run = commands.add_parser(
        "run",
        help="run a scenario on trio's MockClock and print the JSON result",
        description="Run a scenario on virtual time and print its results and events as JSON.",
    )
    run.add_argument("file", metavar="FILE", help="the scenario file (JSON)")
    run.add_argument(
        "--session-dir",
        metavar="DIR",
        help="where oversized results are persisted (default: a fresh temporary folder, "
        "removed afterwards)",
    )
    run.add_argument(
        "--keep-session-dir",
        action="store_true",
        help="keep the temporary session folder (its path is printed on stderr)",
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
    run.add_argument(
        "--policy",
        metavar="NAME",
        help=f"run under this preset instead of the file's policy ({_PRESETS})",
    )
    run.set_defaults(func=scenario_run, usage_parser=run)

    diff = commands.add_parser(
        "diff",
        help="run a scenario under several policies and show what differs per call",
        description="Run a scenario under each --policy, print each timeline, then per call "
        "what differs (result, error flag, start/finish/release times). Exit code: 0 when "
        "the runs agree, 1 when they differ, 2 for bad input.",
    )
    diff.add_argument("file", metavar="FILE", help="the scenario file (JSON)")
    diff.add_argument(
        "--policy",
        metavar="NAME",
        action="append",
        default=[],
        help=f"a preset to run under; give it at least twice ({_PRESETS})",
    )
    diff.add_argument(
        "--session-dir",
        metavar="DIR",
        help="where oversized results are persisted, shared by the runs "
        "(default: a fresh temporary folder, removed afterwards)",
    )
    diff.set_defaults(func=scenario_diff, usage_parser=diff)

    validate = commands.add_parser(
        "validate",
        help="check a scenario file against the scenario JSON Schema",
        description="Check a scenario file; every problem is printed on a line of its own.",
    )
    validate.add_argument("file", metavar="FILE", help="the scenario file (JSON)")
    validate.set_defaults(func=scenario_validate, usage_parser=validate)


def scenario_run(args: argparse.Namespace) -> int:
    """``trioexec scenario run FILE [--session-dir DIR] [--keep-session-dir] [--timeline]
    [--trace-out F] [--policy NAME]``."""
    command = "scenario run"
    try:
        scenario = load_scenario(args.file)
    except ScenarioError as exc:
        return _fail_issues(command, args.file, exc.issues)
    if args.policy is not None:
        try:
            scenario = attrs.evolve(scenario, policy=Policy.preset(args.policy))
        except ConfigurationError as exc:
            return _fail(command, f"--policy: {exc}")
    if args.trace_out:
        problem = _output_file_problem(Path(args.trace_out))
        if problem is not None:
            return _fail(command, f"{args.trace_out}: cannot write file: {problem}")
    temporary = args.session_dir is None
    if temporary:
        session_dir = tempfile.mkdtemp(prefix="trioexec-scenario-")
    else:
        session_dir = args.session_dir
        problem = _session_dir_problem(Path(session_dir))
        if problem is not None:
            return _fail(command, f"{session_dir}: {problem}")
    try:
        return _run_and_report(command, args, scenario, session_dir)
    finally:
        if temporary and not args.keep_session_dir:
            shutil.rmtree(session_dir, ignore_errors=True)
        elif temporary:
            print(f"trioexec {command}: session folder kept: {session_dir}", file=sys.stderr)


def _run_and_report(
    command: str, args: argparse.Namespace, scenario: Scenario, session_dir: str
) -> int:
    try:
        run = run_scenario_sync(scenario, session_dir=session_dir)
    except ConfigurationError as exc:
        return _fail(command, f"{args.file}: {exc}")
    if args.trace_out:
        try:
            Path(args.trace_out).write_text(dumps_trace(run), encoding="utf-8")
        except OSError as exc:
            return _fail(command, f"{args.trace_out}: cannot write file: {_reason(exc)}")
    _write(render_timeline(run) if args.timeline else run.dumps())
    return 0


def scenario_diff(args: argparse.Namespace) -> int:
    """``trioexec scenario diff FILE --policy A --policy B [...] [--session-dir DIR]``.

    Returns 0 when every run agrees on every call, 1 when they differ, 2 for bad input.
    """
    command = "scenario diff"
    names: list[str] = args.policy
    if len(names) < 2:
        return _fail(command, "--policy: give at least two presets to compare")
    try:
        scenario = load_scenario(args.file)
    except ScenarioError as exc:
        return _fail_issues(command, args.file, exc.issues)
    try:
        policies = [Policy.preset(name) for name in names]
    except ConfigurationError as exc:
        return _fail(command, f"--policy: {exc}")
    temporary = args.session_dir is None
    session_dir = tempfile.mkdtemp(prefix="trioexec-scenario-") if temporary else args.session_dir
    if not temporary:
        problem = _session_dir_problem(Path(session_dir))
        if problem is not None:
            return _fail(command, f"{session_dir}: {problem}")
    try:
        runs = [
            run_scenario_sync(attrs.evolve(scenario, policy=policy), session_dir=session_dir)
            for policy in policies
        ]
    except ConfigurationError as exc:
        return _fail(command, f"{args.file}: {exc}")
    finally:
        if temporary:
            shutil.rmtree(session_dir, ignore_errors=True)
    _write(render_diff(names, runs))
    orders = {tuple(result.tool_use_id for result in run.results) for run in runs}
    return EXIT_DIFFERENT if differing_calls(runs) or len(orders) > 1 else 0


def scenario_validate(args: argparse.Namespace) -> int:
    """``trioexec scenario validate FILE``: print ``FILE: ok``, or every issue on stderr."""
    try:
        issues: Sequence[ScenarioIssue] = check_document(read_document(args.file))
    except ScenarioError as exc:
        issues = exc.issues
    if issues:
        return _fail_issues("scenario validate", args.file, issues)
    _write(f"{args.file}: ok\n")
    return 0


def _session_dir_problem(folder: Path) -> str | None:
    """Why ``folder`` cannot hold persisted results; None once it is a writable folder.

    Checked (and the folder created) before the run, so that a bad
    ``--session-dir`` is one error line instead of a run whose large results
    all fail to persist.
    """
    if folder.exists() and not folder.is_dir():
        return "--session-dir exists and is not a directory"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return f"cannot create --session-dir: {_reason(exc)}"
    if not os.access(folder, os.W_OK | os.X_OK):
        return "--session-dir is not writable"
    return None


def _output_file_problem(path: Path) -> str | None:
    """Why ``path`` cannot be written once the run is over; None when it can.

    Nothing is created: a run that fails leaves no empty file behind.
    """
    if path.is_dir():
        return "Is a directory"
    parent = path.parent
    if not parent.exists():
        return "No such file or directory"
    if not parent.is_dir():
        return "Not a directory"
    if path.exists():
        return None if os.access(path, os.W_OK) else "Permission denied"
    return None if os.access(parent, os.W_OK | os.X_OK) else "Permission denied"


def _reason(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


def _fail_issues(command: str, source: str, issues: Sequence[ScenarioIssue]) -> int:
    for issue in issues:
        print(f"trioexec {command}: error: {source}: {issue}", file=sys.stderr)
    return EXIT_BAD_INPUT


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
