"""Policies (``trioexec.Policy``): the value, its presets, and each knob in both front ends.

Each behaviour test runs the same calls under two policies that differ in one
knob and asserts what differs, so it fails if the knob is not wired.
"""

from __future__ import annotations

import math

import attrs
import pytest
import trio
import trio.testing
from helpers import REJECT, Recorder, make_tool, results_of, use

from trioexec import (
    ConfigurationError,
    Policy,
    ResultUpdate,
    ToolUse,
    Turn,
    Update,
    open_streaming_executor,
    run_tools,
)

TRIOEXEC = Policy()
PLAIN = attrs.evolve(TRIOEXEC, synthetic_texts="claude-code")
"""trioexec's rules in Claude Code's words: for tests of a mechanism, compared by its texts."""
CC_88 = Policy.preset("claude-code-2.1.88")
CC_161 = Policy.preset("claude-code-2.1.161")
CANCELLED_BY = "<tool_use_error>Cancelled: parallel tool call {} errored</tool_use_error>"


# ------------------------------------------------------------------ the value


def test_the_default_policy_is_the_trioexec_preset() -> None:
    assert Policy() == Policy.preset("trioexec")
    assert Policy().preset_name == "trioexec"
    assert Policy.preset_names() == ("trioexec", "claude-code-2.1.88", "claude-code-2.1.161")


def test_claude_code_2_1_88_undoes_every_trioexec_mark() -> None:
    assert CC_88.result_order == "completion"
    assert not CC_88.cap_streaming
    assert not CC_88.batch_cascade
    assert CC_88.cascade_on == frozenset({"Bash"})
    assert CC_88.interrupt_queued == "by-behavior"
    assert not CC_88.discard_cancels
    assert CC_88.synthetic_texts == "claude-code"


def test_claude_code_2_1_161_differs_from_2_1_88_in_the_cascade_and_read_before_write() -> None:
    assert CC_161.cascade_on == frozenset()
    assert not CC_161.read_before_write
    assert CC_88.read_before_write
    assert attrs.evolve(CC_161, cascade_on=frozenset({"Bash"}), read_before_write=True) == CC_88


def test_an_unknown_preset_names_the_known_ones() -> None:
    with pytest.raises(ConfigurationError) as caught:
        Policy.preset("claude-code-2.2")
    message = str(caught.value)
    assert "unknown policy 'claude-code-2.2'" in message
    for name in Policy.preset_names():
        assert repr(name) in message


@pytest.mark.parametrize(
    ("knob", "value"),
    [
        ("result_order", "fifo"),
        ("interrupt_queued", "ignore"),
        ("synthetic_texts", "plain"),
        ("cap_streaming", 1),
        ("cascade_on", "Bash"),
        ("cascade_on", frozenset({""})),
    ],
)
def test_a_knob_refuses_a_value_outside_its_choices(knob: str, value: object) -> None:
    with pytest.raises(ConfigurationError, match=f"Policy.{knob} must be"):
        Policy(**{knob: value})  # type: ignore[arg-type]


def test_evolve_varies_one_knob_and_the_result_is_no_preset() -> None:
    varied = attrs.evolve(Policy(), result_order="completion")
    assert varied.result_order == "completion"
    assert varied.preset_name is None
    assert attrs.evolve(varied, result_order="arrival") == Policy()


def test_cascade_on_takes_any_collection_of_names() -> None:
    assert Policy(cascade_on=["Bash", "Edit"]).cascade_on == frozenset({"Bash", "Edit"})  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "written",
    [
        "trioexec",
        "claude-code-2.1.88",
        {"preset": "claude-code-2.1.161", "result_order": "arrival"},
        {"cascade_on": ["Bash", "Edit"], "partial_output": False},
    ],
)
def test_the_json_form_reads_back_what_it_wrote(written: object) -> None:
    policy = Policy.from_json(written)
    assert Policy.from_json(policy.to_json()) == policy
    if isinstance(written, str):
        assert policy.to_json() == written


