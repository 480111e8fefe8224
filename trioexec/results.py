"""Large results (SPEC §7): persisting one result, and the per-message budget.

The runners apply both; these are for applications that build messages
themselves.  :func:`choose_replacements` is the budget's pure decision,
:func:`apply_message_budget` the decision plus the file writes.
"""

from __future__ import annotations

from . import _util
from ._results._budget import DEFAULT_MESSAGE_BUDGET as DEFAULT_MESSAGE_BUDGET
from ._results._budget import BudgetPlan as BudgetPlan
from ._results._budget import apply_message_budget as apply_message_budget
from ._results._budget import choose_replacements as choose_replacements
from ._results._persist import DEFAULT_MAX_RESULT_CHARS as DEFAULT_MAX_RESULT_CHARS
from ._results._persist import finalize_result as finalize_result

__all__ = [
    "DEFAULT_MAX_RESULT_CHARS",
    "DEFAULT_MESSAGE_BUDGET",
    "BudgetPlan",
    "apply_message_budget",
    "choose_replacements",
    "finalize_result",
]

_util.fixup_module_metadata(__name__, globals())
