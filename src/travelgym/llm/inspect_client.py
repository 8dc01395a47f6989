"""``inspect:NAME``: a chat client over the model of the running inspect_ai sample.

Inside an inspect_ai eval (``inspect eval travelgym/SUITE --model ...``) the suite's agents talk
to inspect's model through this client: travelgym's OpenAI-shaped messages and tool schemas
become inspect's ``ChatMessage*`` and ``ToolInfo``, the call goes through ``Model.generate``
(so inspect logs it, counts its usage, applies its limits and retries), and the
``ModelOutput`` comes back as an OpenAI-shaped completion that the shared pipeline
(:class:`~travelgym.llm.base.BaseChatClient`: budget, cache, accounting, repairs) parses like
any other provider's reply. ``NAME``: the eval's model (``mockllm/model``, ``openai/gpt-4o``)
drives the agent; another inspect model name is fetched with ``get_model(NAME)`` (a simulated
user or judge on a different model). inspect_ai is imported when a client is built.
"""

from __future__ import annotations

import json
import re
from typing import Any

from travelgym.llm.base import BaseChatClient
from travelgym.llm.protocol import LLMError
from travelgym.llm.retry import Failure, category_for_status

INSTALL_HINT = ("inspect: models need the optional dependency inspect-ai: "
                "pip install 'travelgym[inspect]'")  # fmt: skip
OUTSIDE = ("inspect:{name} is the model of a running inspect_ai sample; run it through inspect "
           "(inspect eval travelgym/SUITE --model {name}), not on its own")  # fmt: skip
# travelgym generation option -> inspect GenerateConfig field
CONFIG_FIELDS = {"temperature": "temperature", "top_p": "top_p", "max_tokens": "max_tokens",
                 "seed": "seed", "reasoning_effort": "reasoning_effort", "stop": "stop_seqs",
                 "extra_body": "extra_body", "frequency_penalty": "frequency_penalty",
                 "presence_penalty": "presence_penalty"}  # fmt: skip
FINISH = {"stop": "stop", "tool_calls": "tool_calls", "max_tokens": "length",
          "model_length": "length", "content_filter": "content_filter"}  # fmt: skip


class OutsideInspect(Exception):
    """No inspect_ai sample is running, so there is no model to call."""


def _require_inspect() -> None:
    try:
        import inspect_ai  # noqa: F401
    except ImportError as exc:
        raise ImportError(INSTALL_HINT) from exc


def _active_model() -> Any:
    """The model of the running inspect_ai sample (``None`` outside one)."""
    try:
        from inspect_ai.model._model import active_model
    except ImportError:  # a later inspect_ai moved it: the public call finds it too
        from inspect_ai.model import get_model

        try:
            return get_model()
        except ValueError:
            return None
    return active_model()


def parse_arguments(text: str | None) -> tuple[dict[str, Any], str | None]:
    """``(arguments, parse error)`` of a tool call's raw argument text."""
    try:
        value = json.loads(text or "{}")
    except (ValueError, RecursionError):
        value = None
    if not isinstance(value, dict):
        return {}, f"arguments are not a JSON object: {(text or '')[:300]}"
    return value, None


def message_text(content: Any) -> str:
    """A message's content as text (content parts joined, ``None`` as empty)."""
    if content is None or isinstance(content, str):
        return content or ""
    if isinstance(content, list):
        return "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)
    return str(content)


def to_inspect_messages(messages: list[dict[str, Any]]) -> list[Any]:
    """OpenAI chat messages (dicts, as travelgym sends and stores them) as inspect's
    ``ChatMessage*``; a tool result keeps the name of the call it answers."""
    from inspect_ai.model import (
        ChatMessageAssistant,
        ChatMessageSystem,
        ChatMessageTool,
        ChatMessageUser,
    )
    from inspect_ai.tool import ToolCall

    out: list[Any] = []
    names: dict[str, str] = {}
    for m in messages:
        role, text = m.get("role"), message_text(m.get("content"))
        if role == "system":
            out.append(ChatMessageSystem(content=text))
        elif role == "user":
            out.append(ChatMessageUser(content=text))
        elif role == "assistant":
            calls = []
            for call in m.get("tool_calls") or []:
                fn = call.get("function") or {}
                args, error = parse_arguments(fn.get("arguments"))
                names[str(call.get("id"))] = str(fn.get("name") or "")
                calls.append(ToolCall(id=str(call.get("id")), function=str(fn.get("name") or ""),
                                      arguments=args, parse_error=error))  # fmt: skip
            out.append(ChatMessageAssistant(content=text, tool_calls=calls or None))
        elif role == "tool":
            call_id = str(m.get("tool_call_id") or "")
            out.append(ChatMessageTool(content=text, tool_call_id=call_id,
                                       function=names.get(call_id) or m.get("name")))  # fmt: skip
    return out


