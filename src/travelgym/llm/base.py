"""What every provider client shares: cache, budget, retries, accounting and reply parsing.

A backend subclasses :class:`BaseChatClient` and implements ``_request`` (one raw attempt,
returning the OpenAI-shaped completion as a dict) and ``_classify`` (exception -> Failure).
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
from travelgym.llm.protocol import ChatMessage, ChatResponse, LLMError, ToolCall, Usage
from travelgym.llm.retry import Failure, RetryPolicy, Sleep, retrying


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
    parsing, accounting, cache store. ``latency_s`` covers the whole call, retries included."""

    def __init__(
        self,
        model: str,
        *,
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
        try:
            data, attempts = await retrying(
                lambda: self._request(payload, tools, merged),
                classify=self._classify,
                policy=self.retry_policy,
                sleep=self._sleep,
            )
            parsed = parse_completion(data, self.model)
        except LLMError:
            self.stats.failed_calls += 1
            raise
        latency = time.perf_counter() - start
        response = parsed.model_copy(update={"attempts": attempts, "latency_s": latency})
        self.stats.attempts += attempts
        self.stats.latency_s += latency
        self.stats.usage = self.stats.usage + response.usage
        if self.budget is not None:
            self.budget.record(response.usage)
        if self.cache is not None and key is not None:
            self.cache.put(key, response)
        return response


def _bad(message: str) -> LLMError:
    return LLMError("bad_response", message)


def _text(content: Any) -> str | None:
    """Message content as text (content-part lists are joined)."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text", "") if isinstance(p, dict) else str(p) for p in content]
        return "".join(parts)
    return str(content)


def _tool_call(raw: Any, index: int) -> ToolCall:
    if not isinstance(raw, dict):
        raise _bad(f"tool call {index} is not an object")
    fn = raw.get("function") or raw.get("custom") or {}
    if not isinstance(fn, dict):
        raise _bad(f"tool call {index} has no function object")
    args = fn.get("arguments", fn.get("input"))
    if args is None:
        args = ""
    elif not isinstance(args, str):  # a non-compliant server sent an object: keep it as JSON
        args = json.dumps(args, ensure_ascii=False)
    return ToolCall(
        id=str(raw.get("id") or f"call_{index}"), name=str(fn.get("name") or ""), arguments=args
    )


def parse_completion(data: Any, model: str = "") -> ChatResponse:
    """Turn an OpenAI chat.completion dict into a :class:`ChatResponse` (raw tool-call
    argument text kept as is); raises ``LLMError("bad_response")`` when it has no reply."""
    if not isinstance(data, dict):
        raise _bad(f"completion is not a JSON object: {str(data)[:200]!r}")
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        detail = data.get("error") or str(data)[:200]
        raise _bad(f"completion has no choices: {detail}")
    choice = choices[0]
    msg = choice.get("message")
    if not isinstance(msg, dict):
        raise _bad("first choice has no message")
    raw_calls = msg.get("tool_calls") or []
    if not isinstance(raw_calls, list):
        raise _bad("tool_calls is not a list")
    calls = [_tool_call(c, i) for i, c in enumerate(raw_calls)]
    if not calls and isinstance(msg.get("function_call"), dict):  # legacy single call
        calls = [_tool_call({"function": msg["function_call"]}, 0)]
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    try:
        parsed_usage = Usage(
            prompt_tokens=int(usage.get("prompt_tokens") or 0),
            completion_tokens=int(usage.get("completion_tokens") or 0),
        )
    except (TypeError, ValueError) as exc:
        raise _bad(f"bad usage: {usage!r}") from exc
    return ChatResponse(
        message=ChatMessage(role="assistant", content=_text(msg.get("content")), tool_calls=calls),
        usage=parsed_usage,
        model=str(data.get("model") or model),
        finish_reason=choice.get("finish_reason"),
    )
