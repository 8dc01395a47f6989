"""Hostile behaviours of an OpenAI-compatible endpoint, for fault-injection tests.

Each entry of :data:`BEHAVIOURS` is a :class:`Hostile`: a responder for
:class:`~tests.fakes.openai_server.FakeOpenAIServer` and what a client must make of it. The
failing ones break every call; the others answer with a well-formed conversation that carries
the fault (no usage, negative usage, invalid Unicode), so an episode can go on. A reply to an
agent request (one carrying ``tools``) calls a tool first and then gives the JSON answer; a reply
to a request without tools (the LLM user, or a text-format agent) is plain text, or, for the
Behavior2Trip agents, an ``<answer>``. Everything stays on 127.0.0.1, and every behaviour is
bounded: hangs and drips end when the server stops, bodies are at most :data:`HUGE_BYTES`.
The failing ones cover the transport (a hang, a drip, a reset mid-body), the body (huge, not
JSON, no choices, thousands of tool calls) and the HTTP errors a provider sends (429 with
``Retry-After``, 401, 400, 500).

    with hostile_server("hang") as server:
        ...  # point a client or ``travelgym run --base-url`` at server.base_url
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tests.fakes.openai_server import (
    MODEL,
    Drip,
    FakeOpenAIServer,
    Hang,
    HTTPError,
    Item,
    Raw,
    Reply,
    Reset,
    tool_call,
)

HUGE_BYTES = 10 * 1024 * 1024
MANY_TOOL_CALLS = 3000
#: The ``Retry-After`` (seconds) of the ``rate_limit_429`` behaviour.
RETRY_AFTER_S = 1
#: A lone high surrogate, as a model that cut an emoji in half would send it.
LONE = "\ud83d"
FINAL = {"message": f"Here is my plan {LONE}", "recommendation": None}


def completion_bytes(content: str = "ok", **extra: Any) -> bytes:
    """A minimal valid completion body (ASCII JSON) for ``content``."""
    data = {"id": "x", "object": "chat.completion", "model": MODEL,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                         "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 1}, **extra}  # fmt: skip
    return json.dumps(data).encode("ascii")


def _is_agent(body: dict[str, Any]) -> bool:
    return "tools" in body


def _first_step(body: dict[str, Any]) -> bool:
    return body["messages"][-1]["role"] == "user"  # not a tool result


def _text_reply(body: dict[str, Any], text: str) -> str:
    """What a text-format caller gets: an ``<answer>`` for a Behavior2Trip agent (its system
    prompt asks for one), else ``text`` (the LLM user)."""
    system = str(body["messages"][0].get("content") or "")
    if "Finish[" in system:
        return f"Thought: {text}\nAction: Finish[[]]"
    if "<answer>" in system:
        return f"<think>{text}</think><answer>[]</answer>"
    return text


def conversation(
    *, content_fault: str = "", args: str | dict[str, Any] | None = None, **reply: Any
) -> Callable[[dict[str, Any]], Item]:
    """A responder that keeps a conversation going: agent requests get one tool call, then the
    final JSON answer; ``content_fault`` is appended to every text, ``args`` are the tool call's
    arguments and ``reply`` goes to every :class:`Reply` (e.g. ``usage``, ``omit_usage``)."""

    def respond(body: dict[str, Any]) -> Item:
        if not _is_agent(body):
            return Reply(_text_reply(body, f"I need a quiet hotel{content_fault}"), **reply)
        if _first_step(body):
            arguments = args if args is not None else {"park_name": f"Yosemite{content_fault}"}
            return Reply(None, [tool_call("search_airports", arguments)], **reply)
        final = {**FINAL, "message": FINAL["message"] + content_fault}
        return Reply(json.dumps(final, ensure_ascii=False), **reply)

    return respond


def _many_tool_calls(body: dict[str, Any]) -> Item:
    return Reply(None, [tool_call("get_weekday", {"date_str": "2025-08-01"})] * MANY_TOOL_CALLS)


def _invalid_utf8(body: dict[str, Any]) -> Item:
    """A reply whose text holds bytes that are not UTF-8 (a stray byte, a cut sequence)."""
    final = json.dumps({"message": "Here is my plan @BAD@", "recommendation": None})
    text = final if _is_agent(body) else _text_reply(body, "I need a quiet hotel @BAD@")
    return Raw(completion_bytes(text).replace(b"@BAD@", b"\xff\xfe \xe2\x82"))


@dataclass(frozen=True)
class Hostile:
    """One hostile behaviour: the responder and what a client must report. ``category`` is
    the error category every call fails with (``None``: calls succeed, with ``repair`` - the
    kind of :class:`~travelgym.llm.protocol.Repair` flagged - when there is one);
    ``abortive_close``: the server resets the connections it closes (see
    :class:`~tests.fakes.openai_server.Reset`)."""

    respond: Callable[[dict[str, Any]], Item]
    category: str | None = None
    repair: str | None = None
    abortive_close: bool = False


BEHAVIOURS: dict[str, Hostile] = {
    "hang": Hostile(lambda body: Hang(), category="timeout"),
    "byte_drip": Hostile(
        lambda body: Drip(completion_bytes("slow"), interval_s=0.25), category="timeout"
    ),  # fmt: skip
    "huge_body": Hostile(
        lambda body: Raw(completion_bytes("x" * HUGE_BYTES)), category="bad_response"
    ),  # fmt: skip
    "invalid_json": Hostile(
        lambda body: Raw(b'{"choices": [{"message": '), category="bad_response"
    ),  # fmt: skip
    "not_json_html": Hostile(
        lambda body: Raw(b"<html>502 Bad Gateway</html>", content_type="text/html"),
        category="bad_response",
    ),  # fmt: skip
    "empty_choices": Hostile(
        lambda body: {"id": "x", "object": "chat.completion", "choices": []},
        category="bad_response",
    ),  # fmt: skip
    "many_tool_calls": Hostile(_many_tool_calls, category="too_many_tool_calls"),
    "reset_mid_body": Hostile(
        lambda body: Reset(completion_bytes("cut")[:40]),
        category="connection",
        abortive_close=True,
    ),  # fmt: skip
    "rate_limit_429": Hostile(
        lambda body: HTTPError(429, "Rate limit reached", retry_after=RETRY_AFTER_S),
        category="rate_limit",
    ),  # fmt: skip
    "auth_401": Hostile(lambda body: HTTPError(401, "Incorrect API key"), category="auth"),
    "bad_request_400": Hostile(
        lambda body: HTTPError(400, "maximum context length exceeded"), category="bad_request"
    ),  # fmt: skip
    "server_500": Hostile(lambda body: HTTPError(500, "internal error"), category="server"),
    "missing_usage": Hostile(conversation(omit_usage=True), repair="usage_estimated"),
    "negative_usage": Hostile(
        conversation(usage=(-1_000_000, -1_000_000)), repair="usage_estimated"
    ),  # fmt: skip
    # the tool arguments carry the surrogate as a JSON escape inside their text
    "lone_surrogates": Hostile(
        conversation(content_fault=LONE, args={"park_name": LONE}), repair="invalid_unicode"
    ),
    "invalid_utf8": Hostile(_invalid_utf8, repair="invalid_unicode"),
}


def hostile_server(name: str) -> FakeOpenAIServer:
    """A (not yet started) server that answers every request with behaviour ``name``."""
    hostile = BEHAVIOURS[name]
    return FakeOpenAIServer(responder=hostile.respond, abortive_close=hostile.abortive_close)