def to_tool_info(schema: dict[str, Any]) -> Any:
    """An OpenAI function-calling tool schema as inspect's ``ToolInfo``."""
    from inspect_ai.tool import ToolInfo, ToolParams

    fn = schema.get("function", schema)
    params = ToolParams.model_validate(fn.get("parameters") or {"type": "object"})
    return ToolInfo(name=fn["name"], description=fn.get("description") or "", parameters=params)


# how inspect's providers word a call whose arguments are not JSON: the model's text inside
_UNPARSED = re.compile(r"^Error parsing the following tool call arguments:\n\n(.*)\n\n"
                       r"Error details: ", re.S)  # fmt: skip


def unparsed_arguments(parse_error: str) -> str:
    """The model's own argument text of a call inspect could not parse (so the tool layer
    reports the same malformed arguments as for any other client); else the parse error."""
    match = _UNPARSED.match(parse_error)
    return match.group(1) if match else parse_error


def completion_of(output: Any) -> dict[str, Any]:
    """An inspect ``ModelOutput`` as an OpenAI chat.completion dict (the shape
    :func:`~travelgym.llm.base.parse_completion` reads). A call inspect could not parse keeps
    its parse error as the argument text, so the tool layer reports it as malformed."""
    if not output.choices:
        return {"choices": [], "error": output.error or "the model returned no choices"}
    choice = output.choices[0]
    message = choice.message
    calls = [{"id": c.id, "type": "function",
              "function": {"name": c.function,
                           "arguments": unparsed_arguments(c.parse_error) if c.parse_error
                           else json.dumps(c.arguments, ensure_ascii=False)}}
             for c in message.tool_calls or []]  # fmt: skip
    usage = None
    if output.usage is not None:
        u = output.usage
        prompt = (
            u.input_tokens + (u.input_tokens_cache_read or 0) + (u.input_tokens_cache_write or 0)
        )
        usage = {"prompt_tokens": prompt, "completion_tokens": u.output_tokens}
    return {"model": output.model, "usage": usage,
            "choices": [{"message": {"role": "assistant", "content": message.text or None,
                                     "tool_calls": calls},
                         "finish_reason": FINISH.get(choice.stop_reason)}]}  # fmt: skip


def last_failure(exc: BaseException) -> BaseException:
    """The failure behind ``exc``: inspect gives up on a call that kept failing with tenacity's
    ``RetryError``, whose last attempt holds the provider's own error (a refused connection)."""
    last = getattr(exc, "last_attempt", None)
    if type(exc).__name__ == "RetryError" and last is not None and last.failed:
        return last.exception() or exc
    return exc


class InspectChatClient(BaseChatClient):
    """A :class:`~travelgym.llm.protocol.ChatClient` over inspect_ai's model of the running
    sample (``name``: the eval's model, or another inspect model name). inspect retries failed
    calls itself, so this client does not (``max_retries`` 0); outside an inspect_ai eval a
    call fails with a clear ``bad_request`` error."""

    def __init__(self, name: str, *, max_retries: int = 0, **kwargs: Any) -> None:
        _require_inspect()
        super().__init__(name or "model", max_retries=max_retries, **kwargs)

    def model_for_call(self) -> Any:
        """The inspect ``Model`` a call goes to: the sample's, or ``get_model(name)`` when
        the name is another model's."""
        active = _active_model()
        if active is None:
            raise OutsideInspect(OUTSIDE.format(name=self.model))
        if self.model in ("model", str(active), getattr(active, "name", None)):
            return active
        from inspect_ai.model import get_model

        return get_model(self.model)

    async def _request(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None,
                       params: dict) -> Any:  # fmt: skip
        from inspect_ai.model import GenerateConfig

        unknown = sorted(set(params) - set(CONFIG_FIELDS))
        if unknown:
            raise LLMError("bad_request", f"inspect models take no {', '.join(unknown)}")
        config = GenerateConfig(**{CONFIG_FIELDS[k]: v for k, v in params.items()})
        model = self.model_for_call()
        output = await model.generate(to_inspect_messages(messages),
                                      tools=[to_tool_info(t) for t in tools or []],
                                      config=config)  # fmt: skip
        return completion_of(output)

    def _classify(self, exc: BaseException) -> Failure | None:
        exc = last_failure(exc)
        name, message = type(exc).__name__, str(exc)[:500]
        if isinstance(exc, OutsideInspect):
            return Failure("bad_request", message)
        if name == "LimitExceededError":  # the sample's token, message or time limit
            return Failure("budget", message)
        if name == "PrerequisiteError":  # e.g. the provider's API key is not set
            return Failure("auth", message)
        if isinstance(exc, TimeoutError) or "Timeout" in name:
            return Failure("timeout", message)
        if "Connection" in name or isinstance(exc, ConnectionError):
            return Failure("connection", message)
        status = getattr(exc, "status_code", None) or getattr(exc, "status", None)
        if isinstance(status, int):
            return Failure(category_for_status(status), message)
        if type(exc).__module__.split(".")[0] == "travelgym":
            return None  # a bug of ours: its traceback shows
        return Failure("bad_response", f"{name}: {message}")
