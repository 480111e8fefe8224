"""Hypothesis: the universal invariants (SPEC §0, I1-I4) over random turns, on both paths.

Each example is a whole trio run on a MockClock (virtual time, autojump), so
thousands of turns take seconds.  The checks read the observer's event log:
its order is the order in which the runtime changed state.
"""

from __future__ import annotations

import heapq
import math
from typing import Any, Literal

import attrs
import hypothesis
import trio
import trio.testing
from helpers import Recorder, live_tasks, make_tool, use
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import trioexec._core._concurrency
from trioexec import (
    CallEvent,
    ProgressUpdate,
    ResultUpdate,
    ToolRegistry,
    ToolResult,
    ToolUse,
    Turn,
    Update,
    open_streaming_executor,
    run_tools,
)
from trioexec._texts import interrupted_message
from trioexec.lowlevel import partition_tool_calls

SIBLING_PREFIX = "<tool_use_error>Cancelled: parallel tool call "
TERMINAL = ("completed", "cancelled")

_WAITS: dict[str, trio.Event] = {}


@attrs.frozen
class Kind:
    safe: bool | Literal["input"]
    interrupt: Literal["cancel", "block"] = "block"
    cascades: bool = False


KINDS = {
    "ReadC": Kind(safe=True, interrupt="cancel"),
    "GrepB": Kind(safe=True),
    "EditC": Kind(safe=False, interrupt="cancel"),
    "EditB": Kind(safe=False),
    "Bash": Kind(safe="input", cascades=True),
    "KillC": Kind(safe=True, interrupt="cancel", cascades=True),
}
REGISTRY = ToolRegistry(
    [
        make_tool(name, safe=k.safe, interrupt=k.interrupt, cascades=k.cascades, events=_WAITS)
        for name, k in KINDS.items()
    ]
)
EXAMPLES_STREAMING = 2000
EXAMPLES_BATCH = 300


def is_safe(name: str, job: dict[str, Any]) -> bool:
    kind = KINDS.get(name)
    if kind is None:
        return False
    if kind.safe != "input":
        return kind.safe
    return bool(job.get("concurrency_safe", job.get("safe")))  # ``use`` renames ``safe``


def run_virtual(scenario: Any) -> Any:
    return trio.run(scenario, clock=trio.testing.MockClock(autojump_threshold=0))


# -- helpers over the event log -----------------------------------------------------------------


def check_exclusive(
    events: list[CallEvent],
    order: list[str],
    safe: dict[str, bool],
    limit: int,
    *,
    open_kind: str = "started",
    close_kinds: tuple[str, ...] = TERMINAL,
) -> None:
    """I3 over the log: unsafe calls run alone, never overtake or get overtaken; the limit holds."""
    position = {key: index for index, key in enumerate(order)}
    running: set[str] = set()
    finished: set[str] = set()
    for event in events:
        key = event.tool_use_id
        if event.kind == open_kind:
            if not safe[key]:
                assert not running, f"unsafe {key} started beside {running}"
            else:
                assert all(safe[other] for other in running), f"{key} started beside unsafe"
            earlier_unsafe = [o for o in order[: position[key]] if not safe[o]]
            assert all(o in finished for o in earlier_unsafe), f"{key} overtook an unsafe call"
            running.add(key)
            assert len(running) <= limit
        elif event.kind in close_kinds:
            running.discard(key)
            finished.add(key)


def terminal_events(events: list[CallEvent]) -> dict[str, list[CallEvent]]:
    out: dict[str, list[CallEvent]] = {}
    for event in events:
        if event.kind in TERMINAL:
            out.setdefault(event.tool_use_id, []).append(event)
    return out


# -- batch path ---------------------------------------------------------------------------------

batch_calls = st.lists(
    st.tuples(
        st.sampled_from(["ReadC", "GrepB", "EditB", "Bash-safe", "Bash-unsafe"]),
        st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.0]),
        st.booleans(),
    ),
    max_size=14,
)


