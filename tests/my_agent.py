"""A user-defined agent, as ``docs/agents.md`` shows one: a policy written in Python that the
suite's model agent drives in the model's place (``--agent tests.my_agent:make``)."""

from __future__ import annotations

from typing import Any


class FirstToolThenText:
    """Calls the first tool it is offered once (no arguments), then answers in text."""

    model = "my-agent"

    def __init__(self) -> None:
        self.closed = False

    async def complete(self, messages: list[Any], tools: list[dict] | None = None,
                       **params: Any) -> Any:  # fmt: skip
        if tools and not any(m.role == "tool" for m in messages):
            name = tools[0]["function"]["name"]
            return {
                "content": None,
                "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": name, "arguments": {}}}
                ],
            }
        return "I have looked: nothing to recommend yet."


class Broken:
    """A policy whose code fails: the agent's own fault, never an infrastructure error."""

    model = "broken-agent"

    def complete(self, messages: list[Any], tools: list[dict] | None = None, **params: Any):
        raise RuntimeError("my policy has a bug")


def make() -> FirstToolThenText:
    return FirstToolThenText()


def broken() -> Broken:
    return Broken()


not_a_policy = dict  # ``not_a_policy()`` has no ``complete``
