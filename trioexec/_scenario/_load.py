"""Reading and checking scenario files.

A file is checked in three passes, each naming the field at fault (and the
call id or tool name of the entry it belongs to):

1. it must be UTF-8 JSON whose numbers are all finite (Python's ``json``
   accepts ``NaN`` and ``Infinity``; a scenario must not);
2. it must conform to ``trioexec/_scenario/scenario_schema.json``, shipped in the package;
3. cross-field rules the schema cannot say: unique call ids, unique tool
   names, ``discard`` only in stream mode, stream-mode calls in time order.

Passes 2 and 3 both run on every document, so one check reports every
problem.  A cross-field rule only looks at the parts the schema did not
refuse the shape of (a ``calls`` that is not a list has no duplicate ids; a
call whose ``at`` is not a time is not placed in time order), and a field
that already has an issue gets no cross-field one on top of it.

A call naming no declared tool is allowed: that is the unknown-tool case.
Call inputs are not checked here; they are the scripted tool's input, and a
bad one becomes a layer-1 error result when the scenario runs.
"""

from __future__ import annotations

import functools
import json
import math
import re
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any, cast

import attrs
import jsonschema
import jsonschema.exceptions
import jsonschema.validators

from .._contract._validation import json_type_name
from .._core._policy import Policy
from .._errors import ConfigurationError
from ._model import (
    DEFAULT_MAX_CONCURRENCY,
    DEFAULT_MAX_RESULT_SIZE_CHARS,
    DEFAULT_MESSAGE_BUDGET,
    ActionSpec,
    CallSpec,
    HookSpec,
    Scenario,
    ToolSpec,
)

__all__ = [
    "ScenarioError",
    "ScenarioIssue",
    "check_document",
    "load_scenario",
    "parse_scenario",
    "read_document",
    "scenario_schema",
]

PathPart = str | int


@attrs.frozen
class ScenarioIssue:
    """One problem in a scenario file: where (a readable path) and what."""

    where: str
    message: str

    def __str__(self) -> str:
        return f"{self.where}: {self.message}" if self.where else self.message


class ScenarioError(ConfigurationError):
    """A scenario file cannot be read, or breaks the schema or a cross-field rule.

    ``str()`` is one line: the source and the first issue, plus how many more
    there are.  ``issues`` holds them all, in document order.
    """

    def __init__(self, source: str, issues: Sequence[ScenarioIssue]) -> None:
        self.source = source
        self.issues = tuple(issues)
        first = str(self.issues[0]) if self.issues else "invalid scenario"
        more = len(self.issues) - 1
        suffix = f" (and {more} more issue{'s' if more > 1 else ''})" if more > 0 else ""
        super().__init__(f"{source}: {first}{suffix}" if source else f"{first}{suffix}")


@functools.cache
def scenario_schema() -> dict[str, Any]:
    """The JSON Schema of scenario files (``trioexec/_scenario/scenario_schema.json``)."""
    text = resources.files("trioexec._scenario").joinpath("scenario_schema.json").read_text("utf-8")
    return cast("dict[str, Any]", json.loads(text))


@functools.cache
def _validator() -> Any:  # noqa: ANN401 - jsonschema validators are untyped
    schema = scenario_schema()
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    # Resolving "$ref" costs a registry lookup per use (per call entry); the
    # schema's references are local and acyclic, so inline them once.
    return cls(_inline_refs(schema, schema.get("$defs", {})))


@functools.cache
def _call_validator() -> Any:  # noqa: ANN401
    schema = scenario_schema()
    cls = jsonschema.validators.validator_for(schema)
    return cls(_inline_refs(schema["$defs"]["call"], schema["$defs"]))


_CALL_KEYS = frozenset({"id", "name", "at", "input"})


