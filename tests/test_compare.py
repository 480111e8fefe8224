"""``benchmarks/compare.py`` writes its report and plot; its line rule and plot are right.

The report's figures are timings and are never asserted: the run checks that
the Markdown has every section and a row per size, and that the SVG is
well-formed XML with one series per runtime and one point per size.  The
line-counting rule and the plot's log scale are checked on inputs whose
answers are known.  The subprocess timeout bounds a hung run; it is not a
timing assertion.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from types import ModuleType

pytestmark = pytest.mark.twin  # the benchmark lane: python -m pytest -m twin

ROOT = Path(__file__).resolve().parent.parent
SVG = "{http://www.w3.org/2000/svg}"


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def quick_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("report")
    subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "compare.py"),
            "--quick",
            "--no-peers",
            "--sizes",
            "1",
            "10",
            "--samples",
            "40",
            "--memory-calls",
            "50",
            "--cascade-sizes",
            "10",
            "--out",
            str(out / "report.md"),
            "--json",
            str(out / "figures.json"),
        ],
        cwd=ROOT,
        check=True,
        capture_output=True,
        timeout=300,
    )
    return out


def test_quick_run_writes_every_section_with_a_row_per_size(quick_report: Path) -> None:
    doc = (quick_report / "report.md").read_text(encoding="utf-8")
    for heading in (
        "## The floors: raw trio against raw asyncio",
        "## Tool-phase cost per call",
        "## Streaming latencies",
        "## Answering every sibling after a cascading error",
        "## Memory per in-flight call",
        "## Lines of cancellation and teardown code",
        "## Reading",
    ):
        assert heading in doc
    tool_phase = doc.split("## Tool-phase cost per call")[1].split("\n## ")[0]
    tool_rows = [line for line in tool_phase.splitlines() if line.startswith(("| 1 |", "| 10 |"))]
    assert len(tool_rows) == 4  # a cost row and a ratio row per size
    assert "](report.svg)" in doc  # --out FILE.md: the plot beside it, linked by its name
    assert "load average" in doc
    assert "`trioexec/_core/_cancel.py`" in doc
    assert "`benchmarks/asyncio_twin/_scope.py`" in doc
    assert "| twin |" in doc  # the twin's latency row


def test_quick_run_writes_a_well_formed_log_log_plot(quick_report: Path) -> None:
    root = ET.parse(quick_report / "report.svg").getroot()
    assert root.tag == f"{SVG}svg"
    series = {g.get("data-name"): g for g in root.iter(f"{SVG}g")}
    assert {
        "trioexec run_tools",
        "trioexec streaming",
        "twin run_tools",
        "twin streaming",
        "raw trio",
        "raw asyncio",
    } <= set(series)
    for group in series.values():
        polyline = group.find(f"{SVG}polyline")
        assert polyline is not None
        assert len((polyline.get("points") or "").split()) == 2  # N = 1 and N = 10
    texts = {t.text for t in root.iter(f"{SVG}text")}
    assert {"calls in the turn (N)", "µs per call"} <= texts


def test_line_rule_skips_docstrings_comments_and_strings() -> None:
    lines = _load("_compare_lines")
    source = '''"""A module docstring that says cancel.

