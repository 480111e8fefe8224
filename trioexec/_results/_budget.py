"""The per-message result budget and the state that keeps its decisions stable (SPEC §7).

The tool_results of one user message may total at most ``budget`` characters
(default 200,000).  Over that, the largest *fresh* results are persisted
first (ties: the earlier call first) until the total fits.  A
:class:`ContentReplacementState` remembers every decision, so the bytes of a
message never change once the model has seen them (prompt-cache stability):

* a result once replaced is always replaced by the identical string;
* a result once seen and kept inline is never replaced later (*frozen*), even
  if that leaves a message over budget.

The decision is the pure, synchronous :func:`choose_replacements`; only
:func:`apply_message_budget` writes files and updates the state.

**Total.**  The total is the size (:func:`~trioexec._results._persist.content_size`)
of every tool_result of the message, whatever its kind; results that may not
be replaced (errors, image results, wrappers, frozen results, results of tools
whose limit is ``math.inf``) count too.  **(trioexec)** Selection accounts
for the exact length of each replacement (Claude Code subtracts the whole
original size), and a candidate whose replacement would not be shorter is
skipped, so "fits" means the message as sent fits.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Collection, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import attrs
import cattrs
import trio

from .._errors import ConfigurationError
from ._persist import (
    PREVIEW_CHARS,
    PersistPlan,
    content_size,
    has_image,
    is_content_empty,
    is_persisted,
    plan_persistence,
    write_exclusive,
)

if TYPE_CHECKING:
    from pathlib import Path

    from .._models import ToolResult

__all__ = [
    "DEFAULT_MESSAGE_BUDGET",
    "BudgetPlan",
    "ContentReplacementState",
    "PlannedReplacement",
    "apply_message_budget",
    "choose_replacements",
]

logger = logging.getLogger("trioexec.results")

DEFAULT_MESSAGE_BUDGET = 200_000
"""Characters of tool_result content one user message may hold."""

_NO_LIMITS: Mapping[str, float] = MappingProxyType({})


@attrs.define(eq=False)
class ContentReplacementState:
    """Which results a session has seen, and the exact string each replaced one became.

    Mutable, identity-bearing state: keep one per conversation and pass it to
    every :func:`apply_message_budget` call, one message at a time.  Save it
    with :meth:`to_json` and rebuild it with :meth:`from_json` to resume a
    session with byte-identical messages.
    """

    seen_ids: set[str] = attrs.field(factory=set)
    replacements: dict[str, str] = attrs.field(factory=dict)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict; ids sorted so the same state always gives the same JSON."""
        data: dict[str, Any] = _converter.unstructure(self)
        return data

    @classmethod
    def from_json(cls, data: object) -> ContentReplacementState:
        """Rebuild a state saved by :meth:`to_json`.

        Raises:
            ConfigurationError: ``data`` is not a saved state (the message names
                the offending fields).
        """
        if not isinstance(data, dict):
            raise ConfigurationError(
                f"invalid ContentReplacementState: expected an object, got {type(data).__name__}"
            )
        try:
            return _converter.structure(data, cls)
        except (cattrs.BaseValidationError, TypeError, ValueError, AttributeError) as exc:
            if isinstance(exc, cattrs.BaseValidationError):
                detail = "; ".join(cattrs.transform_error(exc))
            else:
                detail = str(exc)
            raise ConfigurationError(f"invalid ContentReplacementState: {detail}") from exc


def _structure_str(value: object, _: object) -> str:
    if not isinstance(value, str):
        raise TypeError(f"expected a string, got {type(value).__name__}")
    return value


def _structure_str_set(value: object, _: object) -> set[str]:
    if not isinstance(value, list):
        raise TypeError(f"expected a list of strings, got {type(value).__name__}")
    return {_structure_str(item, str) for item in value}


def _structure_str_dict(value: object, _: object) -> dict[str, str]:
    if not isinstance(value, dict):
        raise TypeError(f"expected an object, got {type(value).__name__}")
    return {_structure_str(k, str): _structure_str(v, str) for k, v in value.items()}


