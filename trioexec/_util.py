"""Helpers for the public faces: giving re-exported objects their public module name."""

from __future__ import annotations

import inspect
import types
import typing
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["fixup_module_metadata", "require_extra"]


def require_extra(face: str, extra: str, *modules: str) -> None:
    """Fail the import of ``face`` with the command that installs ``extra`` when a module
    it needs is missing (``import trioexec.mcp`` without ``mcp``: ``pip install 'trioexec[mcp]'``).

    Looks the modules up without importing them (``importlib.util.find_spec``).

    Raises:
        ModuleNotFoundError: a module of ``modules`` is not installed; the message
            names it, the extra and the pip command.
    """
    import importlib.util

    for module in modules:
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            raise ModuleNotFoundError(
                f"{face} needs the optional {module!r} package, which is not installed; "
                f"install the extra: pip install 'trioexec[{extra}]'",
                name=module,
            )


def fixup_module_metadata(module_name: str, namespace: Mapping[str, object]) -> None:
    """Make the classes and functions a face exports say they live in ``module_name``.

    ``trioexec.Tool.__module__`` is then ``"trioexec"``, not ``"trioexec._contract._tool"``,
    so reprs, tracebacks, docs and pickles show the path users import from.
    Methods and nested classes get the new module too.  Only objects defined in
    a private ``trioexec`` module are touched, each by the first face that
    exports it.  A class's string annotations are first bound to its defining
    module, so ``typing.get_type_hints`` and cattrs still read them.
    """
    seen: set[int] = set()

    def fix(obj: object) -> None:
        if id(obj) in seen:
            return
        seen.add(id(obj))
        module = getattr(obj, "__module__", None)
        if not isinstance(module, str) or not _is_private_home(module):
            return
        if isinstance(obj, type):
            _pin_annotations(obj)
        try:
            obj.__module__ = module_name
        except (AttributeError, TypeError):  # type aliases, Literal forms
            return
        if isinstance(obj, type):
            inside = obj.__qualname__ + "."
            for attr_value in vars(obj).values():
                if isinstance(attr_value, (classmethod, staticmethod)):
                    attr_value = attr_value.__func__
                elif isinstance(attr_value, property):
                    attr_value = attr_value.fget
                if isinstance(attr_value, (types.FunctionType, type)) and (
                    attr_value.__qualname__.startswith(inside)  # its own, not a reference
                ):
                    fix(attr_value)

    for name in cast("list[str]", namespace["__all__"]):
        fix(namespace[name])


def _pin_annotations(cls: type) -> None:
    """Make the class's own string annotations say which module they are read in.

    ``typing.get_type_hints`` (and cattrs, and attrs) read a class's string
    annotations in the namespace of ``cls.__module__``; once that is the face,
    the private names of the defining module would be out of reach.  Each string
    becomes a ``ForwardRef`` bound to the defining module, which typing then
    evaluates there, nested references included.
    """
    home = cls.__module__
    own = inspect.get_annotations(cls)
    if not any(isinstance(value, str) for value in own.values()):
        return
    cls.__annotations__ = {
        name: typing.ForwardRef(value, is_argument=False, is_class=True, module=home)
        if isinstance(value, str)
        else value
        for name, value in own.items()
    }


def _is_private_home(module: str) -> bool:
    parts = module.split(".")
    return parts[0] == "trioexec" and any(part.startswith("_") for part in parts[1:])