Still the docstring: nursery.
"""
import trio


async def run() -> None:
    """Cancel everything (a docstring)."""
    # cancel in a comment
    text = "cancel inside a string"
    async with trio.open_nursery() as nursery:
        nursery.cancel_scope.cancel()
    try:
        pass
    finally:
        print(text)
'''
    count = lines.count_source(source)
    # code: import, def, text =, async with, cancel(), try, pass, finally, print
    assert count.code == 9
    # teardown: async with ... nursery, nursery.cancel_scope.cancel(), finally
    assert count.teardown == 3


def test_plot_places_points_on_log_axes_and_refuses_an_empty_plot() -> None:
    svg_module = _load("_compare_svg")
    text = svg_module.log_log_plot(
        {"a": [(1, 1), (10, 10), (100, 100)], "b": [(10, 0)]},
        title="t",
        x_label="x",
        y_label="y",
    )
    root = ET.fromstring(text)
    circles = [(float(c.get("cx")), float(c.get("cy"))) for c in root.iter(f"{SVG}circle")]
    assert len(circles) == 3  # the non-positive point of "b" is left out, and "b" with it
    (x1, y1), (x2, y2), (x3, y3) = circles
    assert x2 - x1 == pytest.approx(x3 - x2)  # equal decades, equal steps
    assert y1 - y2 == pytest.approx(y2 - y3)
    assert y3 < y1  # larger values higher up
    with pytest.raises(ValueError, match="nothing to plot"):
        svg_module.log_log_plot({"b": [(0, 1)]}, title="t", x_label="x", y_label="y")


def test_shared_parts_count_what_a_subclass_inherits_and_what_it_names(tmp_path: Path) -> None:
    lines = _load("_compare_lines")
    (tmp_path / "core").mkdir()
    (tmp_path / "core" / "_run.py").write_text(
        "def helper():\n"
        "    return cancel_all()\n"
        "\n"
        "\n"
        "def cancel_all():\n"
        "    return 1\n"
        "\n"
        "\n"
        "def unused():\n"
        "    return 2\n"
        "\n"
        "\n"
        "class Base:\n"
        "    def kept(self):\n"
        "        return helper()\n"
        "\n"
        "    def replaced(self):\n"
        "        finally_ = 3\n"
        "        return finally_\n",
        encoding="utf-8",
    )
    (tmp_path / "twin.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "\n"
        "from core._run import Base\n"
        "\n"
        "if TYPE_CHECKING:\n"
        "    from core._run import unused\n"
        "\n"
        "\n"
        "class Twin(Base):\n"
        "    def replaced(self):\n"
        "        return 0\n",
        encoding="utf-8",
    )
    shared = lines.shared_parts(tmp_path, ("twin.py",), ("core/_run.py",))
    # Base (class line, kept: 2 lines), helper (2) and cancel_all (2) through the names
    # they use; not the overridden method, not the type-only import.
    assert shared == {"core/_run.py": lines.LineCount(code=7, teardown=2)}


def test_out_names_a_file_when_it_ends_in_md_and_a_directory_otherwise(tmp_path: Path) -> None:
    compare = _load_compare()
    assert compare.report_paths(tmp_path / "x.md") == (tmp_path / "x.md", tmp_path / "x.svg")
    assert compare.report_paths(tmp_path / "out") == (
        tmp_path / "out" / "trio-vs-asyncio.md",
        tmp_path / "out" / "trio-vs-asyncio.svg",
    )
    (tmp_path / "dir.md").mkdir()  # .md always names the file
    assert compare.report_paths(tmp_path / "dir.md")[0] == tmp_path / "dir.md"


def test_the_quick_report_writes_a_file_not_a_directory_and_states_each_tables_clock(
    quick_report: Path,
) -> None:
    assert (quick_report / "report.md").is_file()
    doc = (quick_report / "report.md").read_text(encoding="utf-8")
    for heading in (
        "## The floors",
        "## Tool-phase cost per call",
        "## Streaming latencies",
        "## Answering every sibling",
    ):
        section = doc.split(heading)[1].split("\n## ")[0]
        assert "Clock: CPU time (`time.process_time`)." in section, heading
        assert "load average" in section, heading


def test_every_timed_workload_reads_the_clock_the_report_names() -> None:
    import time

    compare = _load_compare()
    try:
        compare.use_clock("cpu")
        for table in compare.WORKLOADS:
            for run in table.values():
                module = sys.modules[run.__module__]
                assert module.time.perf_counter is time.process_time, run.__module__
    finally:
        compare.use_clock("wall")
    assert sys.modules["bench_streaming"].time.perf_counter is time.perf_counter


def _results_with_rounds(rounds: dict[str, list[float]]) -> object:
    doc = _load("_compare_doc")
    return doc.Results(
        machine={},
        command="",
        twin=False,
        tool_phase={},
        peers={},
        add_to_start={},
        progress={},
        cascade={},
        cascade_runs={},
        memory={},
        memory_calls=0,
        lines={},
        elapsed=0.0,
        rounds=rounds,
    )


@pytest.mark.parametrize(
    ("tops", "bottoms", "flagged"),
    [
        ([10.0, 10.0, 10.0], [5.0, 5.0, 5.0], False),  # ratio 2.0 every run
        ([10.0, 11.9, 10.0], [5.0, 5.0, 5.0], False),  # 2.0 .. 2.38: 19% apart
        ([10.0, 12.5, 10.0], [5.0, 5.0, 5.0], True),  # 2.0 .. 2.5: 25% apart
        ([10.0, 20.0], [5.0, 10.0], False),  # both slowed alike: the ratio holds
        ([10.0], [5.0], False),  # one run: nothing to disagree
    ],
)
def test_a_ratio_is_flagged_when_its_runs_disagree_by_more_than_20_percent(
    tops: list[float], bottoms: list[float], flagged: bool
) -> None:
    doc = _load("_compare_doc")
    results = _results_with_rounds({"t|a": tops, "t|b": bottoms})
    assert doc._flag(results, "t|a", "t|b") == (f" {doc.FLAG}" if flagged else "")


def _load_compare() -> ModuleType:
    for entry in (str(ROOT / "benchmarks"), str(ROOT)):
        if entry not in sys.path:
            sys.path.insert(0, entry)
    import compare

    return compare
