"""How an async function's parameters become a tool's input (for :func:`function_tool`).

A parameter annotated :class:`~trioexec.CallContext` (or, unannotated, named
``ctx``) receives the call's context; one annotated
:class:`~trioexec.ProgressSender` (or named ``progress``) receives the progress
sender.  The other parameters take the input:

* with ``input_type=`` or ``input_schema=``: exactly one parameter, which
  receives the structured input (or the validated dict);
* else one parameter annotated with an attrs class, a dataclass or a pydantic
  model: that class is the input type (a model validates with its own
  ``model_validate``);
* else one parameter annotated ``dict[str, ...]`` / ``Mapping[str, ...]`` (or,
  beside ``ctx``/``progress``, unannotated): it receives the whole JSON object;
* else every parameter is one input property, typed by its annotation and
  optional when it has a default: ``async def weather(city: str)`` takes
  ``{"city": "Paris"}``.

Everything is decided once, when the tool is defined; a function that cannot
take its input raises :class:`~trioexec.ToolDefinitionError` then.
"""

from __future__ import annotations

import collections.abc
import inspect
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any

import attrs

from .._errors import ToolDefinitionError
from .._models import JSONObject
from ._schema import is_input_class, schema_for_attrs

__all__ = ["FunctionSignature", "read_signature"]

_CONTEXT_NAMES = {"CallContext": "ctx", "ProgressSender": "progress"}
_UNANNOTATED_ROLES = {"ctx": "ctx", "progress": "progress"}


@attrs.frozen
class FunctionSignature:
    """What :func:`read_signature` found: the input the function takes and how to call it.

    Attributes:
        input_type: the class the validated input is structured into (None: the dict).
        input_schema: the JSON Schema to validate against (None: derived from input_type).
        whole: the parameter that receives the whole input (None: one per property).
        properties: the parameters that each receive one property (when ``whole`` is None).
        ctx / progress: the parameters receiving the context / progress sender.
        positional_only: parameter names that must be passed positionally.
    """

    input_type: type | None
    input_schema: JSONObject | None
    whole: str | None
    properties: tuple[str, ...] = ()
    ctx: str | None = None
    progress: str | None = None
    positional_only: frozenset[str] = frozenset()

    def arguments(
        self, value: object, ctx: object, progress: object
    ) -> tuple[list[object], dict[str, object]]:
        """The positional and keyword arguments of one call."""
        named: dict[str, object] = {}
        if self.whole is not None:
            named[self.whole] = value
        else:
            for prop in self.properties:
                named[prop] = getattr(value, prop)
        if self.ctx is not None:
            named[self.ctx] = ctx
        if self.progress is not None:
            named[self.progress] = progress
        args = [named.pop(n) for n in list(named) if n in self.positional_only]
        return args, named


