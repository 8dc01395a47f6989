"""A local OpenAI-compatible HTTP server for tests (starlette + uvicorn in a thread).

It answers ``POST /v1/chat/completions`` (non-streaming) from a *script* (a queue of
:class:`Reply`, :class:`HTTPError`, :class:`Delay`, raw dict bodies, or the byte-level items
:class:`Raw`, :class:`Drip`, :class:`Hang` and :class:`Reset`, one per request) or, once the
script is empty,
from a *responder* (a function from the request JSON to one of those). JSON goes out with
``ensure_ascii`` so scripted text may hold lone surrogates (sent as ``\\ud83d`` escapes). Every
request body is recorded in ``server.requests`` (and when it came, in ``server.times``). Hostile behaviours built from these items are
in :mod:`tests.fakes.hostile_server`. Usage::

    with FakeOpenAIServer([Reply("hi"), HTTPError(429, retry_after=1), Reply("ok")]) as srv:
        client = OpenAIChatClient("fake-model", base_url=srv.base_url)
"""

from __future__ import annotations

import asyncio
import itertools
import json
import socket
import struct
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

MODEL = "fake-model"


@dataclass
class FakeToolCall:
    """A tool call in a scripted reply; ``arguments`` is sent verbatim when it is a string
    (so malformed JSON can be scripted) and JSON-encoded otherwise."""

    name: str
    arguments: str | dict[str, Any] = "{}"
    id: str | None = None


@dataclass
class Reply:
    """An assistant message; ``usage`` is ``(prompt_tokens, completion_tokens)`` (sent as
    given, negative too) or ``None`` for a rough estimate from the text sizes;
    ``omit_usage`` sends no ``usage`` object at all."""

    content: str | None = None
    tool_calls: list[FakeToolCall] = field(default_factory=list)
    finish_reason: str | None = None
    usage: tuple[int, int] | None = None
    model: str | None = None
    omit_usage: bool = False


@dataclass
class HTTPError:
    """An error status with an OpenAI-style error body (and optional ``Retry-After``)."""

    status: int
    message: str = "scripted error"
    retry_after: float | str | None = None


@dataclass
class Delay:
    """Wait ``seconds`` (longer than the client timeout, to test it), then answer ``then``."""

    seconds: float
    then: Reply | HTTPError | dict[str, Any] | None = None


@dataclass
class Raw:
    """A body sent byte for byte (invalid JSON, invalid UTF-8, a huge body)."""

    body: bytes
    status: int = 200
    content_type: str = "application/json"


@dataclass
class Drip:
    """A 200 answer whose body trickles out ``chunk`` bytes every ``interval_s`` seconds (each
    read succeeds, so only a deadline on the whole body stops it). Ends early when the server
    stops."""

    body: bytes
    interval_s: float = 1.0
    chunk: int = 1


@dataclass
class Hang:
    """Accept the request and never answer (until the server stops, then a 503)."""


@dataclass
class Reset:
    """A 200 whose headers promise ``length`` bytes; send the first bytes of ``body``, pause,
    then drop the connection. On a server made with ``abortive_close`` the drop is a TCP reset
    (the client reads ``ECONNRESET`` mid-body), else an early close."""

    body: bytes
    length: int = 4096
    pause_s: float = 0.05


Item = Reply | HTTPError | Delay | Raw | Drip | Hang | Reset | dict
Responder = Callable[[dict[str, Any]], Item]


class _Cut:
    """An ASGI response for :class:`Reset`: the headers and part of the body, then it returns
    without finishing, and uvicorn closes the connection."""

    def __init__(self, item: Reset) -> None:
        self.item = item

    async def __call__(self, scope, receive, send) -> None:
        length = str(max(self.item.length, len(self.item.body) + 1)).encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", length)]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": self.item.body, "more_body": True})
        await asyncio.sleep(self.item.pause_s)


def tool_call(name: str, arguments: str | dict[str, Any] = "{}", id: str | None = None):
    """Shorthand for :class:`FakeToolCall`."""
    return FakeToolCall(name, arguments, id)


