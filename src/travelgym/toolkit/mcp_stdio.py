"""A stdio transport for the MCP server that answers every request it reads.

The SDK's own ``stdio_server`` drops what it cannot validate (a lone surrogate escape such as
``"\\ud83d"`` fails pydantic's JSON parser, so the request is never answered) and, when stdin
closes, cancels the requests still being handled. This transport instead:

* decodes each line as UTF-8 with invalid bytes replaced by U+FFFD, parses it with Python's
  ``json`` (which accepts lone surrogate escapes) and replaces every lone surrogate in keys and
  strings with U+FFFD, logging one line to stderr, so invalid Unicode is never fatal;
* answers a line that is not JSON (or nested too deeply, or longer than ``MAX_LINE_BYTES``)
  with a JSON-RPC parse error (-32700) and valid JSON that is not a JSON-RPC message with an
  invalid-request error (-32600), carrying the request's id where one can be read;
* after stdin closes, keeps the server running until every request it read has been answered
  (or ``DRAIN_TIMEOUT_S`` passes, or the client stops reading).

While serving, file descriptor 0 reads the null device and 1 writes to stderr, so tools and
stray prints cannot touch the protocol stream.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from typing import IO, Any

import anyio
import mcp_types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

MAX_LINE_BYTES = 32 * 2**20  # a longer line is answered with a parse error, never buffered whole
DRAIN_TIMEOUT_S = 120.0  # after stdin closes: how long to wait for the last answers
LONE_SURROGATE = re.compile("[\ud800-\udfff]")  # json.loads has already joined valid pairs
REPLACEMENT = "\ufffd"


@dataclass(frozen=True)
class ParsedLine:
    """One line of input: a message for the server, or the error response to send back."""

    message: types.JSONRPCMessage | None = None
    reply: types.JSONRPCError | None = None
    replaced: bool = False  # invalid Unicode was replaced with U+FFFD


def replace_lone_surrogates(value: Any) -> tuple[Any, bool]:
    """``value`` (parsed JSON) with every lone surrogate in its strings and keys replaced by
    U+FFFD, and whether anything was replaced."""
    if isinstance(value, str):
        cleaned = LONE_SURROGATE.sub(REPLACEMENT, value)
        return cleaned, cleaned != value
    if isinstance(value, list):
        items = [replace_lone_surrogates(v) for v in value]
        return [v for v, _ in items], any(changed for _, changed in items)
    if isinstance(value, dict):
        out, changed = {}, False
        for key, item in value.items():
            new_key, key_changed = replace_lone_surrogates(key)
            out[new_key], item_changed = replace_lone_surrogates(item)
            changed = changed or key_changed or item_changed
        return out, changed
    return value, False


def _error(code: int, message: str, request_id: Any = None) -> types.JSONRPCError:
    valid_id = isinstance(request_id, str) or (
        isinstance(request_id, int) and not isinstance(request_id, bool)
    )
    return types.JSONRPCError(jsonrpc="2.0", id=request_id if valid_id else None,
                              error=types.ErrorData(code=code, message=message))  # fmt: skip


def parse_line(raw: bytes) -> ParsedLine | None:
    """Parse one input line (without or with its newline); ``None`` for a blank line."""
    try:
        text, replaced = raw.decode("utf-8"), False
    except UnicodeDecodeError:
        text, replaced = raw.decode("utf-8", errors="replace"), True
    if not text.strip():
        return None
    try:
        value = json.loads(text)
        value, surrogates = replace_lone_surrogates(value)
    except RecursionError:
        return ParsedLine(reply=_error(types.PARSE_ERROR, "Parse error: nested too deeply"))
    except ValueError as exc:  # JSONDecodeError, or an integer too long to convert
        return ParsedLine(reply=_error(types.PARSE_ERROR, f"Parse error: {exc}"))
    replaced = replaced or surrogates
    if not isinstance(value, dict):
        what = "a batch" if isinstance(value, list) else f"a JSON {type(value).__name__}"
        return ParsedLine(reply=_error(types.INVALID_REQUEST,
                                       f"Invalid Request: expected one JSON-RPC object, got {what}"),
                          replaced=replaced)  # fmt: skip
    try:
        message = types.jsonrpc_message_adapter.validate_python(value, by_name=False)
    except ValidationError as exc:
        reason = exc.errors()[0]["msg"] if exc.errors() else "not a JSON-RPC 2.0 message"
        return ParsedLine(reply=_error(types.INVALID_REQUEST, f"Invalid Request: {reason}",
                                       value.get("id")), replaced=replaced)  # fmt: skip
    if isinstance(message, types.JSONRPCNotification) and "id" in value:
        # a request whose id is no string or integer would pass as a notification, unanswered
        return ParsedLine(reply=_error(types.INVALID_REQUEST, "Invalid Request: the id must be a "
                                       "string or an integer"), replaced=replaced)  # fmt: skip
    return ParsedLine(message=message, replaced=replaced)


def read_line(stream: IO[bytes], limit: int = MAX_LINE_BYTES) -> tuple[bytes, bool] | None:
    """The next line of ``stream`` and whether it was longer than ``limit`` (then its content
    is skipped, not returned); ``None`` at end of input."""
    line = stream.readline(limit + 1)
    if not line:
        return None
    if len(line) <= limit or line.endswith(b"\n"):
        return line, False
    while True:  # skip the rest of the oversized line
        more = stream.readline(2**20)
        if not more or more.endswith(b"\n"):
            return b"", True


class PendingRequests:
    """Ids of the requests read and not yet answered (a multiset: ids may repeat)."""

    def __init__(self) -> None:
        self._ids: Counter[str] = Counter()
        self._empty = anyio.Event()
        self._empty.set()

    def add(self, request_id: types.RequestId) -> None:
        """Count one more request with this id."""
        self._ids[str(request_id)] += 1
        if self._empty.is_set():
            self._empty = anyio.Event()

    def settle(self, request_id: types.RequestId) -> None:
        """One request with this id was answered (or cancelled by the client)."""
        key = str(request_id)
        if self._ids[key] > 0:
            self._ids[key] -= 1
        if self._ids[key] <= 0:
            del self._ids[key]
        if not self._ids:
            self._empty.set()

    def abandon(self) -> None:
        """Stop waiting for answers (the client no longer reads them)."""
        self._ids.clear()
        self._empty.set()

    async def wait_empty(self) -> None:
        """Return once every counted request is settled."""
        while self._ids:
            await self._empty.wait()

    def __len__(self) -> int:
        return sum(self._ids.values())


def _log(text: str) -> None:
    print(f"travelgym mcp: {text}", file=sys.stderr, flush=True)


def _is_cancellation(message: types.JSONRPCMessage) -> bool:
    return (isinstance(message, types.JSONRPCNotification)
            and message.method == "notifications/cancelled"
            and isinstance((message.params or {}).get("requestId"), str | int))  # fmt: skip


async def _read_loop(stdin: IO[bytes], to_server: MemoryObjectSendStream[Any],
                     replies: MemoryObjectSendStream[SessionMessage], pending: PendingRequests,
                     drain_timeout_s: float) -> None:  # fmt: skip
    async with to_server, replies:
        number = 0
        while True:
            got = await anyio.to_thread.run_sync(read_line, stdin, abandon_on_cancel=True)
            if got is None:
                break
            number += 1
            raw, oversized = got
            if oversized:
                message = f"Parse error: request longer than {MAX_LINE_BYTES} bytes"
                await replies.send(SessionMessage(_error(types.PARSE_ERROR, message)))
                continue
            parsed = parse_line(raw)
            if parsed is None:
                continue
            if parsed.replaced:
                _log(f"line {number}: invalid Unicode replaced with U+FFFD")
            if parsed.reply is not None:
                await replies.send(SessionMessage(parsed.reply))
                continue
            message = parsed.message
            if isinstance(message, types.JSONRPCRequest):
                pending.add(message.id)
            elif _is_cancellation(message):
                pending.settle(message.params["requestId"])  # a cancelled request is never answered
            await to_server.send(SessionMessage(message))
        with anyio.move_on_after(drain_timeout_s):
            await pending.wait_empty()
        if len(pending):
            _log(f"stdin closed; {len(pending)} request(s) left unanswered after "
                 f"{drain_timeout_s:g} s")  # fmt: skip


def _serialize(message: types.JSONRPCMessage) -> str:
    try:
        return message.model_dump_json(by_alias=True, exclude_unset=True)
    except (ValueError, TypeError) as exc:  # e.g. a result that cannot be written as JSON
        request_id = getattr(message, "id", None)
        if request_id is None:
            raise
        error = _error(types.INTERNAL_ERROR, f"Internal error: unserializable reply ({exc})",
                       request_id)  # fmt: skip
        return error.model_dump_json(by_alias=True, exclude_unset=True)


async def _write_loop(stdout: IO[bytes], from_server: MemoryObjectReceiveStream[SessionMessage],
                      pending: PendingRequests) -> None:  # fmt: skip
    broken = False
    async with from_server:
        async for session_message in from_server:
            if broken:
                continue  # keep draining, so the server is never blocked on a send
            message = session_message.message
            data = (_serialize(message) + "\n").encode("utf-8", errors="replace")
            try:
                await anyio.to_thread.run_sync(_write, stdout, data)
            except OSError as exc:
                _log(f"cannot write to stdout ({exc}); the client is gone")
                broken = True
                pending.abandon()
                continue
            answered = isinstance(message, types.JSONRPCResponse | types.JSONRPCError)
            if answered and message.id is not None:
                pending.settle(message.id)


def _write(stdout: IO[bytes], data: bytes) -> None:
    stdout.write(data)
    stdout.flush()


@contextmanager
def claimed_stdio() -> Iterator[tuple[IO[bytes], IO[bytes]]]:
    """The process's stdin and stdout as binary files for the protocol, while fd 0 reads the
    null device and fd 1 writes to stderr; both are restored on exit."""
    sys.stdout.flush()
    wire_in, wire_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    # closefd=False: a reader thread may still block on wire_in when serving ends
    stdin = os.fdopen(wire_in, "rb", closefd=False)
    stdout = os.fdopen(wire_out, "wb", closefd=False)
    try:
        yield stdin, stdout
    finally:
        sys.stdout.flush()
        os.dup2(wire_out, 1)
        os.dup2(wire_in, 0)


@asynccontextmanager
async def stdio_transport(
    stdin: IO[bytes], stdout: IO[bytes], drain_timeout_s: float = DRAIN_TIMEOUT_S
) -> AsyncIterator[tuple[MemoryObjectReceiveStream[Any], MemoryObjectSendStream[SessionMessage]]]:
    """The (read, write) stream pair for ``Server.run`` over binary ``stdin``/``stdout``: the
    read stream ends once stdin is closed and every request read has been answered."""
    to_server, server_reads = anyio.create_memory_object_stream[Any](0)
    server_writes, from_server = anyio.create_memory_object_stream[SessionMessage](0)
    replies = server_writes.clone()
    pending = PendingRequests()
    reader_scope = anyio.CancelScope()

    async def read() -> None:
        with reader_scope:
            await _read_loop(stdin, to_server, replies, pending, drain_timeout_s)

    async with anyio.create_task_group() as tg:
        tg.start_soon(_write_loop, stdout, from_server, pending)
        tg.start_soon(read)
        try:
            yield server_reads, server_writes
        finally:
            reader_scope.cancel()  # the server stopped on its own: stop reading stdin too