def read_signature(
    func: Callable[..., object],
    *,
    tool_name: str,
    input_type: type | None,
    input_schema: JSONObject | None,
    context_types: Mapping[object, str],
) -> FunctionSignature:
    """Read ``func``'s parameters into a :class:`FunctionSignature` (see the module docstring).

    ``context_types`` maps the classes that mark the context parameters
    (``CallContext``, ``ProgressSender``) to their role, ``"ctx"`` or ``"progress"``.

    Raises:
        ToolDefinitionError: the function cannot take the input, a parameter
            has no annotation or an unsupported one, or its annotations cannot
            be resolved.  The message names the tool and the fix.
    """
    where = f"tool {tool_name!r}"
    try:
        signature = inspect.signature(func)
    except (TypeError, ValueError) as exc:
        raise ToolDefinitionError(f"{where}: cannot read the function's signature: {exc}") from None
    hints = _hints(func)
    ctx = progress = None
    inputs: list[inspect.Parameter] = []
    positional_only: set[str] = set()
    for param in signature.parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue  # *args / **kwargs take nothing we must pass
        if param.kind is param.POSITIONAL_ONLY:
            positional_only.add(param.name)
        role = _role(param, hints.get(param.name, param.annotation), context_types)
        if role == "ctx" and ctx is None:
            ctx = param.name
        elif role == "progress" and progress is None:
            progress = param.name
        else:
            inputs.append(param)
    shared = {"ctx": ctx, "progress": progress, "positional_only": frozenset(positional_only)}
    names = ", ".join(f"`{p.name}`" for p in inputs)

    if input_type is not None or input_schema is not None:
        given = "input_type=" if input_type is not None else "input_schema="
        if len(inputs) != 1:
            raise ToolDefinitionError(
                f"{where}: with {given} the function takes the input as one parameter (plus "
                f"optional `ctx: CallContext` and `progress: ProgressSender`), but it has "
                f"{len(inputs)} other parameters{': ' + names if inputs else ''}; "
                f"write `async def {getattr(func, '__name__', 'f')}(input, ctx, progress)`"
            )
        if input_type is not None and not is_input_class(input_type):
            raise ToolDefinitionError(
                f"{where}: input_type {input_type!r} is not an attrs class, a dataclass or a "
                "pydantic model; "
                "decorate it with @attrs.frozen or @dataclasses.dataclass, or give "
                "input_schema= instead"
            )
        return FunctionSignature(input_type, input_schema, inputs[0].name, **shared)  # type: ignore[arg-type]

    if len(inputs) == 1:
        (only,) = inputs
        annotation = hints.get(only.name, only.annotation)
        if is_input_class(annotation):
            return FunctionSignature(annotation, None, only.name, **shared)  # type: ignore[arg-type]
        if _is_mapping(annotation) or (
            annotation is inspect.Parameter.empty and (ctx is not None or progress is not None)
        ):
            return FunctionSignature(None, None, only.name, **shared)  # type: ignore[arg-type]

    fields: dict[str, Any] = {}
    for param in inputs:
        annotation = hints.get(param.name, param.annotation)
        if annotation is inspect.Parameter.empty:
            raise ToolDefinitionError(
                f"{where}: parameter `{param.name}` has no type annotation, so its input schema "
                f"cannot be derived; annotate it (e.g. `{param.name}: str`)"
            )
        if isinstance(annotation, str):
            raise ToolDefinitionError(
                f"{where}: the annotation {annotation!r} of parameter `{param.name}` cannot be "
                "resolved; define the types it names at module level"
            )
        default: Any = attrs.NOTHING if param.default is param.empty else param.default
        field_type: Any = annotation
        fields[param.name] = attrs.field(type=field_type, default=default, kw_only=True)
    generated = attrs.make_class(f"{_camel(tool_name)}Input", fields, frozen=True)
    generated.__module__ = getattr(func, "__module__", __name__)
    try:
        schema = schema_for_attrs(generated)
    except ToolDefinitionError as exc:
        field, _, problem = str(exc).removeprefix(f"{generated.__name__}.").partition(": ")
        raise ToolDefinitionError(f"{where}: parameter `{field}`: {problem}") from None
    return FunctionSignature(
        generated,
        schema,
        None,
        tuple(p.name for p in inputs),
        **shared,  # type: ignore[arg-type]
    )


def _hints(func: Callable[..., object]) -> dict[str, object]:
    """The resolved annotations; one that cannot be resolved stays a string."""
    try:
        return dict(typing.get_type_hints(func, include_extras=True))
    except Exception:  # a local class under `from __future__ import annotations`, say
        pass
    raw = dict(getattr(func, "__annotations__", {}))
    namespace = dict(getattr(func, "__globals__", {}))
    resolved: dict[str, object] = {}
    for name, annotation in raw.items():
        holder = types.SimpleNamespace(__annotations__={name: annotation})
        try:
            resolved[name] = typing.get_type_hints(holder, namespace, include_extras=True)[name]
        except Exception:  # unresolvable: kept as the string it is
            resolved[name] = annotation
    return resolved


def _role(
    param: inspect.Parameter, annotation: object, context_types: Mapping[object, str]
) -> str | None:
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        options = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(options) == 1:
            annotation = options[0]
    for marker, role in context_types.items():
        if annotation is marker:
            return role
    if isinstance(annotation, str):
        bare = annotation.removesuffix("| None").strip()
        return _CONTEXT_NAMES.get(bare.rpartition(".")[2])
    if annotation is inspect.Parameter.empty:
        return _UNANNOTATED_ROLES.get(param.name)
    return None


def _is_mapping(annotation: object) -> bool:
    origin = typing.get_origin(annotation) or annotation
    return origin in (dict, Mapping, collections.abc.MutableMapping)


def _camel(name: str) -> str:
    parts = [p for p in name.replace("-", "_").split("_") if p]
    return "".join(p[:1].upper() + p[1:] for p in parts) or "Function"
