"""How many calls may run at once (SPEC §2), and how many start in one go."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from .._errors import ConfigurationError

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["DEFAULT_MAX_CONCURRENCY", "START_WAVE", "resolve_max_concurrency"]

DEFAULT_MAX_CONCURRENCY = 10

START_WAVE = 128
"""How many call tasks a run starts before it lets the started ones take a step.

Wide turns start in waves: once ``START_WAVE`` call tasks are waiting for
their first step, the next ones wait for a schedule point (never a cancel
point) of the starting side: in ``run_tools`` the task starting the batch,
in the streaming executor a starter task of its own.  So the calls started
so far take their first steps, and the quick ones end, before more pile up.
Without it a 10,000-call turn holds 10,000 unstarted tasks at once (each a
task, its coroutine, its context), long enough for the cycle collector to
move them all to its oldest generation and then walk them in full
collections; with it such a turn costs about a fifth less, and the program's
other tasks run while it starts.  Starts keep tool_use order, and each call
is marked started (executing, in the in-progress ids) when it would be
without waves: only its task comes a wave later.  A turn of ``START_WAVE``
calls or fewer starts in one go.
"""
_ENV_VARS = ("TRIOEXEC_MAX_TOOL_USE_CONCURRENCY", "CLAUDE_CODE_MAX_TOOL_USE_CONCURRENCY")


def resolve_max_concurrency(
    explicit: int | None = None, environ: Mapping[str, str] | None = None
) -> int:
    """The concurrency limit: the argument, else the first environment variable set, else 10.

    ``TRIOEXEC_MAX_TOOL_USE_CONCURRENCY`` is read first, then
    ``CLAUDE_CODE_MAX_TOOL_USE_CONCURRENCY``; the first of them that is set
    decides, and a value that is not a positive integer means the default.

    Raises:
        ConfigurationError: ``explicit`` is given but is not a positive integer.
    """
    if explicit is not None:
        if isinstance(explicit, bool) or not isinstance(explicit, int) or explicit < 1:
            raise ConfigurationError(
                f"max_concurrency must be a positive integer, not {explicit!r}"
            )
        return explicit
    env = os.environ if environ is None else environ
    for name in _ENV_VARS:
        raw = env.get(name)
        if raw is None:
            continue
        text = raw.strip()
        if text.isascii() and text.isdigit() and int(text) > 0:
            return int(text)
        return DEFAULT_MAX_CONCURRENCY
    return DEFAULT_MAX_CONCURRENCY
