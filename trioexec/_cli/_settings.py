"""``trioexec settings check [--tools MODULE:ATTR] [FILE...]``: every problem, then the result.

Without files it checks the standard ones (user, project, local, managed;
:func:`~trioexec._guard._settings.default_settings_paths`).  It prints one line per
problem (``{file}: {field}: {problem}``, the likely intended spelling named),
then the effective merged settings as JSON, and exits 1 when there is a
problem (a file that cannot be read or has a field of the wrong type counts),
0 for clean settings.  With ``--tools module:attr`` it also reports every rule
that names none of the application's tools (a typo such as ``deplyo`` for
``deploy`` would otherwise apply to nothing).
"""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._errors import ConfigurationError

if TYPE_CHECKING:
    import argparse

    from .._contract._tool import Tool
    from .._guard._settings import Settings

__all__ = ["add_settings_commands", "check_settings", "load_tools"]


def add_settings_commands(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``trioexec settings check``."""
    settings = subparsers.add_parser(
        "settings",
        help="check Claude Code settings files (typos, unsupported hooks) and show the result",
        description="Work with Claude Code settings files as trioexec reads them.",
    )
    commands = settings.add_subparsers(dest="settings_command", metavar="SUBCOMMAND")
    check = commands.add_parser(
        "check",
        help="print every problem, then the effective merged settings; exit 1 on a problem",
        description=(
            "Load the settings files (default: ~/.claude/settings.json, .claude/settings.json, "
            ".claude/settings.local.json and the managed settings) as trioexec does. Print one "
            "line per problem (unknown keys and events, near-miss spellings, hook types "
            "trioexec cannot run), then the effective merged settings as JSON. Exit status 1 "
            "when there is a problem, 0 when the settings are clean."
        ),
    )
    check.add_argument(
        "--tools",
        metavar="MODULE:ATTR",
        help=(
            "also check that every rule names one of the application's tools: ATTR of "
            "MODULE (imported from the current directory) is a tool, a list of tools or "
            "a ToolRegistry; a rule naming none of them (a typo) is a problem"
        ),
    )
    check.add_argument(
        "files",
        nargs="*",
        type=Path,
        metavar="FILE",
        help="settings files, lowest precedence first",
    )
    check.set_defaults(func=_check, usage_parser=check)
    settings.set_defaults(func=lambda _args: _usage(settings), usage_parser=settings)


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 2


def _check(args: argparse.Namespace) -> int:
    return check_settings(list(args.files), tools=args.tools)


def check_settings(files: list[Path], *, tools: str | None = None) -> int:
    """Check ``files`` (none: the standard ones); print problems and the merged settings.

    ``tools`` (``module:attr``) names the application's tools: a rule naming
    none of them is a problem too (:func:`~trioexec._guard._rule_names.unknown_rule_names`).

    Returns:
        1 when there is a problem (or ``tools`` cannot be loaded), else 0.
    """
    from .._guard._rule_names import tool_names, unknown_rule_names
    from .._guard._settings import SettingsSource, default_settings_paths, load_settings

    names: frozenset[str] | None = None
    if tools is not None:
        try:
            names = tool_names(load_tools(tools))
        except ConfigurationError as exc:
            print(exc)
            return 1

    sources: list[SettingsSource] = [*files] if files else [*default_settings_paths()]
    quiet = logging.getLogger("trioexec.settings")
    was_propagating, silence = quiet.propagate, logging.NullHandler()
    quiet.propagate = False  # the problems are printed once, below
    quiet.addHandler(silence)
    try:
        settings = load_settings(*sources)
    except ConfigurationError as exc:
        print(exc)
        return 1
    finally:
        quiet.removeHandler(silence)
        quiet.propagate = was_propagating
    problems = list(settings.problems)
    if names is not None:
        problems += [f"{tools}: {line}" for line in unknown_rule_names(settings.permissions, names)]
    shown = settings.to_json()
    if settings.sandbox.is_enabled:
        try:
            shown["sandbox"] = {
                **settings.sandbox.to_json(),
                "inForce": _sandbox_in_force(settings),
            }
        except ConfigurationError as exc:
            problems.append(str(exc))
    for problem in problems:
        print(problem)
    if not settings.sources:
        print("no settings files found", file=sys.stderr)
    print(json.dumps(shown, indent=2))
    return 1 if problems else 0


def load_tools(spec: str) -> list[Tool[Any]]:
    """The tools ``module:attr`` names: a tool, an iterable of tools, or a ToolRegistry.

    The current directory is importable, as for ``python -m``.

    Raises:
        ConfigurationError: ``spec`` is not ``module:attr``, the module cannot be
            imported, it has no such attribute, or the attribute holds no tools.
    """
    import importlib

    from .._contract._tool import Tool

    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise ConfigurationError(f"--tools {spec}: expected MODULE:ATTR (e.g. myapp.tools:TOOLS)")
    if "" not in sys.path and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        value: object = importlib.import_module(module_name)
    except Exception as exc:
        raise ConfigurationError(f"--tools {spec}: cannot import {module_name}: {exc}") from None
    for part in attr.split("."):
        try:
            value = getattr(value, part)
        except AttributeError:
            raise ConfigurationError(f"--tools {spec}: {module_name} has no {attr}") from None
    found = [value] if isinstance(value, Tool) else value
    if isinstance(found, Iterable) and not isinstance(found, (str, bytes, Mapping)):
        listed = list(found)
        if all(isinstance(tool, Tool) for tool in listed):
            return listed
    raise ConfigurationError(
        f"--tools {spec}: expected a tool, a list of tools or a ToolRegistry, "
        f"got {type(value).__name__}"
    )


def _sandbox_in_force(settings: Settings) -> dict[str, object]:
    """What a ``Bash`` command started in the working directory now would run under.

    Raises:
        ConfigurationError: ``failIfUnavailable`` and bubblewrap cannot run here.
    """
    from .._guard._sandbox import Sandbox

    sandbox = Sandbox.from_settings(settings.sandbox)
    if not sandbox.active:
        return {"bubblewrap": None, "unconfined": sandbox.unavailable}
    confined = sandbox.prepare(["true"], cwd=Path.cwd(), env=None, permissions=settings.permissions)
    plan = confined.plan
    return {
        "bubblewrap": sandbox.bwrap,
        "network": "none but the proxy to allowedDomains",
        "writable": list(plan.writable),
        "readOnly": list(plan.read_only),
        "unreadable": [*plan.empty_dirs, *plan.empty_files],
        "readableAgain": list(plan.readable),
    }
