"""Bash in the OS sandbox: Claude Code's ``sandbox`` settings, enforced with bubblewrap.

With ``"sandbox": {"enabled": true}`` every Bash call runs under bubblewrap:
the working directory is writable, the rest of the file system read-only,
``denyRead`` paths empty, and there is no network but a proxy to the
``allowedDomains``.  ``autoAllowBashIfSandboxed`` (the default) lets a
confined command run although a bare ``Bash`` ask rule would ask; deny
rules still deny.  What the sandbox refused is appended to the result, for
the model.  Real processes; on a machine where bubblewrap cannot run, the
example says so and stops.

Run: python examples/sandbox.py
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import trio

import trioexec
from trioexec import GuardRails, ToolUse
from trioexec.tools import BashTool

SETTINGS = {
    "sandbox": {"enabled": True, "filesystem": {"denyRead": ["./secrets"]}},
    "permissions": {"ask": ["Bash"], "deny": ["Bash(git push:*)"]},
}


async def main(root: Path) -> None:
    guard = GuardRails.from_settings(SETTINGS)
    assert guard.sandbox is not None
    if not guard.sandbox.active:
        print(f"bubblewrap cannot run here: {guard.sandbox.unavailable}")
        return
    calls = [
        ToolUse("toolu_1", "Bash", {"command": "echo built > out.txt && cat out.txt"}),
        ToolUse("toolu_2", "Bash", {"command": f"echo x > {root.parent}/escaped.txt"}),
        ToolUse("toolu_3", "Bash", {"command": 'cat secrets/token; echo "[$?]"'}),
        ToolUse("toolu_4", "Bash", {"command": "git push origin main"}),
    ]
    for call in calls:
        outcome = await trioexec.run_tools([call], [BashTool()], guard=guard, cwd=root)
        (result,) = outcome.results
        lines = result.text.replace(str(root.parent), "{tmp}").splitlines()
        command = str(call.input["command"]).replace(str(root.parent), "{tmp}")
        print(f"{command:<32} -> {' | '.join(lines[:2])}")
        if "<sandbox_violations>" in lines:  # what the sandbox refused, for the model
            refused = lines[lines.index("<sandbox_violations>") + 2].split(";")[0]
            print(f"{'':<32}    {refused}")


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as folder:
        workspace = Path(folder).resolve() / "workspace"
        (workspace / "secrets").mkdir(parents=True)
        (workspace / "secrets" / "token").write_text("hunter2\n")
        trio.run(main, workspace)