def _plainly_valid_call(entry: object) -> bool:
    """A fast check that implies the ``call`` schema holds (false means: ask jsonschema).

    jsonschema costs ~0.1 ms per entry; generated scenarios have 10,000 calls.
    """
    if type(entry) is not dict or not entry.keys() <= _CALL_KEYS:
        return False
    call_id, name = entry.get("id"), entry.get("name")
    if type(call_id) is not str or not call_id or type(name) is not str:
        return False
    at = entry.get("at", 0)
    if type(at) not in (int, float) or not at >= 0:
        return False
    return type(entry.get("input", {})) is dict


def _schema_errors(document: object) -> Iterator[jsonschema.exceptions.ValidationError]:
    """Schema errors of ``document``; call entries that plainly conform are not re-checked."""
    calls = document.get("calls") if isinstance(document, dict) else None
    if not isinstance(document, dict) or not isinstance(calls, list):
        yield from _validator().iter_errors(document)
        return
    yield from _validator().iter_errors({**document, "calls": []})
    validator = _call_validator()
    for index, entry in enumerate(calls):
        if not _plainly_valid_call(entry):
            for error in validator.iter_errors(entry):
                error.path.extendleft(reversed(["calls", index]))
                yield error


def _inline_refs(node: object, defs: Mapping[str, object]) -> Any:  # noqa: ANN401
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/") and len(node) == 1:
            return _inline_refs(defs[ref.removeprefix("#/$defs/")], defs)
        return {key: _inline_refs(value, defs) for key, value in node.items() if key != "$defs"}
    if isinstance(node, list):
        return [_inline_refs(item, defs) for item in node]
    return node


def read_document(path: Path | str) -> object:
    """Read a file as JSON.

    Raises:
        ScenarioError: the file cannot be read, is not UTF-8, or is not JSON.
    """
    source = str(path)
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise ScenarioError(source, [ScenarioIssue("", f"cannot read file: {reason}")]) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        issue = ScenarioIssue("", f"not UTF-8 text (byte {exc.start})")
        raise ScenarioError(source, [issue]) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno} column {exc.colno}"
        issue = ScenarioIssue("", f"invalid JSON at {where}: {exc.msg}")
        raise ScenarioError(source, [issue]) from None
    except ValueError:  # Python refuses integers of more than 4300 digits
        issue = ScenarioIssue("", "invalid JSON: an integer has too many digits")
        raise ScenarioError(source, [issue]) from None
    except RecursionError:
        issue = ScenarioIssue("", "invalid JSON: nested too deeply")
        raise ScenarioError(source, [issue]) from None


def check_document(document: object) -> list[ScenarioIssue]:
    """Every issue in a parsed JSON document, in document order; empty when valid."""
    found = list(_non_finite(document)) if _has_non_finite(document) else []
    non_finite = {tuple(path) for path, _ in found}
    for error in _schema_errors(document):
        found.extend(
            (path, message) for path, message in _describe(error) if tuple(path) not in non_finite
        )
    reported = {tuple(path) for path, _ in found}
    found.extend(item for item in _cross_field(document) if tuple(item[0]) not in reported)
    found.sort(key=lambda item: _position(item[0], document))
    issues = [ScenarioIssue(_where(path, document), message) for path, message in found]
    return list(dict.fromkeys(issues))


