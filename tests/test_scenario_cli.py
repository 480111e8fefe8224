"""``trioexec scenario run|validate``: output, flags, and one-line errors with exit code 2."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from typing import TYPE_CHECKING, Any

import pytest

from trioexec._cli._main import main
from trioexec._version import __version__

if TYPE_CHECKING:
    from pathlib import Path


def scenario(**extra: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "trioexec_scenario": 1,
        "name": "cli",
        "tools": [{"name": "Read", "concurrency_safe": True, "interrupt_behavior": "cancel"}],
        "calls": [
            {"id": "toolu_1", "name": "Read", "at": 0, "input": {"sleep": 1, "output": "A"}},
            {"id": "toolu_2", "name": "Read", "at": 0.5, "input": {"sleep": 0.25, "output": "B"}},
        ],
    }
    doc.update(extra)
    return doc


def write(tmp_path: Path, doc: object, name: str = "s.json") -> str:
    path = tmp_path / name
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc), encoding="utf-8")
    return str(path)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_run_prints_the_spec_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, scenario())
    code, out, err = run(capsys, "scenario", "run", path, "--session-dir", str(tmp_path / "s"))
    assert (code, err) == (0, "")
    output = json.loads(out)
    assert list(output) == [
        "results",
        "events",
        "attachments",
        "context",
        "stopped_continuation",
        "session_dir",
    ]
    assert output["results"] == [
        {"tool_use_id": "toolu_1", "is_error": False, "content": "A"},
        {"tool_use_id": "toolu_2", "is_error": False, "content": "B"},
    ]
    assert output["events"][:2] == [
        {"t": 0.0, "id": "toolu_1", "kind": "queued"},
        {"t": 0.0, "id": "toolu_1", "kind": "started"},
    ]
    assert {"t": 1.0, "id": "toolu_2", "kind": "released"} in output["events"]
    assert output["session_dir"] == str(tmp_path / "s")
    assert output["stopped_continuation"] is False


@pytest.fixture
def temp_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where ``tempfile`` creates folders during the test (to see what is left behind)."""
    root = tmp_path / "tmp"
    root.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(root))
    return root


def test_default_session_dir_is_a_fresh_folder_removed_afterwards(
    tmp_path: Path, temp_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, scenario())
    code, out, err = run(capsys, "scenario", "run", path)
    assert (code, err) == (0, "")
    folder = json.loads(out)["session_dir"]
    assert "trioexec-scenario-" in folder
    assert not os.path.exists(folder)
    assert list(temp_root.iterdir()) == []


def test_keep_session_dir_keeps_the_folder_and_says_where(
    tmp_path: Path, temp_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, scenario())
    code, out, err = run(capsys, "scenario", "run", path, "--keep-session-dir")
    folder = json.loads(out)["session_dir"]
    assert code == 0
    assert err == f"trioexec scenario run: session folder kept: {folder}\n"
    assert os.path.isdir(folder)
    assert [p.name for p in temp_root.iterdir()] == [os.path.basename(folder)]


def test_a_given_session_dir_is_never_removed(
    tmp_path: Path, temp_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, scenario())
    code, _, err = run(capsys, "scenario", "run", path, "--session-dir", str(tmp_path / "s"))
    assert (code, err) == (0, "")
    assert (tmp_path / "s").is_dir()
    assert list(temp_root.iterdir()) == []


@pytest.mark.parametrize(
    ("where", "reason"),
    [("missing/trace.json", "No such file or directory"), (".", "Is a directory")],
)
def test_a_bad_trace_out_is_reported_before_the_run(
    tmp_path: Path,
    temp_root: Path,
    capsys: pytest.CaptureFixture[str],
    where: str,
    reason: str,
) -> None:
    path = write(tmp_path, scenario())
    bad = tmp_path / where
    code, out, err = run(capsys, "scenario", "run", path, "--trace-out", str(bad))
    assert (code, out) == (2, "")
    assert err == f"trioexec scenario run: error: {bad}: cannot write file: {reason}\n"
    assert list(temp_root.iterdir()) == []  # no session folder: the run never started


def test_timeline_flag_prints_the_chart(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, scenario())
    session = str(tmp_path / "x")
    code, out, _ = run(capsys, "scenario", "run", path, "--session-dir", session, "--timeline")
    assert code == 0
    assert out.startswith("scenario: cli (stream mode")
    assert "toolu_2 Read" in out


