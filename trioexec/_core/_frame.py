"""One run's lifetime: its core built from a front end's options, its frame, what leaves it.

Both front ends (``run_tools`` and the streaming executor) do the same three
things around their own scheduling:

- :func:`new_run_core` turns the keyword options into a :class:`RunCore`
  (defaults resolved once, here);
- :func:`open_run` is the frame they run inside: the nursery outside the
  run's turn and sibling scopes (the grace watchdog and the time-limit watch
  run there when needed, and so do ``async: true`` hooks; the streaming
  executor hosts its calls' task there), the promise that every call is
  answered whatever ended the run, and the detach from the turn;
- :func:`what_propagates` is the one rule for what leaves a run at its end.
"""

from __future__ import annotations

import os
import pathlib
import sys
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, Literal, Required, TypedDict, Unpack

import trio
from trio.lowlevel import enable_ki_protection

from .._contract._registry import ToolRegistry
from .._groups import first_cancelled, is_cancellation, single_exception
from .._guard._rails import background_hooks
from .._guard._rule_names import warn_unknown_rules
from ._cancel import NEVER_STARTED_BATCH, NEVER_STARTED_STREAMING
from ._concurrency import resolve_max_concurrency
from ._events import ObserverSet
from ._lifecycle import CallEnv
from ._run import RunCore
from ._solo import SoloLock
from ._timeouts import TimeoutWatch
from ._turn import Turn

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
    from pathlib import Path

    from .._contract._tool import Tool
    from .._guard._rails import GuardRails
    from ._events import Observer
    from ._policy import Policy
    from ._timeouts import ToolTimeouts
    from ._update_channel import UpdateSink

__all__ = [
    "begin_run_in_nursery",
    "begin_run_without_nursery",
    "end_run",
    "new_run_core",
    "open_run",
    "stop_for_body_error",
    "what_propagates",
]


class RunCoreOptions(TypedDict, total=False):
    """A front end's keyword options, as :func:`new_run_core` takes them."""

    mode: Required[Literal["batch", "stream"]]
    policy: Required[Policy]
    send: Required[UpdateSink | None]
    turn: Required[Turn | None]
    context: Required[Mapping[str, object] | None]
    max_concurrency: Required[int | None]
    guard: Required[GuardRails | None]
    cwd: Required[Path | None]
    session_dir: Required[Path | None]
    observers: Required[Iterable[Observer]]
    grace_period: Required[float | None]
    tool_timeouts: Mapping[str, ToolTimeouts] | None


def new_run_core(
    tools: ToolRegistry | Iterable[Tool[Any]], **options: Unpack[RunCoreOptions]
) -> RunCore:
    """Turn a front end's keyword options into a RunCore (defaults resolved once, here).

    ``mode`` decides what differs between the paths: the batch path defers a
    safe batch's context modifiers to the end of the batch and answers calls
    that never start with the "doesn't want to take this action" text.  The
    streaming path ignores ``max_concurrency`` when the policy does not cap it.

    Raises:
        ConfigurationError: an invalid ``max_concurrency`` or ``grace_period``.
    """
    registry, arguments = run_core_arguments(tools, **options)
    return RunCore(registry, **arguments)


def run_core_arguments(
    tools: ToolRegistry | Iterable[Tool[Any]], **options: Unpack[RunCoreOptions]
) -> tuple[ToolRegistry, dict[str, Any]]:
    """What :func:`new_run_core` builds a RunCore from: its registry and keyword arguments.

    The seam for another runtime (the asyncio twin): it builds its own core
    from the same arguments, with a :class:`~trioexec._core._runtime.Runtime`
    of its own, so both follow one set of defaults.
    """
    guard = options["guard"]
    policy = options["policy"]
    tool_timeouts = options.get("tool_timeouts")
    context = options["context"]
    env = CallEnv(
        ObserverSet(options["observers"]),
        options["cwd"] or _current_directory(),
        options["session_dir"],
        guard,
        TimeoutWatch(),
        dict(tool_timeouts) if tool_timeouts else {},
        None if guard is None else background_hooks(guard),
        None if guard is None else SoloLock(),  # only guard rails replace inputs
        hooks_fail_closed=policy.hooks_fail_closed,
    )
    batch = options["mode"] == "batch"
    limit = resolve_max_concurrency(options["max_concurrency"])
    registry = ToolRegistry.coerce(tools)
    if guard is not None:
        warn_unknown_rules(guard.permissions, registry)  # a typo'd rule applies to nothing
    return registry, {
        "env": env,
        "turn": options["turn"] or Turn(),
        "context": dict(context or {}),
        "max_concurrency": limit if batch or policy.cap_streaming else sys.maxsize,
        "send": options["send"],
        "never_started_text": NEVER_STARTED_BATCH if batch else NEVER_STARTED_STREAMING,
        "defer_modifiers": batch,
        "grace_period": options["grace_period"],
        "policy": policy,
    }


_last_cwd: tuple[str, pathlib.Path] = ("", pathlib.Path())


def _current_directory() -> pathlib.Path:
    """``Path.cwd()``, the same Path object while the directory stays the same.

    Read at every run (the process may change directory between runs); only
    building the Path, which costs more than reading the directory, is saved.
    """
    global _last_cwd  # a one-entry cache (the directory is the process's, so is the cache)
    text, path = _last_cwd
    if text != os.getcwd():
        text = os.getcwd()
        path = pathlib.Path(text)
        _last_cwd = (text, path)
    return path