def parse_scenario(document: object, *, source: str = "<scenario>") -> Scenario:
    """Check a JSON document and build the :class:`Scenario`.

    Raises:
        ScenarioError: the document has at least one issue.
    """
    issues = check_document(document)
    if issues:
        raise ScenarioError(source, issues)
    doc = cast("Mapping[str, Any]", document)
    permissions = doc.get("permissions")
    return Scenario(
        name=doc.get("name", ""),
        description=doc.get("description", ""),
        mode=doc.get("mode", "stream"),
        max_concurrency=int(doc.get("max_concurrency", DEFAULT_MAX_CONCURRENCY)),
        policy=_policy(doc),
        tools=tuple(_tool(entry) for entry in doc["tools"]),
        calls=tuple(
            CallSpec(
                id=entry["id"],
                name=entry["name"],
                at=float(entry.get("at", 0.0)),
                input=entry.get("input", {}),
            )
            for entry in doc["calls"]
        ),
        actions=tuple(
            ActionSpec(at=float(entry["at"]), do=entry["do"], reason=entry.get("reason"))
            for entry in doc.get("actions", [])
        ),
        permissions=None
        if permissions is None
        else {key: tuple(permissions.get(key, ())) for key in ("allow", "ask", "deny")},
        permission_mode=doc.get("permission_mode", "default"),
        can_use_tool=doc.get("can_use_tool"),
        hooks=tuple(_hook(entry) for entry in doc.get("hooks", [])),
        message_budget=int(doc.get("message_budget", DEFAULT_MESSAGE_BUDGET)),
    )


def load_scenario(path: Path | str) -> Scenario:
    """Read, check and parse a scenario file.

    Raises:
        ScenarioError: see :func:`read_document` and :func:`parse_scenario`.
    """
    return parse_scenario(read_document(path), source=str(path))


def _policy(doc: Mapping[str, Any]) -> Policy:
    """The file's policy, then its shorthand fields on top (the schema checked every value)."""
    policy = Policy.from_json(doc.get("policy", "trioexec"))
    shorthands = {key: doc[key] for key in ("result_order", "synthetic_texts") if key in doc}
    return policy.with_overrides(shorthands) if shorthands else policy


def _tool(entry: Mapping[str, Any]) -> ToolSpec:
    size = entry.get("max_result_size_chars", DEFAULT_MAX_RESULT_SIZE_CHARS)
    return ToolSpec(
        name=entry["name"],
        description=entry.get("description", ""),
        concurrency_safe=entry.get("concurrency_safe", False),
        interrupt_behavior=entry.get("interrupt_behavior", "block"),
        cancels_siblings_on_error=entry.get("cancels_siblings_on_error", False),
        max_result_size_chars=math.inf if size is None else int(size),
        aliases=tuple(entry.get("aliases", ())),
        permission=entry.get("permission", "allow"),
        timeout=None if entry.get("timeout") is None else float(entry["timeout"]),
        idle_timeout=None if entry.get("idle_timeout") is None else float(entry["idle_timeout"]),
    )


def _hook(entry: Mapping[str, Any]) -> HookSpec:
    return HookSpec(
        event=entry["event"],
        matcher=entry.get("matcher"),
        sleep=float(entry.get("sleep", 0.0)),
        decision=entry.get("decision"),
        reason=entry.get("reason"),
        updated_input=entry.get("updated_input"),
        additional_context=entry.get("additional_context"),
        continue_=entry.get("continue", True),
        stop_reason=entry.get("stop_reason"),
        error=entry.get("error"),
        blocking=entry.get("blocking", False),
    )


# --- describing problems -------------------------------------------------------------------


_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
"""Keys shown as they are; any other key is shown as a JSON string (one line, visible spaces)."""


def _where(path: Iterable[PathPart], document: object) -> str:
    """``['calls', 2, 'at']`` -> ``calls[2] (id "toolu_3").at``."""
    out = ""
    node: object = document
    parent_key: PathPart | None = None
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
            node = node[part] if isinstance(node, list) and part < len(node) else None
            label = _entry_label(parent_key, node)
            if label:
                out += f" ({label})"
        else:
            key = part if _PLAIN_KEY.fullmatch(part) else json.dumps(part, ensure_ascii=False)
            out += f".{key}" if out else key
            node = node.get(part) if isinstance(node, Mapping) else None
        parent_key = part
    return out


def _entry_label(list_key: PathPart | None, entry: object) -> str:
    key = {"calls": "id", "tools": "name"}.get(str(list_key))
    if key is None or not isinstance(entry, Mapping):
        return ""
    value = entry.get(key)
    return f"{key} {json.dumps(value, ensure_ascii=False)}" if isinstance(value, str) else ""


