"""The ``hf:`` chat client on the tiny model: OpenAI-shaped completions with usage, greedy and
seeded sampling, prompted tool calls, the context limit; the tiny model's determinism; the
``hf`` agent kinds."""

from __future__ import annotations

import asyncio
import json

import pytest

from tests.training.support import need_train_extra
from travelgym.core.registry import get_suite
from travelgym.llm.factory import make_client
from travelgym.llm.hf_client import HFChatClient, chat_text, encode, resolve_checkpoint
from travelgym.llm.protocol import ChatMessage, LLMError
from travelgym.runner.specs import SpecError, parse_agent_spec
from travelgym.suites.compass.specs import parse_user_spec

pytestmark = pytest.mark.train

TOOL = {"type": "function", "function": {
    "name": "search_airports", "description": "Airports of a park.",
    "parameters": {"type": "object", "properties": {"park_name": {"type": "string"}},
                   "required": ["park_name"]}}}  # fmt: skip


@pytest.fixture(scope="module", autouse=True)
def train_extra():
    need_train_extra()


@pytest.fixture(scope="module")
def client(tiny_dir):
    return make_client(f"hf:{tiny_dir}", default_params={"max_tokens": 12})


def ask(client, messages, tools=None, **params):
    return asyncio.run(client.complete(messages, tools, **params))


def test_completion_shape_and_usage(client, tiny_dir):
    assert isinstance(client, HFChatClient) and client.model == f"hf:{tiny_dir}"
    messages = [ChatMessage(role="system", content="Be brief."),
                ChatMessage(role="user", content="Plan a trip to Beijing.")]  # fmt: skip
    raw = asyncio.run(client._request([m.to_openai() for m in messages], None, {"max_tokens": 5}))
    assert raw["object"] == "chat.completion" and raw["model"] == client.model
    (choice,) = raw["choices"]
    assert choice["message"]["role"] == "assistant" and isinstance(
        choice["message"]["content"], str
    )
    assert choice["finish_reason"] in ("stop", "length")
    prompt = encode(client.tokenizer, chat_text(client.tokenizer, [m.to_openai() for m in messages],
                                                True))  # fmt: skip
    usage = raw["usage"]
    assert usage["prompt_tokens"] == len(prompt)
    assert 1 <= usage["completion_tokens"] <= 5
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
    first = ask(client, messages)
    assert first.usage.prompt_tokens == len(prompt) and 1 <= first.usage.completion_tokens <= 12
    assert first.message.role == "assistant" and first.message.tool_calls == []
    assert ask(client, messages).message.content == first.message.content  # greedy
    a = ask(client, messages, temperature=1.0, seed=7)
    b = ask(client, messages, temperature=1.0, seed=7)
    assert a.message.content == b.message.content  # seeded sampling is reproducible
    assert (
        client.stats.calls == 4
        and client.stats.usage.completion_tokens
        == sum(r.usage.completion_tokens for r in (first, a, b)) + first.usage.completion_tokens
    )


class ScriptedLM:
    """A stand-in for a causal LM whose ``generate`` appends fixed tokens (recording inputs)."""

    def __init__(self, real, tokens: list[int]) -> None:
        self.config, self.real, self.tokens = real.config, real, tokens
        self.inputs: list[list[int]] = []

    def parameters(self):
        return self.real.parameters()

    def generate(self, inputs, **kwargs):
        import torch

        self.inputs.append(inputs[0].tolist())
        return torch.cat([inputs, torch.tensor([self.tokens], device=inputs.device)], dim=1)


def test_prompted_tool_calls_are_parsed(client, tiny_dir):
    tok = client.tokenizer
    text = ('Let me check.\n<tool_call>\n{"name": "search_airports", "arguments": '
            '{"park_name": "Zion"}}\n</tool_call>')  # fmt: skip
    scripted = ScriptedLM(client.hf_model, encode(tok, text) + [tok.eos_token_id])
    tools_client = HFChatClient(str(tiny_dir), model=scripted, tokenizer=tok)
    reply = ask(tools_client, [ChatMessage(role="user", content="Airports of Zion?")], [TOOL])
    (call,) = reply.message.tool_calls
    assert call.name == "search_airports" and json.loads(call.arguments) == {"park_name": "Zion"}
    assert reply.message.content == "Let me check." and reply.finish_reason == "tool_calls"
    prompt = tok.decode(scripted.inputs[0])
    assert "<tools>" in prompt and '"name": "search_airports"' in prompt  # tools are prompted
    assert prompt.endswith("<|im_start|>assistant\n")
    # the tool result goes back as a <tool_response> user message
    history = [ChatMessage(role="user", content="Airports of Zion?"), reply.message,
               ChatMessage(role="tool", tool_call_id=call.id, content='{"airports": ["SGU"]}')]  # fmt: skip
    ask(tools_client, history, [TOOL])
    assert "<tool_response>\n{\"airports\": [\"SGU\"]}\n</tool_response>" in tok.decode(
        scripted.inputs[1])  # fmt: skip


def test_context_limit_and_bad_references(client, tiny_dir, tmp_path):
    original = client.hf_model.config.max_position_embeddings
    client.hf_model.config.max_position_embeddings = 8
    try:
        with pytest.raises(LLMError, match="bad_request"):
            ask(client, [ChatMessage(role="user", content="a long enough question")])
    finally:
        client.hf_model.config.max_position_embeddings = original
    assert resolve_checkpoint(str(tiny_dir)) == (tiny_dir, None)
    with pytest.raises(ValueError, match="not a checkpoint"):
        make_client(f"hf:{tmp_path}")
    with pytest.raises(ValueError, match="empty checkpoint"):
        make_client("hf:")


def test_agent_specs():
    spec = parse_agent_spec(get_suite("compass"), "hf:/ckpt/dir")
    assert (spec.kind, spec.arg, spec.dirname) == ("hf", "/ckpt/dir", "hf-_ckpt_dir")
    trip = parse_agent_spec(get_suite("behavior2trip"), "hf:/ckpt/dir")
    assert (trip.kind, trip.model) == ("hf", "/ckpt/dir")
    with pytest.raises(SpecError, match="hf:CKPT"):
        parse_agent_spec(get_suite("compass"), "hf:")
    assert parse_user_spec("hf:/ckpt/dir") == ("llm", "hf:/ckpt/dir")


def test_tiny_model_is_deterministic(tiny_dir, tmp_path):
    from safetensors.torch import load_file

    from travelgym.training.tiny import build_tiny_model

    again = build_tiny_model(tmp_path / "again", seed=0)
    other = build_tiny_model(tmp_path / "other", seed=1)
    assert (again / "tokenizer.json").read_text() == (tiny_dir / "tokenizer.json").read_text()
    a, b = load_file(tiny_dir / "model.safetensors"), load_file(again / "model.safetensors")
    c = load_file(other / "model.safetensors")
    assert a.keys() == b.keys() and all(a[k].equal(b[k]) for k in a)
    assert any(not a[k].equal(c[k]) for k in a)
    assert build_tiny_model(again, seed=0) == again  # complete: reused
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tiny_dir)
    assert tok.eos_token == "<|im_end|>" and tok.pad_token == "<|pad|>"
    text = chat_text(tok, [{"role": "user", "content": "北京 <tool_call>"}], True)
    assert text == "<|im_start|>user\n北京 <tool_call><|im_end|>\n<|im_start|>assistant\n"
    assert tok.decode(encode(tok, text)) == text
