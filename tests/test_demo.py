"""`trioexec demo` does real work offline and answers every call, in order."""

from __future__ import annotations

import io
import json
import uuid
from pathlib import Path

import pytest

from trioexec._cli._demo import run_demo
from trioexec._cli._main import main
from trioexec._texts import sibling_stopped_message

_RUN_MARK = f"TRIOEXEC_DEMO_TEST_RUN={uuid.uuid4().hex}".encode()
"""Put in this process's environment, so the demo's processes inherit it: processes of
demos run by anything else on the machine (another test run) are never counted."""


def _demo_sleep_processes() -> set[int]:
    """Live ``sleep 30`` processes started by a demo of this test run (others are ignored)."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if cmdline.split(b"\0")[:2] == [b"sleep", b"30"] and _RUN_MARK in environ.split(b"\0"):
            found.add(int(entry.name))
    return found


def test_demo_json_answers_every_call_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    name, _, value = _RUN_MARK.decode().partition("=")
    monkeypatch.setenv(name, value)
    before = _demo_sleep_processes()
    out = io.StringIO()
    assert run_demo(as_json=True, out=out) == 0
    report = json.loads(out.getvalue())
    first, second = report["turns"]

    ids = [r["tool_use_id"] for r in first["results"]]
    assert ids == [
        f"toolu_0{n}_{s}"
        for n, s in [(1, "read"), (2, "grep"), (3, "glob"), (4, "ls"), (5, "log"), (6, "edit")]
    ]
    assert not any(r.get("is_error") for r in first["results"])
    log = first["results"][4]["content"]
    assert log.startswith("<persisted-output>\nOutput too large (")
    assert "Preview (first 2KB):" in log
    assert first["results"][5]["content"] == "The file src/app.py has been updated successfully."

    results = {r["tool_use_id"]: r for r in second["results"]}
    assert list(results) == [
        "toolu_07_wait",
        "toolu_08_readme",
        "toolu_09_deploy",
        "toolu_10_after",
    ]
    by = "Bash(ls deploy)"  # the model reads who stopped each call, and whether it had started
    wait, after = results["toolu_07_wait"], results["toolu_10_after"]
    assert wait["content"] == sibling_stopped_message(by, "Bash", started=True)
    assert after["content"] == sibling_stopped_message(by, "Grep", started=False)
    assert results["toolu_09_deploy"]["content"].startswith("Exit code 2")
    assert not results["toolu_08_readme"].get("is_error")
    reasons = {e["id"]: e.get("reason") for e in second["events"] if e["kind"] == "cancelled"}
    assert reasons == {"toolu_07_wait": "sibling_error", "toolu_10_after": "sibling_error"}
    # The cancelled `sleep 30` left no process behind.
    assert _demo_sleep_processes() <= before
    user_message = second["user_message"]
    assert user_message["role"] == "user"
    assert [
        b["tool_use_id"] for b in user_message["content"] if b["type"] == "tool_result"
    ] == list(results)


def test_demo_text_output_through_the_cli(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo"]) == 0
    text = capsys.readouterr().out
    assert "turn 1" in text
    assert "turn 2" in text
    assert "cancelled" in text
    assert "Every tool_use got exactly one tool_result" in text
    timeline = {line.split()[0]: line for line in text.splitlines() if "│" in line}
    assert "✗" in timeline["toolu_07_wait"]  # cancelled by the failing ls
    assert "✗" in timeline["toolu_09_deploy"]  # the failing ls itself
    assert "✗" in timeline["toolu_10_after"]  # never started
    assert "✓" in timeline["toolu_08_readme"]
    assert "\x1b[" not in text  # not a terminal: plain lines, no redrawing


@pytest.mark.parametrize(
    "interrupt",
    [KeyboardInterrupt(), BaseExceptionGroup("nursery", [KeyboardInterrupt()])],
    ids=["bare", "in a nursery's group"],
)
def test_ctrl_c_in_a_command_is_one_line_and_exit_130(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], interrupt: BaseException
) -> None:
    def interrupted(**_: object) -> int:
        raise interrupt

    monkeypatch.setattr("trioexec._cli._demo.run_demo", interrupted)
    assert main(["demo"]) == 130
    assert capsys.readouterr().err == "trioexec demo: interrupted\n"


def test_an_error_that_is_not_an_interrupt_still_propagates(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken(**_: object) -> int:
        raise BaseExceptionGroup("nursery", [KeyboardInterrupt(), ValueError("bug")])

    monkeypatch.setattr("trioexec._cli._demo.run_demo", broken)
    with pytest.raises(BaseExceptionGroup):
        main(["demo"])
