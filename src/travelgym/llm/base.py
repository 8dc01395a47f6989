"""What every provider client shares: cache, budget, retries, deadlines, accounting and reply
parsing.

A backend subclasses :class:`BaseChatClient` and implements ``_request`` (one raw attempt,
returning the OpenAI-shaped completion as a dict) and ``_classify`` (exception -> Failure).
Every reply goes through :func:`parse_completion`, the boundary where model text enters: invalid
Unicode is replaced and flagged there (:mod:`travelgym.llm.text`), and a reply with absurdly
many tool calls is refused.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

from travelgym.llm.budget import RunBudget
from travelgym.llm.cache import ResponseCache, request_key
from travelgym.llm.protocol import ChatMessage, ChatResponse, LLMError, Repair, ToolCall, Usage
from travelgym.llm.retry import Failure, RetryPolicy, Sleep, retrying
from travelgym.llm.text import clean_text
from travelgym.llm.usage import complete_usage, read_usage

#: More tool calls than this in one reply is a ``bad_response`` (no model plans like that; a
#: broken server can send thousands, each of which would run).
MAX_TOOL_CALLS = 128


class AttemptTimeout(Exception):
    """One attempt ran past its deadline (connect, send and the whole body together);
    ``cut_short``: the deadline was what was left of the call's total deadline."""

    def __init__(self, seconds: float, cut_short: bool = False) -> None:
        super().__init__(f"no complete reply within {seconds:g}s")
        self.seconds = seconds
        self.cut_short = cut_short


@dataclass
class ClientStats:
    """Running totals for one client (the run-wide totals live in :class:`RunBudget`)."""

    calls: int = 0
    cached_calls: int = 0
    failed_calls: int = 0
    attempts: int = 0
    latency_s: float = 0.0
    usage: Usage = field(default_factory=Usage)


class BaseChatClient(ABC):
    """The shared ``complete`` pipeline: cache lookup, budget check, retried request,
    parsing, accounting, cache store. ``latency_s`` covers the whole call, retries included.

    ``timeout_s`` is a deadline per attempt covering connect, send and reading the whole body
    (a server dripping bytes cannot stretch it); ``total_timeout_s`` bounds one call across
    all its attempts and the waits between them. An attempt past its own deadline fails as
    ``timeout``; a call ended by the total deadline fails with the category of its last attempt
    that completed (``timeout`` when none did), the total deadline named in the message. ``None``:
    no such deadline."""

    def __init__(
        self,
        model: str,
        *,
        timeout_s: float | None = None,
        total_timeout_s: float | None = None,
        max_retries: int = 5,
        backoff_base_s: float = 0.5,
        backoff_max_s: float = 20.0,
        budget: RunBudget | None = None,
        cache: ResponseCache | None = None,
        default_params: dict[str, Any] | None = None,
        sleep: Sleep | None = None,
        rng: random.Random | None = None,
    ) -> None:
        self.model = model
        self.timeout_s = _positive_or_none("timeout_s", timeout_s)
        self.total_timeout_s = _positive_or_none("total_timeout_s", total_timeout_s)
        self.budget = budget
        self.cache = cache
        self.default_params = dict(default_params or {})
        self.retry_policy = RetryPolicy(
            max_retries=max_retries,
            backoff_base_s=backoff_base_s,
            backoff_max_s=backoff_max_s,
            rng=rng if rng is not None else random.Random(),
        )
        self.stats = ClientStats()
        self._sleep: Sleep = sleep if sleep is not None else asyncio.sleep

    @abstractmethod
    async def _request(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, params: dict
    ) -> Any:
        """One attempt; returns the completion as an OpenAI-shaped dict."""

    @abstractmethod
    def _classify(self, exc: BaseException) -> Failure | None:
        """Map an attempt's exception to a Failure (``None``: not a provider error)."""

    async def complete(
        self,
        messages: list[ChatMessage],
        tools: list[dict[str, Any]] | None = None,
        **params: Any,
    ) -> ChatResponse:
        """One completion (see :class:`~travelgym.llm.protocol.ChatClient`)."""
        start = time.perf_counter()
        merged = {**self.default_params, **params}
        key = request_key(self.model, messages, tools, merged) if self.cache else None
        if self.cache is not None and key is not None:
            hit = self.cache.get(key)
            if hit is not None:
                if self.budget is not None:
                    self.budget.record_hit()
                self.stats.cached_calls += 1
                latency = time.perf_counter() - start
                return hit.model_copy(update={"cached": True, "attempts": 0, "latency_s": latency})
        if self.budget is not None:
            self.budget.acquire()
        payload = [m.to_openai() for m in messages]
        self.stats.calls += 1
        deadline = None if self.total_timeout_s is None else time.monotonic() + self.total_timeout_s
        try:
            data, attempts = await retrying(
                lambda: self._attempt(payload, tools, merged, deadline),
                classify=self._classify_attempt,
                policy=self.retry_policy,
                sleep=self._sleep,
                deadline=deadline,
            )
            parsed = parse_completion(data, self.model)
        except LLMError:
            self.stats.failed_calls += 1
            raise
        # parse_completion checked that data is a dict
        usage, estimated = complete_usage(data.get("usage"), payload, tools, parsed.message)
        latency = time.perf_counter() - start
        response = parsed.model_copy(update={"attempts": attempts, "latency_s": latency,
                                             "usage": usage,
                                             "repairs": parsed.repairs + estimated})  # fmt: skip
        self.stats.attempts += attempts
        self.stats.latency_s += latency
        self.stats.usage = self.stats.usage + response.usage
        if self.budget is not None:
            self.budget.record(response.usage, self.model)
        if self.cache is not None and key is not None:
            self.cache.put(key, response)
        return response

    async def _attempt(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None,
                       params: dict, deadline: float | None) -> Any:  # fmt: skip
        """One ``_request`` under the attempt deadline (the per-attempt limit, or what is left
        of the call's total deadline when that is sooner)."""
        limit, cut_short = self.timeout_s, False
        if deadline is not None:
            left = deadline - time.monotonic()
            cut_short = limit is None or left < limit
            limit = left if cut_short else limit
        if limit is None:
            return await self._request(messages, tools, params)
        if limit <= 0:
            raise AttemptTimeout(0, cut_short=True)
        task = asyncio.ensure_future(self._request(messages, tools, params))
        try:
            done, _ = await asyncio.wait({task}, timeout=limit)
        except asyncio.CancelledError:  # the caller gave up: so does the request
            task.cancel()
            raise
        if not done:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            raise AttemptTimeout(limit, cut_short)
        return task.result()

    def _classify_attempt(self, exc: BaseException) -> Failure | None:
        if isinstance(exc, AttemptTimeout):
            return Failure("timeout", f"{exc} (connect, send and body)", cut_short=exc.cut_short)
        return self._classify(exc)


