"""The public namespaces: explicit re-exports only, and nothing private leaking out."""

from __future__ import annotations

import ast
import importlib
import inspect
import types
from pathlib import Path

import pytest

PUBLIC_PACKAGES = ["trioexec", "trioexec.testing", "trioexec.tools"]
# Public subpackages may be reached as attributes once imported; ``annotations``
# is bound by ``from __future__ import annotations``.
ALLOWED_EXTRA = {"annotations", "anthropic", "mcp", "testing", "tools"}


def explicit_reexports(module: types.ModuleType) -> tuple[set[str], set[str]]:
    """Names bound by ``from x import N as N`` and names defined in the file itself."""
    tree = ast.parse(Path(inspect.getfile(module)).read_text(encoding="utf-8"))
    reexported: set[str] = set()
    defined: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module != "__future__":
            for alias in node.names:
                if alias.asname is not None and alias.asname == alias.name:
                    reexported.add(alias.name)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined.add(node.name)
        elif isinstance(node, ast.Assign):
            defined.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            defined.add(node.target.id)
    return reexported, defined - {"__all__"}


@pytest.mark.parametrize("name", PUBLIC_PACKAGES)
def test_every_name_in_all_exists(name: str) -> None:
    module = importlib.import_module(name)
    exported = module.__all__
    assert len(exported) == len(set(exported)), "duplicates in __all__"
    missing = [item for item in exported if not hasattr(module, item)]
    assert not missing


@pytest.mark.parametrize("name", PUBLIC_PACKAGES)
def test_every_name_in_all_is_reexported_explicitly(name: str) -> None:
    module = importlib.import_module(name)
    reexported, defined = explicit_reexports(module)
    exported = set(module.__all__)
    assert exported <= reexported | defined, "exported without `import X as X`"
    assert reexported <= exported, "re-exported with `as` but missing from __all__"


@pytest.mark.parametrize(
    "name",
    [
        "trioexec",
        "trioexec.testing",
        "trioexec.tools",
    ],
)
def test_no_private_name_leaks(name: str) -> None:
    module = importlib.import_module(name)
    exported = set(module.__all__)
    assert not {item for item in exported if item.startswith("_") and not item.startswith("__")}
    public_attributes = {item for item in dir(module) if not item.startswith("_")}
    assert public_attributes - exported - ALLOWED_EXTRA == set()
    for item in exported:
        value = getattr(module, item)
        assert not isinstance(value, types.ModuleType), f"{item} is a module"


@pytest.mark.parametrize("name", PUBLIC_PACKAGES)
def test_star_import_gives_exactly_all(name: str) -> None:
    namespace: dict[str, object] = {}
    exec(f"from {name} import *", namespace)
    namespace.pop("__builtins__")
    assert set(namespace) == set(importlib.import_module(name).__all__)


def test_exported_objects_come_from_the_package() -> None:
    import trioexec

    for item in trioexec.__all__:
        value = getattr(trioexec, item)
        module_name = getattr(value, "__module__", None)
        if module_name is not None and (inspect.isclass(value) or inspect.isfunction(value)):
            assert module_name.split(".")[0] == "trioexec", item


def test_core_run_api_is_public() -> None:
    import trioexec

    for item in (
        "run_tools",
        "open_streaming_executor",
        "StreamingExecutor",
        "RunOutcome",
        "Turn",
        "Observer",
        "CallEvent",
        "ToolUse",
        "ToolResult",
        "ProgressUpdate",
        "ResultUpdate",
        "partition_tool_calls",
        "function_tool",
        "ToolRegistry",
        "DEFAULT_MAX_CONCURRENCY",
    ):
        assert item in trioexec.__all__, item
