"""``function_tool`` beyond the basics: time limits, structured returns, pydantic inputs,
plain ``def`` functions in a worker thread, and the tool called as the function."""

from __future__ import annotations

import dataclasses
import json
import math
import threading
from typing import Any

import attrs
import pydantic
import pytest
import trio
import trio.testing

from trioexec import (
    ProgressSender,
    ProgressUpdate,
    TextBlock,
    Tool,
    ToolDefinitionError,
    ToolUse,
    function_tool,
    run_tools,
)


async def _answer(tool: Tool[Any], payload: dict[str, Any]) -> tuple[str, bool]:
    outcome = await run_tools([ToolUse("t1", tool.name, payload)], [tool])
    return outcome.results[0].text, outcome.results[0].is_error


# -- time limits ----------------------------------------------------------------------


async def test_timeout_stops_a_function_tool_that_runs_too_long(autojump_clock: Any) -> None:
    @function_tool(timeout=3)
    async def slow() -> str:
        await trio.sleep_forever()

    text, is_error = await _answer(slow, {})
    assert is_error
    assert "Timed out: slow ran for 3 s and was stopped by its timeout of 3 s" in text
    assert slow.timeout == 3


async def test_idle_timeout_stops_a_function_tool_that_goes_quiet(autojump_clock: Any) -> None:
    @function_tool(idle_timeout=2)
    async def chatty(progress: ProgressSender) -> str:
        for _ in range(3):
            progress("tick")
            await trio.sleep(1)  # under the idle limit: keeps going
        await trio.sleep_forever()

    text, is_error = await _answer(chatty, {})
    assert is_error
    assert "idle timeout (no progress for 2 s)" in text
    assert "ran for 4 s" in text  # ticks at 0, 1 and 2 s, then two quiet seconds


@pytest.mark.parametrize("limit", ["timeout", "idle_timeout"])
@pytest.mark.parametrize("value", [0, -1, float("nan"), True])
def test_an_unusable_time_limit_is_refused_at_definition(limit: str, value: object) -> None:
    with pytest.raises(ToolDefinitionError, match=f"{limit} must be a number of seconds"):
        function_tool(**{limit: value})  # type: ignore[call-overload]


# -- structured returns -----------------------------------------------------------------


@attrs.frozen
class Forecast:
    city: str
    days: list[int]


@dataclasses.dataclass
class Reading:
    station: str
    celsius: float


class Report(pydantic.BaseModel):
    city: str
    readings: list[float]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"city": "Oslo", "temp": 3, "ok": True, "none": None}, None),
        (["Oslo", 3, None], None),
        (("a", "b"), ["a", "b"]),
        (Forecast("Oslo", [1, 2]), {"city": "Oslo", "days": [1, 2]}),
        (Reading("Blindern", -2.5), {"station": "Blindern", "celsius": -2.5}),
        (Report(city="Bergen", readings=[1.5]), {"city": "Bergen", "readings": [1.5]}),
        (
            {"nested": [Forecast("Tromsø", []), Reading("x", 1.0)]},
            {"nested": [{"city": "Tromsø", "days": []}, {"station": "x", "celsius": 1.0}]},
        ),
    ],
)
async def test_a_structured_return_reaches_the_model_as_json_not_repr(
    value: object, expected: object
) -> None:
    @function_tool
    async def lookup() -> object:
        return value

    text, is_error = await _answer(lookup, {})
    assert not is_error
    assert json.loads(text) == (value if expected is None else expected)
    assert "'" not in text.replace("Tromsø", "")  # no Python quoting anywhere


async def test_strings_blocks_and_none_are_returned_as_before() -> None:
    @function_tool
    async def plain(kind: str) -> object:
        if kind == "text":
            return "{'not': 'json'}"
        if kind == "blocks":
            return [TextBlock("a"), TextBlock("b")]
        return None

    assert (await _answer(plain, {"kind": "text"}))[0] == "{'not': 'json'}"
    outcome = await run_tools([ToolUse("t1", "plain", {"kind": "blocks"})], [plain])
    assert outcome.results[0].content == (TextBlock("a"), TextBlock("b"))
    assert (await _answer(plain, {"kind": "none"}))[0] == "(plain completed with no output)"


# -- pydantic input types -------------------------------------------------------------


class Order(pydantic.BaseModel):
    item: str
    quantity: int = pydantic.Field(default=1, gt=0, description="how many")

    @pydantic.field_validator("item")
    @classmethod
    def known_item(cls, value: str) -> str:
        if value not in {"tea", "coffee"}:
            raise ValueError(f"we sell tea and coffee, not {value}")
        return value


