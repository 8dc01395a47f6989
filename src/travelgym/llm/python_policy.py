"""``--agent package.module:factory``: a policy written in Python in the model's place.

``factory()`` (no arguments) returns the policy: an object with a ``complete(messages,
tools=None, **params)`` method, plain or ``async``, that answers the chat so far (a list of
:class:`~travelgym.llm.protocol.ChatMessage`; ``tools``: the OpenAI tool schemas the suite's
model agent offers, ``None`` when it offers none) with the next assistant message: a
:class:`~travelgym.llm.protocol.ChatResponse`, a :class:`~travelgym.llm.protocol.ChatMessage`,
an OpenAI-style message dict, or the reply's text. The suite's model agent
(:attr:`travelgym.core.Suite.model_agent`) drives it exactly as it drives a model: the same
prompt, the same tools, the same parsing of its replies and the same scoring. An optional
``model`` attribute names it in trajectories; an optional ``aclose()`` is awaited at the end
of the run. An exception the policy raises, or a reply of another type, ends the episode as
the agent's own failure (a ``model_error`` whose cause is ``agent policy_error``), never as an
infrastructure error. See ``docs/agents.md``.
"""

from __future__ import annotations

import importlib
import inspect
import os
import re
import sys
from typing import Any

from travelgym.llm.protocol import ChatMessage, ChatResponse, LLMError, ToolCall
from travelgym.llm.text import clean_text

POLICY_FAULT = "policy_error"  # an LLMError category that is the agent's own fault
_DOTTED = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")


class PolicyPathError(ValueError):
    """A policy path that is not ``package.module:factory``, or whose factory cannot load."""


def check_path(path: str) -> tuple[str, str]:
    """``(module, attribute)`` of ``package.module:factory`` (``PolicyPathError`` otherwise)."""
    module, sep, attribute = path.partition(":")
    if not sep or not _DOTTED.match(module) or not _DOTTED.match(attribute):
        raise PolicyPathError("a Python policy is written package.module:factory")
    return module, attribute


def load_policy(path: str) -> Any:
    """The policy ``factory()`` of ``package.module:factory`` returns."""
    module_name, attribute = check_path(path)
    # the current directory counts, as for ``python -m`` (the console script leaves it out),
    # after everything installed (it never shadows a package)
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.append(os.getcwd())
    try:
        target: Any = importlib.import_module(module_name)
    except Exception as exc:  # noqa: BLE001 - the user's module: any failure is reported
        raise PolicyPathError(f"cannot import {module_name!r}: {type(exc).__name__}: "
                              f"{exc}") from None  # fmt: skip
    for part in attribute.split("."):
        if not hasattr(target, part):
            raise PolicyPathError(f"{module_name!r} has no {attribute!r}")
        target = getattr(target, part)
    if not callable(target):
        raise PolicyPathError(f"{path} is not callable")
    try:
        policy = target()
    except Exception as exc:  # noqa: BLE001 - the user's factory: any failure is reported
        raise PolicyPathError(f"{path}() failed: {type(exc).__name__}: {exc}") from None
    if not callable(getattr(policy, "complete", None)):
        raise PolicyPathError(f"{path}() returned {type(policy).__name__}, which has no "
                              "complete(messages, tools=None) method")  # fmt: skip
    return policy


class PythonPolicyClient:
    """A :class:`~travelgym.llm.protocol.ChatClient` over a Python policy (see the module)."""

    def __init__(self, path: str) -> None:
        try:
            self.policy = load_policy(path)
        except PolicyPathError as exc:
            raise ValueError(f"--agent {path}: {exc}") from None
        self.model = str(getattr(self.policy, "model", None) or path)

    async def complete(self, messages: list[ChatMessage], tools: list[dict[str, Any]] | None = None,
                       **params: Any) -> ChatResponse:  # fmt: skip
        """The policy's next message, as a model's reply."""
        try:
            reply = self.policy.complete(list(messages), tools=tools, **params)
            if inspect.isawaitable(reply):
                reply = await reply
        except LLMError:
            raise
        except Exception as exc:  # noqa: BLE001 - the agent's own code failed: its fault
            raise LLMError(
                POLICY_FAULT, f"{self.model} raised {type(exc).__name__}: {exc}"
            ) from exc
        return ChatResponse(message=_message(reply, self.model), model=self.model)

    async def aclose(self) -> None:
        """The policy's own ``aclose()`` (or ``close()``), where it has one."""
        close = getattr(self.policy, "aclose", None) or getattr(self.policy, "close", None)
        if close is not None:
            done = close()
            if inspect.isawaitable(done):
                await done


def _message(reply: Any, model: str) -> ChatMessage:
    """The assistant message a policy's reply stands for (text cleaned of invalid Unicode)."""
    if isinstance(reply, ChatResponse):
        reply = reply.message
    if isinstance(reply, str):
        reply = {"role": "assistant", "content": reply}
    if isinstance(reply, dict):
        try:
            reply = ChatMessage.from_openai({"role": "assistant", **reply})
        except ValueError as exc:
            raise LLMError(POLICY_FAULT, f"{model} returned a message that is not one: "
                                         f"{str(exc).splitlines()[0]}") from None  # fmt: skip
    if not isinstance(reply, ChatMessage) or reply.role != "assistant":
        raise LLMError(POLICY_FAULT, f"{model} returned {type(reply).__name__}, not an "
                                     "assistant message")  # fmt: skip
    calls = [ToolCall(id=c.id, name=clean_text(c.name)[0], arguments=clean_text(c.arguments)[0])
             for c in reply.tool_calls]  # fmt: skip
    content = None if reply.content is None else clean_text(reply.content)[0]
    return ChatMessage(role="assistant", content=content, tool_calls=calls)
