"""Turn an exception raised by a tool into the text the model sees (``formatError``)."""

from __future__ import annotations

from .._groups import leaves

__all__ = ["exception_text", "fit_text", "format_tool_error"]

_MAX_CHARS = 10_000
_HALF = 5_000


def format_tool_error(error: BaseException) -> str:
    """The model-facing text for a tool's exception.

    A shell-style error (an ``int`` attribute ``exit_code`` with ``stderr`` /
    ``stdout`` strings) reads ``Exit code N`` then stderr then stdout; any other
    error reads as its message, or, when it has none, its type
    (``TooSlowError (raised with no message)``: ``trio.fail_after`` inside a
    tool).  A shell error with no output reads ``Command failed with no
    output``; text over 10,000 characters keeps the first and last 5,000 with a
    marker giving how many characters were cut.  An exception whose
    ``__str__`` (or ``exit_code`` / ``stderr`` / ``stdout``) raises still gets a
    text: its type name and ``<exception str() failed>``, as Python's own
    traceback prints it.  Never raises an ``Exception``.
    """
    if isinstance(error, BaseExceptionGroup):
        # A tool failing inside its own nursery: show what failed, not the wrapper.
        members = leaves(error)
        if len(members) == 1:
            return format_tool_error(members[0])
        return _fit("\n".join(format_tool_error(leaf) for leaf in members))
    try:
        exit_code = getattr(error, "exit_code", None)
        if isinstance(exit_code, int) and not isinstance(exit_code, bool):
            parts = [
                f"Exit code {exit_code}",
                _str_attr(error, "stderr"),
                _str_attr(error, "stdout"),
            ]
        else:
            text = str(error)
            if not text.strip():
                # An exception without a message (trio.TooSlowError from fail_after): its
                # type is what the model can act on.
                return f"{type(error).__name__} (raised with no message)"
            parts = [text]
        return _fit("\n".join(part for part in parts if isinstance(part, str) and part).strip())
    except Exception:  # a broken __str__ or property: the error itself is still the answer
        return f"{type(error).__name__}: <exception str() failed>"


def exception_text(error: BaseException) -> str:
    """``str(error)``, or ``<exception str() failed>`` when its ``__str__`` raises."""
    try:
        return str(error)
    except Exception:
        return "<exception str() failed>"


def _fit(message: str) -> str:
    """The empty-output text, or the 10,000-character cut with its marker."""
    return fit_text(message or "Command failed with no output")


def fit_text(message: str) -> str:
    """``message``, or over 10,000 characters its first and last 5,000 with a cut marker."""
    if len(message) <= _MAX_CHARS:
        return message
    cut = len(message) - _MAX_CHARS
    return f"{message[:_HALF]}\n\n... [{cut} characters truncated] ...\n\n{message[-_HALF:]}"


def _str_attr(error: BaseException, name: str) -> str:
    value = getattr(error, name, "")
    return value if isinstance(value, str) else ""
