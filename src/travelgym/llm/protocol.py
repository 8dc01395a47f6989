"""The chat-client protocol every model backend implements, and its data types.

Environments, agents and simulators talk to models only through :class:`ChatClient`; provider
SDKs are imported only inside ``travelgym.llm`` implementations.
"""

from __future__ import annotations

import json
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, Field

from travelgym.llm.text import clean_text


class ToolCall(BaseModel):
    """A function call requested by the model. ``arguments`` is the raw JSON text as sent
    (it may be malformed: the tool layer reports that as a parameter error)."""

    id: str
    name: str
    arguments: str


class ChatMessage(BaseModel):
    """One message in OpenAI chat format."""

    role: Literal["system", "user", "assistant", "tool"]
    content: str | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    tool_call_id: str | None = None
    name: str | None = None

    @classmethod
    def from_openai(cls, message: dict[str, Any]) -> ChatMessage:
        """The message of an OpenAI-style dict (:meth:`to_openai`'s form: tool calls as
        ``{"id", "type": "function", "function": {"name", "arguments"}}``, arguments as JSON
        text or an object; the flat form is read too)."""
        calls = []
        for i, call in enumerate(message.get("tool_calls") or ()):
            if isinstance(call, dict) and isinstance(call.get("function"), dict):
                fn = call["function"]
                arguments = fn.get("arguments")
                if not isinstance(arguments, str):
                    arguments = json.dumps(arguments if arguments is not None else {})
                call = {"id": call.get("id") or f"call_{i}", "name": fn.get("name"),
                        "arguments": arguments}  # fmt: skip
            calls.append(call)
        return cls.model_validate({**message, "tool_calls": calls})

    def to_openai(self) -> dict[str, Any]:
        """The dict the OpenAI chat-completions API expects."""
        out: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            out["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments},
                }
                for c in self.tool_calls
            ]
        if self.role == "tool":
            out["tool_call_id"] = self.tool_call_id
        return out


class Usage(BaseModel):
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
        )


RepairKind = Literal["invalid_unicode", "usage_estimated"]


class Repair(BaseModel):
    """Something a model or client sent that was repaired instead of failing the call, flagged
    in the trajectory: ``invalid_unicode`` (``count`` characters - lone surrogates or bytes
    that are not UTF-8 - replaced with U+FFFD in ``where``, e.g. ``content`` or
    ``tool_calls[0].arguments``) or ``usage_estimated`` (the reply's ``usage`` was missing or
    invalid, ``where`` says which; ``count`` tokens were estimated from the text instead)."""

    kind: RepairKind
    where: str
    count: int = 0


class ChatResponse(BaseModel):
    """The model's reply: an assistant message plus accounting. ``repairs`` lists what was
    repaired in the reply (see :class:`Repair`)."""

    message: ChatMessage
    usage: Usage = Field(default_factory=Usage)
    model: str = ""
    latency_s: float = 0.0
    cached: bool = False
    attempts: int = 1
    finish_reason: str | None = None
    repairs: list[Repair] = Field(default_factory=list)


def step_repairs(steps: list[Any]) -> dict[str, int]:
    """The repairs of an episode's steps (each with ``repairs`` and ``tool_calls`` holding
    theirs), counted by kind."""
    out: dict[str, int] = {}
    for step in steps:
        count_repairs(step.repairs, out)
        for call in step.tool_calls:
            count_repairs(call.repairs, out)
    return out


def count_repairs(repairs: list[Repair], into: dict[str, int] | None = None) -> dict[str, int]:
    """The number of repairs of each kind (added to ``into`` when given)."""
    out = into if into is not None else {}
    for repair in repairs:
        out[repair.kind] = out.get(repair.kind, 0) + 1
    return out


class LLMError(Exception):
    """A model call that failed for good (after retries), with a category for trajectories:
    ``rate_limit``, ``server``, ``timeout``, ``connection``, ``bad_request``, ``auth``,
    ``budget`` (the run's call/token cap), ``bad_response`` (no valid completion), and
    ``too_many_tool_calls``, the one the model itself causes (see :mod:`travelgym.core.outcomes`). The message may quote a provider's
    reply, so invalid Unicode in it is replaced (it ends up in trajectories)."""

    def __init__(self, category: str, message: str) -> None:
        super().__init__(f"{category}: {clean_text(str(message))[0]}")
        self.category = category


@runtime_checkable
class ChatClient(Protocol):
    """Anything that can complete a chat: the OpenAI-compatible client, LiteLLM, test fakes."""

    model: str

    async def complete(
        self,
        messages: list[ChatMessage],
        tools: list[dict[str, Any]] | None = None,
        **params: Any,
    ) -> ChatResponse:
        """One completion. Raises :class:`LLMError` when it fails for good."""
        ...
