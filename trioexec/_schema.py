"""Derive a JSON Schema from an attrs input class.

Supported field types: ``str``, ``int``, ``float``, ``bool``, ``None``,
``list[T]`` / ``tuple[T, ...]`` / ``Sequence[T]``, ``dict[str, T]`` /
``Mapping[str, T]``, ``Literal[...]``, unions (``T | None``), ``object`` /
``Any`` (any JSON value) and nested attrs classes.  Fields without a default
are required; unknown properties are refused.  A field's
``metadata={"description": ...}`` becomes its description.
"""

from __future__ import annotations

import collections.abc
import types
import typing
from typing import Any, Literal, Union

import attrs

from ._errors import ToolDefinitionError

if typing.TYPE_CHECKING:
    from ._models import JSONObject, JSONValue

__all__ = ["schema_for_attrs"]

_SCALARS: dict[object, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}
_JSON_DEFAULT_TYPES = (str, int, float, bool, type(None))


def schema_for_attrs(cls: type) -> JSONObject:
    """Return the JSON Schema (draft 2020-12) of an attrs class.

    Raises:
        ToolDefinitionError: ``cls`` is not an attrs class, or a field's type
            has no JSON Schema equivalent.
    """
    if not attrs.has(cls):
        raise ToolDefinitionError(f"{cls!r} is not an attrs class")
    schema = _object_schema(cls, seen=())
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return schema


def _object_schema(cls: type, seen: tuple[type, ...]) -> JSONObject:
    if cls in seen:
        raise ToolDefinitionError(f"recursive input type {cls.__name__} is not supported")
    try:
        hints = typing.get_type_hints(cls)
    except Exception as exc:
        raise ToolDefinitionError(
            f"cannot resolve the annotations of {cls.__name__}: {exc}"
        ) from exc
    properties: dict[str, JSONValue] = {}
    required: list[JSONValue] = []
    for field in attrs.fields(cls):
        name = field.alias or field.name
        try:
            prop = _type_schema(hints.get(field.name, field.type), (*seen, cls))
        except ToolDefinitionError as exc:
            raise ToolDefinitionError(f"{cls.__name__}.{field.name}: {exc}") from None
        description = field.metadata.get("description")
        if isinstance(description, str):
            prop["description"] = description
        if field.default is attrs.NOTHING:
            required.append(name)
        elif isinstance(field.default, _JSON_DEFAULT_TYPES):
            prop["default"] = field.default
        properties[name] = prop
    schema: JSONObject = {
        "type": "object",
        "properties": properties,
        "additionalProperties": False,
    }
    if required:
        schema["required"] = required
    return schema


def _type_schema(tp: Any, seen: tuple[type, ...]) -> JSONObject:  # noqa: ANN401
    if tp in _SCALARS:
        return {"type": _SCALARS[tp]}
    if tp is type(None) or tp is None:
        return {"type": "null"}
    if tp is object or tp is Any:
        return {}
    if isinstance(tp, type) and attrs.has(tp):
        return _object_schema(tp, seen)
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is Literal:
        return {"enum": list(args)}
    if origin in (Union, types.UnionType):
        options = [_type_schema(arg, seen) for arg in args]
        simple = [o.get("type") for o in options]
        if all(isinstance(t, str) and len(o) == 1 for t, o in zip(simple, options, strict=True)):
            return {"type": list(simple)}
        return {"anyOf": list(options)}
    if origin in (list, collections.abc.Sequence, collections.abc.MutableSequence):
        return {"type": "array", "items": _type_schema(args[0], seen) if args else {}}
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return {"type": "array", "items": _type_schema(args[0], seen)}
        items: list[JSONValue] = [_type_schema(a, seen) for a in args]
        return {
            "type": "array",
            "prefixItems": items,
            "minItems": len(args),
            "maxItems": len(args),
        }
    if origin in (dict, collections.abc.Mapping, collections.abc.MutableMapping):
        if args and args[0] is not str:
            raise ToolDefinitionError("mapping keys must be str")
        return {
            "type": "object",
            "additionalProperties": _type_schema(args[1], seen) if args else {},
        }
    raise ToolDefinitionError(f"type {tp!r} has no JSON Schema equivalent")
