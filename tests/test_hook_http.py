"""HTTP hooks read their answer as HTTP/1.1 frames it: a cut-short body, a 1xx, chunks."""

from __future__ import annotations

import functools
import json

import trio

from trioexec._hooks._http import HttpHook, post_hook

DENY = json.dumps(
    {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "no",
        }
    }
).encode()


async def _read_request(stream: trio.SocketStream) -> None:
    data = b""
    while b"\r\n\r\n" not in data or not data.endswith(b"}"):
        data += await stream.receive_some(65536)


async def _post_to(answer: bytes) -> tuple[str | None, str | None]:
    """POST a hook's JSON to a server on 127.0.0.1 that answers ``answer`` and closes."""

    async def serve(stream: trio.SocketStream) -> None:
        await _read_request(stream)
        await stream.send_all(answer)
        await stream.aclose()

    async with trio.open_nursery() as nursery:
        serving = functools.partial(trio.serve_tcp, serve, 0, host="127.0.0.1")
        listeners = await nursery.start(serving)
        port = listeners[0].socket.getsockname()[1]
        result = await post_hook(
            HttpHook(url=f"http://127.0.0.1:{port}/hook"), b'{"a": 1}', "PreToolUse"
        )
        nursery.cancel_scope.cancel(reason="test done")
    return result.decision, result.error


async def test_a_response_cut_short_of_its_content_length_is_an_error_not_an_answer() -> None:
    cut = DENY[: len(DENY) // 2]
    head = f"HTTP/1.1 200 OK\r\nContent-Length: {len(DENY)}\r\n\r\n".encode()
    decision, error = await _post_to(head + cut)
    assert decision is None
    assert error is not None
    assert error.startswith("HTTP request failed")


async def test_an_informational_response_is_skipped_for_the_answer_after_it() -> None:
    answer = (
        b"HTTP/1.1 100 Continue\r\n\r\n"
        + f"HTTP/1.1 200 OK\r\nContent-Length: {len(DENY)}\r\n\r\n".encode()
        + DENY
    )
    decision, error = await _post_to(answer)
    assert (decision, error) == ("deny", None)


async def test_a_chunked_answer_with_a_chunk_extension_is_read_whole() -> None:
    half = len(DENY) // 2
    body = (
        f"{half:x};name=value\r\n".encode() + DENY[:half] + b"\r\n"
        + f"{len(DENY) - half:x}\r\n".encode() + DENY[half:] + b"\r\n0\r\n\r\n"
    )  # fmt: skip
    head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    decision, error = await _post_to(head + body)
    assert (decision, error) == ("deny", None)


async def test_a_malformed_status_line_is_a_non_blocking_error() -> None:
    decision, error = await _post_to(b"NOT HTTP AT ALL\r\n\r\n")
    assert decision is None
    assert error is not None
