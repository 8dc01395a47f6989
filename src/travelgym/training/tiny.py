"""A tiny, randomly initialised causal LM for tests and smoke runs, built offline.

:func:`build_tiny_model` trains a byte-level BPE tokenizer with ``tokenizers`` on text from the
environments (each suite's prompts, tool schemas, example actions and tasks, and any
``extra_texts``; a few hundred KB), with the ChatML special tokens
(``<|im_start|>``, ``<|im_end|>`` = EOS, ``<|pad|>``) and a ChatML chat template, then
initialises a small ``LlamaForCausalLM`` (hidden 64, 2 layers, 4 heads by default) from
``seed`` and saves both to a directory that ``AutoModelForCausalLM`` / ``AutoTokenizer`` (and so
``hf:DIR``) load. Same inputs and seed, same tokenizer and weights.

Imports torch, transformers and tokenizers: only the training commands and tests use it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from travelgym.llm.hf_client import CHATML_TEMPLATE

SPECIAL_TOKENS = ("<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|pad|>")
EOS, PAD = "<|im_end|>", "<|pad|>"
MARKER = "tiny.json"  # written last: a directory with it is complete


def tiny_corpus(extra_texts: Iterable[str] = ()) -> list[str]:
    """The tokenizer's training texts: every installed suite's
    (:meth:`~travelgym.core.suite.Suite.tiny_texts`: its prompts, tool schemas, example actions
    and tasks), then ``extra_texts`` (e.g. instance prompts)."""
    from travelgym.core.registry import all_suites

    texts = [text for suite in all_suites() for text in suite.tiny_texts()]
    texts += list(extra_texts)
    return texts


def train_tokenizer(texts: Iterable[str], vocab_size: int = 4096):
    """A byte-level BPE ``PreTrainedTokenizerFast`` with the ChatML tokens and template."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(list(texts), trainer=trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token=EOS, pad_token=PAD,
                                   padding_side="left")  # fmt: skip
    fast.chat_template = CHATML_TEMPLATE
    return fast


def build_tiny_model(out_dir: str | Path, *, seed: int = 0, extra_texts: Iterable[str] = (),
                     vocab_size: int = 4096, hidden_size: int = 64, num_layers: int = 2,
                     num_heads: int = 4, max_positions: int = 32768) -> Path:  # fmt: skip
    """Train the tokenizer, initialise the model from ``seed`` and save both to ``out_dir``;
    returns ``out_dir``. An already complete directory (its ``tiny.json`` records the same
    settings) is reused as it is."""
    import torch
    from transformers import GenerationConfig, LlamaConfig, LlamaForCausalLM

    out = Path(out_dir)
    extra = list(extra_texts)
    settings = {"seed": seed, "vocab_size": vocab_size, "hidden_size": hidden_size,
                "num_layers": num_layers, "num_heads": num_heads,
                "max_positions": max_positions, "extra_texts": len(extra),
                "extra_chars": sum(len(t) for t in extra)}  # fmt: skip
    marker = out / MARKER
    if marker.exists() and json.loads(marker.read_text()) == settings:
        return out
    tokenizer = train_tokenizer(tiny_corpus(extra), vocab_size)
    eos, pad = tokenizer.convert_tokens_to_ids(EOS), tokenizer.convert_tokens_to_ids(PAD)
    config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=hidden_size,
                         intermediate_size=2 * hidden_size, num_hidden_layers=num_layers,
                         num_attention_heads=num_heads, num_key_value_heads=num_heads,
                         max_position_embeddings=max_positions, bos_token_id=None,
                         eos_token_id=eos, pad_token_id=pad, tie_word_embeddings=True)  # fmt: skip
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = LlamaForCausalLM(config)
    model.generation_config = GenerationConfig(eos_token_id=eos, pad_token_id=pad)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    marker.write_text(json.dumps(settings))
    return out
