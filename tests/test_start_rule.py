"""The start rule on its own (``trioexec._core._start_rule``): no run, no trio, hand-made calls."""

from __future__ import annotations

from trioexec import ToolUse
from trioexec._core._call import Admission, Call
from trioexec._core._start_rule import ExecutingSet

SAFE = Admission(safe=True)
UNSAFE = Admission(safe=False)


def call(index: int, admission: Admission, *, interruptible: bool = False) -> Call:
    made = Call(index, ToolUse(f"t{index}", "Tool", {}), None, admission)
    if interruptible:
        made.scope = object()  # type: ignore[assignment]  # only "cancel" calls have a scope
    return made


def test_anything_starts_when_nothing_executes() -> None:
    executing = ExecutingSet(limit=2)
    assert executing.may_start(call(0, UNSAFE))
    assert executing.may_start(call(0, SAFE))


def test_a_safe_call_starts_beside_safe_calls_only() -> None:
    executing = ExecutingSet(limit=10)
    executing.add(call(0, SAFE))
    assert executing.may_start(call(1, SAFE))
    assert not executing.may_start(call(1, UNSAFE))


def test_nothing_starts_beside_an_unsafe_call_which_the_set_names() -> None:
    executing, unsafe = ExecutingSet(limit=10), call(3, UNSAFE)
    executing.add(unsafe)
    assert executing.unsafe_running == 3
    assert not executing.may_start(call(4, SAFE))
    executing.remove(unsafe)
    assert executing.unsafe_running is None
    assert executing.may_start(call(4, SAFE))


def test_the_limit_caps_how_many_calls_execute_at_once() -> None:
    executing = ExecutingSet(limit=2)
    first, second = call(0, SAFE), call(1, SAFE)
    executing.add(first)
    executing.add(second)
    assert len(executing) == 2
    assert not executing.may_start(call(2, SAFE))
    executing.remove(first)
    assert executing.may_start(call(2, SAFE))
    assert list(executing) == [second]


def test_interruptible_only_while_everything_executing_stops_on_an_interrupt() -> None:
    executing = ExecutingSet(limit=10)
    assert not executing.interruptible  # nothing executes
    stoppable, blocking = call(0, SAFE, interruptible=True), call(1, SAFE)
    executing.add(stoppable)
    assert executing.interruptible
    executing.add(blocking)
    assert not executing.interruptible
    executing.remove(blocking)
    assert executing.interruptible
