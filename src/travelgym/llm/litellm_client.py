"""Optional backend over LiteLLM (Anthropic, Gemini, Bedrock, ... in OpenAI format).

LiteLLM is an optional dependency, imported only when this client is built.
"""

from __future__ import annotations

import asyncio
from typing import Any

from travelgym.core.errors import UserError
from travelgym.llm.base import BaseChatClient
from travelgym.llm.retry import Failure, category_for_status, parse_retry_after

INSTALL_HINT = (
    "LiteLLM backends need the optional dependency 'litellm': "
    "pip install 'travelgym[litellm]' (or: pip install litellm)"
)


class MissingLiteLLM(UserError, ImportError):
    """LiteLLM is not installed: an ImportError that the command line prints as one line."""


_PROVIDER_MODULES = {"litellm", "openai", "httpx", "httpx2", "httpcore", "aiohttp"}


def _as_dict(response: Any) -> Any:
    """A LiteLLM ModelResponse (pydantic) as an OpenAI-shaped dict."""
    if isinstance(response, dict):
        return response
    dump = getattr(response, "model_dump", None) or getattr(response, "dict", None)
    return dump() if callable(dump) else response


class LiteLLMChatClient(BaseChatClient):
    """A :class:`~travelgym.llm.protocol.ChatClient` over ``litellm.acompletion``; same
    retry, deadline, budget and cache behaviour as the OpenAI client (LiteLLM's retries are
    off)."""

    def __init__(self, model: str, base_url: str | None = None, api_key: str | None = None,
                 timeout_s: float = 60, **settings: Any) -> None:  # fmt: skip
        """``settings``: the other keywords of :class:`~travelgym.llm.base.BaseChatClient`
        (retries, deadline, budget, cache, default parameters, ``sleep`` and ``rng``)."""
        try:
            import litellm
        except ImportError as exc:
            raise MissingLiteLLM(INSTALL_HINT) from exc
        super().__init__(model, timeout_s=timeout_s, **settings)
        self._litellm = litellm
        self.base_url = base_url
        self.api_key = api_key

    async def _request(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, params: dict
    ) -> Any:
        kwargs: dict[str, Any] = dict(params)
        if tools:
            kwargs["tools"] = tools
        if self.base_url:
            kwargs["api_base"] = self.base_url
        if self.api_key:
            kwargs["api_key"] = self.api_key
        response = await self._litellm.acompletion(
            model=self.model,
            messages=messages,
            timeout=self.timeout_s,
            num_retries=0,
            **kwargs,
        )
        return _as_dict(response)

    def _classify(self, exc: BaseException) -> Failure | None:
        name = type(exc).__name__
        message = str(exc)[:500]
        if isinstance(exc, asyncio.TimeoutError) or "Timeout" in name:
            return Failure("timeout", message)
        if "Connection" in name:
            return Failure("connection", message)
        status = getattr(exc, "status_code", None)
        if isinstance(status, int):
            response = getattr(exc, "response", None)
            headers = getattr(response, "headers", None) or getattr(
                exc, "litellm_response_headers", None
            )
            return Failure(category_for_status(status), message, parse_retry_after(headers))
        if type(exc).__module__.split(".")[0] in _PROVIDER_MODULES:
            return Failure("bad_response", message)
        return None
