"""A failing shell command cancels its siblings; the turn goes on.

``shell`` sets ``cancels_siblings_on_error`` (as the standard Bash tool does): when
``ls deploy`` fails at t=1 s, the run's executing calls are cancelled, a call of a
later batch never starts, and a call that already finished keeps its real result.
A second run on the same Turn works normally: sibling cancellation never cancels
the turn.  MockClock: instant.  Run: python examples/sibling_error.py
"""

from __future__ import annotations

import attrs
import trio
import trio.testing

import trioexec
from trioexec import CallContext, ProgressSender, ToolUse

FAKE_SHELL = {  # command -> (seconds it takes, exit code, output)
    "sleep 30": (30, 0, ""),
    "ls deploy": (1, 2, "ls: cannot access 'deploy': No such file or directory"),
    "make build": (5, 0, "built"),
}


@attrs.frozen
class ShellInput:
    command: str


@trioexec.function_tool(
    input_type=ShellInput,
    concurrency_safe=lambda args: not args.command.startswith("make"),  # per input
    cancels_siblings_on_error=True,
)
async def shell(args: ShellInput, ctx: CallContext, progress: ProgressSender) -> str:
    seconds, exit_code, output = FAKE_SHELL[args.command]
    await trio.sleep(seconds)
    if exit_code:
        raise RuntimeError(f"Exit code {exit_code}\n{output}")  # an error result
    return output


@attrs.frozen
class ReadInput:
    file_path: str


@trioexec.function_tool(input_type=ReadInput, concurrency_safe=True)
async def read(args: ReadInput, ctx: CallContext, progress: ProgressSender) -> str:
    await trio.sleep(0.5 if args.file_path == "notes.txt" else 2)
    return f"(contents of {args.file_path})"


async def main() -> None:
    calls = [
        ToolUse("toolu_1", "read", {"file_path": "notes.txt"}),  # done at 0.5 s
        ToolUse("toolu_2", "shell", {"command": "sleep 30"}),  # still running at 1 s
        ToolUse("toolu_3", "shell", {"command": "ls deploy"}),  # fails at 1 s
        ToolUse("toolu_4", "read", {"file_path": "todo.txt"}),  # still running at 1 s
        ToolUse("toolu_5", "shell", {"command": "make build"}),  # unsafe: a later batch
    ]
    turn = trioexec.Turn()
    outcome = await trioexec.run_tools(calls, [shell, read], turn=turn)
    for result in outcome.results:
        text = result.text.replace("\n", " | ")
        print(f"{result.tool_use_id} is_error={result.is_error!s:5}  {text}")
    again = await trioexec.run_tools([ToolUse("toolu_6", "read", {"file_path": "notes.txt"})],
                                     [shell, read], turn=turn)  # fmt: skip
    print(f"next run on the same turn: {again.results[0].text} ({turn!r})")


if __name__ == "__main__":
    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
