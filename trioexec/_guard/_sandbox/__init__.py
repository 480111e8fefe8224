"""Bash in an OS sandbox: Claude Code's ``sandbox`` settings, enforced with bubblewrap.

The parts, each usable on its own:

- :mod:`._settings`: the ``sandbox`` key of a settings file, read and merged (pure);
- :mod:`._rule_paths`: what ``Read(...)`` deny and ``Edit(...)`` allow rules add;
- :mod:`._mounts`: which paths one command may write, may not write, may not read;
- :mod:`._bwrap`: the bubblewrap command line for a mount plan (pure);
- :mod:`._sandbox`: the sandbox in force and what one command runs as;
- :mod:`._report`: what the model is told when the sandbox refused something.
"""

from ._bwrap import MountPlan, bwrap_argv
from ._mounts import Watch, plan_mounts
from ._sandbox import Confinement, Sandbox, probe_bwrap
from ._settings import SandboxPath, SandboxSettings, parse_sandbox

__all__ = [
    "Confinement",
    "MountPlan",
    "Sandbox",
    "SandboxPath",
    "SandboxSettings",
    "Watch",
    "bwrap_argv",
    "parse_sandbox",
    "plan_mounts",
    "probe_bwrap",
]