def expected_duration(uses: list[ToolUse], limit: int) -> float:
    """Batches in sequence; in a safe batch each call takes the earliest free slot, in order."""
    total = 0.0
    for batch in partition_tool_calls(uses, REGISTRY):
        slots = [0.0] * min(limit, len(batch.tool_uses))
        heapq.heapify(slots)
        end = 0.0
        for tool_use in batch.tool_uses:
            start = heapq.heappop(slots)
            finish = start + float(tool_use.input.get("sleep", 0.0))  # type: ignore[arg-type]
            end = max(end, finish)
            heapq.heappush(slots, finish)
        total += end
    return total


@settings(
    max_examples=EXAMPLES_BATCH,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    calls=batch_calls,
    limit=st.sampled_from([1, 2, 3, None]),
    stop=st.none()
    | st.tuples(st.sampled_from(["interrupt", "abort"]), st.sampled_from([0.0, 0.5, 1.0, 2.5])),
    wave=st.sampled_from([trioexec._core._concurrency.START_WAVE, 1, 2, 3]),
)
def test_batch_invariants(
    calls: list[tuple[str, float, bool]],
    limit: int | None,
    stop: tuple[str, float] | None,
    wave: int,
) -> None:
    """I1-I4 on the batch path, a wide batch started in waves of ``wave`` calls."""
    uses: list[ToolUse] = []
    for index, (kind, sleep, fails) in enumerate(calls):
        job: dict[str, Any] = {"sleep": sleep, "output": f"out{index}"}
        name = kind
        if kind.startswith("Bash"):
            name = "Bash"
            job["safe"] = kind == "Bash-safe"
            job["command"] = f"cmd{index}"
            if fails:
                job["error"] = f"failed {index}"
        uses.append(use(f"t{index}", name, **job))
    recorder = Recorder()
    effective_limit = limit or 10

    turn = Turn()
    stopped_at: list[int] = []

    async def stopper(kind: str, at: float) -> None:
        await trio.sleep(at)
        stopped_at.append(len(recorder.events))
        getattr(turn, kind)()

    async def scenario() -> tuple[tuple[ToolResult, ...], float]:
        before = live_tasks()
        with trio.fail_after(10_000):
            async with trio.open_nursery() as nursery:
                if stop is not None:
                    nursery.start_soon(stopper, *stop)
                outcome = await run_tools(
                    uses, REGISTRY, turn=turn, max_concurrency=limit, observers=[recorder]
                )
                nursery.cancel_scope.cancel(reason="run over")
        assert live_tasks() <= before  # I4
        return outcome.results, trio.current_time()

    concurrency = trioexec._core._concurrency
    default_wave, concurrency.START_WAVE = concurrency.START_WAVE, wave
    try:
        results, elapsed = run_virtual(scenario)
    finally:
        trioexec._core._concurrency.START_WAVE = default_wave
    order = [u.id for u in uses]
    safe = {u.id: is_safe(u.name, dict(u.input)) for u in uses}
    # I1 + I2: exactly one result per call, in tool_use order, matching the log.
    assert [r.tool_use_id for r in results] == order
    assert [e.tool_use_id for e in recorder.of_kind("released")] == order
    terminal = terminal_events(recorder.events)
    released_data = {e.tool_use_id: e.data for e in recorder.of_kind("released")}
    for result in results:
        assert released_data[result.tool_use_id] == result
        (event,) = terminal[result.tool_use_id]
        # A sibling-error text is settled at release; its cancelled event has no text.
        assert event.data == (None if event.reason == "sibling_error" else result)
    # I3 on the span of Tool.call itself and on the executing state.
    check_exclusive(recorder.events, order, safe, effective_limit)
    check_exclusive(
        recorder.events,
        order,
        safe,
        effective_limit,
        open_kind="call_began",
        close_kinds=("call_ended",),
    )
    # Batches keep order: a call never begins before every earlier batch has ended.
    batch_of: dict[str, int] = {}
    for number, batch in enumerate(partition_tool_calls(uses, REGISTRY)):
        for tool_use in batch.tool_uses:
            batch_of[tool_use.id] = number
    ended: set[str] = set()
    for event in recorder.events:
        if event.kind == "call_began":
            earlier = [key for key in order if batch_of[key] < batch_of[event.tool_use_id]]
            assert all(key in ended or key not in recorder.times("call_began") for key in earlier)
        elif event.kind in ("call_ended", *TERMINAL):
            ended.add(event.tool_use_id)
    # Results themselves.
    failures = [u for u in uses if "error" in u.input]
    if stopped_at:
        assert stop is not None
        check_stopped_batch(uses, results, recorder, stopped_at[0], aborted=stop[0] == "abort")
    elif not failures:
        assert [r.content for r in results] == [f"out{i}" for i in range(len(uses))]
        assert math.isclose(elapsed, expected_duration(uses, effective_limit))
    else:
        # The earliest failure keeps its own error and names every sibling-error answer.
        own = {
            u.id for u, r in zip(uses, results, strict=True) if r.content == u.input.get("error")
        }
        assert own
        for tool_use, result in zip(uses, results, strict=True):
            if tool_use.id in own:
                assert result.is_error
            elif result.is_error:
                assert isinstance(result.content, str)
                assert result.content.startswith(SIBLING_PREFIX)
                named = result.content.removeprefix(SIBLING_PREFIX).split(")")[0]
                assert named.removeprefix("Bash(cmd") in {key.removeprefix("t") for key in own}
            else:
                assert result.content == tool_use.input["output"]


