"""The ``trioexec`` command line and its displays: demo, agent, settings check, scenarios."""

from ._main import main as main
