"""Pydantic models as input types, without pydantic as a dependency.

A class is a pydantic model only if pydantic is already imported (a model class
cannot exist otherwise), so nothing here imports pydantic: it looks the module up
in ``sys.modules``.  A model's input schema is its own ``model_json_schema()``;
layer 2 is its own ``model_validate`` (every validator the model declares runs),
and a ``ValidationError`` becomes the same issue lines as a cattrs failure.
"""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["is_pydantic_model", "pydantic_issue_lines", "pydantic_schema", "pydantic_to_json"]


def is_pydantic_model(tp: object) -> bool:
    """Whether ``tp`` is a pydantic ``BaseModel`` subclass (False when pydantic is not loaded)."""
    pydantic = sys.modules.get("pydantic")
    if pydantic is None or not isinstance(tp, type):
        return False
    base = getattr(pydantic, "BaseModel", None)
    return isinstance(base, type) and issubclass(tp, base) and tp is not base


def pydantic_schema(model: type) -> dict[str, Any]:
    """The model's JSON Schema (draft 2020-12), as pydantic writes it for validation."""
    schema: dict[str, Any] = dict(model.model_json_schema(mode="validation"))  # type: ignore[attr-defined]
    schema.setdefault("type", "object")
    return schema


def pydantic_issue_lines(exc: Exception) -> list[str] | None:
    """The issue lines of a pydantic ``ValidationError``; None for any other exception."""
    errors = getattr(exc, "errors", None)
    if not type(exc).__module__.startswith("pydantic") or not callable(errors):
        return None
    lines = []
    for error in errors(include_url=False):
        path = ""
        for part in error.get("loc", ()):
            path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
        message = str(error.get("msg", "invalid value"))
        lines.append(
            f"The parameter `{path}` is invalid: {message}"
            if path
            else f"The input is invalid: {message}"
        )
    return lines


def pydantic_to_json(value: object) -> object:
    """A pydantic model instance as JSON-ready data; ``value`` itself when it is not one."""
    if is_pydantic_model(type(value)):
        return value.model_dump(mode="json")  # type: ignore[attr-defined]
    return value
