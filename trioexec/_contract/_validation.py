"""Two-layer input validation.

Layer 1 checks the raw JSON against the tool's JSON Schema with validators
compiled once per tool (``jsonschema.validate`` per call re-checks and
re-compiles the schema: ~70x slower).  Two validators are compiled: a fast one
(``jsonschema_rs``, compiled Rust) answers the happy path, and ``jsonschema``,
the reference, is asked whenever the fast one does not accept (so every error
sentence, and every final "no", comes from the reference).  The fast validator
is trusted only to accept, and only for schemas whose keywords both implement
alike (see :func:`_fast_validator`), so the accepted set is the reference's.
Layer 2 structures the validated dict
into the tool's attrs ``input_type`` with a private cattrs converter (a pydantic
model's own ``model_validate``, for a pydantic ``input_type``), then runs
the tool's semantic ``validate_input``.  Error texts follow Claude Code's
InputValidationError format byte for byte.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, cast

import attrs
import cattrs
import jsonschema
import jsonschema.exceptions
import jsonschema.validators

try:
    import jsonschema_rs
except ImportError:  # pragma: no cover - a platform without a wheel: the reference alone
    jsonschema_rs = None  # type: ignore[assignment]

from .._errors import ToolDefinitionError
from .._models import JSONObject, JSONValue
from .._texts import tool_use_error
from ._pydantic import is_pydantic_model, pydantic_issue_lines
from ._tool import Tool, check_tool_name, tool_schema

__all__ = ["CompiledTool", "InputError", "compile_tool", "input_error_text", "validate"]

TOOL_SEARCH_NAME = "ToolSearch"

_converter = cattrs.Converter(forbid_extra_keys=True)
"""The reference converter: its detailed validation writes every issue of an input."""

_fast_converter = cattrs.Converter(forbid_extra_keys=True, detailed_validation=False)
"""The same structuring without the error bookkeeping (a third cheaper): it answers the
happy path, and anything it refuses goes to :data:`_converter`, which writes the issue."""

_ANNOTATION_KEYWORDS = frozenset({"$schema", "$id", "title", "description", "$comment", "examples"})
"""Keywords that never reject an instance: a schema of only these (plus type object) accepts
every input object, so its check is skipped (input is always a JSON object already)."""


@attrs.frozen
class InputError:
    """Layer-1 or layer-2a failure: the model-facing issue lines."""

    lines: tuple[str, ...]


@attrs.frozen(eq=False)
class CompiledTool:
    """A tool with its schema and validator compiled once, at registration."""

    tool: Tool[Any]
    schema: JSONObject
    validator: Any
    accepts_any_object: bool = False
    fast_accepts: Callable[[object], bool] | None = None
    """The compiled fast validator's ``is_valid``; None when the schema needs the reference."""
    fast_structure: Callable[[object, Any], object] | None = None
    """The fast converter's hook for ``input_type``, made once; None: the reference alone."""
    pydantic: bool = False
    """``input_type`` is a pydantic model: it validates itself (``model_validate``)."""

    def check(self, raw: Mapping[str, JSONValue]) -> InputError | None:
        """Layer 1: validate ``raw`` against the schema; None when it conforms.

        The fast validator answers the happy path; anything it does not accept
        (or cannot represent: a Python value with no JSON form) goes to the
        reference, which writes the issue lines or, where the two differ,
        accepts.  A schema that cannot be evaluated (say, a reference that
        resolves to nothing) fails closed: the input is refused with the reason.
        """
        if self.accepts_any_object:
            return None
        fast = self.fast_accepts
        if fast is not None:
            try:
                if fast(raw):
                    return None
            except Exception:  # not representable for the fast validator: the reference decides
                pass
        try:
            lines = _dedupe(_issue_lines(self.validator.iter_errors(raw)))
        except Exception as exc:  # jsonschema / referencing errors from a broken schema
            return InputError((f"The input could not be validated against the schema: {exc}",))
        return InputError(tuple(lines)) if lines else None

    def structure(self, raw: Mapping[str, JSONValue]) -> object:
        """Layer 2a: the tool's ``input_type`` instance (or the dict itself).

        Raises:
            cattrs.BaseValidationError: the dict does not fit ``input_type``.
        """
        input_type = self.tool.input_type
        if input_type is None:
            return dict(raw)
        if self.pydantic:
            return input_type.model_validate(dict(raw))
        fast = self.fast_structure
        if fast is not None:
            try:
                return fast(raw, input_type)
            except Exception:  # the reference writes the issue (or, if the two differ, accepts)
                pass
        return _converter.structure(dict(raw), input_type)


