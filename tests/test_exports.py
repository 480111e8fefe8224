"""The public namespaces: explicit re-exports only, and nothing private leaking out."""

from __future__ import annotations

import ast
import importlib
import inspect
import pickle
import types
from pathlib import Path

import pytest

PUBLIC_PACKAGES = [
    "trioexec",
    "trioexec.anthropic",
    "trioexec.hooks",
    "trioexec.lowlevel",
    "trioexec.mcp",
    "trioexec.permissions",
    "trioexec.results",
    "trioexec.scenario",
    "trioexec.testing",
    "trioexec.tools",
]
# Public submodules may be reached as attributes; ``annotations`` is bound by
# ``from __future__ import annotations``.
ALLOWED_EXTRA = {
    "annotations",
    "anthropic",
    "hooks",
    "lowlevel",
    "mcp",
    "permissions",
    "results",
    "scenario",
    "testing",
    "tools",
}
TOP_LEVEL_LIMIT = 46
"""What an application uses every day; everything else lives in a face."""


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


@pytest.mark.parametrize("name", PUBLIC_PACKAGES)
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


def test_core_run_api_is_at_the_top_level() -> None:
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
        "function_tool",
        "ToolRegistry",
        "GuardRails",
        "load_settings",
    ):
        assert item in trioexec.__all__, item


def test_the_top_level_holds_only_what_an_application_uses_daily() -> None:
    import trioexec

    assert len(trioexec.__all__) <= TOP_LEVEL_LIMIT


@pytest.mark.parametrize(
    ("face", "names"),
    [
        ("trioexec.permissions", ["PermissionContext", "RuleBehavior", "check_permission_chain"]),
        ("trioexec.hooks", ["HookSet", "HookEvent", "HookInput", "HookOutput"]),
        ("trioexec.results", ["finalize_result", "choose_replacements", "BudgetPlan"]),
        ("trioexec.lowlevel", ["partition_tool_calls", "authorize_call", "run_process_group"]),
    ],
)
def test_building_blocks_live_in_their_face(face: str, names: list[str]) -> None:
    import trioexec

    module = importlib.import_module(face)
    assert getattr(trioexec, face.rsplit(".", 1)[1]) is module  # ``import trioexec`` is enough
    for item in names:
        assert item in module.__all__, item
        assert item not in trioexec.__all__, item


def test_process_internals_are_not_in_the_tools_face() -> None:
    import trioexec.tools

    for item in ("run_process_group", "ProcessResult", "live_group_members", "split_command"):
        assert item not in trioexec.tools.__all__, item


def _public_objects() -> list[tuple[str, str, object]]:
    found = []
    for name in PUBLIC_PACKAGES:
        module = importlib.import_module(name)
        for item in module.__all__:
            value = getattr(module, item)
            if inspect.isclass(value) or inspect.isfunction(value):
                found.append((name, item, value))
    return found


def test_each_public_object_is_exported_by_one_face() -> None:
    faces: dict[int, list[str]] = {}
    for name, item, value in _public_objects():
        faces.setdefault(id(value), []).append(f"{name}.{item}")
    assert [paths for paths in faces.values() if len(paths) > 1] == []


@pytest.mark.parametrize("name", PUBLIC_PACKAGES)
def test_public_objects_name_their_face_as_their_module(name: str) -> None:
    wrong = [
        f"{item}: {value.__module__}"  # type: ignore[attr-defined]
        for face, item, value in _public_objects()
        if face == name and value.__module__ != name  # type: ignore[attr-defined]
    ]
    assert wrong == []


def test_reprs_and_pickles_use_the_public_path() -> None:
    import trioexec
    from trioexec.permissions import PermissionRule
    from trioexec.tools import ReadTool

    assert repr(trioexec.Tool) == "<class 'trioexec.Tool'>"
    assert ReadTool.__module__ == "trioexec.tools"
    assert trioexec.Tool.match_rule_content.__module__ == "trioexec"
    rule = PermissionRule("Bash", "npm test:*")
    assert pickle.loads(pickle.dumps(rule)) == rule
    assert b"trioexec.permissions" in pickle.dumps(rule)


def test_type_hints_of_public_classes_still_resolve() -> None:
    import typing

    import trioexec
    from trioexec.hooks import HookInput
    from trioexec.lowlevel import PreToolUseVerdict

    for cls in (trioexec.ToolUse, trioexec.CallContext, HookInput, PreToolUseVerdict):
        hints = typing.get_type_hints(cls)
        assert hints, cls
    assert typing.get_type_hints(trioexec.CallContext)["cwd"] is Path
