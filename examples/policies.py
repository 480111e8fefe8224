"""The same turn under trioexec's rules and Claude Code's: Policy presets and one varied knob.

Three calls stream in: a slow test run and a fast read, both safe, and a Bash
call that fails at 1 s.  trioexec (the default policy) cancels the siblings of
the failing call and releases results in call order; Claude Code 2.1.88 also
cancels them, because the tool is called Bash, but releases results as they
complete; 2.1.161 cancels nothing.  ``attrs.evolve`` varies one knob of a
preset.  MockClock: instant.  Run: python examples/policies.py
"""

from __future__ import annotations

import attrs
import trio
import trio.testing

import trioexec
from trioexec import CallContext, Policy, ProgressSender, ToolUse


@attrs.frozen
class ShellInput:
    command: str


FAKE_SHELL = {"npm test": (3.0, ""), "ls dist/": (1.0, "ls: cannot access 'dist/'")}


@trioexec.function_tool(
    name="Bash", input_type=ShellInput, concurrency_safe=True, cancels_siblings_on_error=True
)
async def shell(args: ShellInput, ctx: CallContext, progress: ProgressSender) -> str:
    seconds, failure = FAKE_SHELL[args.command]
    await trio.sleep(seconds)
    if failure:
        raise RuntimeError(f"Exit code 2\n{failure}")
    return "240 passed"


@attrs.frozen
class ReadInput:
    file_path: str


@trioexec.function_tool(name="Read", input_type=ReadInput, concurrency_safe=True)
async def read(args: ReadInput, ctx: CallContext, progress: ProgressSender) -> str:
    await trio.sleep(0.5)
    return f"(contents of {args.file_path})"


CALLS = [
    ToolUse("toolu_1", "Bash", {"command": "npm test"}),
    ToolUse("toolu_2", "Read", {"file_path": "CHANGELOG.md"}),
    ToolUse("toolu_3", "Bash", {"command": "ls dist/"}),
]


async def run(label: str, policy: Policy) -> None:
    start = trio.current_time()
    async with trioexec.open_streaming_executor([shell, read], policy=policy) as executor:
        for call in CALLS:
            executor.add_tool(call)
        released = [u async for u in executor.remaining() if isinstance(u, trioexec.ResultUpdate)]
    print(f"{label} (done after {trio.current_time() - start:g} s)")
    for update in released:
        result = update.result
        text = result.text.replace("\n", " | ")
        print(f"  {result.tool_use_id} is_error={result.is_error!s:5}  {text[:64]}")


async def main() -> None:
    await run("trioexec", Policy())  # the default: the same as passing no policy
    await run("claude-code-2.1.88", Policy.preset("claude-code-2.1.88"))
    await run("claude-code-2.1.161", Policy.preset("claude-code-2.1.161"))
    in_order = attrs.evolve(Policy.preset("claude-code-2.1.161"), result_order="arrival")
    await run("claude-code-2.1.161, results in call order", in_order)
    try:
        Policy.preset("claude-code-3")
    except trioexec.ConfigurationError as exc:
        print(exc)


if __name__ == "__main__":
    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