def compile_tool(tool: Tool[Any]) -> CompiledTool:
    """Compile a tool's schema into a validator.

    Raises:
        ToolDefinitionError: no valid name, an input type without a JSON
            Schema equivalent, or an invalid schema.
    """
    if isinstance(tool, type):
        raise ToolDefinitionError(
            f"{tool.__name__} is a class; pass an instance: {tool.__name__}()"
        )
    if not isinstance(tool, Tool):
        raise ToolDefinitionError(
            f"expected a Tool instance (a Tool subclass or @function_tool), "
            f"got {type(tool).__name__} {tool!r}"
        )
    name = check_tool_name(getattr(tool, "name", None), f"{type(tool).__name__} {tool!r}")
    schema = tool_schema(tool)
    for limit in ("timeout", "idle_timeout"):
        value = getattr(tool, limit, None)
        if value is not None and not is_time_limit(value):
            raise ToolDefinitionError(
                f"tool {name!r}: {limit} must be a number of seconds > 0 or None, not {value!r}"
            )
    dangling = _dangling_refs(schema)
    if dangling:
        raise ToolDefinitionError(
            f"tool {name!r} has an input schema with references that resolve to nothing: "
            + ", ".join(dangling)
        )
    validator_class = jsonschema.validators.validator_for(schema)
    try:
        validator_class.check_schema(schema)
    except jsonschema.exceptions.SchemaError as exc:
        raise ToolDefinitionError(
            f"tool {name!r} has an invalid input schema: {exc.message}"
        ) from None
    constraints = {k: v for k, v in schema.items() if k not in _ANNOTATION_KEYWORDS}
    pydantic = is_pydantic_model(tool.input_type)
    return CompiledTool(
        tool=tool,
        schema=schema,
        validator=_with_tuples_as_arrays(validator_class)(schema),
        accepts_any_object=constraints in ({}, {"type": "object"}),
        fast_accepts=_fast_validator(schema),
        fast_structure=None if pydantic else _fast_structure_hook(tool.input_type),
        pydantic=pydantic,
    )


def _fast_structure_hook(input_type: object) -> Callable[[object, Any], object] | None:
    """The fast converter's structuring hook for ``input_type``, or None.

    None without an ``input_type``, or when no hook can be made for it now (a
    forward reference that does not resolve yet, say): every call then goes
    to the reference converter, which reports the problem as an input issue.
    """
    if input_type is None:
        return None
    try:
        hook: Callable[[object, Any], object] = _fast_converter.get_structure_hook(input_type)
    except Exception:
        return None
    return hook


_REFERENCE_ONLY_KEYWORDS = frozenset({"pattern", "patternProperties", "format", "multipleOf"})
"""Keywords the two validators read differently, so a schema using any of them
is checked by the reference alone: regular expressions (ECMA-262 in the fast
validator, Python's ``re`` in the reference: ``\\d``, ``\\w`` and ``$`` differ),
formats, and ``multipleOf`` on floats (exact decimal arithmetic against binary
floating point: ``0.3`` is a multiple of ``0.1`` for one and not the other)."""

_SUBSCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_SUBSCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
_SUBSCHEMA_ONE = (
    "items", "additionalItems", "additionalProperties", "contains", "propertyNames", "not",
    "if", "then", "else", "unevaluatedItems", "unevaluatedProperties",
)  # fmt: skip


def _uses_reference_only_keywords(node: object) -> bool:
    """Whether a keyword of :data:`_REFERENCE_ONLY_KEYWORDS` appears in any subschema.

    Walks the schema keyword by keyword (not key by key), so a property that
    happens to be called ``pattern`` is not mistaken for the keyword.
    """
    if isinstance(node, list):  # ``items`` in the array form of older drafts
        return any(_uses_reference_only_keywords(item) for item in node)
    if not isinstance(node, dict):
        return False
    if not _REFERENCE_ONLY_KEYWORDS.isdisjoint(node):
        return True
    for key in _SUBSCHEMA_MAPS:
        children = node.get(key)
        if isinstance(children, dict) and any(
            _uses_reference_only_keywords(child) for child in children.values()
        ):
            return True
    for key in _SUBSCHEMA_LISTS:
        children = node.get(key)
        if isinstance(children, list) and any(
            _uses_reference_only_keywords(child) for child in children
        ):
            return True
    return any(_uses_reference_only_keywords(node.get(key)) for key in _SUBSCHEMA_ONE)


