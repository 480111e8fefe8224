"""One call of a run: its record, its states, and the answers decided about it alone.

Owns :class:`Call` (what the core tracks for each ``tool_use``), the states it
moves through (``queued -> executing -> completed -> released``, SPEC §3),
:class:`CallOutcome` (an answer plus what travels with it), the tool_use id
rule, and the one answer that needs nothing but the call: the no-such-tool error
(one function for every call site), and :class:`Admission`, the verdict on a
call's input that travels with it from admission to its lifecycle.

What a call produced has one name at each step, and no other:

- ``ToolResult``: the tool_result block the model reads (id, content, is_error);
- ``CallOutcome``: a ``ToolResult`` plus what travels with it (attachments, a
  context modifier, a stop request, why it was cancelled);
- ``ResultUpdate``: what release hands out (the ``ToolResult`` and its
  attachments) on the updates channel and in ``RunOutcome.updates``;
- ``Answer`` = ``CallOutcome | ResultUpdate``: the answer as the run holds it
  (a plain one is already its ``ResultUpdate``);
- on the :class:`Call`: ``returned`` is the tool's real answer, kept the moment
  its tool returned (it survives a cancellation of the post steps), and
  ``outcome`` the answer the run settled on, the one released.

Pure: no trio at run time (it is named only in the call's annotations).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Literal, TypeAlias

import attrs

from .._contract._tool import ContextModifier, ContextState
from .._contract._validation import CompiledTool, InputError
from .._models import Attachment, ResultUpdate, ToolResult, ToolUse
from .._texts import duplicate_tool_use_id, invalid_tool_use_id, no_such_tool
from ._events import CancelReason

if TYPE_CHECKING:
    from collections.abc import Container

    # Only named in an annotation attrs never resolves: this module stays free of trio.
    import trio  # noqa: TC004

__all__ = [
    "NOT_ADMITTED",
    "Admission",
    "Answer",
    "Call",
    "CallOutcome",
    "CallState",
    "Expiry",
    "LimitKind",
    "error_outcome",
    "id_problem",
    "unknown_tool_outcome",
]

CallState: TypeAlias = Literal["queued", "executing", "completed", "released"]
"""``queued`` (admitted), ``executing`` (its task runs), ``completed`` (answered,
held by the ordered gate), ``released`` (its result has left the run)."""

_VALID_ID = re.compile(r"[A-Za-z0-9_-]+")

LimitKind: TypeAlias = Literal["timeout", "idle_timeout"]
"""Which of a tool's time limits ran out: the total one, or the one progress resets."""


@attrs.frozen
class Expiry:
    """Which limit stopped a call step, and after how long.

    Attributes:
        kind: ``"timeout"`` (the total limit) or ``"idle_timeout"``.
        limit: the limit's value, in seconds.
        elapsed: seconds from the start of the call step to the expiry.
    """

    kind: LimitKind
    limit: float
    elapsed: float


@attrs.define
class CallOutcome:
    """A call's answer plus what travels with it (treated as immutable: change it with
    ``attrs.evolve``; hot path, docs/performance.md#unfrozen-values).

    Attributes:
        result: the tool_result the model gets.
        attachments: records that go with it (hook context, stop requests...).
        context_modifier: the tool's change to the shared context, if any.
        stop_reason: a hook asked the agent loop to stop after this turn.
        cancel_detail: for a synthetic answer, what its reason alone does not
            say (the limit of a ``timeout``, trio's reason for ``cancelled``).
        cancel_reason: set when the answer is synthetic (the call was stopped
            rather than answered by its tool).
    """

    result: ToolResult
    attachments: tuple[Attachment, ...] = ()
    context_modifier: ContextModifier | None = None
    stop_reason: str | None = None
    cancel_reason: CancelReason | None = None
    cancel_detail: str | None = None


