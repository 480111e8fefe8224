"""The exception tree.

::

    TrioexecError
     ├── MalformedBlockError   a Messages API dict has a missing or ill-typed field
     ├── ToolDefinitionError   a tool class or function cannot be turned into a tool
     └── ConfigurationError    a settings / scenario / option value is invalid

Tool failures are never exceptions to the caller: they become error tool_results.
"""

from __future__ import annotations

__all__ = ["ConfigurationError", "MalformedBlockError", "ToolDefinitionError", "TrioexecError"]


class TrioexecError(Exception):
    """Base class of every error trioexec raises on purpose."""


class MalformedBlockError(TrioexecError, ValueError):
    """A Messages API block is malformed; ``field`` names the offending path."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"{field}: {problem}")
        self.field = field
        self.problem = problem


class ToolDefinitionError(TrioexecError, TypeError):
    """A tool definition is inconsistent (bad name, schema, or input type)."""


class ConfigurationError(TrioexecError, ValueError):
    """An option, settings file or scenario file holds an invalid value."""
