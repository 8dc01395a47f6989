"""Model access at the edge: the chat-client protocol and its implementations."""

from travelgym.llm.protocol import ChatClient, ChatMessage, ChatResponse, LLMError, ToolCall, Usage

__all__ = ["ChatClient", "ChatMessage", "ChatResponse", "LLMError", "ToolCall", "Usage"]
