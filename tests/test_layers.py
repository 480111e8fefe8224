"""The package's layering, read from its source with ``ast``: imports run one way only.

Four rules: each package imports only the packages below it in
``PACKAGE_LAYERS`` (the tree ``docs/architecture.md`` draws); no import cycle
anywhere in the package (type-only and function-local imports included: a cycle
papered over by either is still a cycle in the design); the pure modules (no
I/O, no event loop) import no trio, directly or through another module of the
package; the public faces only re-export what private modules define.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "trioexec"

PURE = [
    "trioexec._core._call",
    "trioexec._errors",
    "trioexec._guard._file_access",
    "trioexec._core._gate",
    "trioexec._hooks._output",
    "trioexec._models",
    "trioexec._core._taskless",
    "trioexec._core._partition",
    "trioexec._contract._path_access",
    "trioexec._contract._permission_context",
    "trioexec._guard._protected",
    "trioexec._contract._rules",
    "trioexec._core._start_rule",
    "trioexec._shell._programs",
    "trioexec._shell._syntax",
    "trioexec._shell._views",
    "trioexec._shell._walk",
    "trioexec._shell._words",
    "trioexec._shell._writes",
    "trioexec._texts",
    "trioexec._contract._tool",
    "trioexec._util",
    "trioexec._contract._validation",
    "trioexec._shell._read_only",
]
"""Modules that must be importable, and testable, without trio.  (``_contract._function_tool``
is not one: a plain ``def`` tool runs in ``trio.to_thread``.)"""

PACKAGE_LAYERS: dict[str, set[str]] = {
    "vocabulary": set(),
    "_contract": {"vocabulary"},
    "_results": {"vocabulary", "_contract"},
    "_shell": {"vocabulary"},
    "_hooks": {"vocabulary", "_contract"},
    "_guard": {"vocabulary", "_contract", "_hooks", "_shell"},
    "_core": {"vocabulary", "_contract", "_results", "_hooks", "_guard"},
    "tools": {"vocabulary", "_contract", "_results", "_shell", "_guard"},
    "_mcp": {"vocabulary", "_contract"},
    "_anthropic": {"vocabulary", "_contract", "_results", "_guard", "_core"},
    "_scenario": {"vocabulary", "_contract", "_results", "_hooks", "_guard", "_core"},
    "testing": {"vocabulary", "_scenario"},
    "_cli": {
        "vocabulary", "_contract", "_results", "_shell", "_hooks", "_guard", "_core",
        "tools", "_mcp", "_anthropic", "_scenario",
    },
}
"""Which packages each package may import (``vocabulary``: the flat private modules).

