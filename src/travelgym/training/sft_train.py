"""``travelgym train sft``: supervised fine-tuning on exported trajectories with TRL's
``SFTTrainer``.

The data is what ``travelgym export sft --format openai`` writes: one ``{"messages": [...],
"tools": [...]}`` chat a line. With ``tools="prompted"`` (default) each chat is put in the form
the ``hf:`` client and GRPO rollouts use (tool schemas in the system message, calls as
``<tool_call>`` blocks, results as ``<tool_response>`` user messages; Behavior2Trip chats have no
tools and stay as they are) and tokenized turn by turn
(:func:`~travelgym.training.rollout.tokenize_chat`): the loss covers the assistant messages
only. With ``tools="native"`` the chats and tools go to TRL as they are (the model's chat
template renders them; every token is trained on).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Literal

ToolsMode = Literal["prompted", "native"]


class SFTDataError(ValueError):
    """A data file that is not chat-format JSONL (the message names the line)."""


def read_examples(path: str | Path) -> list[dict[str, Any]]:
    """The ``{"messages", "tools"}`` examples of a JSONL file."""
    path = Path(path)
    examples = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise SFTDataError(f"{path}: cannot read the data ({exc})") from None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            example = json.loads(line)
        except ValueError as exc:
            raise SFTDataError(f"{path}:{number}: not valid JSON ({exc})") from None
        messages = example.get("messages") if isinstance(example, dict) else None
        if not isinstance(messages, list) or not messages:
            raise SFTDataError(f"{path}:{number}: no messages (expected the openai export format)")
        examples.append({"messages": messages, "tools": example.get("tools") or []})
    if not examples:
        raise SFTDataError(f"{path}: no examples")
    return examples


def prompted_rows(examples: list[dict[str, Any]], tokenizer: Any,
                  max_length: int | None = None) -> list[dict[str, Any]]:  # fmt: skip
    """Pre-tokenized rows ``{"input_ids", "assistant_masks"}`` (prompted tools, assistant-only
    loss), cut at ``max_length`` tokens."""
    from travelgym.llm.prompted_tools import to_prompted_messages
    from travelgym.training.rollout import tokenize_chat

    rows = []
    for example in examples:
        messages = to_prompted_messages(example["messages"], example["tools"] or None)
        ids, mask = tokenize_chat(tokenizer, messages)
        if max_length is not None:
            ids, mask = ids[:max_length], mask[:max_length]
        rows.append({"input_ids": ids, "assistant_masks": mask})
    return rows


def train_sft(data: str | Path, model: str, output_dir: str | Path, *, max_steps: int = -1,
              epochs: float = 1.0, learning_rate: float = 2e-5, batch_size: int = 1,
              max_length: int | None = 4096, seed: int = 0, tools: ToolsMode = "prompted",
              torch_threads: int | None = None) -> dict[str, Any]:  # fmt: skip
    """Fine-tune ``model`` (a checkpoint directory, ``smollm2`` or ``tiny``) on ``data``; the
    result (model and tokenizer) goes to ``output_dir``. Returns a summary with the final loss."""
    import torch
    from datasets import Dataset
    from trl import SFTConfig, SFTTrainer

    from travelgym.llm.hf_client import load_model_and_tokenizer

    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    if torch_threads is not None:
        torch.set_num_threads(torch_threads)
    examples = read_examples(data)
    out = Path(output_dir)
    ref = model
    if model == "tiny":
        from travelgym.training.tiny import build_tiny_model

        texts = [m.get("content") or "" for e in examples[:50] for m in e["messages"]]
        ref = str(build_tiny_model(out / "tiny-init", seed=seed, extra_texts=texts))
    policy, tokenizer = load_model_and_tokenizer(ref)
    if tools == "prompted":
        dataset = Dataset.from_list(prompted_rows(examples, tokenizer, max_length))
    else:
        dataset = Dataset.from_list([{"messages": e["messages"], "tools": e["tools"]}
                                     for e in examples])  # fmt: skip
    config = SFTConfig(output_dir=str(out), max_steps=max_steps, num_train_epochs=epochs,
                       learning_rate=learning_rate, per_device_train_batch_size=batch_size,
                       max_length=max_length, seed=seed, report_to="none", save_strategy="no",
                       logging_steps=1, use_cpu=not torch.cuda.is_available())  # fmt: skip
    trainer = SFTTrainer(model=policy, args=config, train_dataset=dataset,
                         processing_class=tokenizer)  # fmt: skip
    result = trainer.train()
    trainer.save_model(str(out))
    tokenizer.save_pretrained(str(out))
    return {"output_dir": str(out), "examples": len(examples), "steps": trainer.state.global_step,
            "train_loss": result.training_loss, "tools": tools}  # fmt: skip
