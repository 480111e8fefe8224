"""Turn an exception raised by a tool into the text the model sees (``formatError``)."""

from __future__ import annotations

__all__ = ["format_tool_error"]

_MAX_CHARS = 10_000
_HALF = 5_000


def format_tool_error(error: BaseException) -> str:
    """The model-facing text for a tool's exception.

    A shell-style error (an ``int`` attribute ``exit_code`` with ``stderr`` /
    ``stdout`` strings) reads ``Exit code N`` then stderr then stdout; any other
    error reads as its message.  Empty text becomes ``Command failed with no
    output``; text over 10,000 characters keeps the first and last 5,000 with a
    marker giving how many characters were cut.
    """
    exit_code = getattr(error, "exit_code", None)
    if isinstance(exit_code, int) and not isinstance(exit_code, bool):
        parts = [f"Exit code {exit_code}", _str_attr(error, "stderr"), _str_attr(error, "stdout")]
    else:
        parts = [str(error)]
    message = "\n".join(part for part in parts if part).strip() or "Command failed with no output"
    if len(message) <= _MAX_CHARS:
        return message
    cut = len(message) - _MAX_CHARS
    return f"{message[:_HALF]}\n\n... [{cut} characters truncated] ...\n\n{message[-_HALF:]}"


def _str_attr(error: BaseException, name: str) -> str:
    value = getattr(error, name, "")
    return value if isinstance(value, str) else ""