def _position(path: Sequence[PathPart], document: object) -> tuple[int, ...]:
    """Where ``path`` sits in the file: keys keep the order they were written in."""
    out: list[int] = []
    node = document
    for part in path:
        if isinstance(node, Mapping):
            keys = list(node)
            out.append(keys.index(part) if part in keys else len(keys))
            node = node.get(part)
        elif isinstance(node, list) and isinstance(part, int):
            out.append(part)
            node = node[part] if part < len(node) else None
        else:
            out.append(0)
            node = None
    return tuple(out)


def _show(value: object) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value)) if abs(value) < 1e15 else repr(value)
    return json.dumps(value, ensure_ascii=False)


def _one_of(values: Sequence[object]) -> str:
    shown = [_show(v) for v in values]
    if len(shown) == 1:
        return shown[0]
    return ", ".join(shown[:-1]) + " or " + shown[-1]


Found = tuple[list[PathPart], str]


def _describe(error: jsonschema.exceptions.ValidationError) -> Iterator[Found]:
    path: list[PathPart] = list(error.path)
    kind = error.validator
    value = error.validator_value
    instance = error.instance
    if kind == "required" and isinstance(instance, Mapping):
        for prop in value:
            if prop not in instance:
                yield [*path, prop], "required field is missing"
    elif kind == "additionalProperties" and isinstance(instance, Mapping):
        known = error.schema.get("properties", {})
        for prop in instance:
            if prop not in known:
                yield [*path, prop], _unknown_field(path)
    elif kind == "type":
        expected = value if isinstance(value, list) else [value]
        got = json_type_name(instance)
        if got == "number" and isinstance(instance, float) and "integer" in expected:
            got = "a non-integer number"
        yield path, f"expected {' or '.join(expected)}, got {got}"
    elif kind == "enum":
        if path and path[-1] == "do":
            yield path, f"unknown action {_show(instance)} (expected {_one_of(value)})"
        else:
            yield path, f"expected {_one_of(value)}, got {_show(instance)}"
    elif kind == "const":
        yield path, f"expected {_show(value)}, got {_show(instance)}"
    elif kind == "minimum":
        noun = "a time" if _is_time(path) else "a number"
        yield path, f"must be {noun} >= {_show(value)}, got {_show(instance)}"
    elif kind == "anyOf" and path and path[-1] == "cascade_on":
        yield path, f'expected "declared" or a list of tool names, got {_show(instance)}'
    elif kind == "minLength":
        yield path, "must not be empty"
    else:
        yield path, error.message


def _is_time(path: Sequence[PathPart]) -> bool:
    return bool(path) and path[-1] in ("at", "sleep")


def _unknown_field(path: Sequence[PathPart]) -> str:
    if len(path) == 2 and path[0] == "calls":
        return 'unknown field (a scripted tool\'s input goes under "input")'
    return "unknown field"


def _has_non_finite(document: object) -> bool:
    """Fast check (in C): does the document hold NaN or an infinity anywhere?"""
    try:
        json.dumps(document, allow_nan=False)
    except ValueError:
        return True
    except TypeError:  # not a JSON document at all; the schema pass reports it
        return False
    return False


def _non_finite(document: object) -> Iterator[Found]:
    stack: list[tuple[object, list[PathPart]]] = [(document, [])]
    while stack:
        node, path = stack.pop()
        if isinstance(node, float) and not math.isfinite(node):
            shown = "NaN" if math.isnan(node) else ("Infinity" if node > 0 else "-Infinity")
            yield path, f"must be finite, got {shown}"
        elif isinstance(node, Mapping):
            stack.extend((value, [*path, key]) for key, value in node.items())
        elif isinstance(node, list):
            stack.extend((value, [*path, i]) for i, value in enumerate(node))


