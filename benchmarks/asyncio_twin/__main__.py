"""``python -m benchmarks.asyncio_twin FILE [--session-dir DIR] [--policy NAME]``: the twin's run.

Prints the JSON ``trioexec scenario run FILE`` prints for the same options,
byte for byte; errors are reported as ``trioexec scenario run`` reports them
(one line each on stderr, exit code 2).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from trioexec._core._policy import Policy
from trioexec._errors import ConfigurationError
from trioexec._scenario._command import _fail, _fail_issues, _session_dir_problem, _write
from trioexec._scenario._load import ScenarioError, load_scenario

from ._scenario import run_scenario_sync

if TYPE_CHECKING:
    from collections.abc import Sequence

COMMAND = "asyncio-twin"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.asyncio_twin",
        description="Run a scenario file on the asyncio twin (virtual time) and print its JSON.",
    )
    parser.add_argument("file", metavar="FILE", help="the scenario file (JSON)")
    parser.add_argument(
        "--session-dir",
        metavar="DIR",
        help="where oversized results are persisted (default: a temporary folder, removed)",
    )
    parser.add_argument(
        "--policy",
        metavar="NAME",
        help="run under this preset instead of the file's policy "
        f"({', '.join(Policy.preset_names())})",
    )
    args = parser.parse_args(argv)
    try:
        scenario = load_scenario(args.file)
    except ScenarioError as exc:
        return _fail_issues(COMMAND, args.file, exc.issues)
    if args.policy is not None:
        try:
            scenario = attrs.evolve(scenario, policy=Policy.preset(args.policy))
        except ConfigurationError as exc:
            return _fail(COMMAND, f"--policy: {exc}")
    temporary = args.session_dir is None
    session_dir = tempfile.mkdtemp(prefix="trioexec-scenario-") if temporary else args.session_dir
    if not temporary:
        problem = _session_dir_problem(Path(session_dir))
        if problem is not None:
            return _fail(COMMAND, f"{session_dir}: {problem}")
    try:
        run = run_scenario_sync(scenario, session_dir=session_dir)
    except ConfigurationError as exc:
        return _fail(COMMAND, f"{args.file}: {exc}")
    finally:
        if temporary:
            shutil.rmtree(session_dir, ignore_errors=True)
    _write(run.dumps())
    return 0


if __name__ == "__main__":
    sys.exit(main())
