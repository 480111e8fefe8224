"""The sandbox in the permission chain: ``autoAllowBashIfSandboxed``, exclusions, the escape field.

No command runs here: a :class:`Sandbox` built with a bubblewrap path is
active, and only the decisions are checked.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trioexec import CallContext, ToolUse
from trioexec._contract._permission_context import PermissionContext
from trioexec._guard._chain import check_permission_chain
from trioexec._guard._sandbox import Sandbox, SandboxSettings
from trioexec._guard._sandbox._bwrap import MountPlan, bwrap_argv
from trioexec._guard._sandbox._mounts import plan_mounts
from trioexec.tools import BashTool
from trioexec.tools._bash import BashInput

if TYPE_CHECKING:
    from pathlib import Path


def sandbox(**settings: object) -> Sandbox:
    return Sandbox(SandboxSettings(enabled=True, **settings), "/usr/bin/bwrap")  # type: ignore[arg-type]


async def decide(
    command: str,
    tmp_path: Path,
    *,
    ask: tuple[str, ...] = (),
    deny: tuple[str, ...] = (),
    box: Sandbox | None = None,
    disable: bool | None = None,
) -> str:
    permissions = PermissionContext(ask=ask, deny=deny, sandbox=box)
    tool = BashTool()
    parsed = BashInput(command, dangerouslyDisableSandbox=disable)
    ctx = CallContext(
        ToolUse("t", "Bash", {"command": command}), cwd=tmp_path, permissions=permissions
    )
    result = await check_permission_chain(tool, parsed, ctx, permissions)
    return result.behavior


async def test_a_confined_command_is_allowed_without_an_ask(tmp_path: Path) -> None:
    assert await decide("make build", tmp_path) == "ask"
    assert await decide("make build", tmp_path, box=sandbox()) == "allow"


async def test_a_bare_bash_ask_rule_is_skipped_for_a_confined_command(tmp_path: Path) -> None:
    assert await decide("make build", tmp_path, ask=("Bash",)) == "ask"
    assert await decide("make build", tmp_path, ask=("Bash",), box=sandbox()) == "allow"


async def test_deny_and_content_ask_rules_still_apply(tmp_path: Path) -> None:
    box = sandbox()
    assert await decide("git push origin", tmp_path, deny=("Bash(git push:*)",), box=box) == "deny"
    assert await decide("ls && git push", tmp_path, ask=("Bash(git push:*)",), box=box) == "ask"


async def test_auto_allow_can_be_turned_off(tmp_path: Path) -> None:
    box = sandbox(auto_allow_bash_if_sandboxed=False)
    assert await decide("make build", tmp_path, box=box) == "ask"


async def test_an_excluded_command_runs_unconfined_through_the_normal_chain(tmp_path: Path) -> None:
    box = sandbox(excluded_commands=("docker *",))
    assert not box.confines("make && docker run img")
    assert await decide("make && docker run img", tmp_path, box=box) == "ask"
    assert await decide("make", tmp_path, ask=("Bash",), box=box) == "allow"
    assert await decide("docker ps", tmp_path, ask=("Bash",), box=box) == "ask"


async def test_dangerously_disable_sandbox_goes_through_the_chain(tmp_path: Path) -> None:
    assert await decide("make", tmp_path, box=sandbox(), disable=True) == "ask"
    strict = sandbox(allow_unsandboxed_commands=False)
    assert strict.confines("make", disable=True)  # refused by validation, confined regardless


async def test_an_inactive_sandbox_allows_nothing_by_itself(tmp_path: Path) -> None:
    inactive = Sandbox(SandboxSettings(enabled=True), None, "no bubblewrap")
    assert await decide("make build", tmp_path, box=inactive) == "ask"


async def test_the_reading_still_denies_reads_of_read_denied_files(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("x", encoding="utf-8")
    permissions = PermissionContext(deny=("Read(.env)",), sandbox=sandbox())
    ctx = CallContext(ToolUse("t", "Bash", {}), cwd=tmp_path, permissions=permissions)
    result = await check_permission_chain(BashTool(), BashInput("cat .env"), ctx, permissions)
    assert result.behavior == "deny"


def test_mounts_are_ordered_so_the_read_only_and_hidden_paths_win() -> None:
    plan = MountPlan(
        writable=("/w",),
        read_only=("/w/.git/config",),
        empty_dirs=("/home/me/.ssh",),
        empty_files=("/w/.env",),
        readable=("/home/me/.ssh/known_hosts",),
    )
    argv = bwrap_argv("bwrap", plan, ["bash", "-c", "true"], cwd="/w")
    order = [argv.index(p) for p in ("/", "/w", "/w/.git/config", "/home/me/.ssh", "/w/.env")]
    assert order == sorted(order)
    assert argv.index("/home/me/.ssh/known_hosts") > argv.index("/home/me/.ssh")
    assert argv[argv.index("--") :] == ["--", "bash", "-c", "true"]
    for flag in ("--unshare-net", "--unshare-pid", "--die-with-parent"):
        assert flag in argv
    assert "--unshare-net" not in bwrap_argv("bwrap", plan, ["true"], cwd="/w", share_network=True)


def test_plan_protects_existing_paths_and_watches_missing_ones(tmp_path: Path) -> None:
    ws, tmp = tmp_path / "ws", tmp_path / "tmp"
    (ws / ".git" / "hooks").mkdir(parents=True)
    (ws / ".git" / "config").write_text("", encoding="utf-8")
    (ws / ".claude").mkdir()
    secret = tmp_path / "secret"
    secret.mkdir()
    tmp.mkdir()
    plan, watch = plan_mounts(cwd=ws, tmpdir=tmp, deny_read=[secret, tmp_path / "missing"])
    assert plan.writable == (str(ws), str(tmp), str(ws / ".git"))
    assert set(plan.read_only) == {str(ws / ".git" / p) for p in ("hooks", "config")} | {
        str(ws / ".claude")
    }
    assert str(ws / ".mcp.json") in watch.paths
    assert plan.empty_dirs == (str(secret),)
    (ws / ".mcp.json").write_text("{}", encoding="utf-8")
    assert watch.remove_created() == [str(ws / ".mcp.json")]
    assert not (ws / ".mcp.json").exists()


@pytest.mark.parametrize("field", ["excluded_commands", "allowed_domains"])
def test_sandbox_settings_are_frozen_data(field: str) -> None:
    settings = SandboxSettings()
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        setattr(settings, field, ("x",))


@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
def test_the_unix_socket_filter_is_built_for_the_common_machines(machine: str) -> None:
    from trioexec._guard._sandbox._seccomp import unix_socket_filter

    program = unix_socket_filter(machine)
    assert program is not None
    assert len(program) % 8 == 0  # whole struct sock_filter instructions
    assert unix_socket_filter("sparc64") is None


async def test_a_missing_working_directory_is_a_spawn_error_as_unconfined(tmp_path: Path) -> None:
    from trioexec.tools import ShellSpawnError

    permissions = PermissionContext(sandbox=sandbox())
    missing = tmp_path / "gone"
    ctx = CallContext(ToolUse("t", "Bash", {}), cwd=missing, permissions=permissions)
    with pytest.raises(ShellSpawnError, match="Cannot run the command in"):
        await BashTool().call(BashInput("true"), ctx, lambda _: None)


_PATHS = st.lists(
    st.lists(st.sampled_from(["a", "b", ".git", "hooks", "c"]), min_size=1, max_size=3).map(
        lambda parts: "/" + "/".join(parts)
    ),
    max_size=4,
    unique=True,
)


@settings(max_examples=80)
@given(_PATHS, _PATHS, _PATHS, _PATHS)
def test_every_restriction_is_mounted_after_every_writable_bind(
    writable: list[str], read_only: list[str], hidden: list[str], files: list[str]
) -> None:
    plan = MountPlan(
        writable=tuple(writable),
        read_only=tuple(read_only),
        empty_dirs=tuple(hidden),
        empty_files=tuple(files),
    )
    argv = bwrap_argv("bwrap", plan, ["true"], cwd="/")
    end = argv.index("--")
    binds = [i for i in range(end) if argv[i] == "--bind"]
    restrictions = [
        i for i in range(end) if argv[i] in ("--ro-bind", "--tmpfs") and argv[i + 1] != "/"
    ]
    if binds and restrictions:
        assert max(binds) < min(restrictions)  # a later bind would undo a restriction
    assert argv[:2] == ["bwrap", "--die-with-parent"]
    assert "--unshare-net" in argv[:end]
