"""Hook configuration and running: which hooks match a call, and running them all at once.

A :class:`HookSet` holds :class:`HookEntry` values (event, matcher, hook,
timeout).  A hook is either a Python coroutine function (:data:`PythonHook`)
or a :class:`CommandHook`, a shell command in Claude Code's settings format::

    {"hooks": {"PreToolUse": [{"matcher": "Bash|Edit",
                               "hooks": [{"type": "command", "command": "...", "timeout": 30}]}]}}

Matchers: empty, ``*`` or missing match every tool; a matcher made only of
letters, digits, ``_``, ``-``, spaces, ``|`` and ``,`` lists exact tool
names (``Edit|Write``, ``Edit, Write``); anything else is an unanchored
regular expression, and one that does not compile matches nothing.  A
handler's ``if`` (a permission rule, ``Bash(git push:*)``) narrows it to the
calls that rule matches.  Hook types: ``command`` and ``http``
(:mod:`trioexec._hooks._http`); reading a settings file is
:mod:`trioexec._hooks._settings`.

:func:`run_hooks` runs the matching hooks of one event concurrently, each under
its own timeout (default 600 s); identical commands (and the same Python hook
registered twice) run once.  A hook that times out or fails gives no decision.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import re
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Literal, Protocol, TypeAlias

import attrs
import trio

from .._contract._format_error import exception_text
from .._errors import ConfigurationError
from .._groups import as_one_await
from .._models import JSONObject, JSONValue
from ._command import interpret_command_run, run_command
from ._http import HttpHook, post_hook
from ._output import HookBlockingError, HookOutput, HookResult, result_from_output
from ._settings import parse_hooks_section

if TYPE_CHECKING:
    from pathlib import Path

    from ._background import BackgroundHooks

__all__ = [
    "DEFAULT_HOOK_TIMEOUT",
    "HOOK_EVENTS",
    "CommandHook",
    "HookEntry",
    "HookEvent",
    "HookInput",
    "HookSet",
    "HttpHook",
    "PythonHook",
    "compile_matcher",
    "encode_hook_input",
    "run_hooks",
]

logger = logging.getLogger("trioexec.hooks")
settings_logger = logging.getLogger("trioexec.settings")

HookEvent: TypeAlias = Literal["PreToolUse", "PostToolUse", "PostToolUseFailure"]
HOOK_EVENTS: tuple[HookEvent, ...] = ("PreToolUse", "PostToolUse", "PostToolUseFailure")
DEFAULT_HOOK_TIMEOUT = 600.0


@attrs.frozen
class HookInput:
    """What a hook is told about the call; command hooks get it as JSON on stdin.

    ``tool_response`` is set for PostToolUse, ``error`` and ``is_interrupt`` for
    PostToolUseFailure.  ``permission_mode`` uses Claude Code's names
    (``"default"``, ``"bypassPermissions"``) so existing scripts keep working.
    """

    session_id: str
    transcript_path: str
    cwd: str
    permission_mode: str
    hook_event_name: HookEvent
    tool_name: str
    tool_input: Mapping[str, JSONValue]
    tool_use_id: str
    tool_response: JSONValue = None
    error: str | None = None
    is_interrupt: bool = False

    def to_json(self) -> JSONObject:
        """The stdin object of a command hook, with the fields of this event only."""
        data: JSONObject = {
            "session_id": self.session_id,
            "transcript_path": self.transcript_path,
            "cwd": self.cwd,
            "permission_mode": self.permission_mode,
            "hook_event_name": self.hook_event_name,
            "tool_name": self.tool_name,
            "tool_input": dict(self.tool_input),
        }
        # Claude Code's key order: tool_response comes before tool_use_id.
        if self.hook_event_name == "PostToolUse":
            data["tool_response"] = self.tool_response
        data["tool_use_id"] = self.tool_use_id
        if self.hook_event_name == "PostToolUseFailure":
            data["error"] = self.error
            data["is_interrupt"] = self.is_interrupt
        return data


def encode_hook_input(data: JSONValue) -> bytes:
    """The stdin bytes of a command hook: ``JSON.stringify(data) + "\\n"`` as UTF-8.

    Compact separators, non-ASCII characters as raw UTF-8 (never ``\\u00e9``),
    and a trailing newline, so ``grep -o '"command":"[^"]*"'`` and
    ``read -r line`` read it as they do in Claude Code.  A lone surrogate
    (which has no UTF-8 form) is written as its ``\\udXXX`` escape, as
    ``JSON.stringify`` does.
    """
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return text.encode("utf-8", "backslashreplace") + b"\n"


PythonHook: TypeAlias = Callable[[HookInput], Awaitable[HookOutput | None]]
"""An async hook: return a :class:`HookOutput` (or None: success, no opinion);
raise :class:`HookBlockingError` to block; any other exception is a
non-blocking failure."""


@attrs.frozen
class CommandHook:
    """A shell command run as a hook (``{"type": "command", "command": ...}``)."""

    command: str


def compile_matcher(matcher: str | None) -> Callable[[str], bool]:
    """A predicate on tool names for a hook matcher (see the module docstring)."""
    if not matcher or matcher == "*":
        return lambda _name: True
    if re.fullmatch(r"[A-Za-z0-9_|, -]+", matcher):
        names = frozenset(n.strip() for n in re.split(r"[|,]", matcher) if n.strip())
        return names.__contains__
    try:
        regex = re.compile(matcher)
    except re.error:
        logger.warning(
            "hook matcher %r is not a valid regular expression; it matches nothing", matcher
        )
        return lambda _name: False
    return lambda name: regex.search(name) is not None


@attrs.frozen
class HookEntry:
    """One configured hook: the event, the tool-name matcher, the hook, its timeout (s)."""

    event: HookEvent
    matcher: str | None
    hook: CommandHook | HttpHook | PythonHook
    timeout: float = DEFAULT_HOOK_TIMEOUT
    condition: str | None = None
    """The handler's ``if``: a permission rule (``Bash(git *)``) the call must match."""
    run_async: bool = False
    """``async: true``: runs in the background of the run (:mod:`trioexec._hooks._background`);
    the call does not wait for it and it cannot block, decide or rewrite the input."""
    rewake: bool = False
    """``asyncRewake: true`` (implies ``async``): its exit-2 stderr also reaches the model
    with a later call (Claude Code wakes the model with it)."""
    _matches: Callable[[str], bool] = attrs.field(init=False, repr=False, eq=False)

    @_matches.default
    def _compile(self) -> Callable[[str], bool]:
        return compile_matcher(self.matcher)

    def matches(self, tool_name: str) -> bool:
        """Whether this hook runs for ``tool_name``."""
        return self._matches(tool_name)

    @property
    def label(self) -> str:
        """The command, or the Python hook's qualified name."""
        if isinstance(self.hook, CommandHook):
            return self.hook.command
        if isinstance(self.hook, HttpHook):
            return self.hook.url
        return getattr(self.hook, "__qualname__", repr(self.hook))

    @property
    def _key(self) -> object:
        if isinstance(self.hook, CommandHook):
            return ("command", self.hook.command)
        if isinstance(self.hook, HttpHook):
            return ("http", self.hook.url)
        try:
            hash(self.hook)
        except TypeError:
            return ("python", id(self.hook))
        return ("python", self.hook)