_converter = cattrs.Converter(forbid_extra_keys=True)
_converter.register_unstructure_hook_func(lambda t: t == set[str], sorted)
_converter.register_unstructure_hook_func(
    lambda t: t == dict[str, str], lambda d: dict(sorted(d.items()))
)
_converter.register_structure_hook_func(lambda t: t == set[str], _structure_str_set)
_converter.register_structure_hook_func(lambda t: t == dict[str, str], _structure_str_dict)


@attrs.frozen
class PlannedReplacement:
    """A fresh result chosen for persistence: where it sits and how it is persisted."""

    index: int
    tool_use_id: str
    plan: PersistPlan


@attrs.frozen
class BudgetPlan:
    """The budget's decision for one message (see :func:`choose_replacements`).

    Attributes:
        reapplied: result index -> replacement remembered by the state.
        persist: fresh results to persist, largest first.
        kept: ids of fresh results kept inline; they become frozen.
        total_before: the message's size as given.
        total_after: the size once the decision is applied (every write succeeding).
    """

    reapplied: Mapping[int, str]
    persist: tuple[PlannedReplacement, ...]
    kept: frozenset[str]
    total_before: int
    total_after: int

    def commit(self, state: ContentReplacementState, written: Collection[int]) -> None:
        """Record the decision: kept ids frozen, written ones replaced for good.

        A planned result whose file could not be written (index not in
        ``written``) is left fresh, so a later message may try again.
        """
        state.seen_ids.update(self.kept)
        for item in self.persist:
            if item.index in written:
                state.seen_ids.add(item.tool_use_id)
                state.replacements[item.tool_use_id] = item.plan.replacement

    def apply(self, results: Sequence[ToolResult], written: Collection[int]) -> list[ToolResult]:
        """Return ``results`` with remembered and newly written replacements in place."""
        out = list(results)
        for index, replacement in self.reapplied.items():
            out[index] = attrs.evolve(out[index], content=replacement)
        for item in self.persist:
            if item.index in written:
                out[item.index] = attrs.evolve(out[item.index], content=item.plan.replacement)
        return out


def _is_candidate_kind(result: ToolResult) -> bool:
    content = result.content
    return not (
        result.is_error or has_image(content) or is_persisted(content) or is_content_empty(content)
    )


def choose_replacements(
    results: Sequence[ToolResult],
    *,
    state: ContentReplacementState,
    session_dir: Path | None,
    budget: int = DEFAULT_MESSAGE_BUDGET,
    limits: Mapping[str, float] = _NO_LIMITS,
) -> BudgetPlan:
    """Decide, without touching the disk or ``state``, what the budget does to one message.

    Each result that is not an error, not empty, has no image block and is
    not already a ``<persisted-output>`` wrapper is classified by ``state``:
    replaced before (its remembered string is reapplied), seen before
    (frozen: kept), or fresh.  A fresh result of a tool whose limit in
    ``limits`` is ``math.inf`` is kept.  A tool_use id that occurs more than
    once in the message is handled at its first occurrence only, the first
    time and every time the decision is reapplied; later occurrences stay as
    they are.  If the total is over ``budget``, fresh candidates are chosen
    largest first (ties: earlier first) until the total fits, skipping any
    whose replacement would not be shorter: persisted under ``session_dir``,
    or, when it is None, cut to the ``<truncated-output>`` wrapper (nothing
    written).  Every other fresh result is kept.
    """
    sizes = [content_size(r.content) for r in results]
    total_before = sum(sizes)
    total = total_before
    reapplied: dict[int, str] = {}
    kept: set[str] = set()
    fresh: list[int] = []
    claimed: set[str] = set()
    for index, result in enumerate(results):
        if not _is_candidate_kind(result):
            continue
        tool_use_id = result.tool_use_id
        if tool_use_id in claimed:
            continue  # a repeated id: only its first occurrence is ever replaced
        claimed.add(tool_use_id)
        remembered = state.replacements.get(tool_use_id)
        if remembered is not None:
            reapplied[index] = remembered
            total += len(remembered) - sizes[index]
        elif tool_use_id in state.seen_ids:
            continue
        else:
            limit = limits.get(tool_use_id, 0.0)
            if math.isinf(limit) and limit > 0:
                kept.add(tool_use_id)
            else:
                fresh.append(index)

    persist: list[PlannedReplacement] = []
    if total > budget:
        for index in sorted(fresh, key=lambda i: -sizes[i]):
            if total <= budget:
                break
            result = results[index]
            if isinstance(result.content, str) and sizes[index] <= PREVIEW_CHARS:
                continue  # the wrapper would hold the whole text and more: never shorter
            plan = plan_persistence(result.content, result.tool_use_id, session_dir)
            saving = sizes[index] - len(plan.replacement)
            if saving <= 0:
                continue
            persist.append(PlannedReplacement(index, result.tool_use_id, plan))
            total -= saving
    chosen = {item.index for item in persist}
    kept.update(results[i].tool_use_id for i in fresh if i not in chosen)
    return BudgetPlan(
        reapplied=MappingProxyType(reapplied),
        persist=tuple(persist),
        kept=frozenset(kept),
        total_before=total_before,
        total_after=total,
    )


