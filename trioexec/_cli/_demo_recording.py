"""The demo's built-in material: a small workspace and two recorded assistant messages.

Each message is a list of ``(pause_seconds, event)`` pairs in Anthropic
streaming-event form (``content_block_start``, ``input_json_delta``,
``content_block_stop``), as a model would stream them.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["RECORDED_TURNS", "RecordedEvent", "write_workspace"]

RecordedEvent = tuple[float, dict[str, object]]

_APP = '''"""A tiny service."""

import json


def greet(name: str) -> str:
    # TODO: greet people by their preferred name
    return f"Hello, {name}!"


def load_config(path: str) -> dict[str, object]:
    # TODO: validate the config file
    with open(path) as f:
        return json.load(f)
'''

_UTIL = '''"""Helpers."""


def slugify(text: str) -> str:
    # TODO: handle unicode
    return "-".join(text.lower().split())
'''

_README = "# tiny service\n\nRun `python -m src.app`.\n"


def _build_log() -> str:
    lines = [
        f"2026-11-29T10:{i // 60 % 60:02d}:{i % 60:02d} INFO worker[{i % 7}] step {i} ok "
        f"duration={(i * 37) % 1000}ms"
        for i in range(1200)
    ]
    lines[900] = "2026-11-29T10:15:00 ERROR worker[3] step 900 failed: connection reset"
    return "\n".join(lines) + "\n"


def write_workspace(root: Path) -> None:
    """Create the demo's files under ``root`` (which must exist)."""
    (root / "src").mkdir()
    (root / "logs").mkdir()
    (root / "src" / "app.py").write_text(_APP)
    (root / "src" / "util.py").write_text(_UTIL)
    (root / "README.md").write_text(_README)
    (root / "logs" / "build.log").write_text(_build_log())


def _text(index: int, text: str) -> list[RecordedEvent]:
    events: list[RecordedEvent] = [
        (
            0.0,
            {
                "type": "content_block_start",
                "index": index,
                "content_block": {"type": "text", "text": ""},
            },
        )
    ]
    for word in text.split(" "):
        delta = {"type": "text_delta", "text": word + " "}
        events.append((0.02, {"type": "content_block_delta", "index": index, "delta": delta}))
    events.append((0.0, {"type": "content_block_stop", "index": index}))
    return events


def _tool(
    index: int, tool_id: str, name: str, tool_input: dict[str, object]
) -> list[RecordedEvent]:
    block = {"type": "tool_use", "id": tool_id, "name": name, "input": {}}
    events: list[RecordedEvent] = [
        (0.05, {"type": "content_block_start", "index": index, "content_block": block})
    ]
    text = json.dumps(tool_input)
    for start in range(0, len(text), 14):
        delta = {"type": "input_json_delta", "partial_json": text[start : start + 14]}
        events.append((0.015, {"type": "content_block_delta", "index": index, "delta": delta}))
    events.append((0.0, {"type": "content_block_stop", "index": index}))
    return events


def _grep(pattern: str, path: str) -> dict[str, object]:
    return {"pattern": pattern, "path": path, "output_mode": "content"}


def _bash(command: str, description: str) -> dict[str, object]:
    return {"command": command, "description": description}


_EDIT: dict[str, object] = {
    "file_path": "src/app.py",
    "old_string": "# TODO: greet people by their preferred name\n",
    "new_string": "",
}


def _message(*blocks: list[RecordedEvent]) -> list[RecordedEvent]:
    events: list[RecordedEvent] = [(0.0, {"type": "message_start"})]
    for block in blocks:
        events.extend(block)
    events.append((0.02, {"type": "message_delta", "delta": {"stop_reason": "tool_use"}}))
    events.append((0.0, {"type": "message_stop"}))
    return events


RECORDED_TURNS: list[tuple[str, list[RecordedEvent]]] = [
    (
        "Explore in parallel, persist a large output, then edit",
        _message(
            _text(0, "Let me look at the code and the build log."),
            _tool(1, "toolu_01_read", "Read", {"file_path": "src/app.py"}),
            _tool(2, "toolu_02_grep", "Grep", _grep("TODO", "src")),
            _tool(3, "toolu_03_glob", "Glob", {"pattern": "**/*.py"}),
            _tool(4, "toolu_04_ls", "Bash", _bash("sleep 0.6 && ls -la src", "Settle, then list")),
            _tool(5, "toolu_05_log", "Bash", _bash("cat logs/build.log", "Show the log")),
            _tool(6, "toolu_06_edit", "Edit", _EDIT),
        ),
    ),
    (
        "A failing shell command cancels its running siblings",
        _message(
            _text(0, "Now let me wait for the server and check the deploy folder."),
            _tool(1, "toolu_07_wait", "Bash", _bash("sleep 30", "Wait for the server")),
            _tool(2, "toolu_08_readme", "Read", {"file_path": "README.md"}),
            _tool(3, "toolu_09_deploy", "Bash", _bash("ls deploy", "List deploy files")),
            _tool(4, "toolu_10_after", "Grep", _grep("ERROR", "logs")),
        ),
    ),
]
"""Two assistant messages; the second one's ``ls deploy`` fails and cascades."""
