"""Permission rules, modes and the permission chain (SPEC §6).

:class:`PermissionContext` holds the ``allow`` / ``ask`` / ``deny`` rules and
the mode; :func:`check_permission_chain` decides one call the way
:class:`~trioexec.GuardRails` does.  The matchers are for your own tools'
``match_rule_content``, which is told the rule's :data:`RuleBehavior`.
:class:`PathAccess` declares the path a tool reads or writes (so ``Read`` or
``Edit`` rules govern it), and :func:`protected_path_reason` says why a write
target (``.git/config``, ``~/.bashrc``) must always be asked about.
:class:`SettingsFile` names a settings file and its scope, as
:func:`~trioexec.default_settings_paths` returns them.
"""

from __future__ import annotations

from . import _util
from ._contract._path_access import PathAccess as PathAccess
from ._contract._permission_context import PermissionContext as PermissionContext
from ._contract._permission_context import PermissionMode as PermissionMode
from ._contract._permission_context import PermissionModeName as PermissionModeName
from ._contract._rules import PermissionRule as PermissionRule
from ._contract._rules import RuleBehavior as RuleBehavior
from ._guard._bash_rules import match_bash_rule as match_bash_rule
from ._guard._chain import check_permission_chain as check_permission_chain
from ._guard._path_rules import match_path_rule as match_path_rule
from ._guard._protected import protected_path_reason as protected_path_reason
from ._guard._settings import SettingsFile as SettingsFile
from ._guard._settings import SettingsScope as SettingsScope
from ._guard._settings import SettingsSource as SettingsSource
from ._shell._syntax import split_bash_command as split_bash_command

__all__ = [
    "PathAccess",
    "PermissionContext",
    "PermissionMode",
    "PermissionModeName",
    "PermissionRule",
    "RuleBehavior",
    "SettingsFile",
    "SettingsScope",
    "SettingsSource",
    "check_permission_chain",
    "match_bash_rule",
    "match_path_rule",
    "protected_path_reason",
    "split_bash_command",
]

_util.fixup_module_metadata(__name__, globals())
