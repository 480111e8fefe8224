"""A small application: three tools of its own, a settings file, a Python hook, a model loop.

The "model" is a script of three assistant turns (no API key needed), so the
loop is the one a real agent runs: send the tools, get tool_use blocks, run them
with guard rails, send the next user message (results, then the hooks' notes).

* ``forecast``: an ``async def`` returning a dict (the model reads JSON);
* ``inventory``: a plain ``def`` (blocking work runs in a worker thread);
* ``deploy``: a tool with ``timeout=``, whose failure or denial stops the calls after it.

The settings deny ``deploy(prod)`` and allow the rest; one Python hook audits every
deploy.  Run it: ``python examples/three_tools.py``.
"""

from __future__ import annotations

import json
from typing import Any, Literal

import trio

import trioexec
from trioexec.hooks import HookInput, HookOutput


@trioexec.function_tool(concurrency_safe=True)
async def forecast(city: str, unit: Literal["C", "F"] = "C") -> dict[str, object]:
    """Tomorrow's forecast for a city."""
    return {"city": city, "high": 21 if unit == "C" else 70, "unit": unit, "sky": "clear"}


@trioexec.function_tool(concurrency_safe=True)
def inventory(sku: str) -> dict[str, int]:
    """How many units of a product are in stock (reads a slow local database)."""
    return {"in_stock": len(sku) * 7}


@trioexec.function_tool(
    timeout=30,
    cancels_siblings_on_error=True,
    rule_matcher=lambda content, args, behavior: content == args.target,
)
async def deploy(target: Literal["staging", "prod"]) -> str:
    """Deploy the current build to an environment."""
    return f"deployed to {target}"


SETTINGS = {  # as in .claude/settings.json
    "permissions": {"allow": ["forecast", "inventory", "deploy(staging)"], "deny": ["deploy(prod)"]}
}

audit_log: list[str] = []


async def audit(hook_input: HookInput) -> HookOutput | None:
    """A PreToolUse hook: log every deploy, and remind the model how deploys go."""
    audit_log.append(f"{hook_input.tool_name} {json.dumps(hook_input.tool_input)}")
    return HookOutput(additional_context="Deploys are logged; prod needs a release ticket.")


SCRIPT: list[list[trioexec.ToolUse]] = [  # what the model asks for, turn by turn
    [
        trioexec.ToolUse("toolu_1", "forecast", {"city": "Oslo"}),
        trioexec.ToolUse("toolu_2", "inventory", {"sku": "umbrella"}),
    ],
    [trioexec.ToolUse("toolu_3", "deploy", {"target": "staging"})],
    [
        trioexec.ToolUse("toolu_4", "deploy", {"target": "prod"}),
        trioexec.ToolUse("toolu_5", "forecast", {"city": "Bergen", "unit": "F"}),
    ],
]


async def main() -> None:
    tools: list[trioexec.Tool[Any]] = [forecast, inventory, deploy]
    guard = trioexec.GuardRails.from_settings(trioexec.load_settings(SETTINGS))
    guard = guard.with_python_hook("PreToolUse", "deploy", audit)
    policy = trioexec.Policy(synthetic_texts="trioexec")  # stopped calls say why
    state = trioexec.ContentReplacementState()
    messages: list[trioexec.JSONObject] = []
    request_tools = trioexec.ToolRegistry(tools).to_api()  # what the model is sent
    print("tools:", ", ".join(str(tool["name"]) for tool in request_tools))
    for turn, calls in enumerate(SCRIPT, start=1):
        outcome = await trioexec.run_tools(calls, tools, guard=guard, policy=policy)
        message = await trioexec.build_user_message(
            outcome.updates, state=state, session_dir=None, limits=outcome.result_limits
        )
        messages.append(message.to_api())
        print(f"turn {turn}:")
        for result in message.results:
            print(f"  {result.tool_use_id} is_error={result.is_error}  {result.text[:110]}")
        for attachment in message.attachments:
            print(f"  + note for {attachment.tool_use_id}: {attachment.kind}")
    print("audited:", "; ".join(audit_log))
    # The tools are still the functions: a unit test calls them directly.
    assert await forecast("Oslo") == {"city": "Oslo", "high": 21, "unit": "C", "sky": "clear"}
    assert inventory("mug") == {"in_stock": 21}


if __name__ == "__main__":
    trio.run(main)
