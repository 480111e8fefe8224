"""How many calls may run at once (SPEC §2)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ._errors import ConfigurationError

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["DEFAULT_MAX_CONCURRENCY", "resolve_max_concurrency"]

DEFAULT_MAX_CONCURRENCY = 10
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
