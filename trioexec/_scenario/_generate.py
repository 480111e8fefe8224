"""Generated scenarios for benchmarks and load tests: many calls, mixed safe and unsafe.

The generator is seeded, so a given ``(calls, seed)`` is always the same file.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .._models import JSONObject, JSONValue

__all__ = ["generate_scenario"]


def generate_scenario(
    calls: int, *, seed: int = 0, unsafe_share: float = 0.1, mode: str = "stream"
) -> JSONObject:
    """A scenario document of ``calls`` calls arriving over virtual time.

    Most calls are concurrency-safe reads and searches (some report progress,
    some change the context, a few fail without cascading); ``unsafe_share`` of
    them are edits or writing shell commands that must run alone.
    """
    rng = random.Random(seed)
    tools: list[JSONValue] = [
        {
            "name": "Read",
            "concurrency_safe": True,
            "interrupt_behavior": "cancel",
            "max_result_size_chars": None,
        },
        {"name": "Grep", "concurrency_safe": True, "interrupt_behavior": "cancel"},
        {"name": "Edit", "concurrency_safe": False, "interrupt_behavior": "block"},
        {"name": "Bash", "concurrency_safe": "input", "interrupt_behavior": "block"},
    ]
    entries: list[JSONValue] = []
    at = 0.0
    for index in range(calls):
        at = round(at + rng.choice((0.0, 0.001, 0.002, 0.005)), 6)
        sleep = round(rng.uniform(0.0, 0.05), 6)
        inp: JSONObject = {"sleep": sleep, "output": f"result {index}"}
        if rng.random() < unsafe_share:
            if rng.random() < 0.5:
                name = "Edit"
                inp["file_path"] = f"src/module_{index % 97}.py"
            else:
                name = "Bash"
                inp["command"] = f"make target_{index % 13}"
                inp["concurrency_safe"] = False
        else:
            roll = rng.random()
            if roll < 0.4:
                name = "Read"
                inp["file_path"] = f"src/module_{index % 97}.py"
            elif roll < 0.8:
                name = "Grep"
                inp["pattern"] = f"symbol_{index % 31}"
            else:
                name = "Bash"
                inp["command"] = f"git log -n {index % 7 + 1}"
                inp["concurrency_safe"] = True
            if rng.random() < 0.2:
                inp["steps"] = [{"progress": {"done": 1}}, {"sleep": 0.001}]
            if rng.random() < 0.05:
                inp["steps"] = [{"context": {f"seen_{index % 11}": index}}]
            if rng.random() < 0.02:
                del inp["output"]
                inp["error"] = f"failure {index}"
        entries.append({"id": f"toolu_{index:05d}", "name": name, "at": at, "input": inp})
    return {
        "trioexec_scenario": 1,
        "name": f"generated-{calls}-seed-{seed}",
        "mode": mode,
        "tools": tools,
        "calls": entries,
    }