def test_the_json_form_names_unknown_knobs_and_presets() -> None:
    with pytest.raises(ConfigurationError, match="unknown policy knob 'order'"):
        Policy.from_json({"order": "arrival"})
    with pytest.raises(ConfigurationError, match="unknown policy 'cc'"):
        Policy.from_json({"preset": "cc"})
    with pytest.raises(ConfigurationError, match="a preset name or an object"):
        Policy.from_json(3)


async def test_a_front_end_refuses_a_policy_that_is_not_one() -> None:
    with pytest.raises(ConfigurationError, match=r"policy must be a trioexec\.Policy"):
        await run_tools([], [], policy="trioexec")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match=r"policy must be a trioexec\.Policy"):
        async with open_streaming_executor([], policy="trioexec"):  # type: ignore[arg-type]
            pass


# ------------------------------------------------------------------ the knobs

READ = make_tool("Read", interrupt="cancel")
SLOW = make_tool("Slow")  # "block"
EDIT = make_tool("Edit", safe=False)
BASH = make_tool("Bash", safe="input", cascades=True)
SHELL = make_tool("Shell", safe="input", cascades=True)  # declares it, but is not named Bash
TOOLS = [READ, SLOW, EDIT, BASH, SHELL]


async def stream(
    calls: list[ToolUse], policy: Policy, *, recorder: Recorder | None = None, **options: object
) -> list[tuple[str, str, bool]]:
    """Run ``calls`` (added at t=0) on an executor: (id, text, is_error) in release order."""
    observers = [recorder] if recorder is not None else []
    async with open_streaming_executor(
        TOOLS,
        policy=policy,
        observers=observers,
        **options,  # type: ignore[arg-type]
    ) as executor:
        for call in calls:
            executor.add_tool(call)
        updates = [u async for u in executor.remaining()]
    return [(u.result.tool_use_id, u.result.text, u.result.is_error) for u in results_of(updates)]


async def batch(
    calls: list[ToolUse], policy: Policy, **options: object
) -> list[tuple[str, str, bool]]:
    outcome = await run_tools(calls, TOOLS, policy=policy, **options)  # type: ignore[arg-type]
    return [(r.tool_use_id, r.text, r.is_error) for r in outcome.results]


ORDER_CALLS = [
    use("slow", "Read", sleep=2.0, output="S"),
    use("fast", "Read", sleep=1.0, output="F"),
]


async def test_result_order_arrival_holds_a_fast_result_completion_releases_it(
    autojump_clock: trio.testing.MockClock,
) -> None:
    arrival = await stream(ORDER_CALLS, TRIOEXEC)
    completion = await stream(ORDER_CALLS, attrs.evolve(TRIOEXEC, result_order="completion"))
    assert [i for i, _, _ in arrival] == ["slow", "fast"]
    assert [i for i, _, _ in completion] == ["fast", "slow"]


async def test_result_order_applies_to_the_batch_path_too(
    autojump_clock: trio.testing.MockClock,
) -> None:
    arrival = await batch(ORDER_CALLS, TRIOEXEC)
    completion = await batch(ORDER_CALLS, CC_88)
    assert [i for i, _, _ in arrival] == ["slow", "fast"]
    assert [i for i, _, _ in completion] == ["fast", "slow"]


async def test_the_result_order_shorthand_overrides_the_policy(
    autojump_clock: trio.testing.MockClock,
) -> None:
    released = await stream(ORDER_CALLS, CC_88, result_order="arrival")
    assert [i for i, _, _ in released] == ["slow", "fast"]


async def test_cap_streaming_off_starts_every_safe_call_at_once(
    autojump_clock: trio.testing.MockClock,
) -> None:
    calls = [use(f"r{i}", "Read", sleep=1.0) for i in range(4)]
    for policy, expected in ((TRIOEXEC, 2.0), (attrs.evolve(TRIOEXEC, cap_streaming=False), 1.0)):
        start = trio.current_time()
        await stream(calls, policy, max_concurrency=2)
        assert trio.current_time() - start == expected


async def test_the_batch_path_stays_capped_without_cap_streaming(
    autojump_clock: trio.testing.MockClock,
) -> None:
    start = trio.current_time()
    await batch([use(f"r{i}", "Read", sleep=1.0) for i in range(4)], CC_88, max_concurrency=2)
    assert trio.current_time() - start == 2.0