def _check_event(event: str) -> HookEvent:
    for known in HOOK_EVENTS:
        if event == known:
            return known
    raise ValueError(f"unknown hook event {event!r}; expected one of {', '.join(HOOK_EVENTS)}")


def _check_timeout(timeout: float) -> float:
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
        raise ValueError(f"a hook timeout must be a positive number of seconds, not {timeout!r}")
    return float(timeout)


def _to_entries(entries: Iterable[HookEntry]) -> tuple[HookEntry, ...]:
    return tuple(entries)


class LoadedSettings(Protocol):
    """What :meth:`HookSet.from_settings` takes besides a dict: a loaded
    :class:`~trioexec.Settings` (anything with the ``hooks`` in force)."""

    @property
    def hooks(self) -> HookSet: ...


@attrs.frozen
class HookSet:
    """The hooks in force, in configuration order (the order that breaks ties)."""

    entries: tuple[HookEntry, ...] = attrs.field(default=(), converter=_to_entries)

    @classmethod
    def from_settings(
        cls,
        settings: Mapping[str, object] | LoadedSettings,
        *,
        source: str = "settings",
        problems: list[str] | None = None,
    ) -> HookSet:
        """Build from a settings object (or its ``hooks`` section alone), or a loaded
        :class:`~trioexec.Settings` (``load_settings(...)``: its hooks, as they are).

        Events trioexec does not run (``Stop``, ``UserPromptSubmit``, ...) are
        skipped; the three tool events are checked field by field.  Unknown
        events and keys, and handler types trioexec cannot run (``prompt``,
        ``agent``, ``mcp_tool``: that handler is skipped), are logged on
        ``trioexec.settings`` as ``{source}: {field}: {problem}`` and appended
        to ``problems`` when given; the rest of the section still loads.

        Raises:
            ConfigurationError: a field of the wrong type; the message names
                ``source`` and the field (``hooks.PreToolUse[0].hooks[1].command``).
        """
        if not isinstance(settings, Mapping):
            loaded = getattr(settings, "hooks", None)
            if isinstance(loaded, HookSet):  # a Settings: already parsed and merged
                return loaded
            raise ConfigurationError(
                f"{source}: expected a settings object (a dict) or a Settings, "
                f"got {type(settings).__name__}"
            )
        section = settings.get("hooks", settings)

        def report(field: str, problem: str) -> None:
            line = f"{source}: {field}: {problem}"
            settings_logger.warning("%s", line)
            if problems is not None:
                problems.append(line)

        specs = parse_hooks_section(
            section, source, report, events=HOOK_EVENTS, default_timeout=DEFAULT_HOOK_TIMEOUT
        )
        return cls(
            HookEntry(
                _check_event(spec.event),
                spec.matcher,
                CommandHook(spec.hook) if isinstance(spec.hook, str) else spec.hook,
                spec.timeout,
                spec.condition,
                spec.run_async,
                spec.rewake,
            )
            for spec in specs
        )

    def with_python_hook(
        self,
        event: HookEvent,
        matcher: str | None,
        hook: PythonHook,
        *,
        timeout: float = DEFAULT_HOOK_TIMEOUT,
    ) -> HookSet:
        """A copy with ``hook`` added after the existing entries."""
        entry = HookEntry(_check_event(event), matcher, hook, _check_timeout(timeout))
        return HookSet((*self.entries, entry))

    def with_command_hook(
        self,
        event: HookEvent,
        matcher: str | None,
        command: str,
        *,
        timeout: float = DEFAULT_HOOK_TIMEOUT,
    ) -> HookSet:
        """A copy with the shell ``command`` added after the existing entries."""
        entry = HookEntry(
            _check_event(event), matcher, CommandHook(command), _check_timeout(timeout)
        )
        return HookSet((*self.entries, entry))

    def __add__(self, other: HookSet) -> HookSet:
        return HookSet((*self.entries, *other.entries))

    def matching(
        self,
        event: HookEvent,
        tool_name: str,
        *,
        condition: Callable[[str], bool] | None = None,
    ) -> tuple[HookEntry, ...]:
        """The hooks to run for ``event`` on ``tool_name``, duplicates removed (first kept).

        ``condition`` decides a hook's ``if`` (permission-rule syntax, e.g.
        ``Bash(git push:*)``) for this call; without one, a hook with an
        ``if`` runs (it cannot be judged, so it fails safe).
        """
        found: dict[object, HookEntry] = {}
        for entry in self.entries:
            if entry.event != event or not entry.matches(tool_name):
                continue
            if (
                entry.condition is not None
                and condition is not None
                and not condition(entry.condition)
            ):
                continue
            found.setdefault(entry._key, entry)
        return tuple(found.values())