The faces (``trioexec``, ``trioexec.hooks``, ... and ``__main__``) may import any
private package; no private package imports a face.
"""

FACE_STATEMENTS = (ast.ImportFrom, ast.Import, ast.Expr)
"""What a face may contain besides ``__all__``: re-exports, its docstring, one call."""


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


MODULES = _modules()


def _is_package(name: str) -> bool:
    return MODULES[name].name == "__init__.py"


def _resolve(name: str, node: ast.ImportFrom) -> list[str]:
    """The package modules an ``from ... import ...`` statement in ``name`` imports."""
    if node.level:
        base = name.split(".") if _is_package(name) else name.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)]
        target = ".".join([*base, node.module] if node.module else base)
    else:
        target = node.module or ""
    found = set()
    for alias in node.names:
        sub = f"{target}.{alias.name}"
        if sub in MODULES:  # ``from . import _x`` imports the module _x
            found.add(sub)
        elif target in MODULES:  # a name defined by the module itself
            found.add(target)
    return sorted(found)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(name: str, *, runtime_only: bool) -> tuple[set[str], set[str]]:
    """(package modules, outside top-level packages) that module ``name`` imports."""
    tree = ast.parse(MODULES[name].read_text(encoding="utf-8"))
    inside: set[str] = set()
    outside: set[str] = set()

    def visit(node: ast.AST) -> None:
        if runtime_only and isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.ImportFrom):
            if node.level == 0 and not (node.module or "").startswith("trioexec"):
                outside.add((node.module or "").split(".")[0])
            else:
                inside.update(_resolve(name, node))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("trioexec"):
                    if alias.name in MODULES:
                        inside.add(alias.name)
                else:
                    outside.add(alias.name.split(".")[0])
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    inside.discard(name)
    return inside, outside


def _graph(*, runtime_only: bool) -> dict[str, set[str]]:
    return {name: _imports(name, runtime_only=runtime_only)[0] for name in MODULES}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of ``graph`` as a path that returns to its start, or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def walk(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (found := walk(nxt)) is not None:
                return found
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (found := walk(start)) is not None:
            return found
    return None


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


def test_the_import_reader_sees_relative_type_only_and_local_imports() -> None:
    graph = _graph(runtime_only=False)
    assert "trioexec._contract._rules" in graph["trioexec._contract._permission_context"]
    assert "trioexec._contract._tool" in graph["trioexec.tools._base"]  # ``from .._tool import``
    assert graph["trioexec"] >= {"trioexec._core._batch", "trioexec._contract._tool"}


def _package_of(name: str) -> str:
    """The entry of ``PACKAGE_LAYERS`` a module belongs to, or ``"face"``."""
    parts = name.split(".")
    if len(parts) == 1 or parts[1] == "__main__":
        return "face"
    if len(parts) >= 3 or _is_package(name):
        return parts[1]
    return "vocabulary" if parts[1].startswith("_") else "face"


def test_every_package_imports_only_the_packages_below_it() -> None:
    wrong = []
    for name, targets in _graph(runtime_only=False).items():
        source = _package_of(name)
        if source == "face":
            continue
        allowed = PACKAGE_LAYERS[source] | {source}
        wrong += [f"{name} -> {t}" for t in sorted(targets) if _package_of(t) not in allowed]
    assert wrong == []


def test_the_package_layers_form_no_cycle() -> None:
    assert _cycle(PACKAGE_LAYERS) is None
    assert set(PACKAGE_LAYERS) == {_package_of(n) for n in MODULES} - {"face"}


def test_no_import_cycle_anywhere_in_the_package() -> None:
    cycle = _cycle(_graph(runtime_only=False))
    assert cycle is None, "import cycle: " + " -> ".join(cycle or ())


def test_importing_trioexec_loads_no_test_framework() -> None:
    # trio.testing imports pytest when pytest is installed: an application
    # importing trioexec would pay for (and carry the objects of) both.
    code = (
        "import sys, trioexec, trioexec.tools\n"
        "framework = ('trio.testing', 'pytest', 'hypothesis', 'asyncio')\n"
        "loaded = [m for m in framework if m in sys.modules]\n"
        "print(' '.join(loaded))"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stdout.split() == []


@pytest.mark.parametrize("name", PURE)
def test_pure_modules_import_no_trio(name: str) -> None:
    runtime = _graph(runtime_only=True)
    seen: set[str] = set()
    todo = [name]
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        seen.add(module)
        outside = _imports(module, runtime_only=True)[1]
        assert "trio" not in outside, f"{name} imports trio through {module}"
        todo.extend(runtime[module])


FACES = [name for name, path in MODULES.items() if not path.name.startswith("_")]
FACES += [name for name in MODULES if _is_package(name)]


@pytest.mark.parametrize("name", sorted(set(FACES) - {"trioexec._scenario"}))
def test_faces_define_nothing(name: str) -> None:
    tree = ast.parse(MODULES[name].read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = [t.id for t in targets if isinstance(t, ast.Name)]
            assert names == ["__all__"], f"{name} defines {names} (line {node.lineno})"
        else:
            assert isinstance(node, FACE_STATEMENTS), (
                f"{name} defines a {type(node).__name__} (line {node.lineno})"
            )
