"""Permission rule syntax as Claude Code writes it: ``Tool`` or ``Tool(content)``.

What ``content`` means depends on the tool: a shell command pattern for
``Bash`` (:mod:`.._guard._bash_rules`, read through :mod:`.._shell._syntax`), a
gitignore-style path pattern for the file tools (:mod:`.._guard._path_rules`).  Pure:
no I/O, no trio.
"""

from __future__ import annotations

import re
from typing import Literal, TypeAlias

import attrs

__all__ = ["PermissionRule", "RuleBehavior"]

_TOOL_NAME = re.compile(r"[A-Za-z0-9_.\-*]+")


@attrs.frozen
class PermissionRule:
    """One parsed rule: a tool name and optional content (None: the whole tool).

    ``Tool``, ``Tool()`` and ``Tool(*)`` all mean the whole tool.  In the
    content, ``\\(``, ``\\)`` and ``\\\\`` stand for ``(``, ``)`` and ``\\``.
    """

    tool_name: str
    content: str | None = None

    @classmethod
    def parse(cls, text: str) -> PermissionRule:
        """Parse ``Tool`` / ``Tool(content)``.

        Raises:
            ValueError: empty rule, bad tool name, unbalanced parentheses, or
                text after the closing parenthesis.
        """
        text = text.strip()
        open_at = _first_unescaped(text, "(")
        if open_at < 0:
            name, content = text, None
            if _last_unescaped(text, ")") >= 0:
                raise ValueError(f"rule {text!r} has ')' without '('")
        else:
            close_at = _last_unescaped(text, ")")
            if close_at < open_at:
                raise ValueError(f"rule {text!r} has '(' without a closing ')'")
            if close_at != len(text) - 1:
                raise ValueError(f"rule {text!r} has text after the closing ')'")
            name = text[:open_at]
            raw = text[open_at + 1 : close_at]
            content = None if raw in ("", "*") else _unescape_content(raw)
        if not _TOOL_NAME.fullmatch(name):
            raise ValueError(f"rule {text!r} does not start with a tool name")
        return cls(name, content)

    def __str__(self) -> str:
        if self.content is None:
            return self.tool_name
        escaped = self.content.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
        return f"{self.tool_name}({escaped})"


def _is_escaped(text: str, index: int) -> bool:
    backslashes = 0
    while index > 0 and text[index - 1] == "\\":
        backslashes += 1
        index -= 1
    return backslashes % 2 == 1


def _first_unescaped(text: str, char: str) -> int:
    return next((i for i, c in enumerate(text) if c == char and not _is_escaped(text, i)), -1)


def _last_unescaped(text: str, char: str) -> int:
    for i in range(len(text) - 1, -1, -1):
        if text[i] == char and not _is_escaped(text, i):
            return i
    return -1


def _unescape_content(raw: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(raw):
        if raw[i] == "\\" and i + 1 < len(raw) and raw[i + 1] in "()\\":
            out.append(raw[i + 1])
            i += 2
        else:
            out.append(raw[i])
            i += 1
    return "".join(out)


RuleBehavior: TypeAlias = Literal["allow", "ask", "deny"]
"""Which list a rule comes from; deny and ask rules match a command by any part."""
