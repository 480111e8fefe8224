"""The oracle lane runs only when asked for: ``pytest -m oracle tests/oracle``."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if "oracle" in (config.option.markexpr or ""):
        return
    chosen = [item for item in items if item.get_closest_marker("oracle") is None]
    left = [item for item in items if item.get_closest_marker("oracle") is not None]
    if left:
        config.hook.pytest_deselected(items=left)
        items[:] = chosen
