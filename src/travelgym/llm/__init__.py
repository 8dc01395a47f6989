"""Model access at the edge: the chat-client protocol and its implementations.

The provider-backed clients (and :func:`make_client`) are imported lazily so that code using
only the protocol does not pay for importing a model SDK.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from travelgym.llm.budget import RunBudget
from travelgym.llm.cache import ResponseCache
from travelgym.llm.protocol import ChatClient, ChatMessage, ChatResponse, LLMError, ToolCall, Usage

if TYPE_CHECKING:
    from travelgym.llm.factory import make_client
    from travelgym.llm.litellm_client import LiteLLMChatClient
    from travelgym.llm.openai_client import OpenAIChatClient

_LAZY = {
    "OpenAIChatClient": "travelgym.llm.openai_client",
    "LiteLLMChatClient": "travelgym.llm.litellm_client",
    "make_client": "travelgym.llm.factory",
}

__all__ = [
    "ChatClient",
    "ChatMessage",
    "ChatResponse",
    "LLMError",
    "LiteLLMChatClient",
    "OpenAIChatClient",
    "ResponseCache",
    "RunBudget",
    "ToolCall",
    "Usage",
    "make_client",
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