async def run_hooks(
    entries: Sequence[HookEntry],
    hook_input: HookInput,
    *,
    cwd: Path,
    background: BackgroundHooks | None = None,
) -> tuple[HookResult, ...]:
    """Run ``entries`` concurrently; their results in entry order.

    Command hooks run in ``cwd`` with ``CLAUDE_PROJECT_DIR`` set to it.  An
    ``async: true`` hook is started in ``background`` (the run's nursery) and
    not waited for: it has no result here.  Without a run to start it in, it
    runs with the others and only a failure of it is kept.  Never raises for
    a failing hook.  On cancellation every hook waited for is cancelled, each
    command hook's process group is killed, and Cancelled propagates.
    """
    if not entries:
        return ()
    payload = b""
    if any(isinstance(entry.hook, (CommandHook, HttpHook)) for entry in entries):
        payload = encode_hook_input(hook_input.to_json())
    if background is not None and any(entry.run_async for entry in entries):
        entries = _start_in_background(entries, hook_input, payload, cwd, background)
        if not entries:
            await trio.lowlevel.checkpoint()
            return ()
    if len(entries) == 1:
        results: list[HookResult | None] = [await _run_entry(entries[0], hook_input, payload, cwd)]
    else:
        results = [None] * len(entries)

        async def run_into(index: int) -> None:
            results[index] = await _run_entry(entries[index], hook_input, payload, cwd)

        with as_one_await():
            async with trio.open_nursery() as nursery:
                for index in range(len(entries)):
                    nursery.start_soon(run_into, index)
    done = tuple(
        _without_say(r) if entry.run_async else r
        for entry, r in zip(entries, results, strict=True)
        if r is not None
    )
    for result in done:
        if result.error is not None:
            logger.warning(
                "%s hook %r for %s failed: %s",
                hook_input.hook_event_name,
                result.label,
                hook_input.tool_name,
                result.error,
                exc_info=result.exception,
            )
    return done