def _estimate_tokens(text: str) -> int:
    return max(1, len(text) // 4)


def _json(payload: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    """``payload`` as JSON with ASCII escapes (lone surrogates survive as ``\\udXXX``)."""
    body = json.dumps(payload).encode("ascii")
    return Response(body, status_code=status, headers=headers, media_type="application/json")


class FakeOpenAIServer:
    """The server; use as a context manager (``base_url`` ends in ``/v1``). ``abortive_close``:
    every connection the server closes is reset (``SO_LINGER`` 0, inherited from the listening
    socket), so a :class:`Reset` is a real ``ECONNRESET``."""

    def __init__(self, script: Iterable[Item] = (), responder: Responder | None = None,
                 abortive_close: bool = False) -> None:  # fmt: skip
        self.script: deque[Item] = deque(script)
        self.responder = responder
        self.abortive_close = abortive_close
        self.requests: list[dict[str, Any]] = []
        self.times: list[float] = []  # time.monotonic() of each request, as in requests
        self.headers: list[dict[str, str]] = []
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._stopping = threading.Event()
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self.port = 0
        self.app = Starlette(
            routes=[
                Route("/v1/chat/completions", self._chat, methods=["POST"]),
                Route("/v1/models", self._models, methods=["GET"]),
            ]
        )

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def push(self, *items: Item) -> None:
        """Append items to the script."""
        with self._lock:
            self.script.extend(items)

    def _next(self, body: dict[str, Any]) -> Item:
        with self._lock:
            self.requests.append(body)
            self.times.append(time.monotonic())
            if self.script:
                return self.script.popleft()
        if self.responder is not None:
            return self.responder(body)
        return HTTPError(500, "fake server: script exhausted")

    async def _chat(self, request: Request) -> Response:
        try:
            body = await request.json()
        except ValueError:
            return self._error(HTTPError(400, "request body is not JSON"))
        with self._lock:
            self.headers.append(dict(request.headers))
        try:
            item = self._next(body)
        except Exception as exc:  # a broken responder: make it visible to the test
            return self._error(HTTPError(400, f"responder failed: {exc!r}"))
        if isinstance(item, Delay | Hang):
            seconds = item.seconds if isinstance(item, Delay) else float("inf")
            deadline = time.monotonic() + seconds
            while time.monotonic() < deadline and not self._stopping.is_set():
                await asyncio.sleep(0.02)
            if isinstance(item, Hang):
                return self._error(HTTPError(503, "fake server stopping"))
            item = item.then if item.then is not None else Reply("late reply")
        if isinstance(item, HTTPError):
            return self._error(item)
        if isinstance(item, Raw):
            return Response(item.body, status_code=item.status, media_type=item.content_type)
        if isinstance(item, Drip):
            return StreamingResponse(self._drip(item), media_type="application/json")
        if isinstance(item, Reset):
            return _Cut(item)
        if isinstance(item, dict):
            return _json(item)
        return _json(self._completion(body, item))

    async def _drip(self, item: Drip):
        for start in range(0, len(item.body), item.chunk):
            if self._stopping.is_set():
                return
            yield item.body[start : start + item.chunk]
            await asyncio.sleep(item.interval_s)

    async def _models(self, request: Request) -> Response:
        return _json(
            {"object": "list", "data": [{"id": MODEL, "object": "model", "owned_by": "fake"}]}
        )

    @staticmethod
    def _error(err: HTTPError) -> Response:
        headers = {} if err.retry_after is None else {"Retry-After": str(err.retry_after)}
        kind = "rate_limit_error" if err.status == 429 else "invalid_request_error"
        payload = {"error": {"message": err.message, "type": kind, "code": str(err.status)}}
        return _json(payload, status=err.status, headers=headers)

    def _completion(self, body: dict[str, Any], reply: Reply) -> dict[str, Any]:
        n = next(self._ids)
        calls = [
            {
                "id": c.id or f"call_{n}_{i}",
                "type": "function",
                "function": {
                    "name": c.name,
                    "arguments": c.arguments
                    if isinstance(c.arguments, str)
                    else json.dumps(c.arguments),
                },
            }
            for i, c in enumerate(reply.tool_calls)
        ]
        message: dict[str, Any] = {"role": "assistant", "content": reply.content}
        if calls:
            message["tool_calls"] = calls
        if reply.usage is not None:
            prompt, completion = reply.usage
        else:
            prompt = _estimate_tokens(json.dumps(body.get("messages", [])))
            completion = _estimate_tokens(json.dumps(message))
        finish = reply.finish_reason or ("tool_calls" if calls else "stop")
        completion_json = {
            "id": f"chatcmpl-{n}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": reply.model or body.get("model") or MODEL,
            "choices": [
                {"index": 0, "message": message, "finish_reason": finish, "logprobs": None}
            ],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
            },
        }
        if reply.omit_usage:
            del completion_json["usage"]
        return completion_json

    def start(self) -> FakeOpenAIServer:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if self.abortive_close:  # accepted sockets inherit it: close() sends RST, not FIN
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.bind(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(
            self.app, log_level="warning", lifespan="off", timeout_graceful_shutdown=2
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [sock]}, daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("fake OpenAI server did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


@pytest.fixture
def fake_openai_server() -> Iterator[FakeOpenAIServer]:
    """A running server with an empty script: ``push`` items or set ``responder``."""
    with FakeOpenAIServer() as server:
        yield server
