"""The asyncio twin's ways for ``compare.py`` (``benchmarks/asyncio_twin/``).

The twin is optional at run time: when ``benchmarks.asyncio_twin`` cannot be
imported, every table here is empty and ``compare.py`` reports without its
columns.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

AVAILABLE = False
TOOL_PHASE: dict[str, Callable[[str], Awaitable[float]]] = {}
ADD_TO_START: dict[str, Callable[[int], Awaitable[list[float]]]] = {}
PROGRESS: dict[str, Callable[[int], Awaitable[list[float]]]] = {}
CASCADE: dict[str, Callable[[int], Awaitable[float]]] = {}
MEMORY: dict[str, Callable[[int], Awaitable[float]]] = {}
FILES: tuple[str, ...] = ()
"""The twin's orchestrator files, relative to the repository root."""


def versions() -> dict[str, Any]:
    """Nothing to report while the twin is absent."""
    return {}