CASCADE_CALLS = [
    use("ok", "Read", sleep=0.5, output="early"),
    use("long", "Read", sleep=5.0, output="long"),
    use("bad", "Bash", sleep=1.0, safe=True, command="false", error="Exit code 1"),
    use("later", "Edit", sleep=1.0, output="edited"),
]


async def test_batch_cascade_off_lets_siblings_and_later_batches_run(
    autojump_clock: trio.testing.MockClock,
) -> None:
    cascading = await batch(CASCADE_CALLS, PLAIN)
    independent = await batch(CASCADE_CALLS, attrs.evolve(PLAIN, batch_cascade=False))
    stopped = CANCELLED_BY.format("Bash(false)")
    assert {i: t for i, t, _ in cascading} == {
        "ok": "early",
        "long": stopped,
        "bad": "Exit code 1",
        "later": stopped,
    }
    assert {i: t for i, t, _ in independent} == {
        "ok": "early",
        "long": "long",
        "bad": "Exit code 1",
        "later": "edited",
    }


async def test_cascade_on_names_decides_by_the_tool_name_not_the_declaration(
    autojump_clock: trio.testing.MockClock,
) -> None:
    calls = [
        use("long", "Read", sleep=5.0, output="long"),
        use("bad", "Shell", sleep=1.0, safe=True, command="false", error="Exit code 1"),
    ]
    declared = await stream(calls, PLAIN)
    by_name = await stream(calls, attrs.evolve(PLAIN, cascade_on=frozenset({"Bash"})))
    assert {i: t for i, t, _ in declared}["long"] == CANCELLED_BY.format("Shell(false)")
    assert {i: t for i, t, _ in by_name}["long"] == "long"


async def test_claude_code_2_1_88_cascades_on_bash_and_2_1_161_does_not(
    autojump_clock: trio.testing.MockClock,
) -> None:
    calls = [
        use("long", "Read", sleep=5.0, output="long"),
        use("bad", "Bash", sleep=1.0, safe=True, command="false", error="Exit code 1"),
    ]
    old = {i: t for i, t, _ in await stream(calls, CC_88)}
    new = {i: t for i, t, _ in await stream(calls, CC_161)}
    assert old == {"long": CANCELLED_BY.format("Bash(false)"), "bad": "Exit code 1"}
    assert new == {"long": "long", "bad": "Exit code 1"}


async def test_interrupt_queued_by_behavior_starts_queued_block_calls(
    autojump_clock: trio.testing.MockClock,
) -> None:
    calls = [
        use("edit", "Edit", sleep=2.0, output="edited"),  # unsafe, "block": runs on
        use("read", "Read", sleep=1.0, output="read"),  # queued, "cancel"
        use("slow", "Slow", sleep=1.0, output="slow"),  # queued, "block"
    ]

    async def run(policy: Policy) -> dict[str, str]:
        turn = Turn()
        async with trio.open_nursery() as nursery:

            async def interrupt() -> None:
                await trio.sleep(1.0)
                turn.interrupt()

            nursery.start_soon(interrupt)
            released = await stream(calls, policy, turn=turn)
        return {i: t for i, t, _ in released}

    rejecting = await run(PLAIN)
    by_behavior = await run(attrs.evolve(PLAIN, interrupt_queued="by-behavior"))
    assert rejecting == {"edit": "edited", "read": REJECT, "slow": REJECT}
    assert by_behavior == {"edit": "edited", "read": REJECT, "slow": "slow"}


async def test_interrupt_queued_by_behavior_starts_block_calls_added_after_the_interrupt(
    autojump_clock: trio.testing.MockClock,
) -> None:
    for policy, expected in ((PLAIN, REJECT), (CC_88, "slow")):
        turn = Turn()
        turn.interrupt()
        released = await stream([use("slow", "Slow", sleep=1.0, output="slow")], policy, turn=turn)
        assert released == [("slow", expected, expected == REJECT)]


async def test_interrupt_queued_leaves_the_batch_path_alone(
    autojump_clock: trio.testing.MockClock,
) -> None:
    turn = Turn()
    turn.interrupt()
    outcome = await run_tools([use("slow", "Slow", sleep=1.0)], TOOLS, turn=turn, policy=CC_88)
    assert outcome.results[0].text.startswith("The user doesn't want to take this action")


