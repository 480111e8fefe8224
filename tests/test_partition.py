"""Pure partitioning (SPEC §2): order kept, maximal safe runs, fail-closed safety."""

from __future__ import annotations

import itertools
from typing import Any

from helpers import make_tool, use
from hypothesis import given
from hypothesis import strategies as st

from trioexec import CallContext, ProgressSender, ToolRegistry, ToolUse, function_tool
from trioexec.lowlevel import Batch
from trioexec.lowlevel import partition_tool_calls as partition
from trioexec.testing import SCRIPTED_INPUT_SCHEMA

READ = make_tool("Read")
GREP = make_tool("Grep")
EDIT = make_tool("Edit", safe=False)
BASH = make_tool("Bash", safe="input", cascades=True)
TOOLS = ToolRegistry([READ, GREP, EDIT, BASH])


def ids(batches: list[Batch]) -> list[tuple[bool, list[str]]]:
    return [(b.is_concurrency_safe, [u.id for u in b.tool_uses]) for b in batches]


def test_the_six_call_example() -> None:
    uses = [
        use("A", "Read"),
        use("B", "Read"),
        use("C", "Grep"),
        use("D", "Bash", command="make", safe=False),
        use("E", "Read"),
        use("F", "Edit"),
    ]
    batches = partition(uses, TOOLS)
    assert ids(batches) == [
        (True, ["A", "B", "C"]),
        (False, ["D"]),
        (True, ["E"]),
        (False, ["F"]),
    ]
    assert batches[0].tool_uses == tuple(uses[:3])


def test_empty_turn_has_no_batches() -> None:
    assert partition([], TOOLS) == []


def test_consecutive_unsafe_calls_are_separate_batches() -> None:
    uses = [use("a", "Edit"), use("b", "Edit"), use("c", "Read"), use("d", "Read")]
    assert ids(partition(uses, TOOLS)) == [(False, ["a"]), (False, ["b"]), (True, ["c", "d"])]


def test_safety_is_decided_per_input() -> None:
    uses = [
        use("a", "Bash", command="ls", safe=True),
        use("b", "Read"),
        use("c", "Bash", command="rm x", safe=False),
        use("d", "Bash", command="cat y", safe=True),
    ]
    assert ids(partition(uses, TOOLS)) == [(True, ["a", "b"]), (False, ["c"]), (True, ["d"])]


def test_unknown_tool_is_unsafe() -> None:
    uses = [use("a", "Read"), use("b", "Nope"), use("c", "Read")]
    assert ids(partition(uses, TOOLS)) == [(True, ["a"]), (False, ["b"]), (True, ["c"])]


def test_input_failing_the_schema_is_unsafe() -> None:
    uses = [use("a", "Read"), use("b", "Read", sleep="long"), use("c", "Read", bogus=1)]
    assert ids(partition(uses, TOOLS)) == [(True, ["a"]), (False, ["b"]), (False, ["c"])]


def test_is_concurrency_safe_raising_means_unsafe() -> None:
    def explode(job: object) -> bool:
        raise RuntimeError("cannot tell")

    @function_tool(name="Odd", input_schema=SCRIPTED_INPUT_SCHEMA, concurrency_safe=explode)
    async def odd(job: dict[str, Any], ctx: CallContext, progress: ProgressSender) -> object:
        return "x"

    uses = [use("a", "Read"), use("b", "Odd"), use("c", "Read")]
    assert ids(partition(uses, [READ, odd])) == [(True, ["a"]), (False, ["b"]), (True, ["c"])]


def test_alias_resolves_for_safety() -> None:
    view = make_tool("View", aliases=("Cat",))
    uses = [use("a", "Cat"), use("b", "View")]
    assert ids(partition(uses, [view])) == [(True, ["a", "b"])]


def test_partition_does_not_touch_its_input() -> None:
    uses = [use("a", "Read"), use("b", "Edit")]
    before = list(uses)
    partition(uses, TOOLS)
    assert uses == before


kinds = st.sampled_from(["Read", "Grep", "Edit", "Bash-safe", "Bash-unsafe", "Nope"])


def make_use(index: int, kind: str) -> ToolUse:
    if kind.startswith("Bash"):
        return use(f"t{index}", "Bash", command="x", safe=kind == "Bash-safe")
    return use(f"t{index}", kind)


@given(st.lists(kinds, max_size=30))
def test_partition_properties(kind_list: list[str]) -> None:
    uses = [make_use(i, kind) for i, kind in enumerate(kind_list)]
    safe = [kind in ("Read", "Grep", "Bash-safe") for kind in kind_list]
    batches = partition(uses, TOOLS)
    # Order kept, nothing lost or duplicated.
    assert [u for b in batches for u in b.tool_uses] == uses
    for batch in batches:
        assert batch.tool_uses
        flags = [safe[uses.index(u)] for u in batch.tool_uses]
        if batch.is_concurrency_safe:
            assert all(flags)
        else:
            assert flags == [False]
    # Maximal: two safe batches are never adjacent.
    for first, second in itertools.pairwise(batches):
        assert not (first.is_concurrency_safe and second.is_concurrency_safe)
