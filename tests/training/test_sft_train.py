"""``travelgym train sft`` on the openai export format with the tiny model: assistant-only loss
masks (prompted tools), a short TRL run whose result loads as ``hf:``."""

from __future__ import annotations

import asyncio
import json

import pytest
from click.testing import CliRunner

from tests.training.support import need_train_extra
from travelgym.cli import main
from travelgym.llm.factory import make_client
from travelgym.llm.protocol import ChatMessage
from travelgym.training.sft_train import prompted_rows, read_examples

pytestmark = [
    pytest.mark.train,
    pytest.mark.filterwarnings("ignore:.*(gradient|activation)_checkpointing.*:FutureWarning"),
]

TOOL = {"type": "function", "function": {
    "name": "search_airports", "description": "Airports of a park.",
    "parameters": {"type": "object", "properties": {"park_name": {"type": "string"}},
                   "required": ["park_name"]}}}  # fmt: skip
B2T_CHAT = [
    {"role": "system", "content": "You plan trips."},
    {"role": "user", "content": "Two days in Beijing."},
    {"role": "assistant", "content": '<tool_call>{"name": "WeatherSearch", "arguments": '
                                     '{"city": "Beijing"}}</tool_call>'},
    {"role": "user", "content": '<tool_response>{"days": []}</tool_response>'},
    {"role": "assistant", "content": '<answer>[{"day": 1}, {"day": 2}]</answer>'},
]  # fmt: skip
COMPASS_CHAT = [
    {"role": "system", "content": "You book parks."},
    {"role": "user", "content": "Zion please."},
    {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function",
     "function": {"name": "search_airports", "arguments": '{"park_name": "Zion"}'}}]},
    {"role": "tool", "tool_call_id": "c1", "content": '{"airports": ["SGU"]}'},
    {"role": "assistant", "content": '{"message": "Fly to SGU.", "recommendation": null}'},
]  # fmt: skip


@pytest.fixture(scope="module", autouse=True)
def train_extra():
    need_train_extra()


@pytest.fixture
def data(tmp_path):
    path = tmp_path / "sft.jsonl"
    lines = [{"messages": B2T_CHAT, "tools": []}, {"messages": COMPASS_CHAT, "tools": [TOOL]}]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def test_assistant_only_masks(data, tiny_tokenizer):
    tok = tiny_tokenizer
    b2t, compass = prompted_rows(read_examples(data), tok)
    for row, chat in ((b2t, B2T_CHAT), (compass, None)):
        trained = [t for t, m in zip(row["input_ids"], row["assistant_masks"], strict=True) if m]
        text = tok.decode(trained)
        if chat is not None:
            want = [m["content"] for m in chat if m["role"] == "assistant"]
            assert text == "<|im_end|>".join(want) + "<|im_end|>"
        else:
            assert text.startswith('<tool_call>\n{"name": "search_airports"')
            assert "<tool_response>" not in text and "Zion please" not in text
    assert "<tools>" in tok.decode(compass["input_ids"])  # the tools, prompted


def test_sft_cli_trains_a_loadable_model(data, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    out = tmp_path / "sft-out"
    result = CliRunner().invoke(main, ["train", "sft", str(data), "--model", "tiny", "--output-dir",
                                       str(out), "--max-steps", "2", "--learning-rate", "1e-3",
                                       "--torch-threads", "1", "--json"])  # fmt: skip
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output[result.output.index("{\n") :])
    assert summary["steps"] == 2 and summary["examples"] == 2 and summary["train_loss"] > 0
    client = make_client(f"hf:{out}", default_params={"max_tokens": 4})
    reply = asyncio.run(client.complete([ChatMessage(role="user", content="hi")]))
    assert reply.usage.completion_tokens >= 1
    native = CliRunner().invoke(main, ["train", "sft", str(data), "--model", str(out),
                                       "--output-dir", str(tmp_path / "native"), "--max-steps",
                                       "1", "--tools", "native", "--torch-threads", "1"])  # fmt: skip
    assert native.exit_code == 0, native.output
    assert "1 SFT steps on 2 examples" in native.output
    assert (tmp_path / "native" / "model.safetensors").exists()