def _fast_validator(schema: JSONObject) -> Callable[[object], bool] | None:
    """The compiled fast validator's ``is_valid`` for ``schema``, or None.

    None when the fast validator is not installed, cannot compile the schema,
    or the schema uses a keyword the two validators read differently.  Formats
    are annotations only, as in the reference.
    """
    if jsonschema_rs is None or _uses_reference_only_keywords(schema):
        return None
    try:
        validator = jsonschema_rs.validator_for(schema, validate_formats=False)
    except Exception:  # a schema the fast validator does not support: the reference alone
        return None
    is_valid: Callable[[object], bool] = validator.is_valid
    return is_valid


def _with_tuples_as_arrays(validator_class: type[Any]) -> type[Any]:
    """``validator_class`` whose ``array`` type also admits tuples.

    A tuple is what a JSON array becomes in Python code that builds inputs by
    hand; the fast validator already treats it as an array, and cattrs
    structures it as one, so the reference agrees with both.
    """
    checker = validator_class.TYPE_CHECKER.redefine(
        "array", lambda _checker, instance: isinstance(instance, (list, tuple))
    )
    extended: type[Any] = jsonschema.validators.extend(validator_class, type_checker=checker)
    return extended


def is_time_limit(value: object) -> bool:
    """Whether ``value`` is a usable time limit: a number of seconds > 0 (not a bool, not NaN)."""
    return not isinstance(value, bool) and isinstance(value, (int, float)) and value > 0


def input_error_text(tool: Tool[Any], error: InputError) -> str:
    """The full model-facing InputValidationError text for ``error``."""
    lines = _zod_order(error.lines)
    issues = "issues" if len(lines) > 1 else "issue"
    body = f"InputValidationError: {tool.name} failed due to the following {issues}:\n"
    body += "\n".join(lines)
    if tool.is_deferred:
        body += (
            "\n\nThis tool's schema was not sent to the API — it was not in the discovered-tool "
            "set derived from message history. Without the schema in your prompt, typed "
            "parameters (arrays, numbers, booleans) get emitted as strings and the client-side "
            "parser rejects them. Load the tool first: call "
            f'{TOOL_SEARCH_NAME} with query "select:{tool.name}", then retry this call.'
        )
    return tool_use_error(body)


def _zod_order(lines: Sequence[str]) -> list[str]:
    """Claude Code's order: missing parameters, then unexpected ones, then type mismatches.

    Text a stream could not parse (``__unparsed_input__``) reads as an empty
    input, as in Claude Code: only its missing parameters are named.
    """
    unparsed = "An unexpected parameter `__unparsed_input__` was provided"

    def rank(line: str) -> int:
        if line.startswith("The required parameter"):
            return 0
        if line.startswith("An unexpected parameter"):
            return 1
        return 2 if " type is expected as " in line else 3

    return sorted((line for line in lines if line != unparsed), key=rank)


def validate(
    compiled: CompiledTool, raw: Mapping[str, JSONValue]
) -> tuple[object, InputError | None]:
    """Layers 1 and 2a, the one copy every caller uses: ``(parsed, None)`` or ``(None, issue)``.

    An input the model's JSON did not parse into (the assembler hands it over
    as ``{UNPARSED_INPUT: text}``) is refused whatever the schema, with the
    JSON problem named.  Layer 1 checks ``raw`` against the compiled schema; layer 2a structures it
    into the tool's ``input_type``.  Whatever structuring raises (a cattrs
    error, an attrs validator, a converter's bug) is an issue with the input,
    never an exception to the caller.  A tuple rather than a result object:
    this runs once per call on the hot path.
    """
    if UNPARSED_INPUT in raw:  # the model's JSON did not parse: never any tool's input
        return None, unparsed_input_error(raw[UNPARSED_INPUT])
    issue = compiled.check(raw)
    if issue is not None:
        return None, issue
    try:
        return compiled.structure(raw), None
    except Exception as exc:
        return None, structuring_error(exc)


UNPARSED_INPUT = "__unparsed_input__"
"""The key under which :class:`~trioexec.ToolUseAssembler` hands over input JSON that did
not parse (the raw text): validation refuses such an input, whatever the tool's schema."""


