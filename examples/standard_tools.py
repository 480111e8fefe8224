"""The standard tools on a temporary workspace: Read, Grep and Bash, with real files and processes.

``default_tools(root)`` gives Read, Write, Edit, Glob, Grep and Bash, the file
tools confined to ``root``.  Read numbers lines like ``cat -n``, Grep reports
``path:line:text``, a read-only Bash command in the working directory runs
without asking, a path outside the root is refused, and a failing command
reads ``Exit code N`` first.  Real subprocesses: no MockClock here.

Run: python examples/standard_tools.py
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import trio

import trioexec
from trioexec import ToolUse
from trioexec.tools import default_tools

APP = 'def greet(name):\n    # TODO: use the preferred name\n    return f"hello {name}"\n'


def show(outcome: trioexec.RunOutcome, folder: str) -> None:
    for result in outcome.results:
        text = result.text.replace(folder, "{workspace}").rstrip("\n")
        print(f"{result.tool_use_id} is_error={result.is_error}")
        print("    " + text.replace("\n", "\n    "))


async def main(root: Path) -> None:
    tools = default_tools(root)
    calls = [
        ToolUse("toolu_1", "Read", {"file_path": "src/app.py"}),
        ToolUse("toolu_2", "Grep", {"pattern": "TODO", "output_mode": "content"}),
        ToolUse("toolu_3", "Bash", {"command": "ls src && wc -l src/app.py"}),
        ToolUse("toolu_4", "Read", {"file_path": "../elsewhere.txt"}),  # outside the root
    ]
    safe = [b.is_concurrency_safe for b in trioexec.lowlevel.partition_tool_calls(calls, tools)]
    print(f"one batch of concurrency-safe calls: {safe == [True]}")
    show(await trioexec.run_tools(calls, tools, cwd=root), str(root))
    # A failing command gets a run of its own: a Bash error cancels its siblings.
    failing = [ToolUse("toolu_5", "Bash", {"command": "cat missing.txt"})]
    show(await trioexec.run_tools(failing, tools, cwd=root), str(root))


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as folder:
        workspace = Path(folder).resolve()
        (workspace / "src").mkdir()
        (workspace / "src" / "app.py").write_text(APP)
        trio.run(main, workspace)