def check_stopped_batch(
    uses: list[ToolUse],
    results: tuple[ToolResult, ...],
    recorder: Recorder,
    mark: int,
    *,
    aborted: bool,
) -> None:
    """After an interrupt/abort: nothing starts, and every answer has the right text."""
    events = recorder.events
    started_at = {e.tool_use_id: i for i, e in enumerate(events) if e.kind == "started"}
    assert all(index < mark for index in started_at.values())
    terminal = terminal_events(events)
    index_of = {id(e): i for i, e in enumerate(events)}
    for tool_use, result in zip(uses, results, strict=True):
        (event,) = terminal[tool_use.id]
        if event.kind == "completed":
            assert result.content in (tool_use.input["output"], tool_use.input.get("error"))
        elif event.reason == "user_interrupted":
            assert index_of[id(event)] >= mark
            if tool_use.id in started_at:  # the default texts say it had started
                assert result.content.startswith(interrupted_message(tool_use.name, started=True))
                kind = KINDS[tool_use.name]
                assert aborted or kind.interrupt == "cancel", "a block call was interrupted"
            else:
                assert result.content == interrupted_message(tool_use.name, started=False)
        else:
            assert event.reason == "sibling_error"
            assert isinstance(result.content, str)
            assert result.content.startswith(SIBLING_PREFIX)


# -- streaming path -----------------------------------------------------------------------------


NAMES = [*KINDS, "Ghost", "Bash", "KillC", "ReadC", "GrepB"]  # weighted towards cascades
CONTROLS = ["interrupt", "abort", "discard", "set w0", "set w1"]
DELAYS = [0.0, 0.0, 0.25, 0.5, 1.0]
SLEEPS = [0.0, 0.5, 1.0, 2.0]


def decode_op(what: int, bits: int) -> tuple[Any, ...]:
    """Turn two small integers into an operation (few draws keep generation cheap).

    ``what`` picks a tool name ("Ghost" is unknown) or, above, a control
    action; ``bits`` packs the job: sleep, progress steps, error, wait, Bash input.
    Zero bits give the simplest job, so shrinking heads towards it.
    """
    if what >= len(NAMES):
        control = CONTROLS[(what - len(NAMES)) % len(CONTROLS)]
        return tuple(control.split())
    name = NAMES[what]
    job: dict[str, Any] = {}
    bits, sleep = divmod(bits, 4)
    if sleep:
        job["sleep"] = SLEEPS[sleep]
    bits, steps = divmod(bits, 4)
    if steps:
        job["steps"] = [
            {"sleep": [0.0, 0.5][(steps >> i) & 1], "progress": f"p{i}"} for i in range(steps)
        ]
    bits, fails = divmod(bits, 4)
    if fails >= 2:
        job["error"] = "failed"
    bits, wait = divmod(bits, 4)
    if wait >= 2:
        job["wait"] = f"w{wait - 2}"
    bits, bash = divmod(bits, 4)
    if name == "Bash":
        job["safe"] = bool(bash & 1)
        job["command"] = ["ls", "make test"][bash >> 1]
    return ("add", name, job)


