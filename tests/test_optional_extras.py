"""An optional integration imported without its extra names the command that installs it."""

from __future__ import annotations

import importlib
import sys

import pytest


@pytest.mark.parametrize(
    ("face", "private", "missing", "extra"),
    [
        ("trioexec.mcp", ("trioexec._mcp._client",), "httpx2", "mcp"),
        ("trioexec.mcp", ("trioexec._mcp._client",), "mcp", "mcp"),
        (
            "trioexec.anthropic",
            ("trioexec._anthropic._turn", "trioexec._anthropic._agent"),
            "anthropic",
            "anthropic",
        ),
    ],
)
def test_importing_a_face_without_its_extra_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch, face: str, private: tuple[str, ...], missing: str, extra: str
) -> None:
    monkeypatch.setitem(sys.modules, missing, None)  # as if not installed
    for name in (face, *private):
        monkeypatch.delitem(sys.modules, name, raising=False)
    with pytest.raises(ModuleNotFoundError) as caught:
        importlib.import_module(face)
    assert f"pip install 'trioexec[{extra}]'" in str(caught.value)
    assert repr(missing) in str(caught.value)
    assert caught.value.name == missing
    assert isinstance(caught.value, ImportError)  # `except ImportError:` still catches it


def test_the_public_faces_import_with_their_extras_installed() -> None:
    for face in ("trioexec.mcp", "trioexec.anthropic"):
        assert importlib.import_module(face).__name__ == face


def test_settings_file_and_function_tool_are_importable_from_public_modules() -> None:
    import trioexec.permissions
    from trioexec import function_tool
    from trioexec.lowlevel import FunctionTool
    from trioexec.permissions import SettingsFile

    @function_tool
    async def ping() -> str:
        return "pong"

    assert isinstance(ping, FunctionTool)
    assert SettingsFile("x.json", "user").scope == "user"
    assert trioexec.permissions.SettingsFile.__module__ == "trioexec.permissions"