def test_trace_out_writes_chrome_trace_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, scenario())
    trace = tmp_path / "trace.json"
    code, out, _ = run(
        capsys,
        "scenario",
        "run",
        path,
        "--session-dir",
        str(tmp_path / "x"),
        "--trace-out",
        str(trace),
    )
    assert code == 0
    json.loads(out)
    events = json.loads(trace.read_text("utf-8"))["traceEvents"]
    spans = {(e["tid"], e["name"]) for e in events if e["ph"] == "X"}
    assert (2, "waiting for release") in spans


def test_trace_out_unwritable_is_a_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, scenario())
    bad = tmp_path / "missing" / "trace.json"
    code, _, err = run(
        capsys,
        "scenario",
        "run",
        path,
        "--session-dir",
        str(tmp_path / "x"),
        "--trace-out",
        str(bad),
    )
    assert code == 2
    assert err == (
        f"trioexec scenario run: error: {bad}: cannot write file: No such file or directory\n"
    )


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        (
            "{not json",
            "invalid JSON at line 1 column 2: Expecting property name enclosed in double quotes",
        ),
        (scenario(max_concurrency="3"), "max_concurrency: expected integer, got string"),
        (
            scenario(actions=[{"at": 1, "do": "explode"}]),
            'actions[0].do: unknown action "explode" '
            '(expected "interrupt", "abort", "discard" or "deadline")',
        ),
        (
            scenario(calls=[{"id": "toolu_1", "name": "Read", "at": -0.5}]),
            'calls[0] (id "toolu_1").at: must be a time >= 0, got -0.5',
        ),
        (
            '{"trioexec_scenario": 1, "tools": [], "calls": [], '
            '"actions": [{"at": Infinity, "do": "abort"}]}',
            "actions[0].at: must be finite, got Infinity",
        ),
        (
            scenario(calls=[{"id": "x", "name": "Read"}, {"id": "x", "name": "Read"}]),
            'calls[1] (id "x").id: duplicate call id, already used by calls[0]',
        ),
    ],
    ids=["invalid-json", "wrong-type", "unknown-do", "negative-time", "non-finite", "duplicate-id"],
)
@pytest.mark.parametrize("command", ["run", "validate"])
def test_bad_input_is_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str, doc: object, message: str
) -> None:
    path = write(tmp_path, doc)
    code, out, err = run(capsys, "scenario", command, path)
    assert code == 2
    assert out == ""
    assert err == f"trioexec scenario {command}: error: {path}: {message}\n"


@pytest.mark.parametrize("command", ["run", "validate"])
def test_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str) -> None:
    path = str(tmp_path / "nope.json")
    code, _, err = run(capsys, "scenario", command, path)
    assert code == 2
    assert err == (
        f"trioexec scenario {command}: error: {path}: cannot read file: No such file or directory\n"
    )


@pytest.mark.parametrize("command", ["run", "validate"])
def test_every_issue_is_a_line_in_the_same_format(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    calls = [{"id": "toolu_1", "name": "Read"}, {"id": "toolu_1", "name": "Read"}]
    path = write(tmp_path, scenario(calls=calls, colour="blue"))
    code, out, err = run(capsys, "scenario", command, path)
    assert (code, out) == (2, "")
    prefix = f"trioexec scenario {command}: error: {path}"
    assert err.splitlines() == [
        f'{prefix}: calls[1] (id "toolu_1").id: duplicate call id, already used by calls[0]',
        f"{prefix}: colour: unknown field",
    ]


def test_unknown_tool_call_is_not_an_input_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, scenario(calls=[{"id": "t", "name": "Nope"}]))
    code, out, _ = run(capsys, "scenario", "run", path, "--session-dir", str(tmp_path / "x"))
    assert code == 0
    assert json.loads(out)["results"] == [
        {
            "tool_use_id": "t",
            "is_error": True,
            "content": "<tool_use_error>Error: No such tool available: Nope</tool_use_error>",
        }
    ]


def test_validate_ok(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, scenario())
    assert run(capsys, "scenario", "validate", path) == (0, f"{path}: ok\n", "")


def test_validate_lists_every_issue(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, scenario(mode="fast", tools=[{"name": "Read", "bogus": 1}]))
    code, out, err = run(capsys, "scenario", "validate", path)
    assert (code, out) == (2, "")
    prefix = f"trioexec scenario validate: error: {path}"
    assert err.splitlines() == [  # document order: "mode" was written after "tools"
        f'{prefix}: tools[0] (name "Read").bogus: unknown field',
        f'{prefix}: mode: expected "stream" or "batch", got "fast"',
    ]