op_lists = st.lists(
    st.tuples(
        st.sampled_from(DELAYS),
        st.integers(0, len(NAMES) + len(CONTROLS) - 1),
        st.integers(0, 4**5 - 1),
    ).map(lambda raw: (raw[0], decode_op(raw[1], raw[2]))),
    min_size=1,
    max_size=12,
)


@attrs.define
class StreamRun:
    added: list[tuple[str, str, dict[str, Any]]] = attrs.field(factory=list)
    marks: list[tuple[str, int]] = attrs.field(factory=list)
    updates: list[Update] = attrs.field(factory=list)
    recorder: Recorder = attrs.field(factory=Recorder)


@settings(
    max_examples=EXAMPLES_STREAMING,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    ops=op_lists,
    limit=st.sampled_from([1, 2, 3, None]),
    order_mode=st.sampled_from(["arrival", "arrival", "completion"]),
    wave=st.sampled_from([trioexec._core._concurrency.START_WAVE, 1, 2, 3]),
)
def test_streaming_invariants(
    ops: list[tuple[float, tuple[Any, ...]]], limit: int | None, order_mode: str, wave: int
) -> None:
    """I1-I4 on the streaming path, call tasks started in waves of ``wave``."""
    run = StreamRun()

    async def scenario() -> None:
        _WAITS.clear()
        _WAITS.update({"w0": trio.Event(), "w1": trio.Event()})
        turn = Turn()
        before = live_tasks()
        with trio.fail_after(10_000):
            async with open_streaming_executor(
                REGISTRY,
                turn=turn,
                max_concurrency=limit,
                result_order=order_mode,  # type: ignore[arg-type]
                observers=[run.recorder],
            ) as executor:
                for delay, op in ops:
                    await trio.sleep(delay)
                    mark = len(run.recorder.events)
                    if op[0] == "add":
                        tool_id = f"t{len(run.added)}"
                        run.added.append((tool_id, op[1], op[2]))
                        executor.add_tool(use(tool_id, op[1], **op[2]))
                    elif op[0] == "interrupt":
                        turn.interrupt()
                    elif op[0] == "abort":
                        turn.abort()
                    elif op[0] == "discard":
                        executor.discard()
                    else:
                        _WAITS[op[1]].set()
                    run.marks.append((op[0], mark))
                    run.updates.extend(executor.drain_nowait())
                for event in _WAITS.values():
                    event.set()
                run.updates.extend([u async for u in executor.remaining()])
                run.updates.extend(executor.drain_nowait())
        assert live_tasks() <= before  # I4: nothing the executor started is alive

    concurrency = trioexec._core._concurrency
    default_wave, concurrency.START_WAVE = concurrency.START_WAVE, wave
    try:
        run_virtual(scenario)
    finally:
        trioexec._core._concurrency.START_WAVE = default_wave
    for kind in sorted({kind for kind, _ in run.marks if kind != "add"}):
        hypothesis.event(f"op: {kind}")
    for kind in sorted({e.reason or "" for e in run.recorder.of_kind("cancelled")}):
        hypothesis.event(f"cancelled: {kind}")
    check_streaming_run(run, limit or 10, order_mode)


