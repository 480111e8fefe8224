"""The ordered gate on its own (``trioexec._core._gate``): no run, no trio, hand-set call states."""

from __future__ import annotations

from trioexec import ToolResult, ToolUse
from trioexec._core._call import Admission, Call, CallOutcome, CallState
from trioexec._core._gate import OrderedGate, ResultOrder

SAFE = Admission(safe=True)


def calls(count: int) -> list[Call]:
    return [Call(i, ToolUse(f"t{i}", "Tool", {}), None, SAFE) for i in range(count)]


def complete(gate: OrderedGate, call: Call, *, sibling_error: bool = False) -> None:
    call.state = "completed"
    call.outcome = CallOutcome(
        ToolResult(call.tool_use.id, "x", is_error=sibling_error),
        cancel_reason="sibling_error" if sibling_error else None,
    )
    gate.completed(call)


def release(gate: OrderedGate, run: list[Call], *, unsafe_running: int | None = None) -> list[int]:
    """Release everything the gate yields that is completed; the indices, in release order."""
    out = []
    for call in gate.releasable(run, unsafe_running=unsafe_running):
        if call.state != "completed":
            break  # a queued head this run cannot answer
        call.state = "released"
        out.append(call.index)
    return out


def test_arrival_order_holds_a_result_until_every_earlier_call_is_released() -> None:
    gate, run = OrderedGate("arrival"), calls(3)
    run[0].state = "executing"
    complete(gate, run[2])
    complete(gate, run[1])
    assert release(gate, run) == []
    complete(gate, run[0])
    assert release(gate, run) == [0, 1, 2]
    assert release(gate, run) == []  # nothing is released twice


def test_arrival_order_offers_a_queued_head_and_moves_on_only_once_it_is_released() -> None:
    gate, run = OrderedGate("arrival"), calls(2)
    complete(gate, run[1])
    offered = list(gate.releasable(run, unsafe_running=None))
    assert offered == [run[0]]  # queued: the run decides whether it can ever start
    assert release(gate, run) == []
    complete(gate, run[0])  # the run answered it (say, after an interrupt)
    assert release(gate, run) == [0, 1]


def test_completion_order_releases_safe_results_as_they_complete() -> None:
    gate, run = OrderedGate("completion"), calls(3)
    run[0].state = "executing"
    complete(gate, run[2])
    assert release(gate, run) == [2]
    complete(gate, run[1])
    assert release(gate, run) == [1]


def test_completion_order_holds_what_follows_an_executing_unsafe_call() -> None:
    gate, run = OrderedGate("completion"), calls(3)
    complete(gate, run[0])
    run[1].state = "executing"
    complete(gate, run[2])
    assert release(gate, run, unsafe_running=1) == [0]
    complete(gate, run[1])
    assert release(gate, run, unsafe_running=None) == [1, 2]


def test_completion_order_holds_a_sibling_error_answer_until_earlier_calls_are_answered() -> None:
    gate, run = OrderedGate("completion"), calls(3)
    run[0].state = "executing"
    complete(gate, run[2], sibling_error=True)
    complete(gate, run[1])
    assert release(gate, run) == [1]
    complete(gate, run[0])
    assert release(gate, run) == [0, 2]


def test_stopping_early_loses_no_completed_call() -> None:
    orders: tuple[ResultOrder, ...] = ("arrival", "completion")
    for order in orders:
        gate, run = OrderedGate(order), calls(2)
        complete(gate, run[0])
        complete(gate, run[1])
        for _ in gate.releasable(run, unsafe_running=None):
            break  # the run stopped before releasing anything
        assert release(gate, run) == [0, 1], order


def test_modifiers_apply_at_release_unless_deferred_then_in_tool_use_order() -> None:
    def first(state: dict[str, object]) -> dict[str, object]:
        return state

    def second(state: dict[str, object]) -> dict[str, object]:
        return state

    at_once = OrderedGate("arrival")
    assert at_once.at_release(0, first) is first
    assert at_once.take_deferred() == []

    deferred = OrderedGate("arrival", defer_modifiers=True)
    assert deferred.at_release(3, second) is None
    assert deferred.at_release(1, first) is None
    assert deferred.take_deferred() == [(1, first), (3, second)]  # never completion order
    assert deferred.take_deferred() == []


def test_released_state_is_the_only_one_the_gate_moves_past() -> None:
    gate, run = OrderedGate("arrival"), calls(1)
    complete(gate, run[0])
    states: list[CallState] = [call.state for call in gate.releasable(run, unsafe_running=None)]
    assert states == ["completed"]
    assert release(gate, run) == [0]  # not released above: offered again