async def _write_all(persist: Sequence[PlannedReplacement]) -> set[int]:
    written: set[int] = set()

    async def write_one(item: PlannedReplacement) -> None:
        if item.plan.path is None:  # a cut: nothing to write
            written.add(item.index)
            return
        try:
            await write_exclusive(item.plan.path, item.plan.data)
        except FileExistsError:
            logger.warning(
                "kept the result of %r inline: %s already holds other contents",
                item.tool_use_id,
                item.plan.path,
            )
        except Exception as exc:  # a full disk, no memory for the copy: kept inline
            logger.warning(
                "could not persist the result of %r to %s (%s); kept inline",
                item.tool_use_id,
                item.plan.path,
                type(exc).__name__,
            )
        else:
            written.add(item.index)

    if len(persist) == 1 or all(item.plan.path is None for item in persist):
        for item in persist:
            await write_one(item)
        await trio.lowlevel.checkpoint()
    else:
        async with trio.open_nursery() as nursery:
            for item in persist:
                nursery.start_soon(write_one, item)
    return written


async def apply_message_budget(
    results: Sequence[ToolResult],
    *,
    state: ContentReplacementState,
    session_dir: Path | None,
    budget: int = DEFAULT_MESSAGE_BUDGET,
    limits: Mapping[str, float] = _NO_LIMITS,
) -> list[ToolResult]:
    """Apply the per-message budget to the tool_results of one user message.

    Decides with :func:`choose_replacements`, writes the chosen results
    concurrently (an existing file holding the same text is reused), then records the decision in
    ``state`` and returns the results in their original order.  Reapplying a
    state to a message it has already decided touches no file.  A file that
    cannot be written leaves its result inline and fresh (logged).

    Args:
        results: the message's tool_results, in message order.
        state: the conversation's replacement state; updated in place.
        session_dir: where files go; None means a chosen result is cut to
            the ``<truncated-output>`` wrapper instead (nothing is written).
        budget: the most characters the message's tool_results may total.
        limits: tool_use_id -> the tool's ``max_result_size_chars``;
            ``math.inf`` means never a candidate, a missing id counts as finite.

    On cancellation ``state`` is left unchanged; files already written stay
    and are reused by the next attempt.
    """
    if not state.replacements and sum(content_size(r.content) for r in results) <= budget:
        # Nothing was ever replaced and nothing needs replacing now: the plan
        # would keep every candidate inline (the common message, decided
        # without building one).
        await trio.lowlevel.checkpoint()
        state.seen_ids.update(r.tool_use_id for r in results if _is_candidate_kind(r))
        return list(results)
    plan = choose_replacements(
        results, state=state, session_dir=session_dir, budget=budget, limits=limits
    )
    if plan.persist:
        written = await _write_all(plan.persist)
    else:
        await trio.lowlevel.checkpoint()
        written = set()
    plan.commit(state, written)
    return plan.apply(results, written)