def unparsed_input_error(text: object) -> InputError:
    """The issue for input JSON that did not parse: what is wrong with it, for the model."""
    if not isinstance(text, str):
        return InputError(("The input is not valid JSON and could not be read.",))
    try:
        value = json.loads(text, parse_constant=_refuse_constant)
    except RecursionError:
        problem = "it is nested too deeply"
    except ValueError as exc:
        problem = str(exc)
    else:
        problem = f"expected an object, got {json_type_name(value)}"
    if len(problem) > 200:
        problem = problem[:200] + "..."
    return InputError((f"The input is not valid JSON: {problem}. The tool was not run.",))


def _refuse_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def structuring_error(exc: Exception) -> InputError:
    """Describe a structuring failure (cattrs, or a pydantic model's own validation)
    in the same sentence style as layer 1."""
    own = pydantic_issue_lines(exc)
    if own is not None:
        return InputError(tuple(own))
    if isinstance(exc, cattrs.BaseValidationError):
        messages = cattrs.transform_error(exc, path="$", format_exception=_format_structuring)
    else:
        messages = [f"{exc} @ $"]
    lines = []
    for message in messages:
        text, _, where = message.rpartition(" @ ")
        path = where.removeprefix("$").removeprefix(".")
        if path:
            lines.append(f"The parameter `{path}` is invalid: {text}")
        else:
            lines.append(f"The input is invalid: {text}")
    return InputError(tuple(lines))


def _format_structuring(exc: BaseException, type_: type | None) -> str:
    """cattrs' sentence for one failure, except that a class's own check speaks for itself.

    A ``ValueError`` with no target type was raised by the class being built
    (an attrs validator such as ``gt(0)``, a converter, ``__attrs_post_init__``),
    not by structuring a field: its message (``'n' must be > 0: -1``) is the
    useful sentence, where cattrs would say only ``invalid value``.
    """
    if type_ is None and isinstance(exc, ValueError) and str(exc):
        return str(exc)
    return cattrs.v.format_exception(exc, type_)


def format_path(path: Iterable[str | int]) -> str:
    """``['todos', 0, 'activeForm']`` -> ``todos[0].activeForm``."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def json_type_name(value: object) -> str:
    """The JSON type name the model would recognise for ``value``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    if isinstance(value, Mapping):
        return "object"
    return type(value).__name__


def _issue_lines(errors: Iterable[jsonschema.exceptions.ValidationError]) -> Iterable[str]:
    for error in errors:
        path = list(error.absolute_path)
        if error.validator == "required" and isinstance(error.instance, Mapping):
            for prop in error.validator_value:
                if prop not in error.instance:
                    yield f"The required parameter `{format_path([*path, prop])}` is missing"
        elif error.validator == "additionalProperties" and isinstance(error.instance, Mapping):
            for prop in _unexpected(error.instance, error.schema):
                yield f"An unexpected parameter `{format_path([*path, prop])}` was provided"
        elif error.validator == "type":
            expected = _zod_type_name(error.validator_value)
            yield (
                f"The parameter `{format_path(path) or 'input'}` type is expected as "
                f"`{expected}` but provided as `{json_type_name(error.instance)}`"
            )
        elif path:
            yield f"The parameter `{format_path(path)}` is invalid: {error.message}"
        else:
            yield f"The input is invalid: {error.message}"


def _zod_type_name(expected: object) -> str:
    """A JSON Schema ``type`` as Zod names it: ``integer`` is ``number``; an optional
    value's ``null`` is not named (``["integer", "null"]`` reads ``number``)."""
    names = [expected] if isinstance(expected, str) else list(cast("Sequence[str]", expected))
    zod = [("number" if name == "integer" else name) for name in names if name != "null"]
    return " | ".join(dict.fromkeys(zod)) or "null"


def _unexpected(instance: Mapping[str, object], schema: Mapping[str, Any]) -> list[str]:
    known = schema.get("properties", {})
    patterns = list(schema.get("patternProperties", {}))
    return [
        key for key in instance if key not in known and not any(re.search(p, key) for p in patterns)
    ]


def _dedupe(lines: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(lines))


def _dangling_refs(schema: JSONObject) -> list[str]:
    """Local ``$ref`` pointers (``#/...``) that point at nothing, and non-local refs.

    Remote references are never fetched, so they count as dangling too.
    """
    found: list[str] = []

    def walk(node: object) -> None:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and not _resolves(schema, ref):
                found.append(ref)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(schema)
    return found


def _resolves(schema: JSONObject, ref: str) -> bool:
    if ref == "#":
        return True
    if not ref.startswith("#/"):
        return False
    node: object = schema
    for raw in ref[2:].split("/"):
        part = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return False
    return True
