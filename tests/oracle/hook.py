"""A hook command for the oracle lane: log stdin, then answer as told.

``python hook.py LOG ANSWER``: appends ``{"stdin": <the hook's JSON>}`` as one
line to LOG, then writes ANSWER's ``stdout`` and ``stderr`` and exits with its
``exit`` (ANSWER is a JSON object; every key optional).
"""

from __future__ import annotations

import json
import os
import sys


def main() -> int:
    log, answer = sys.argv[1], json.loads(sys.argv[2])
    data = sys.stdin.read()
    line = json.dumps({"stdin": json.loads(data), "raw_ends_with_newline": data.endswith("\n")})
    fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, (line + "\n").encode())
    finally:
        os.close(fd)
    out = answer.get("stdout", "")
    sys.stdout.write(out if isinstance(out, str) else json.dumps(out))
    sys.stderr.write(answer.get("stderr", ""))
    return int(answer.get("exit", 0))


if __name__ == "__main__":
    sys.exit(main())
