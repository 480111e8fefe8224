"""Derive a JSON Schema from an attrs class or a dataclass.

Supported field types: ``str``, ``int``, ``float``, ``bool``, ``None``,
``list[T]`` / ``tuple[T, ...]`` / ``Sequence[T]``, ``dict[str, T]`` /
``Mapping[str, T]``, ``Literal[...]``, unions (``T | None``), ``object`` /
``Any`` (any JSON value), ``Annotated[T, "description"]`` and nested attrs
classes and dataclasses.  Fields without a default are required; unknown
properties are refused.  A field's ``metadata={"description": ...}`` (or
the first string in its ``Annotated`` metadata) becomes its description.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import types
import typing
from typing import Annotated, Any, Literal, Union

import attrs

from .._errors import ToolDefinitionError
from ._pydantic import is_pydantic_model, pydantic_schema

if typing.TYPE_CHECKING:
    from .._models import JSONObject, JSONValue

__all__ = [
    "SUPPORTED_TYPES",
    "is_input_class",
    "is_structured_class",
    "schema_for_attrs",
    "schema_for_input_type",
]

SUPPORTED_TYPES = (
    "str, int, float, bool, None, Literal[...], T | None, list[T], tuple[T, ...], "
    "dict[str, T], Any, Annotated[T, 'description'], an attrs class or a dataclass"
)
"""The types an input field may have, as error messages list them."""

_SCALARS: dict[object, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}
_JSON_DEFAULT_TYPES = (str, int, float, bool, type(None))


def is_structured_class(tp: object) -> bool:
    """Whether ``tp`` is an attrs class or a dataclass (a class with typed fields)."""
    return isinstance(tp, type) and (attrs.has(tp) or dataclasses.is_dataclass(tp))


def is_input_class(tp: object) -> bool:
    """Whether ``tp`` can be a tool's ``input_type``: an attrs class, a dataclass, or a
    pydantic model (when pydantic is installed; it is never imported here)."""
    return is_structured_class(tp) or is_pydantic_model(tp)


def schema_for_input_type(cls: type) -> JSONObject:
    """The JSON Schema of an ``input_type``: a pydantic model's own, else :func:`schema_for_attrs`.

    Raises:
        ToolDefinitionError: as :func:`schema_for_attrs`, or the model's schema
            cannot be generated.
    """
    if is_pydantic_model(cls):
        try:
            return pydantic_schema(cls)
        except Exception as exc:
            raise ToolDefinitionError(
                f"pydantic model {cls.__name__} has no JSON Schema: {exc}"
            ) from None
    return schema_for_attrs(cls)


def schema_for_attrs(cls: type) -> JSONObject:
    """Return the JSON Schema (draft 2020-12) of an attrs class or a dataclass.

    Raises:
        ToolDefinitionError: ``cls`` is neither an attrs class nor a dataclass,
            or a field's type has no JSON Schema equivalent.
    """
    if not is_structured_class(cls):
        raise ToolDefinitionError(
            f"{cls!r} is not an attrs class, a dataclass or a pydantic model; decorate it "
            "with @attrs.frozen or @dataclasses.dataclass, or give input_schema= instead"
        )
    schema = _object_schema(cls, seen=())
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return schema


def _object_schema(cls: type, seen: tuple[type, ...]) -> JSONObject:
    if cls in seen:
        raise ToolDefinitionError(f"recursive input type {cls.__name__} is not supported")
    try:
        hints = typing.get_type_hints(cls, include_extras=True)
    except Exception as exc:
        raise ToolDefinitionError(
            f"cannot resolve the annotations of {cls.__name__}: {exc} (define the types it "
            "names at module level, where the annotations can see them)"
        ) from exc
    properties: dict[str, JSONValue] = {}
    required: list[JSONValue] = []
    for field in _fields(cls):
        try:
            prop = _type_schema(hints.get(field.attr, field.type), (*seen, cls))
        except ToolDefinitionError as exc:
            raise ToolDefinitionError(f"{cls.__name__}.{field.attr}: {exc}") from None
        if isinstance(field.description, str):
            prop["description"] = field.description
        if not field.has_default:
            required.append(field.key)
        elif _is_json(field.default):
            prop["default"] = field.default  # type: ignore[assignment]
        properties[field.key] = prop
    schema: JSONObject = {
        "type": "object",
        "properties": properties,
        "additionalProperties": False,
    }
    if required:
        schema["required"] = required
    return schema


def _is_json(value: object) -> bool:
    if isinstance(value, _JSON_DEFAULT_TYPES):
        return True
    if isinstance(value, list):
        return all(_is_json(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _is_json(v) for k, v in value.items())
    return False


@attrs.frozen
class _Field:
    attr: str  # the attribute name (annotations are keyed by it)
    key: str  # the JSON property name
    type: object
    has_default: bool
    default: object
    description: object


def _fields(cls: type) -> list[_Field]:
    if attrs.has(cls):
        return [
            _Field(
                f.name,
                f.alias or f.name,
                f.type,
                f.default is not attrs.NOTHING,
                f.default,
                f.metadata.get("description"),
            )
            for f in attrs.fields(cls)
            if f.init
        ]
    return [
        _Field(
            f.name,
            f.name,
            f.type,
            f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING,
            f.default,
            f.metadata.get("description"),
        )
        for f in dataclasses.fields(cls)
        if f.init
    ]


def _type_schema(tp: Any, seen: tuple[type, ...]) -> JSONObject:  # noqa: ANN401
    if typing.get_origin(tp) is Annotated:
        inner = _type_schema(tp.__origin__, seen)
        for meta in tp.__metadata__:
            if isinstance(meta, str):
                inner["description"] = meta
                break
        return inner
    if tp in _SCALARS:
        return {"type": _SCALARS[tp]}
    if tp is type(None) or tp is None:
        return {"type": "null"}
    if tp is object or tp is Any:
        return {}
    if is_structured_class(tp):
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
    raise ToolDefinitionError(
        f"type {tp!r} has no JSON Schema equivalent (supported: {SUPPORTED_TYPES})"
    )