Answer: TypeAlias = "CallOutcome | ResultUpdate"
"""A call's answer as the run holds it: a plain one (the tool's result, with its
attachments, nothing else to carry) is the :class:`~trioexec.ResultUpdate` its
release hands out (docs/performance.md#plain-answer); any other is a :class:`CallOutcome`."""


@attrs.define
class DeniedOutcome(CallOutcome):
    """The answer of a call that was denied (a rule, a hook, the tool's own check, the
    application): it never ran.  A cascade it starts says so in its siblings' texts."""


def denied_outcome(
    tool_use_id: str,
    text: str,
    attachments: tuple[Attachment, ...] = (),
    stop_reason: str | None = None,
) -> DeniedOutcome:
    """The error answer of a denied call (``text``: the denial the model reads)."""
    return DeniedOutcome(ToolResult(tool_use_id, text, True), attachments, None, stop_reason)


def error_outcome(tool_use_id: str, text: str) -> CallOutcome:
    """An error answer produced by the runtime itself."""
    return CallOutcome(ToolResult(tool_use_id, text, True))  # hot path: performance.md#positional


def unknown_tool_outcome(tool_use: ToolUse) -> CallOutcome:
    """The answer to a call naming no known tool (SPEC §4 step 1), wherever it is decided."""
    return error_outcome(tool_use.id, no_such_tool(tool_use.name))


def id_problem(tool_use_id: str, seen: Container[str]) -> str | None:
    """Why ``tool_use_id`` cannot be used (the model-facing text), or None if it can.

    An id must be letters, digits, ``_`` and ``-`` only (ids end up in file
    names) and unique within its run (ids pair results with calls).
    """
    if not _VALID_ID.fullmatch(tool_use_id):
        return invalid_tool_use_id(tool_use_id)
    if tool_use_id in seen:
        return duplicate_tool_use_id(tool_use_id)
    return None


@attrs.define
class Admission:
    """What admission found about a call's input; the lifecycle uses it, never re-checks.

    Treated as immutable (not frozen, for speed).  A valid input's verdict is
    one of two shared objects (:data:`SAFE`, :data:`UNSAFE`): the input it
    parsed travels on the call itself (:attr:`Call.parsed`), so admitting a
    call builds no verdict of its own.

    Attributes:
        safe: the call may run beside other safe calls (proved: an unknown
            tool, an invalid input, or an ``is_concurrency_safe`` that raised
            all count as unsafe).
        issue: why the input did not validate (layer 1 or 2a); None when it did.
    """

    safe: bool
    issue: InputError | None = None


NOT_ADMITTED = Admission(safe=False)
"""The verdict of a call whose input was never looked at (unknown tool, refused id,
or admitted blind after a tool's code raised); such a call never runs a lifecycle
with it."""

SAFE = Admission(safe=True)
"""The verdict of a valid input that proved concurrency-safe."""

UNSAFE = Admission(safe=False)
"""The verdict of a valid input that is not concurrency-safe (or could not prove it)."""


PROGRESS_KEPT = 1_000
"""How many of a call's latest progress items are kept for its partial output."""

PROGRESS_KEPT_CHARS = 100_000
"""How much text (characters of ``str`` items and of items' ``text``) of a call's latest
progress is kept for its partial output: ten times what a stopped call's answer shows
(its first and last 5,000 characters).  With :data:`PROGRESS_KEPT`, what one call holds
stays bounded however much it prints: a 100 MB output flood keeps at most twice this
much text (the log is trimmed in bulk) plus the item that crossed the line."""


