"""The tool registry: name lookup, deprecated aliases, validators compiled once."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._errors import ToolDefinitionError
from ._tool import api_schema
from ._validation import CompiledTool, compile_tool

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from .._models import JSONObject
    from ._tool import Tool

__all__ = ["ToolRegistry"]


class ToolRegistry:
    """The tools of a turn, plus registered tools reachable only by a deprecated alias.

    Lookup (SPEC §1): by name among the turn's ``tools``; failing that, among
    all tools (``tools`` and ``registered``) whose ``aliases`` include the name,
    so that old transcripts keep working after a rename.  Each tool's schema is
    compiled into a validator here, once.

    Raises:
        ToolDefinitionError: two tools share a name, or a tool is ill-defined.
    """

    __slots__ = ("_by_alias", "_by_name")

    def __init__(self, tools: Iterable[Tool[Any]], *, registered: Iterable[Tool[Any]] = ()) -> None:
        self._by_name: dict[str, CompiledTool] = {}
        self._by_alias: dict[str, CompiledTool] = {}
        turn_tools = list(tools)
        for tool in turn_tools:
            compiled = compile_tool(tool)
            if tool.name in self._by_name:
                raise ToolDefinitionError(f"two tools are named {tool.name!r}")
            self._by_name[tool.name] = compiled
        for tool in [*turn_tools, *registered]:
            compiled = self._by_name.get(tool.name) or compile_tool(tool)
            for alias in tool.aliases:
                self._by_alias.setdefault(alias, compiled)

    @classmethod
    def coerce(cls, tools: ToolRegistry | Iterable[Tool[Any]]) -> ToolRegistry:
        """Return ``tools`` if it is a registry, else a registry of them."""
        return tools if isinstance(tools, ToolRegistry) else cls(tools)

    def lookup(self, name: str) -> CompiledTool | None:
        """The tool answering to ``name`` (name first, then deprecated alias), or None."""
        found = self._by_name.get(name)
        if found is None:
            found = self._by_alias.get(name)
        return found

    def to_api(self) -> list[JSONObject]:
        """The Messages API ``tools`` list: one ``{"name", "description", "input_schema"}``
        per turn tool, in registration order (the schemas the validators were compiled from).

        Tools reachable only by a deprecated alias are not offered to the model.
        """
        return [
            {
                "name": compiled.tool.name,
                "description": compiled.tool.description,
                "input_schema": api_schema(compiled.schema),
            }
            for compiled in self._by_name.values()
        ]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.lookup(name) is not None

    def __iter__(self) -> Iterator[Tool[Any]]:
        return (compiled.tool for compiled in self._by_name.values())

    def __len__(self) -> int:
        return len(self._by_name)

    def __repr__(self) -> str:
        return f"ToolRegistry({list(self._by_name)!r})"