def _start_in_background(
    entries: Sequence[HookEntry],
    hook_input: HookInput,
    payload: bytes,
    cwd: Path,
    background: BackgroundHooks,
) -> Sequence[HookEntry]:
    """Start the async entries in ``background``; the entries left to wait for."""
    hook_name = f"{hook_input.hook_event_name}:{hook_input.tool_name}"
    waited = []
    for entry in entries:
        if entry.run_async:
            run = functools.partial(_run_entry, entry, hook_input, payload, cwd)
            if background.start(hook_name, entry.label, run, rewake=entry.rewake):
                continue
        waited.append(entry)
    return waited


def _without_say(result: HookResult) -> HookResult:
    """An ``async: true`` hook's result: it cannot block or decide; only a failure is kept."""
    return HookResult(label=result.label, error=result.error)


async def _run_entry(
    entry: HookEntry, hook_input: HookInput, payload: bytes, cwd: Path
) -> HookResult:
    event = hook_input.hook_event_name
    label = entry.label
    with trio.move_on_after(entry.timeout):
        hook = entry.hook
        if isinstance(hook, CommandHook):
            env = {**os.environ, "CLAUDE_PROJECT_DIR": os.fspath(cwd)}
            try:
                run = await run_command(hook.command, payload, cwd=cwd, env=env)
            except OSError as exc:
                return HookResult(label=label, error=f"could not start: {exc}", start_failed=True)
            return interpret_command_run(run, hook.command, event)
        if isinstance(hook, HttpHook):
            return await post_hook(hook, payload.rstrip(b"\n"), event)
        try:
            output: object = await hook(hook_input)
        except HookBlockingError as exc:
            return HookResult(label=label, blocking_error=exc.message)
        except Exception as exc:
            return HookResult(
                label=label,
                error=f"raised {type(exc).__name__}: {exception_text(exc)}",
                exception=exc,
            )
        if output is None:
            return HookResult(label=label)
        if not isinstance(output, HookOutput):
            return HookResult(
                label=label, error=f"returned {type(output).__name__}, not HookOutput"
            )
        return result_from_output(output, event, label)
    return HookResult(label=label, error=f"timed out after {entry.timeout:g} s")
