"""Pure partitioning of one turn's tool calls into batches (SPEC §2).

No trio here: the function is a plain left-to-right fold that keeps the
model's order.  Concurrency safety is something a call must *prove*: an
unknown tool, input that fails the schema, or an ``is_concurrency_safe`` that
raises all count as unsafe.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._models import Batch, ToolUse
from ._registry import ToolRegistry

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from ._tool import Tool

__all__ = ["is_call_concurrency_safe", "partition_tool_calls"]


def is_call_concurrency_safe(tool_use: ToolUse, registry: ToolRegistry) -> bool:
    """Whether ``tool_use`` may run beside other safe calls (fail-closed)."""
    compiled = registry.lookup(tool_use.name)
    if compiled is None or compiled.check(tool_use.input) is not None:
        return False
    try:
        parsed = compiled.structure(tool_use.input)
        return bool(compiled.tool.is_concurrency_safe(parsed))
    except Exception:
        return False


def partition_tool_calls(
    tool_uses: Sequence[ToolUse],
    tools: ToolRegistry | Iterable[Tool[Any]],
) -> list[Batch]:
    """Split calls into batches: one unsafe call, or a maximal run of safe calls.

    ``[Read A][Read B][Grep C][Bash D][Read E][Edit F]`` (D, F unsafe) gives
    ``{A,B,C} {D} {E} {F}``.
    """
    registry = ToolRegistry.coerce(tools)
    return _partition([(use, is_call_concurrency_safe(use, registry)) for use in tool_uses])


def _partition(calls: Iterable[tuple[ToolUse, bool]]) -> list[Batch]:
    batches: list[tuple[bool, list[ToolUse]]] = []
    for use, safe in calls:
        if safe and batches and batches[-1][0]:
            batches[-1][1].append(use)
        else:
            batches.append((safe, [use]))
    return [Batch(is_concurrency_safe=safe, tool_uses=tuple(uses)) for safe, uses in batches]
