"""Token usage of a reply: read what the provider reported, estimate what it did not.

Run caps (``--max-tokens-total``) only hold if every call adds its tokens, so a reply whose
``usage`` is missing, not a number, or negative is never taken at its word: each such count is
estimated from the text instead (:func:`estimate_tokens`) and flagged as a ``usage_estimated``
:class:`~travelgym.llm.protocol.Repair`.
"""

from __future__ import annotations

import json
import math
from typing import Any

from travelgym.llm.protocol import ChatMessage, Repair, Usage

#: Bytes of UTF-8 text per estimated token (about 4 characters of English per token; scripts
#: of 3-byte characters, such as Chinese, count about 1.3 characters per token).
BYTES_PER_TOKEN = 4

FIELDS = ("prompt_tokens", "completion_tokens")


def estimate_tokens(text: str) -> int:
    """Tokens estimated for ``text``: its UTF-8 bytes divided by :data:`BYTES_PER_TOKEN`,
    rounded up."""
    return math.ceil(len(text.encode("utf-8", "surrogatepass")) / BYTES_PER_TOKEN)


def reported_count(value: Any) -> int | None:
    """A token count as reported, when it is a usable one: a non-negative integer (an integral
    float is accepted); anything else (missing, negative, text, bool) is ``None``."""
    if isinstance(value, bool):
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int) and value >= 0:
        return value
    return None


def read_usage(raw: Any) -> tuple[int | None, int | None]:
    """``(prompt_tokens, completion_tokens)`` of a reply's ``usage`` object; each is ``None``
    when it cannot be trusted (see :func:`reported_count`)."""
    raw = raw if isinstance(raw, dict) else {}
    prompt, completion = (reported_count(raw.get(name)) for name in FIELDS)
    return prompt, completion


def prompt_text(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> str:
    """The text a prompt estimate is made from: the request's messages and tool schemas."""
    return json.dumps([messages, tools or []], ensure_ascii=False, default=str)


def completion_text(message: ChatMessage) -> str:
    """The text a completion estimate is made from: the content and every tool call."""
    calls = "".join(c.name + c.arguments for c in message.tool_calls)
    return (message.content or "") + calls


def complete_usage(
    raw: Any, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None,
    reply: ChatMessage,
) -> tuple[Usage, list[Repair]]:  # fmt: skip
    """The usage of one call: the reported counts where usable, else estimates (flagged)."""
    prompt, completion = read_usage(raw)
    repairs = []
    if prompt is None:
        prompt = estimate_tokens(prompt_text(messages, tools))
        repairs.append(Repair(kind="usage_estimated", where=_where(raw, FIELDS[0]), count=prompt))
    if completion is None:
        completion = estimate_tokens(completion_text(reply))
        repairs.append(
            Repair(kind="usage_estimated", where=_where(raw, FIELDS[1]), count=completion)
        )
    return Usage(prompt_tokens=prompt, completion_tokens=completion), repairs


def _where(raw: Any, name: str) -> str:
    if not isinstance(raw, dict):
        return f"usage.{name} (no usage object)"
    if name not in raw or raw[name] is None:
        return f"usage.{name} (missing)"
    shown = repr(raw[name])
    return f"usage.{name} (reported {shown[:40]})"