@function_tool
async def order(request: Order) -> str:
    """Place an order."""
    return f"{request.quantity} x {request.item} ({type(request).__name__})"


def test_a_pydantic_model_parameter_gives_the_schema_from_the_model() -> None:
    schema = order.to_api()["input_schema"]
    assert schema == {
        key: value for key, value in Order.model_json_schema().items() if key != "$schema"
    }
    assert schema["required"] == ["item"]


async def test_a_pydantic_model_input_reaches_the_function_as_the_model() -> None:
    assert await _answer(order, {"item": "tea", "quantity": 2}) == ("2 x tea (Order)", False)


async def test_the_models_own_validators_are_layer_two_and_name_the_field() -> None:
    text, is_error = await _answer(order, {"item": "beer", "quantity": 1})
    assert is_error
    assert "InputValidationError: order failed" in text
    assert "The parameter `item` is invalid:" in text
    assert "we sell tea and coffee, not beer" in text


async def test_a_schema_violation_of_a_pydantic_input_is_caught_by_layer_one() -> None:
    text, is_error = await _answer(order, {"item": "tea", "quantity": 0})
    assert is_error
    assert "quantity" in text


async def test_a_pydantic_input_type_works_for_a_tool_subclass_too() -> None:
    class Orders(Tool[Order]):
        name = "orders"
        input_type = Order

        async def call(self, input: Order, ctx: object, progress: object) -> str:  # noqa: A002
            return input.item

    assert await _answer(Orders(), {"item": "coffee"}) == ("coffee", False)
    assert (await _answer(Orders(), {"item": "x"}))[1]


# -- plain def functions --------------------------------------------------------------


async def test_a_plain_def_runs_in_a_worker_thread_not_the_event_loop() -> None:
    loop_thread = threading.get_ident()

    @function_tool
    def where(city: str) -> dict[str, object]:
        """Blocking work."""
        return {"city": city, "in_loop_thread": threading.get_ident() == loop_thread}

    text, is_error = await _answer(where, {"city": "Oslo"})
    assert not is_error
    assert json.loads(text) == {"city": "Oslo", "in_loop_thread": False}


async def test_a_plain_def_may_send_progress_from_its_thread() -> None:
    @function_tool
    def steps(progress: ProgressSender) -> str:
        progress("one")
        progress("two")
        return "done"

    send, receive = trio.open_memory_channel[Any](math.inf)
    outcome = await run_tools([ToolUse("t1", "steps", {})], [steps], updates=send)
    assert outcome.results[0].text == "done"
    seen = []
    while True:
        try:
            update = receive.receive_nowait()
        except trio.WouldBlock:
            break
        if isinstance(update, ProgressUpdate):
            seen.append(update.data)
    assert seen == ["one", "two"]


async def test_a_plain_def_that_checks_for_cancellation_is_stopped_by_its_timeout(
    autojump_clock: Any,
) -> None:
    stopped = threading.Event()

    @function_tool(timeout=1)
    def spin() -> str:
        try:
            while True:
                trio.from_thread.check_cancelled()
        finally:
            stopped.set()

    text, is_error = await _answer(spin, {})
    assert is_error
    assert "Timed out: spin" in text
    assert stopped.is_set()  # the thread ended before the run did: nothing left behind


async def test_a_plain_def_that_raises_is_an_error_result() -> None:
    @function_tool
    def broken() -> str:
        raise RuntimeError("disk full")

    text, is_error = await _answer(broken, {})
    assert is_error
    assert "disk full" in text


# -- the tool is still the function ---------------------------------------------------


async def test_the_decorated_async_function_can_be_awaited_directly() -> None:
    @function_tool
    async def greet(name: str, punctuation: str = "!") -> str:
        """Say hello."""
        return f"hello {name}{punctuation}"

    assert await greet("Ada") == "hello Ada!"
    assert await greet("Ada", punctuation="?") == "hello Ada?"
    assert greet.__name__ == "greet"
    assert greet.__doc__ == "Say hello."
    assert isinstance(greet, Tool)


def test_the_decorated_plain_function_can_be_called_directly() -> None:
    @function_tool(name="add_numbers")
    def add(a: int, b: int) -> int:
        return a + b

    assert add(2, 3) == 5
    assert add.function(4, 5) == 9
    assert add.name == "add_numbers"


def test_decorating_a_tool_twice_is_refused() -> None:
    @function_tool
    async def once() -> str:
        return ""

    with pytest.raises(ToolDefinitionError, match="already a tool"):
        function_tool(once)
