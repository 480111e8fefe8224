"""``docs/architecture.md`` lists every module of the package, and only modules that exist."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "trioexec"
MAP = ROOT / "docs" / "architecture.md"


def _listed() -> list[str]:
    return re.findall(r"^- `trioexec/([^`]+\.py)`: \S", MAP.read_text(encoding="utf-8"), re.M)


def test_the_module_map_lists_every_module_of_the_package_once() -> None:
    modules = sorted(str(path.relative_to(PACKAGE)) for path in PACKAGE.rglob("*.py"))
    listed = _listed()
    assert sorted(listed) == modules
    assert len(set(listed)) == len(listed)


def test_the_module_map_describes_each_module_by_its_docstrings_first_line() -> None:
    for line in MAP.read_text(encoding="utf-8").splitlines():
        found = re.match(r"- `trioexec/([^`]+\.py)`: (.*)", line)
        if found is None:
            continue
        text = (PACKAGE / found.group(1)).read_text(encoding="utf-8")
        # The first words of the description are the module docstring's own.
        assert found.group(2).split("`")[0][:20].strip("`") in text, found.group(1)


def test_every_relative_module_reference_in_a_docstring_names_a_module_that_exists() -> None:
    stale = []
    for path in PACKAGE.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        for found in re.finditer(
            r":(?:mod|func|class|data|meth|attr):`~?(\.+)([A-Za-z_]\w*)", text
        ):
            base = path.parent
            for _ in range(len(found.group(1)) - 1):
                base = base.parent
            name = found.group(2)
            if not (base / f"{name}.py").exists() and not (base / name).is_dir():
                line = text.count("\n", 0, found.start()) + 1
                stale.append(f"{path.relative_to(ROOT)}:{line}: {found.group(0)}")
    assert stale == []