def _entries(value: object) -> Iterator[tuple[int, Mapping[str, Any]]]:
    """The object entries of a list, with their index; nothing when ``value`` is no list."""
    if isinstance(value, list):
        for index, entry in enumerate(value):
            if isinstance(entry, Mapping):
                yield index, entry


def _time_value(value: object) -> float | None:
    """``value`` as a time if it is one (a number >= 0 that is finite as a float), else None."""
    if type(value) is int and not _fits_a_float(value):
        return None
    if type(value) not in (int, float):
        return None
    number = float(cast("float", value))
    return number if math.isfinite(number) and number >= 0 else None


def _fits_a_float(value: int) -> bool:
    return abs(value) <= _FLOAT_MAX


_FLOAT_MAX = int(sys.float_info.max)
_TIME_FIELDS = (("calls", "at"), ("actions", "at"), ("hooks", "sleep"))


def _cross_field(document: object) -> Iterator[Found]:
    """The rules the schema cannot say, on the parts of ``document`` whose shape is right.

    Runs whether or not the schema pass found problems; entries and fields the
    schema refused are skipped rather than guessed at.
    """
    if not isinstance(document, Mapping):
        return
    for list_key, key in _TIME_FIELDS:
        for index, entry in _entries(document.get(list_key)):
            value = entry.get(key)
            if type(value) is int and not _fits_a_float(value):
                yield [list_key, index, key], "must be finite, got a number beyond 1.8e308"
    first_tool: dict[str, int] = {}
    for index, tool in _entries(document.get("tools")):
        name = tool.get("name")
        if not isinstance(name, str):
            continue
        if name in first_tool:
            yield (
                ["tools", index, "name"],
                f"duplicate tool name, already declared by tools[{first_tool[name]}]",
            )
        else:
            first_tool[name] = index
    mode = document.get("mode", "stream")
    first_call: dict[str, int] = {}
    latest: float | None = None
    for index, call in _entries(document.get("calls")):
        call_id = call.get("id")
        if isinstance(call_id, str):
            if call_id in first_call:
                yield (
                    ["calls", index, "id"],
                    f"duplicate call id, already used by calls[{first_call[call_id]}]",
                )
            else:
                first_call[call_id] = index
        at = _time_value(call.get("at", 0))
        if mode != "stream" or at is None:
            continue
        if latest is not None and at < latest:
            yield (
                ["calls", index, "at"],
                f"{_show(at)} is earlier than a call before it ({_show(latest)}); "
                "calls arrive in file order",
            )
        latest = at if latest is None else max(latest, at)
    yield from _policy_problems(document.get("policy"))
    permissions = document.get("permissions")
    if isinstance(permissions, Mapping):
        for behavior, rules in permissions.items():
            if behavior not in ("allow", "ask", "deny") or not isinstance(rules, list):
                continue
            for index, rule in enumerate(rules):
                problem = _rule_problem(rule) if isinstance(rule, str) and rule else None
                if problem is not None:
                    yield ["permissions", behavior, index], problem
    if mode == "batch":
        for index, action in _entries(document.get("actions")):
            if action.get("do") == "discard":
                yield (
                    ["actions", index, "do"],
                    '"discard" needs mode "stream" (it abandons a streaming executor)',
                )


def _policy_problems(policy: object) -> Iterator[Found]:
    """A preset name the schema cannot list without repeating the package's presets."""
    where: list[PathPart] = ["policy"]
    name = policy
    if isinstance(policy, Mapping):
        where, name = ["policy", "preset"], policy.get("preset", "trioexec")
    if isinstance(name, str) and name not in Policy.preset_names():
        yield where, f"unknown policy {_show(name)} (expected {_one_of(Policy.preset_names())})"


def _rule_problem(rule: str) -> str | None:
    from .._contract._rules import PermissionRule

    try:
        PermissionRule.parse(rule)
    except ValueError as exc:
        return f"invalid permission rule: {exc}"
    return None
