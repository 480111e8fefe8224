"""Pure partitioning of one turn's tool calls into batches (SPEC §2).

No trio here: the function is a plain left-to-right fold that keeps the
model's order.  Concurrency safety is something a call must *prove*: an
unknown tool, input that fails the schema, or an ``is_concurrency_safe`` that
raises all count as unsafe.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

from .._contract._registry import ToolRegistry
from .._contract._validation import validate
from .._models import Batch, ToolUse
from ._call import NOT_ADMITTED, SAFE, UNSAFE, Admission

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

    from .._contract._tool import Tool
    from .._contract._validation import CompiledTool

__all__ = ["admit", "group_safe_runs", "is_call_concurrency_safe", "partition_tool_calls"]

T = TypeVar("T")


def admit(tool_use: ToolUse, compiled: CompiledTool | None) -> tuple[Admission, object]:
    """The one safety decision, with the validated input it needed (fail-closed).

    Returns:
        The verdict, and the parsed input (None when it did not validate).

    Raises:
        BaseException: whatever the tool's ``is_concurrency_safe`` or its input
            type raises that is not an ``Exception`` (the caller answers the call).
    """
    if compiled is None:
        return NOT_ADMITTED, None
    parsed, issue = validate(compiled, tool_use.input)
    if issue is not None:
        return Admission(False, issue), None
    try:
        safe = bool(compiled.tool.is_concurrency_safe(parsed))
    except Exception:
        safe = False
    return (SAFE if safe else UNSAFE), parsed


def is_call_concurrency_safe(tool_use: ToolUse, registry: ToolRegistry) -> bool:
    """Whether ``tool_use`` may run beside other safe calls (fail-closed)."""
    return admit(tool_use, registry.lookup(tool_use.name))[0].safe


def partition_tool_calls(
    tool_uses: Sequence[ToolUse],
    tools: ToolRegistry | Iterable[Tool[Any]],
) -> list[Batch]:
    """Split calls into batches: one unsafe call, or a maximal run of safe calls.

    ``[Read A][Read B][Grep C][Bash D][Read E][Edit F]`` (D, F unsafe) gives
    ``{A,B,C} {D} {E} {F}``.
    """
    registry = ToolRegistry.coerce(tools)
    runs = group_safe_runs(tool_uses, lambda use: is_call_concurrency_safe(use, registry))
    return [Batch(is_concurrency_safe=safe, tool_uses=tuple(uses)) for safe, uses in runs]


def group_safe_runs(items: Iterable[T], is_safe: Callable[[T], bool]) -> list[tuple[bool, list[T]]]:
    """The fold behind partitioning: merge consecutive safe items, isolate unsafe ones.

    ``is_safe`` is asked once per item, in order.  (A predicate rather than
    ``(item, safe)`` pairs: a 10,000-call turn would otherwise build 10,000
    tuples that live through the fold, long enough for the cycle collector to
    move them to its oldest generation.)
    """
    runs: list[tuple[bool, list[T]]] = []
    for item in items:
        safe = is_safe(item)
        if safe and runs and runs[-1][0]:
            runs[-1][1].append(item)
        else:
            runs.append((safe, [item]))
    return runs
