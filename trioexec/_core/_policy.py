"""Run policies: where trioexec deliberately differs from Claude Code, as data.

SPEC marks each deliberate change to Claude Code with **(trioexec)**.  A
:class:`Policy` holds one knob per change (plus the words stopped calls are
answered with), so the original behaviour can run next to trioexec's::

    await trioexec.run_tools(uses, tools, policy=Policy.preset("claude-code-2.1.88"))
    attrs.evolve(Policy(), result_order="completion")   # vary one knob

Three presets are named (:data:`PRESETS`): ``"trioexec"`` (the default:
``Policy()``), ``"claude-code-2.1.88"`` (the seed documents' system: every
(trioexec) mark undone) and ``"claude-code-2.1.161"`` (as 2.1.88, but no error
cascades: that release stopped a failing Bash command from cancelling its
siblings; and no read-before-write check).  A policy is also written as JSON
(a scenario's ``"policy"`` field): a preset name, or ``{"preset": NAME,
KNOB: VALUE...}`` (:meth:`Policy.from_json`).

Pure: no trio.  The run core reads a policy once per run (:func:`cascade_rule`
and the fields themselves); nothing here runs per call.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, cast

import attrs

from .._errors import ConfigurationError
from .._texts import SyntheticTexts
from ._gate import ResultOrder

if TYPE_CHECKING:
    from ._call import Call

__all__ = [
    "DEFAULT_POLICY",
    "PRESETS",
    "CascadeOn",
    "InterruptQueued",
    "OnStreamFailure",
    "Policy",
    "PresetName",
    "cascade_rule",
    "resolve_policy",
]

InterruptQueued: TypeAlias = Literal["reject", "by-behavior"]
"""What an interrupt does to calls that have not started (streaming path):
``"reject"`` answers all of them with the rejection text; ``"by-behavior"``
(Claude Code) rejects those whose tool's ``interrupt_behavior`` is ``"cancel"``
and lets ``"block"`` ones start and run."""

CascadeOn: TypeAlias = "Literal['declared'] | frozenset[str]"
"""Which calls' errors cancel their siblings: ``"declared"`` (each tool's
``cancels_siblings_on_error``) or exactly the calls to these tool names (as the
model sent them; the empty set: no cascade at all)."""

OnStreamFailure: TypeAlias = Literal["continue", "retry"]
"""What a model turn does when the model's stream fails after tool calls were sealed
(``run_assistant_turn``): ``"continue"`` keeps them (each runs to its answer once, the
cut-off message and their results join the conversation, and the model continues
from there); ``"retry"`` (Claude Code) discards the attempt and sends the request again."""

PresetName: TypeAlias = Literal["trioexec", "claude-code-2.1.88", "claude-code-2.1.161"]

_RESULT_ORDERS = ("arrival", "completion")
_TEXTS = ("claude-code", "trioexec")
_INTERRUPT_QUEUED = ("reject", "by-behavior")
_STREAM_FAILURE = ("continue", "retry")


def _one_of(allowed: tuple[str, ...]) -> Callable[[object, attrs.Attribute[Any], object], None]:
    def check(_: object, attribute: attrs.Attribute[Any], value: object) -> None:
        if value not in allowed:
            shown = " or ".join(repr(item) for item in allowed)
            raise ConfigurationError(f"Policy.{attribute.name} must be {shown}, not {value!r}")

    return check


def _is_bool(_: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if not isinstance(value, bool):
        raise ConfigurationError(f"Policy.{attribute.name} must be True or False, not {value!r}")


def _cascade_on(value: object) -> object:
    """``"declared"`` as is; any collection of tool names as a frozenset."""
    if value == "declared" or isinstance(value, frozenset):
        return value
    if isinstance(value, (list, tuple, set)):
        return frozenset(value)
    return value  # refused by the validator, with the value in the message


def _check_cascade_on(_: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if value == "declared":
        return
    if isinstance(value, frozenset) and all(isinstance(name, str) and name for name in value):
        return
    raise ConfigurationError(
        f"Policy.cascade_on must be 'declared' or a set of tool names, not {value!r}"
    )


@attrs.frozen
class Policy:
    """Every knob where trioexec and Claude Code differ; ``Policy()`` is trioexec's.

    Vary one knob with ``attrs.evolve(policy, knob=value)``; name a preset with
    :meth:`preset`.  Each knob is read once per run.

    Attributes:
        result_order: ``"arrival"`` (the ordered gate: a result waits for every
            earlier call) or ``"completion"`` (Claude Code: safe calls' results
            leave as they complete; only an executing unsafe call holds back
            the results after it).  Both front ends.
        cap_streaming: whether ``max_concurrency`` limits the streaming path too
            (Claude Code caps only the batch path).
        batch_cascade: whether a cascading error cancels the other calls of
            its ``run_tools`` call, later batches included (Claude Code's batch
            path has no sibling cancellation).
        cascade_on: which calls' errors cascade: ``"declared"`` (each tool's
            ``cancels_siblings_on_error``) or a frozenset of tool names, matched
            against the name the model sent (Claude Code 2.1.88:
            ``{"Bash"}``; 2.1.161: none).  Lists and tuples are converted.
        interrupt_queued: what an interrupt does to calls not yet started on
            the streaming path: ``"reject"`` (none starts; each gets the
            rejection text) or ``"by-behavior"`` (Claude Code: a ``"cancel"``
            tool's call is rejected, a ``"block"`` tool's call still starts).
            The batch path answers a call reached after an interrupt with the
            "doesn't want to take this action" text under every policy.
        discard_cancels: whether :meth:`~trioexec.StreamingExecutor.discard`
            cancels executing calls (Claude Code only stops forwarding their
            output and lets them run to the end, unreleased).
        synthetic_texts: the words a stopped call is answered with:
            ``"claude-code"`` (Claude Code's bytes) or ``"trioexec"`` (whether
            the call had started, what stopped it).
        partial_output: whether an explained answer (``"trioexec"`` texts, or
            a timeout, which has no Claude Code text) carries the output the
            call produced before it was stopped.
        hooks_fail_closed: whether a PreToolUse command hook whose process
            cannot be started (EAGAIN, ENOMEM, a missing interpreter) denies
            the call (Claude Code: the hook gives no decision, so under
            process or memory exhaustion every policy hook is bypassed).
        stream_failure: what ``run_assistant_turn`` does when the model's
            stream fails after tool calls were sealed: ``"continue"`` (every
            sealed call runs once to its answer; the cut-off message, those
            answers and a note saying the stream failed go to the model, which
            continues from them: no side effect is repeated or hidden) or
            ``"retry"`` (Claude Code's streaming fallback: the attempt is
            discarded with :meth:`~trioexec.StreamingExecutor.discard` and the
            request sent again). A failure before any call was sealed is
            retried under both.
        read_before_write: whether Write and Edit refuse an existing file the
            model has not Read in the session, or that changed since it was
            read (Claude Code 2.1.88's second validation layer; later
            releases dropped it, and trioexec's default follows them).  The
            agent passes it to :func:`~trioexec.tools.default_tools`
            (``read_before_write=``) when it builds the tool set.

    Raises:
        ConfigurationError: a knob holds a value outside its choices.
    """

    result_order: ResultOrder = attrs.field(default="arrival", validator=_one_of(_RESULT_ORDERS))
    cap_streaming: bool = attrs.field(default=True, validator=_is_bool)
    batch_cascade: bool = attrs.field(default=True, validator=_is_bool)
    cascade_on: Literal["declared"] | frozenset[str] = attrs.field(
        default="declared", converter=_cascade_on, validator=_check_cascade_on
    )
    interrupt_queued: InterruptQueued = attrs.field(
        default="reject", validator=_one_of(_INTERRUPT_QUEUED)
    )
    discard_cancels: bool = attrs.field(default=True, validator=_is_bool)
    synthetic_texts: SyntheticTexts = attrs.field(default="trioexec", validator=_one_of(_TEXTS))
    partial_output: bool = attrs.field(default=True, validator=_is_bool)
    hooks_fail_closed: bool = attrs.field(default=True, validator=_is_bool)
    stream_failure: OnStreamFailure = attrs.field(
        default="continue", validator=_one_of(_STREAM_FAILURE)
    )
    read_before_write: bool = attrs.field(default=False, validator=_is_bool)

    @staticmethod
    def preset(name: str) -> Policy:
        """The preset called ``name`` (see :data:`PRESETS`).

        Raises:
            ConfigurationError: no preset has that name (the message lists them).
        """
        try:
            return PRESETS[name]
        except (KeyError, TypeError):
            known = ", ".join(repr(key) for key in PRESETS)
            raise ConfigurationError(f"unknown policy {name!r}: the presets are {known}") from None

    @staticmethod
    def preset_names() -> tuple[str, ...]:
        """The names :meth:`preset` knows: ``trioexec`` first, then Claude Code's releases."""
        return tuple(PRESETS)

    @staticmethod
    def knob_names() -> tuple[str, ...]:
        """The knobs, in declaration order (the keys a JSON override may give)."""
        return tuple(field.name for field in attrs.fields(Policy))

    @property
    def preset_name(self) -> str | None:
        """The name of the preset this policy equals, or None (a varied knob)."""
        for name, policy in PRESETS.items():
            if policy == self:
                return name
        return None

    def with_overrides(self, overrides: Mapping[str, object]) -> Policy:
        """This policy with some knobs replaced (names as in :meth:`knob_names`).

        Raises:
            ConfigurationError: an unknown knob name, or a value out of range.
        """
        known = self.knob_names()
        unknown = [key for key in overrides if key not in known]
        if unknown:
            raise ConfigurationError(
                f"unknown policy knob {unknown[0]!r}: the knobs are {', '.join(known)}"
            )
        try:
            return attrs.evolve(self, **cast("dict[str, Any]", dict(overrides)))
        except TypeError as exc:  # pragma: no cover - every knob has a validator
            raise ConfigurationError(str(exc)) from None

    @classmethod
    def from_json(cls, value: object) -> Policy:
        """A policy written as JSON: a preset name, or ``{"preset": NAME, KNOB: VALUE...}``.

        In the object form ``preset`` defaults to ``"trioexec"``; ``cascade_on``
        is ``"declared"`` or a list of tool names.

        Raises:
            ConfigurationError: an unknown preset or knob, or a bad value.
        """
        if isinstance(value, str):
            return cls.preset(value)
        if not isinstance(value, Mapping):
            raise ConfigurationError(
                f"a policy is a preset name or an object, not {type(value).__name__}"
            )
        spec = cast("Mapping[str, object]", value)
        base = spec.get("preset", "trioexec")
        if not isinstance(base, str):
            raise ConfigurationError(f"policy preset must be a string, not {base!r}")
        return cls.preset(base).with_overrides({k: v for k, v in spec.items() if k != "preset"})

    def to_json(self) -> str | dict[str, object]:
        """The JSON form :meth:`from_json` reads back: a preset name when it is one.

        Otherwise ``{"preset": "trioexec", ...}`` with every knob that differs
        from ``Policy()`` (``cascade_on`` as a sorted list).
        """
        name = self.preset_name
        if name is not None:
            return name
        out: dict[str, object] = {"preset": "trioexec"}
        default = Policy()
        for knob in self.knob_names():
            mine = getattr(self, knob)
            if mine != getattr(default, knob):
                out[knob] = sorted(mine) if isinstance(mine, frozenset) else mine
        return out


_CLAUDE_CODE_2_1_88 = Policy(
    result_order="completion",
    cap_streaming=False,
    batch_cascade=False,
    cascade_on=frozenset({"Bash"}),
    interrupt_queued="by-behavior",
    discard_cancels=False,
    synthetic_texts="claude-code",
    partial_output=False,
    hooks_fail_closed=False,
    stream_failure="retry",
    read_before_write=True,
)

PRESETS: Mapping[str, Policy] = MappingProxyType(
    {
        "trioexec": Policy(),
        "claude-code-2.1.88": _CLAUDE_CODE_2_1_88,
        "claude-code-2.1.161": attrs.evolve(
            _CLAUDE_CODE_2_1_88, cascade_on=frozenset(), read_before_write=False
        ),
    }
)
"""The named policies, by name (docs/policies.md has the table of their rules)."""

DEFAULT_POLICY = PRESETS["trioexec"]
"""What a run uses when it is given no policy: trioexec's own rules."""


def cascade_rule(policy: Policy, *, batch: bool) -> Callable[[Call], bool]:
    """Whether a call's own error cancels its siblings, decided once per run.

    Args:
        policy: the run's policy.
        batch: the run is a ``run_tools`` call (``batch_cascade`` applies).

    Returns:
        A function of the call (an unknown tool's call never cascades).
    """
    if batch and not policy.batch_cascade:
        return _never
    names = policy.cascade_on
    if names == "declared":
        return _declared
    if not names:
        return _never
    return lambda call: call.compiled is not None and call.tool_use.name in names


def _never(call: Call) -> bool:
    return False


def _declared(call: Call) -> bool:
    return call.compiled is not None and call.compiled.tool.cancels_siblings_on_error


def resolve_policy(policy: Policy | None, **shorthands: object) -> Policy:
    """The run's policy: ``policy`` (default ``Policy()``) with the front ends'
    shorthand options (``result_order=``, ``synthetic_texts=``) applied when given.

    Raises:
        ConfigurationError: ``policy`` is not a Policy, or a shorthand is invalid.
    """
    if policy is None:
        policy = DEFAULT_POLICY
    elif not isinstance(policy, Policy):
        raise ConfigurationError(
            f"policy must be a trioexec.Policy (Policy.preset(name) for a named one), "
            f"not {type(policy).__name__}"
        )
    given = {key: value for key, value in shorthands.items() if value is not None}
    return policy.with_overrides(given) if given else policy