@asynccontextmanager
@enable_ki_protection
async def open_run(core: RunCore, *, hosted: bool = True) -> AsyncIterator[trio.Nursery | None]:
    """The frame of one run, for both front ends: what opens it, and what leaves it.

    With ``hosted`` (streaming; a batch run with async hooks), yields a
    nursery outside the run's turn and sibling scopes: the grace watchdog and
    the time-limit watch run there if a call ever has to be watched,
    ``async: true`` hooks run there (given ``GuardRails.async_hook_grace``
    once the body is done, then cancelled), and the streaming executor hosts
    its calls' task there.  The caller enters the turn scope itself (in the
    task that owns the calls' nursery).  Without it (``run_tools`` with no
    async hooks), yields None: the batches' own nurseries host the watches in
    turn, and stopping the run cancels its turn scope.

    On the way out, whatever ended the run, every call gets its answer
    (:func:`end_run`); then one rule decides what propagates
    (:func:`what_propagates`): the BaseExceptions user code raised (one
    unwrapped, several in a group), with the body's own exception, exactly
    as raised, if it raised one; else cancellation from an enclosing scope
    as one plain ``Cancelled``.

    On cancellation from outside, the calls are cancelled with the rest of
    the run, answered, and ``Cancelled`` propagates.
    """
    body_error: BaseException | None = None
    exit_error: BaseException | None = None
    try:
        if hosted:
            async with trio.open_nursery() as nursery:
                begin_run_in_nursery(core, nursery)
                try:
                    yield nursery
                    if core.env.background is not None:
                        core.env.background.wind_down()
                except BaseException as exc:
                    body_error = exc
                    if stop_for_body_error(core, exc):
                        raise
        else:
            begin_run_without_nursery(core)
            try:
                yield None
            except BaseException as exc:
                body_error = exc
                stop_for_body_error(core, exc)
                raise
    except BaseException as exc:  # decided below, once every call is answered
        exit_error = exc
    end_run(core, exit_error, body_error)
    # Cancelled from outside while no task looked (every call shielded or
    # done): the run still ends the way a cancelled trio call does.
    await trio.lowlevel.checkpoint_if_cancelled()


@enable_ki_protection
def begin_run_in_nursery(core: RunCore, nursery: trio.Nursery) -> None:
    """Open a run inside its own ``nursery`` (outside its turn scope): the nursery
    hosts the watches and the async hooks, and stopping the run cancels it."""
    core.run_scope = nursery.cancel_scope
    core.watchdog.open(nursery, core.answer_overdue)
    core.host_watches(nursery)
    if core.env.background is not None:
        core.env.background.nursery = nursery  # async hooks: bounded by the run


@enable_ki_protection
def begin_run_without_nursery(core: RunCore) -> None:
    """Open a run that has no nursery of its own (a ``run_tools`` call without async hooks).

    Its calls' nurseries (one per batch) host the watches in turn
    (:meth:`RunCore.host_watches`), and stopping the run cancels its turn
    scope.
    """
    core.has_run_nursery = False
    core.run_scope = core.turn_scope
    core.watchdog.open(None, core.answer_overdue)


@enable_ki_protection
def stop_for_body_error(core: RunCore, exc: BaseException) -> bool:
    """The body of a run raised ``exc``: True if it is a cancellation (it propagates).

    Else the body's own exception stops the run like any other stop, at the
    end of this instant; it propagates once every call is answered.
    """
    core.note_outer_cancellation(exc)
    if is_cancellation(exc):
        return True
    core.stop_run()
    return False


@enable_ki_protection
def end_run(
    core: RunCore, exit_error: BaseException | None, body_error: BaseException | None
) -> None:
    """Close a run: answer every call, apply deferred modifiers, detach from the turn.

    Then raise what propagates (:func:`what_propagates`), if anything does.
    Nothing here awaits.
    """
    core.watchdog.close()
    core.host_watches(None)
    if core.env.background is not None:
        core.env.background.nursery = None
    try:
        # A discarded attempt answers nothing for real; a run whose every
        # call was released has nothing left to answer.
        if not core.discarded and not core.all_released:
            core.answer_unstarted(core.blocked_reason() or "user_interrupted")
        core.apply_pending_modifiers()
    finally:
        core.turn._detach(core)  # the run/turn handshake
    propagate = what_propagates(core.faults, exit_error, body_error)
    if propagate is not None:
        raise propagate from None


def what_propagates(
    faults: Sequence[BaseException],
    exit_error: BaseException | None,
    body_error: BaseException | None,
) -> BaseException | None:
    """The one place that decides what leaves a run (docs/cancellation.md has the table).

    - the body's own exception (not a cancellation), exactly as raised;
    - every BaseException user code raised (``faults``, in order): a lone one
      unwrapped, several (or one beside the body's) in a ``BaseExceptionGroup``;
    - else an enclosing scope's cancellation as a plain ``Cancelled``;
    - else whatever else ended the run, a lone exception unwrapped.
    """
    if not faults and exit_error is None and body_error is None:
        return None  # the run ended normally
    raised = list(faults)
    if (
        body_error is not None
        and not is_cancellation(body_error)
        and not any(body_error is fault for fault in raised)
    ):
        if not raised:
            return body_error  # the body's own exception, exactly as raised
        raised.insert(0, body_error)
    if len(raised) == 1:
        return raised[0]
    if raised:
        return BaseExceptionGroup("several tool calls raised", raised)
    if exit_error is None:
        return None
    if is_cancellation(exit_error):
        return first_cancelled(exit_error)
    if isinstance(exit_error, BaseExceptionGroup):
        only = single_exception(exit_error)
        if only is not None and not isinstance(only, trio.Cancelled):
            return only
        rest = exit_error.split(trio.Cancelled)[1]
        if rest is not None:
            return single_exception(rest) or rest
    return exit_error