async def test_discard_cancels_off_lets_executing_calls_finish_unreleased(
    autojump_clock: trio.testing.MockClock,
) -> None:
    for policy in (TRIOEXEC, attrs.evolve(TRIOEXEC, discard_cancels=False)):
        recorder = Recorder()
        start = trio.current_time()
        async with open_streaming_executor(TOOLS, policy=policy, observers=[recorder]) as executor:
            executor.add_tool(
                use(
                    "run",
                    "Read",
                    steps=[{"sleep": 1.0}, {"progress": "p"}, {"sleep": 1.0}],
                    output="R",
                )
            )
            await trio.sleep(0.5)
            executor.discard()
            executor.add_tool(use("late", "Read", sleep=1.0))
            released = [u async for u in executor.remaining()]
            assert trio.current_time() - start == 0.5  # remaining() ends at once either way
        assert released == []
        kinds = recorder.kinds("run")
        assert "released" not in kinds
        assert "progress" not in kinds  # no longer forwarded
        assert recorder.kinds("late") == ["queued", "cancelled"]
        if policy.discard_cancels:
            assert "cancelled" in kinds
            assert trio.current_time() - start == 0.5
        else:
            assert "completed" in kinds  # it ran to its end
            assert trio.current_time() - start == 2.0  # and the block waited for it


async def test_synthetic_texts_shorthand_overrides_the_policy(
    autojump_clock: trio.testing.MockClock,
) -> None:
    turn = Turn()
    turn.abort()
    plain = await batch(
        [use("a", "Read", sleep=1.0)], TRIOEXEC, turn=turn, synthetic_texts="claude-code"
    )
    explained = await batch(
        [use("a", "Read", sleep=1.0)], CC_88, turn=turn, synthetic_texts="trioexec"
    )
    assert plain[0][1].startswith("The user doesn't want to take this action")
    assert explained[0][1] != plain[0][1]


@pytest.mark.parametrize(
    ("policy", "words"),
    [
        (TRIOEXEC, "Stopped by the application (turn deadline) while running: Read had started"),
        (CC_88, "The user doesn't want to proceed with this tool use."),
        (CC_161, "The user doesn't want to proceed with this tool use."),
    ],
    ids=["trioexec", "claude-code-2.1.88", "claude-code-2.1.161"],
)
async def test_an_application_deadline_is_told_as_such_by_default_and_as_cc_under_its_presets(
    autojump_clock: trio.testing.MockClock, policy: Policy, words: str
) -> None:
    send, receive = trio.open_memory_channel[Update](math.inf)
    with trio.CancelScope() as scope:
        async with trio.open_nursery() as nursery:

            async def deadline() -> None:
                await trio.sleep(1.0)
                scope.cancel(reason="turn deadline")

            nursery.start_soon(deadline)
            await run_tools([use("a", "Read", sleep=5.0)], TOOLS, policy=policy, updates=send)
    results = []
    while True:
        try:
            update = receive.receive_nowait()
        except trio.WouldBlock:
            break
        if isinstance(update, ResultUpdate):
            results.append(update.result)
    (result,) = results
    assert result.text.startswith(words)


async def test_partial_output_off_leaves_what_a_stopped_call_printed_out(
    autojump_clock: trio.testing.MockClock,
) -> None:
    job = use("a", "Read", steps=[{"progress": "first half"}, {"sleep": 5.0}])
    texts: dict[bool, str] = {}
    for partial in (True, False):
        policy = Policy(synthetic_texts="trioexec", partial_output=partial)
        async with trio.open_nursery() as nursery:

            async def interrupt(turn: Turn) -> None:
                await trio.sleep(1.0)
                turn.interrupt()

            turn = Turn()
            nursery.start_soon(interrupt, turn)
            released = await stream([job], policy, turn=turn)
        texts[partial] = released[0][1]
    assert "first half" in texts[True]
    assert "first half" not in texts[False]
    assert texts[False].startswith("Interrupted by the user while running: Read had started")
