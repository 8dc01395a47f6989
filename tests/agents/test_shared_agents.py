"""The shared agents layer over a toy registry: no suite involved."""

from __future__ import annotations

import asyncio
import json

from travelgym.agents.actions import ActionError, ToolCallAction
from travelgym.agents.b2t_format import parse_message
from travelgym.agents.react import parse_react, run_react
from travelgym.agents.tool_calling import run_tool_calls, tool_message_content
from travelgym.agents.tool_session import ToolSession
from travelgym.llm.protocol import ChatMessage, ToolCall, Usage
from travelgym.toolkit import ContentError, ToolRegistry


def echo(word: str) -> dict:
    """Echo a word.

    Args:
        word: the word
    """
    if word == "bad":
        raise ContentError("no such word")
    return {"word": word}


def session(**kwargs) -> ToolSession:
    return ToolSession(ToolRegistry([echo]), None, **kwargs)


def test_a_session_records_calls_and_hands_them_over():
    s = session(keep_results=False)
    ok = s.call("echo", {"word": "hi"})
    bad = s.call("echo", '{"word": "bad"}', call_id="x")
    assert (ok.id, ok.ok, ok.result, s.payload(ok)) == ("call_0", True, None, {"word": "hi"})
    assert (bad.id, bad.ok, bad.error_category) == ("x", False, "content")
    assert s.take_calls() == [ok, bad] and s.calls == []
    assert s.tool_names == ["echo"] and s.tool_schemas[0]["function"]["name"] == "echo"


def test_native_tool_calls_are_answered_in_order():
    s = session()
    message = ChatMessage(role="assistant", content=None, tool_calls=[
        ToolCall(id="a", name="echo", arguments='{"word": "hi"}'),
        ToolCall(id="b", name="nope", arguments="{}")])  # fmt: skip
    out = run_tool_calls(s, message)
    assert [m.tool_call_id for m in out] == ["a", "b"]
    assert out[0].content == '{"word": "hi"}' and '"tool_name"' in out[1].content
    long = s.call("echo", {"word": "x" * 500})
    error = json.loads(tool_message_content(long, max_chars=300))["error"]  # complete JSON
    assert error["category"] == "result_too_large"
    assert error["chars"] == len(json.dumps({"word": "x" * 500}))


def test_the_text_formats_take_the_registrys_names():
    parsed = parse_message('<tool_call>{"name": "ECHO", "arguments": {"word": "a"}}</tool_call>',
                           ["echo"])  # fmt: skip
    assert parsed.tool_calls == [ToolCallAction("echo", {"word": "a"}, parsed.tool_calls[0].raw)]
    step = parse_react('Thought: t\nAction: other[{"word": "a"}]', {"echo": "echo"})
    assert isinstance(step.action, ActionError) and step.action.kind == "unknown_tool"
    assert parse_react("Thought: done\nAction: Finish[the answer]").answer == "the answer"


class _Reply:
    def __init__(self, text: str) -> None:
        self.message = ChatMessage(role="assistant", content=text)
        self.usage, self.repairs = Usage(), []


class _Client:
    model = "toy"

    def __init__(self, texts: list[str]) -> None:
        self.texts = texts

    async def complete(self, messages, **params):
        return _Reply(self.texts.pop(0))


class _StepSession(ToolSession):
    def __init__(self) -> None:
        super().__init__(ToolRegistry([echo]), None)
        self.messages, self.steps = [], []

    def count_llm(self, usage, repairs=None):
        pass

    async def acall(self, name, arguments, call_id=None):
        return self.call(name, arguments, call_id)

    def observation_text(self, record):
        return tool_message_content(record)

    def add_step(self, **fields):
        self.steps.append({**fields, "calls": self.take_calls()})


def test_the_react_loop_runs_any_session():
    s = _StepSession()
    client = _Client(['Action: {"name": "echo", "arguments": {"word": "hi"}}', "Action: oops",
                      "Action: Finish[done]"])  # fmt: skip
    answer = asyncio.run(run_react(client, s, [ChatMessage(role="user", content="go")], 5,
                                   lambda step, err: (step, err.kind)))  # fmt: skip
    assert answer == "done"
    assert s.steps[0]["observation"] == 'Observation: {"word": "hi"}'
    assert s.steps[1]["invalid_actions"] == [(1, "bad_json")]
    assert s.steps[2]["answer"] is True and len(s.messages) == 6
