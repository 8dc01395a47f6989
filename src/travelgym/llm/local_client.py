"""``local:MODEL``: an OpenAI-compatible client bound to a llama.cpp server this process runs."""

from __future__ import annotations

import asyncio
from typing import Any

from travelgym.envvars import number_from_env
from travelgym.llm.local_server import LocalServer, get_server
from travelgym.llm.openai_client import OpenAIChatClient
from travelgym.llm.prompted_tools import attach_tool_calls, to_prompted_messages
from travelgym.llm.protocol import ChatMessage, ChatResponse

#: A small model on two cores: generous timeout, bounded replies, few quick retries.
LOCAL_DEFAULTS = {"timeout_s": 300.0, "max_retries": 3, "backoff_base_s": 0.5, "backoff_max_s": 4.0}
DEFAULT_MAX_TOKENS = 768
MAX_TOKENS_ENV = "TRAVELGYM_LOCAL_MAX_TOKENS"


def default_max_tokens() -> int:
    """Output tokens per reply when the caller sets none: ``TRAVELGYM_LOCAL_MAX_TOKENS`` or 768."""
    return number_from_env(
        MAX_TOKENS_ENV, DEFAULT_MAX_TOKENS, int, lambda n: n >= 1, "a positive integer"
    )


class LocalChatClient(OpenAIChatClient):
    """An :class:`OpenAIChatClient` whose endpoint is a :class:`LocalServer`.

    The server is started by the constructor (so a missing extra or a broken GGUF fails the
    run before any episode) and checked at the start of every call: one that died since the
    previous call is started again. Tools are prompted (:mod:`travelgym.llm.prompted_tools`):
    the server sees plain chat in the GGUF's own chat template.
    """

    def __init__(self, ref: str, server_options: dict[str, Any] | None = None,
                 **kwargs: Any) -> None:  # fmt: skip
        params = dict(kwargs.pop("default_params", None) or {})
        params.setdefault("max_tokens", default_max_tokens())  # a bad setting starts no server
        self.server: LocalServer = get_server(ref, **(server_options or {}))
        for name, value in LOCAL_DEFAULTS.items():
            kwargs.setdefault(name, value)
        kwargs.pop("base_url", None)
        kwargs.pop("api_key", None)
        super().__init__(self.server.model.alias, base_url=self.server.base_url,
                         api_key="local", default_params=params, **kwargs)  # fmt: skip
        self.ref = ref

    async def complete(self, messages: list[ChatMessage], tools: list[dict[str, Any]] | None = None,
                       **params: Any) -> ChatResponse:  # fmt: skip
        """One completion; a dead server is restarted before (never during) the call."""
        if not self.server.alive:
            await asyncio.to_thread(self.server.ensure_running)
            self._client = self._client.with_options(base_url=self.server.base_url)
        return await super().complete(messages, tools, **params)

    async def _request(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None,
                       params: dict) -> Any:  # fmt: skip
        if not tools:
            return await super()._request(messages, None, params)
        params = {
            k: v for k, v in params.items() if k not in ("tool_choice", "parallel_tool_calls")
        }
        completion = await super()._request(to_prompted_messages(messages, tools), None, params)
        return attach_tool_calls(completion)