@attrs.define(eq=False)
class Call:
    """One tracked call of a run (identity-bearing: compared by ``is``).

    Attributes:
        index: its position in arrival (tool_use) order within the run.
        tool_use: the call as the model sent it.
        compiled: its tool, compiled; None for an unknown tool or a refused id.
        admission: the verdict on its input (safety, or the issue found).
        parsed: the input admission parsed (layers 1 and 2a: an
            ``input_type`` instance or a dict), until its lifecycle takes it;
            None when it did not validate or was never looked at.
        state: where it is in ``queued -> executing -> completed -> released``.
        started: it has started (moved to ``executing``); it stays True.
        scope: its own cancel scope, set when an interruptible (``"cancel"``)
            call starts (an interrupt cancels it); None for a ``"block"`` call.
        outcome: its answer, once it has one (first answer wins).
        returned: the tool's real answer, recorded the moment ``call`` returned,
            so a cancellation arriving in the post steps keeps it.
        cancel_reason: why it is being cancelled, once it is.
        cancel_requested_at: when cancellation was first requested (grace period).
        context_at_start: the shared context it started with.
        progress_log: the progress items it sent (the latest ones, at most
            :data:`PROGRESS_KEPT` of them and :data:`PROGRESS_KEPT_CHARS` of
            text, each limit doubled between trims), for the output a stopped
            call had produced; None until its first progress.
        progress_chars: the text the kept items hold (characters).
    """

    index: int
    tool_use: ToolUse
    compiled: CompiledTool | None
    admission: Admission = NOT_ADMITTED
    parsed: object = None
    state: CallState = "queued"
    started: bool = False
    scope: trio.CancelScope | None = None
    outcome: Answer | None = None
    returned: Answer | None = None
    cancel_reason: CancelReason | None = None
    cancel_requested_at: float | None = None
    context_at_start: ContextState | None = None
    progress_log: list[object] | None = None
    progress_chars: int = 0

    def log_progress(self, data: object) -> None:
        """Keep a progress item (bounded: the oldest are dropped past :data:`PROGRESS_KEPT`
        items or :data:`PROGRESS_KEPT_CHARS` characters of text, in bulk)."""
        size = _text_size(data)
        log = self.progress_log
        if log is None:
            self.progress_log = [data]
            self.progress_chars = size
            return
        log.append(data)
        self.progress_chars += size
        if len(log) > 2 * PROGRESS_KEPT or self.progress_chars > 2 * PROGRESS_KEPT_CHARS:
            self._trim_progress(log)

    def _trim_progress(self, log: list[object]) -> None:
        """Keep the latest items: at most PROGRESS_KEPT, and text up to PROGRESS_KEPT_CHARS
        (the item that reaches it included, so the kept text always covers the limit)."""
        kept, chars = _latest(log)
        del log[:-kept]
        self.progress_chars = chars

    def output_so_far(self) -> str:
        """What the call had produced when it was stopped, as its tool reads its progress."""
        if not self.progress_log or self.compiled is None:
            return ""
        log = self.progress_log
        items = log[-_latest(log)[0] :]  # (between trims the log holds up to twice that)
        try:
            return self.compiled.tool.partial_output(items)
        except Exception:  # a tool's bug must not cost the call its answer
            return ""

    @property
    def safe(self) -> bool:
        """Admission proved it concurrency-safe."""
        return self.admission.safe

    @property
    def interrupt_behavior(self) -> str:
        """``"cancel"`` or ``"block"`` (an unknown tool never runs: ``"block"``)."""
        return "block" if self.compiled is None else self.compiled.tool.interrupt_behavior

    @property
    def blocks(self) -> bool:
        """Whether an interrupt lets this call run on (its tool is not ``"cancel"``)."""
        return self.compiled is None or self.compiled.tool.interrupt_behavior != "cancel"


def _latest(log: list[object]) -> tuple[int, int]:
    """How many of the latest items to keep (at most PROGRESS_KEPT, text up to
    PROGRESS_KEPT_CHARS, the item reaching it included), and the text they hold."""
    kept = 0
    chars = 0
    for item in reversed(log):
        if kept == PROGRESS_KEPT or chars >= PROGRESS_KEPT_CHARS:
            break
        kept += 1
        chars += _text_size(item)
    return kept, chars


def _text_size(item: object) -> int:
    """The text a progress item holds: a ``str``, or an item's ``text`` (a Bash chunk)."""
    if type(item) is str:
        return len(item)
    text = getattr(item, "text", None)
    return len(text) if isinstance(text, str) else 0