def check_streaming_run(run: StreamRun, limit: int, order_mode: str) -> None:
    events = run.recorder.events
    order = [key for key, _, _ in run.added]
    name_of = {key: name for key, name, _ in run.added}
    job_of = {key: job for key, _, job in run.added}
    safe = {key: is_safe(name_of[key], job_of[key]) for key in order}
    first_mark = dict(reversed(run.marks))
    discard_at = first_mark.get("discard")
    interrupt_at = min((m for kind, m in run.marks if kind in ("interrupt", "abort")), default=None)
    abort_at = first_mark.get("abort")

    # Every call is queued first, then has at most one answer event.
    for key in order:
        kinds = run.recorder.kinds(key)
        assert kinds[0] == "queued", key
        assert kinds.count("queued") == 1
    terminal = terminal_events(events)
    released = [e.tool_use_id for e in run.recorder.of_kind("released")]
    assert len(released) == len(set(released))
    for key in order:
        assert len(terminal.get(key, [])) == 1, key  # one answer each, discard or not
        if discard_at is None:
            assert key in released  # I1

    # Nothing is released after a discard.
    if discard_at is not None:
        assert all(
            index < discard_at
            for index, event in enumerate(events)
            if event.kind in ("released", "progress")
        )

    # I2: arrival order (or, for completion order, never past an executing unsafe call).
    if order_mode == "arrival":
        assert released == order[: len(released)]
    else:
        state: dict[str, str] = {}
        for event in events:
            if event.kind == "started":
                state[event.tool_use_id] = "executing"
            elif event.kind in TERMINAL:
                state[event.tool_use_id] = "done"
            elif event.kind == "released":
                index = order.index(event.tool_use_id)
                blocking = [
                    other
                    for other in order[:index]
                    if not safe[other] and state.get(other) == "executing"
                ]
                assert not blocking, f"{event.tool_use_id} released past {blocking}"

    # I3 on the executing state.
    check_exclusive(events, order, safe, limit)

    # The channel carries exactly the progress and released results of the log, in order.
    expected: list[Any] = []
    final: dict[str, ToolResult] = {}
    for event in events:
        if event.kind == "progress":
            expected.append(ProgressUpdate(event.tool_use_id, event.data))
        elif event.kind in TERMINAL:
            if event.reason == "sibling_error":
                assert event.data is None  # the text is settled at release
            else:
                assert isinstance(event.data, ToolResult)
                final[event.tool_use_id] = event.data
        elif event.kind == "released":
            assert isinstance(event.data, ToolResult)
            assert final.setdefault(event.tool_use_id, event.data) == event.data
            expected.append(ResultUpdate(event.data))
    assert run.updates == expected

    # Progress only while executing.
    live: set[str] = set()
    for event in events:
        if event.kind == "started":
            live.add(event.tool_use_id)
        elif event.kind in TERMINAL:
            live.discard(event.tool_use_id)
        elif event.kind == "progress":
            assert event.tool_use_id in live

    # Each answer is consistent with why it was given.
    started_at = {e.tool_use_id: i for i, e in enumerate(events) if e.kind == "started"}
    cascade_at: int | None = None
    for index, event in enumerate(events):
        if event.kind == "completed":
            result = event.data
            assert isinstance(result, ToolResult)
            kind = KINDS.get(name_of[event.tool_use_id])
            if kind is None:
                assert result.content == (
                    "<tool_use_error>Error: No such tool available: Ghost</tool_use_error>"
                )
            elif result.is_error:
                assert result.content == "failed"
                if kind.cascades and cascade_at is None:
                    cascade_at = index
            else:
                assert result.content == "ok"
        elif event.kind == "cancelled":
            result = final.get(event.tool_use_id)
            if result is None:  # a sibling-error answer withheld by a discard
                assert event.reason == "sibling_error"
                assert discard_at is not None
                continue
            assert result.is_error
            assert isinstance(result.content, str)
            if event.reason == "sibling_error":
                assert cascade_at is not None
                assert cascade_at < index
                assert result.content.startswith(SIBLING_PREFIX)
            elif event.reason == "user_interrupted":
                assert interrupt_at is not None
                assert interrupt_at <= index
                # The default texts say whether the call had started.
                started_text = interrupted_message(
                    name_of[event.tool_use_id], started=event.tool_use_id in started_at
                )
                assert result.content.startswith(started_text)
                # A "block" tool that was executing is only stopped by an abort.
                kind = KINDS.get(name_of[event.tool_use_id])
                started = started_at.get(event.tool_use_id)
                if kind is not None and kind.interrupt == "block" and started is not None:
                    assert abort_at is not None
                    assert abort_at <= index
            else:
                assert event.reason == "streaming_fallback"
                assert discard_at is not None
                assert discard_at <= index