def test_session_dir_is_created_before_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, scenario())
    session = tmp_path / "a" / "b"
    code, _, err = run(capsys, "scenario", "run", path, "--session-dir", str(session))
    assert (code, err) == (0, "")
    assert session.is_dir()


def test_session_dir_that_is_a_file_fails_up_front(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, scenario())
    session = write(tmp_path, "not a folder", name="notes.txt")
    code, out, err = run(capsys, "scenario", "run", path, "--session-dir", session)
    assert (code, out) == (2, "")
    assert err == (
        f"trioexec scenario run: error: {session}: --session-dir exists and is not a directory\n"
    )


def test_session_dir_that_cannot_be_created_fails_up_front(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, scenario())
    session = str(tmp_path / "notes.txt" / "session")
    write(tmp_path, "not a folder", name="notes.txt")
    code, out, err = run(capsys, "scenario", "run", path, "--session-dir", session)
    assert (code, out) == (2, "")
    assert err == (
        f"trioexec scenario run: error: {session}: cannot create --session-dir: Not a directory\n"
    )


def test_session_dir_that_is_not_writable_fails_up_front(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Permission bits do not stop root, so the check itself is what is replaced here.
    path = write(tmp_path, scenario())
    session = tmp_path / "session"
    session.mkdir()
    real_access = os.access
    monkeypatch.setattr(
        os, "access", lambda p, mode: False if p == session else real_access(p, mode)
    )
    code, out, err = run(capsys, "scenario", "run", path, "--session-dir", str(session))
    assert (code, out) == (2, "")
    assert err == f"trioexec scenario run: error: {session}: --session-dir is not writable\n"


def test_a_bad_scenario_is_reported_before_the_session_dir_is_touched(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, scenario(mode="fast"))
    session = tmp_path / "session"
    code, _, err = run(capsys, "scenario", "run", path, "--session-dir", str(session))
    assert code == 2
    assert err == (
        f'trioexec scenario run: error: {path}: mode: expected "stream" or "batch", got "fast"\n'
    )
    assert not session.exists()


def usage_error(capsys: pytest.CaptureFixture[str], *argv: str) -> list[str]:
    """The stderr lines of a command line argparse refuses (exit code 2, nothing on stdout)."""
    with pytest.raises(SystemExit) as info:
        main(list(argv))
    out, err = capsys.readouterr()
    assert (info.value.code, out) == (2, "")
    return err.splitlines()


def test_argparse_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    lines = usage_error(capsys, "scenario", "run")
    assert lines[0].startswith("usage: trioexec scenario run ")
    assert lines[-1] == "trioexec scenario run: error: the following arguments are required: FILE"


def test_scenario_without_subcommand_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert usage_error(capsys, "scenario") == [
        "usage: trioexec scenario [-h] SUBCOMMAND ...",
        "trioexec scenario: error: the following arguments are required: SUBCOMMAND",
    ]


def test_bare_trioexec_prints_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("usage: trioexec [-h] [--version] COMMAND ...\n")
    assert "scenario" in out
    assert err == ""


@pytest.mark.parametrize(
    ("argv", "usage"),
    [
        (["demo", "--bogus"], "usage: trioexec demo [-h] [--json]"),
        (["scenario", "validate", "f.json", "--bogus"], "usage: trioexec scenario validate"),
        (["scenario", "run", "f.json", "--bogus"], "usage: trioexec scenario run"),
        (["--bogus"], "usage: trioexec [-h]"),
    ],
)
def test_unknown_argument_shows_the_subcommand_usage(
    capsys: pytest.CaptureFixture[str], argv: list[str], usage: str
) -> None:
    lines = usage_error(capsys, *argv)
    assert lines[0].startswith(usage)
    prog = usage.removeprefix("usage: ").split(" [")[0]
    assert lines[-1] == f"{prog}: error: unrecognized arguments: --bogus"


def python_m_trioexec(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "trioexec", *argv],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


def test_python_m_trioexec_version() -> None:
    proc = python_m_trioexec("--version")
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, f"trioexec {__version__}\n", "")


def test_real_process_has_no_traceback(tmp_path: Path) -> None:
    # Also checks that ``python -m trioexec`` exits with main()'s return code.
    path = write(tmp_path, scenario(calls=[{"id": 7, "name": "Read"}]))
    proc = python_m_trioexec("scenario", "run", path)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert (
        proc.stderr
        == f"trioexec scenario run: error: {path}: calls[0].id: expected string, got number\n"
    )
