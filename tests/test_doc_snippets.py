"""Every Python block in README.md and docs/ runs as written and passes ``mypy --strict``,
unless the line before it marks it a fragment, so the docs cannot drift from the code.

Markers (an HTML comment, invisible when the page is rendered), on the line right
before the fence:

* ``<!-- snippet: fragment -->``, optionally with a reason
  (``<!-- snippet: fragment (needs an API key) -->``): an excerpt, a signature
  listing, or a program that needs the network, an API key, bubblewrap or a
  terminal; it is neither run nor type-checked;
* ``<!-- snippets: fragments -->`` anywhere in a file: every block of the file
  is a fragment (a reference page of signatures) unless marked
  ``<!-- snippet: runs -->``.

Every other ``python`` block is a complete program: it runs in a subprocess from
the repository root (a time limit bounds a hung block; it is not a timing
assertion), and all of them are type-checked together in one ``mypy --strict``
run.  New pages are collected as they appear (``docs/**/*.md``).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import attrs
import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").rglob("*.md")])

_MARKER = re.compile(r"<!--\s*snippets?:\s*(?P<what>[a-z]+)\b[^>]*-->")
_FENCE = re.compile(r"^```(?P<lang>[A-Za-z0-9_+-]*)\s*$")
_PYTHON = {"python", "py", "python3"}


@attrs.frozen
class Snippet:
    page: Path
    line: int  # of the opening fence, 1-based
    code: str
    runs: bool

    @property
    def name(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def collect(page: Path) -> list[Snippet]:
    """The page's Python blocks; raises ValueError on a marker that marks nothing."""
    lines = page.read_text(encoding="utf-8").splitlines()
    all_fragments = any(
        (m := _MARKER.search(line)) and m["what"] == "fragments" for line in lines
    )
    found: list[Snippet] = []
    marker: tuple[int, str] | None = None
    inside: tuple[int, str, bool] | None = None  # (fence line, language, runs)
    body: list[str] = []
    for number, line in enumerate(lines, start=1):
        fence = _FENCE.match(line.strip()) if line.startswith("```") else None
        if inside is not None:
            if fence and not fence["lang"]:
                start, lang, runs = inside
                if lang in _PYTHON:
                    found.append(Snippet(page, start, "\n".join(body) + "\n", runs))
                inside, body = None, []
            else:
                body.append(line)
            continue
        match = _MARKER.search(line)
        if match and match["what"] in ("fragment", "runs"):
            marker = (number, match["what"])
            continue
        if match and match["what"] == "fragments":
            continue
        if match:
            raise ValueError(f"{page.name}:{number}: unknown snippet marker {match[0]!r}")
        if fence:
            lang = fence["lang"]
            if marker is not None and lang not in _PYTHON:
                raise ValueError(f"{page.name}:{marker[0]}: marks a {lang or 'plain'} block")
            what = marker[1] if marker is not None else None
            runs = what == "runs" or (what is None and not all_fragments)
            inside, marker = (number, lang, runs), None
            continue
        if marker is not None and line.strip():
            raise ValueError(f"{page.name}:{marker[0]}: the marker is not right before a block")
    return found


SNIPPETS = [snippet for page in PAGES for snippet in collect(page)]
RUNNABLE = [snippet for snippet in SNIPPETS if snippet.runs]


def test_the_pages_have_runnable_snippets_and_every_marker_marks_a_block() -> None:
    # collect() raised at import for a stray or unknown marker; the docs keep real programs
    assert {s.page.name for s in RUNNABLE} >= {"README.md", "ordered-gate.md", "cancellation.md"}


def _write(snippet: Snippet, into: Path) -> Path:
    stem = re.sub(r"[^A-Za-z0-9]+", "_", snippet.name).strip("_")
    path = into / f"snippet_{stem}.py"
    path.write_text(snippet.code, encoding="utf-8")
    return path


@pytest.mark.parametrize("snippet", RUNNABLE, ids=lambda s: s.name)
def test_the_snippet_runs_as_written(snippet: Snippet, tmp_path: Path) -> None:
    path = _write(snippet, tmp_path)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, str(path)],
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, f"{snippet.name} failed:\n{done.stdout}\n{done.stderr}"


def test_the_snippets_pass_mypy_strict(tmp_path: Path) -> None:
    api = pytest.importorskip("mypy.api")
    paths = [str(_write(snippet, tmp_path)) for snippet in RUNNABLE]
    out, err, status = api.run(
        [
            "--strict",
            "--no-error-summary",
            "--cache-dir",
            str(ROOT / ".mypy_cache"),
            *paths,
        ]
    )
    names = {_write(s, tmp_path).name: s.name for s in RUNNABLE}
    for file, name in names.items():
        out = out.replace(str(tmp_path / file), name)
    assert status == 0, out + err
