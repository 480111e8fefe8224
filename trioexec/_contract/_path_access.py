"""What a tool declares about the paths it touches: :class:`PathAccess`.

A tool that reads or writes the file named by a field of its input says so
with a class attribute (``path_access = PathAccess("file_path", writes=True)``;
``function_tool(path_access=...)``).  The declaration, not the tool's name,
decides which permission rules govern it (Claude Code's documentation:
"Edit rules apply to all built-in tools that edit files", and Read rules, as
a best effort, to those that read):

- ``reads``: ``Read(...)`` rules apply besides the tool's own; deny and ask
  rules that cover the path stop the call, and a tool that lists or searches
  files skips the files they cover.
- ``writes``: ``Edit(...)`` rules apply besides the tool's own, and a write
  to a protected path (``.git/``, ``~/.bashrc``...) always asks, even in
  bypass mode.

The rule content of a declaring tool is a gitignore-style path pattern
matched against the declared field.  This module is data only: the matching
lives in :mod:`trioexec._guard._file_access`.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from .._errors import ToolDefinitionError

__all__ = ["EDIT_RULES", "READ_RULES", "PathAccess"]

READ_RULES = "Read"
"""The rule family of reading tools: ``Read(./secrets/**)``."""
EDIT_RULES = "Edit"
"""The rule family of writing tools: ``Edit(./src/**)``."""


def _check_field(instance: PathAccess, attribute: attrs.Attribute[str], value: str) -> None:
    if not isinstance(value, str) or not value:
        raise ToolDefinitionError(f"PathAccess field must be a non-empty string, not {value!r}")


@attrs.frozen
class PathAccess:
    """A tool's declaration: which input field names a path, and whether it reads or writes it.

    Attributes:
        field: the input field holding the path: a key of the JSON input, or
            the attribute of an ``input_type`` instance.  The field may hold
            one path (a string) or a list of paths.
        reads: the tool reads the file (or lists and searches the directory)
            at the path: ``Read`` rules govern it.
        writes: the tool creates or changes the file at the path: ``Edit``
            rules govern it, and protected paths ask.
        default: the path when the field is missing or null (``"."``: the
            working directory, as for ``Glob`` and ``Grep``); None: the call
            names no path then, and no path rule applies to it.

    Raises:
        ToolDefinitionError: ``field`` is empty, or neither ``reads`` nor
            ``writes`` is set.
    """

    field: str = attrs.field(validator=_check_field)
    reads: bool = False
    writes: bool = False
    default: str | None = None

    def __attrs_post_init__(self) -> None:
        if not (self.reads or self.writes):
            raise ToolDefinitionError(
                f"PathAccess({self.field!r}) must set reads=True, writes=True or both"
            )

    def paths(self, input: object) -> tuple[str, ...] | None:  # noqa: A002
        """The paths ``input`` names in the declared field.

        Returns:
            The paths as written (empty when the field is missing or null and
            there is no default); None when the field
            holds something that is not a string or a list of strings, so the
            caller fails closed.
        """
        if isinstance(input, Mapping):
            value = input.get(self.field)
        else:
            value = getattr(input, self.field, None)
        if value is None:
            return () if self.default is None else (self.default,)
        if isinstance(value, str):
            return (value,)
        if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
            return tuple(value)
        return None

    def rule_families(self, behavior: str) -> tuple[str, ...]:
        """The rule families that govern the tool for ``behavior`` rules.

        Deny and ask rules of every family that applies count (an ``Edit``
        that reads a Read-denied file is denied); an allow rule must come from
        the family of what the tool does to the path: a writing tool needs
        ``Edit`` allow rules, a ``Read`` allow rule never lets it write.
        """
        if behavior == "allow":
            return (EDIT_RULES,) if self.writes else (READ_RULES,)
        families: list[str] = []
        if self.writes:
            families.append(EDIT_RULES)
        if self.reads:
            families.append(READ_RULES)
        return tuple(families)
