"""Fixtures only; shared helpers live in ``helpers.py`` (``from helpers import ...``).

The suite is deterministic: anything that waits runs on trio's ``MockClock``
(the ``autojump_clock`` fixture), settled state is asserted after
``trio.testing.wait_all_tasks_blocked()``, and real time is used only where
real processes run.
"""

from __future__ import annotations

import attrs
import pytest
from helpers import Recorder

import trioexec._core._policy
from trioexec import Policy


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture
def claude_code_texts(monkeypatch: pytest.MonkeyPatch) -> None:
    """A run given no policy answers stopped calls in Claude Code's words.

    For the files that assert a mechanism (a cascade, an interrupt, an abort)
    by the exact Claude Code text it produces; the default texts themselves
    (trioexec's explaining ones) are asserted in ``test_policy.py``,
    ``test_texts.py`` and the scenario goldens.
    """
    plain = attrs.evolve(Policy(), synthetic_texts="claude-code")
    monkeypatch.setattr(trioexec._core._policy, "DEFAULT_POLICY", plain)
