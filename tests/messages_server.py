"""A local Messages API server that replays scripted streaming responses.

It listens on 127.0.0.1 in a thread, answers each ``POST /v1/messages`` with
the next script (Server-Sent Events in the Messages API streaming format), and
records every request body, so tests can drive the real ``anthropic`` SDK and
then check exactly what the client sent.

A script is a list of steps: an event dict (sent as ``event:``/``data:``), a
:class:`WaitFor` (hold the stream until a ``threading.Event`` is set, e.g. by
a tool that started), :class:`Drop` (close the connection mid-stream), or,
as the only step, a :class:`Status` (a plain HTTP error response).
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any, Self

import attrs

if TYPE_CHECKING:
    from collections.abc import Iterator
    from types import TracebackType

Step = Any


@attrs.frozen
class WaitFor:
    """Hold the stream until ``event`` is set (at most ``timeout`` seconds), recording which."""

    event: threading.Event
    timeout: float = 10.0


@attrs.frozen
class Drop:
    """Close the connection here, mid-stream."""


@attrs.frozen
class Raw:
    """Bytes written as they are (a malformed event, say), ``text`` encoded as UTF-8."""

    text: str


@attrs.frozen
class Status:
    """Answer with an HTTP error status and a Messages API error body."""

    code: int
    kind: str = "api_error"
    message: str = "scripted failure"


def text(index: int, content: str, *, chunks: int = 2) -> list[Step]:
    """The events of one text block, its text split into ``chunks`` deltas."""
    size = max(1, -(-len(content) // chunks))
    parts = [content[i : i + size] for i in range(0, len(content), size)] or [""]
    return [
        {
            "type": "content_block_start",
            "index": index,
            "content_block": {"type": "text", "text": ""},
        },
        *(
            {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": "text_delta", "text": p},
            }
            for p in parts
        ),
        {"type": "content_block_stop", "index": index},
    ]


def tool_use(index: int, tool_id: str, name: str, args: dict[str, Any] | str) -> list[Step]:
    """The events of one tool_use block; ``args`` as a dict, or raw (maybe broken) JSON text."""
    raw = args if isinstance(args, str) else json.dumps(args)
    half = len(raw) // 2
    return [
        {
            "type": "content_block_start",
            "index": index,
            "content_block": {"type": "tool_use", "id": tool_id, "name": name, "input": {}},
        },
        *(
            {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": "input_json_delta", "partial_json": part},
            }
            for part in (raw[:half], raw[half:])
        ),
        {"type": "content_block_stop", "index": index},
    ]


def message_start(message_id: str = "msg_1") -> Step:
    return {
        "type": "message_start",
        "message": {
            "id": message_id,
            "type": "message",
            "role": "assistant",
            "model": "claude-test",
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 1},
        },
    }


def message_end(stop_reason: str = "end_turn") -> list[Step]:
    return [
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": None},
            "usage": {"output_tokens": 20},
        },
        {"type": "message_stop"},
    ]


def stream_error(kind: str = "overloaded_error", message: str = "Overloaded") -> Step:
    return {"type": "error", "error": {"type": kind, "message": message}}


def response(
    *blocks: list[Step], stop_reason: str = "end_turn", message_id: str = "msg_1"
) -> list[Step]:
    """A whole streamed message: start, the blocks' events, end."""
    return [message_start(message_id), *(s for b in blocks for s in b), *message_end(stop_reason)]


class MessagesServer:
    """Serve scripted responses to ``POST /v1/messages``; see the module docstring."""

    def __init__(self, scripts: list[list[Step]]) -> None:
        self.scripts = list(scripts)
        self.requests: list[dict[str, Any]] = []
        self.sent: list[str] = []  # the event types written, in order, across responses
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:  # noqa: A002
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                with server.lock:
                    server.requests.append(body)
                    script = server.scripts.pop(0) if server.scripts else [Status(500)]
                server.replay(self, script)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def replay(self, handler: BaseHTTPRequestHandler, script: list[Step]) -> None:
        if script and isinstance(script[0], Status):
            status = script[0]
            payload = json.dumps(
                {"type": "error", "error": {"type": status.kind, "message": status.message}}
            ).encode()
            handler.send_response(status.code)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Length", str(len(payload)))
            handler.end_headers()
            handler.wfile.write(payload)
            return
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.send_header("Cache-Control", "no-cache")
        handler.send_header("Connection", "close")
        handler.end_headers()
        try:
            for step in script:
                if isinstance(step, WaitFor):
                    self.sent.append(
                        "wait:" + ("set" if step.event.wait(step.timeout) else "timeout")
                    )
                    continue
                if isinstance(step, Raw):
                    self.sent.append("raw")
                    handler.wfile.write(step.text.encode())
                    handler.wfile.flush()
                    continue
                if isinstance(step, Drop):
                    self.sent.append("drop")
                    handler.wfile.flush()
                    handler.close_connection = True
                    handler.connection.shutdown(2)
                    return
                self.sent.append(step["type"])
                chunk = f"event: {step['type']}\ndata: {json.dumps(step)}\n\n"
                handler.wfile.write(chunk.encode())
                handler.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            self.sent.append("client-gone")

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=10)

    def user_messages(self) -> Iterator[dict[str, Any]]:
        """The last message of every request after the first (the tool_results sent back)."""
        for body in self.requests[1:]:
            yield body["messages"][-1]
