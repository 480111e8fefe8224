"""Fixtures only; shared helpers live in ``helpers.py`` (``from helpers import ...``).

The suite is deterministic: anything that waits runs on trio's ``MockClock``
(the ``autojump_clock`` fixture), settled state is asserted after
``trio.testing.wait_all_tasks_blocked()``, and real time is used only where
real processes run.
"""

from __future__ import annotations

import pytest
from helpers import Recorder


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()