def _positive_or_none(name: str, value: float | None) -> float | None:
    if value is None:
        return None
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not value > 0:
        raise ValueError(f"{name} must be a positive number of seconds, got {value!r}")
    return float(value)


def _bad(message: str) -> LLMError:
    return LLMError("bad_response", message)


class _Cleaner:
    """Cleans each text field of one reply, collecting a :class:`Repair` per field fixed."""

    def __init__(self) -> None:
        self.repairs: list[Repair] = []

    def __call__(self, text: str | None, where: str) -> str | None:
        if text is None:
            return None
        fixed, replaced = clean_text(text)
        if replaced:
            self.repairs.append(Repair(kind="invalid_unicode", where=where, count=replaced))
        return fixed


def _text(content: Any) -> str | None:
    """Message content as text (content-part lists are joined)."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text", "") if isinstance(p, dict) else str(p) for p in content]
        return "".join(p if isinstance(p, str) else str(p) for p in parts)
    return str(content)


def _tool_call(raw: Any, index: int, clean: _Cleaner) -> ToolCall:
    if not isinstance(raw, dict):
        raise _bad(f"tool call {index} is not an object")
    fn = raw.get("function") or raw.get("custom") or {}
    if not isinstance(fn, dict):
        raise _bad(f"tool call {index} has no function object")
    args = fn.get("arguments", fn.get("input"))
    if args is None:
        args = ""
    elif not isinstance(args, str):  # a non-compliant server sent an object: keep it as JSON
        try:
            args = json.dumps(args, ensure_ascii=False)
        except (TypeError, ValueError, RecursionError):
            raise _bad(f"tool call {index} has arguments that are not JSON data") from None
    where = f"tool_calls[{index}]"
    return ToolCall(id=clean(str(raw.get("id") or f"call_{index}"), f"{where}.id"),
                    name=clean(str(fn.get("name") or ""), f"{where}.name"),
                    arguments=clean(args, f"{where}.arguments"))  # fmt: skip


def check_completion(data: Any) -> None:
    """Raise ``LLMError("bad_response")`` unless ``data`` has the shape of a chat completion:
    an object whose first choice holds a message object (what it says is not checked)."""
    if not isinstance(data, dict):
        raise _bad(f"completion is not a JSON object: {str(data)[:200]!r}")
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        detail = data.get("error") or data
        raise _bad(f"completion has no choices: {str(detail)[:200]}")
    if not isinstance(choices[0].get("message"), dict):
        raise _bad("first choice has no message")


def parse_completion(data: Any, model: str = "") -> ChatResponse:
    """Turn an OpenAI chat.completion dict into a :class:`ChatResponse` (raw tool-call
    argument text kept as is, invalid Unicode in any text replaced and listed in
    ``repairs``); raises ``LLMError("bad_response")`` when it has no reply,
    ``LLMError("too_many_tool_calls")`` when it has more than :data:`MAX_TOOL_CALLS`. ``usage`` is read as reported, clamped at 0 (the
    client estimates what is missing or invalid: :func:`~travelgym.llm.usage.complete_usage`)."""
    check_completion(data)
    choice = data["choices"][0]
    msg = choice["message"]
    raw_calls = msg.get("tool_calls") or []
    if not isinstance(raw_calls, list):
        raise _bad("tool_calls is not a list")
    if len(raw_calls) > MAX_TOOL_CALLS:
        # the model's own doing (a measured failure, not the endpoint's): see core.outcomes
        raise LLMError("too_many_tool_calls", f"reply has {len(raw_calls)} tool calls (at most "
                       f"{MAX_TOOL_CALLS} are accepted)")  # fmt: skip
    clean = _Cleaner()
    calls = [_tool_call(c, i, clean) for i, c in enumerate(raw_calls)]
    if not calls and isinstance(msg.get("function_call"), dict):  # legacy single call
        calls = [_tool_call({"function": msg["function_call"]}, 0, clean)]
    prompt, completion = read_usage(data.get("usage"))
    content = clean(_text(msg.get("content")), "content")
    finish = choice.get("finish_reason")
    return ChatResponse(
        message=ChatMessage(role="assistant", content=content, tool_calls=calls),
        usage=Usage(prompt_tokens=prompt or 0, completion_tokens=completion or 0),
        model=clean(str(data.get("model") or model), "model") or "",
        finish_reason=clean(finish, "finish_reason") if isinstance(finish, str) else None,
        repairs=clean.repairs,
    )
