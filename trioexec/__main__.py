"""``python -m trioexec``: the ``trioexec`` command line, for when the script is not on PATH."""

from __future__ import annotations

import sys

from ._cli._main import main

__all__: list[str] = []

if __name__ == "__main__":
    sys.exit(main())
