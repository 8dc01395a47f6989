"""Batched generation with a transformers model that keeps each context's KV cache across turns.

:class:`HFBatchGenerator` is the ``generate_batch`` of
:func:`~travelgym.training.batched_rollout.run_rollouts` for a transformers policy. A multi-turn
rollout's context only grows: each turn it is the previous context, the model's message and the
environment's reply. Re-encoding the whole context every turn (what ``model.generate`` does)
costs as much as generating one sequence at a time, however many sequences are batched, so
the generator keeps the keys and values of every context it has seen, with the tokens they
encode, and each new context starts from the stored prefix it shares the most tokens with:

- **prefill**: one forward pass per context over only the tokens past that prefix (the
  rollouts of a GRPO group share their prompt, so its first turn encodes the prompt once);
- **decode**: the contexts' caches left-padded into one batch, one token per forward pass for
  every sequence still going, each stopping at its first stop token (kept) or at its own
  ``max_new_tokens``; a sequence that stops leaves the batch, its cache stored for its next
  turn.

Greedy (``temperature`` 0) it picks the most likely token, as ``model.generate`` does; under
fp32 its tokens are those of :func:`~travelgym.llm.hf_client.generate_ids` one sequence at a
time (tested with the tiny model). Sampled, it draws from the temperature / top-p distribution
with its own seeded generator (the global random state is untouched).

A generator is only valid for one set of weights: GRPO makes a new one for every step.
Models with sliding-window layers do not reuse caches (their layers drop old keys); they
prefill the whole context each turn. Imports torch only when called.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any

Layers = list[tuple[Any, Any]]  # per layer: keys and values, each [1, heads, tokens, dim]


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """How many leading tokens ``a`` and ``b`` share."""
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


class HFBatchGenerator:
    """``generate_batch(contexts, max_new_tokens) -> new ids`` over a transformers causal LM
    (see the module docstring). ``reuse``: start from stored caches (off: every context is
    prefilled in full). ``max_batch``: at most this many sequences decode together.
    ``prefilled`` counts the context tokens encoded so far (what the reuse saves)."""

    def __init__(self, model: Any, *, temperature: float = 0.0, top_p: float | None = None,
                 seed: int | None = None, stop_ids: Sequence[int] | None = None,
                 pad_id: int | None = None, max_batch: int | None = None,
                 reuse: bool = True) -> None:  # fmt: skip
        if pad_id is None:
            raise ValueError("batched generation needs a pad token id (left padding)")
        if max_batch is not None and max_batch < 1:
            raise ValueError("max_batch must be at least 1")
        self.model, self.temperature, self.top_p = model, temperature, top_p
        self.stop_ids, self.pad_id, self.max_batch = set(stop_ids or ()), pad_id, max_batch
        self.reuse = reuse and not _has_sliding_layers(model)
        self.seed = seed
        self.prefilled = 0
        self._entries: list[tuple[tuple[int, ...], Layers]] = []
        self._random: Any = None
        # transformers renamed forward's past_key_values to cache (5.2x): take what it accepts
        forward = inspect.signature(model.forward).parameters
        self._cache_kw = "cache" if "cache" in forward else "past_key_values"

    def __call__(self, contexts: Sequence[Sequence[int]],
                 max_new_tokens: Sequence[int]) -> list[list[int]]:  # fmt: skip
        """New token ids for each context (matched to stored caches by their tokens)."""
        import torch

        if len(contexts) != len(max_new_tokens):
            raise ValueError("one max_new_tokens per context")
        if any(len(c) == 0 for c in contexts):
            raise ValueError("batched generation needs non-empty contexts")
        out: list[list[int]] = [[] for _ in contexts]
        live = [i for i, n in enumerate(max_new_tokens) if n > 0]
        step = self.max_batch or len(live) or 1
        fresh: list[tuple[tuple[int, ...], Layers]] = []
        with torch.no_grad():
            for start in range(0, len(live), step):
                rows = live[start : start + step]
                texts = [tuple(contexts[i]) for i in rows]
                limits = [int(max_new_tokens[i]) for i in rows]
                for i, new in zip(rows, self._chunk(texts, limits, fresh), strict=True):
                    out[i] = new
        # the next turn's contexts extend this turn's: only this call's caches stay useful
        self._entries = fresh
        return out

    def _chunk(self, texts: list[tuple[int, ...]], limits: list[int],
               fresh: list[tuple[tuple[int, ...], Layers]]) -> list[list[int]]:  # fmt: skip
        """Prefill then decode one batch; appends each sequence's final cache to ``fresh``."""
        import torch

        caches, first = [], []
        shared: list[tuple[tuple[int, ...], Layers]] = []
        for text in texts:
            layers, logits = self._prefill(text, self._entries + shared if self.reuse else [])
            shared.append((text, layers))
            caches.append(layers)
            first.append(logits)
        tokens = self._pick(torch.stack(first))
        outputs: list[list[int]] = [[t] for t in tokens.tolist()]
        lengths = [len(t) for t in texts]
        width = max(lengths)
        device = tokens.device
        batch = _left_pad(caches, lengths, width, room=max(limits))
        mask = torch.tensor([[0] * (width - n) + [1] * n for n in lengths], device=device)
        positions = torch.tensor(lengths, device=device)
        rows = list(range(len(texts)))  # batch row -> sequence
        while True:
            done = [r for r, i in enumerate(rows) if self._finished(outputs[i], limits[i])]
            for r in done if self.reuse else ():  # the context and all new tokens but the last
                i = rows[r]
                fed = lengths[i] + len(outputs[i]) - 1
                layer_rows = [(k[r : r + 1, :, -fed:].clone(), v[r : r + 1, :, -fed:].clone())
                              for k, v in _layers(batch)]  # fmt: skip
                fresh.append((texts[i] + tuple(outputs[i][:-1]), layer_rows))
            if done:
                keep = [r for r in range(len(rows)) if r not in done]
                if not keep:
                    break
                index = torch.tensor(keep, device=device)
                batch.batch_select_indices(index)
                mask, positions, tokens = mask[index], positions[index], tokens[index]
                rows = [rows[r] for r in keep]
            mask = torch.cat([mask, mask.new_ones((len(rows), 1))], dim=1)
            logits = self.model(input_ids=tokens[:, None], attention_mask=mask,
                                position_ids=positions[:, None], use_cache=True,
                                **{self._cache_kw: batch}).logits[:, -1, :]  # fmt: skip
            positions = positions + 1
            tokens = self._pick(logits)
            for r, token in enumerate(tokens.tolist()):
                outputs[rows[r]].append(token)
        return outputs

    def _finished(self, new: list[int], limit: int) -> bool:
        return len(new) >= limit or new[-1] in self.stop_ids

    def _prefill(self, text: tuple[int, ...],
                 pool: list[tuple[tuple[int, ...], Layers]]) -> tuple[Layers, Any]:  # fmt: skip
        """The cache of ``text`` and the logits after its last token, encoding only what the
        best stored prefix does not cover (at least the last token)."""
        import torch
        from transformers import DynamicCache

        best, base = 0, None
        for tokens, layers in pool:
            shared = min(common_prefix(tokens, text), len(text) - 1)
            if shared > best:
                best, base = shared, layers
        cache = DynamicCache()
        if base is not None:
            cache = DynamicCache(ddp_cache_data=[(k[:, :, :best], v[:, :, :best])
                                                 for k, v in base])  # fmt: skip
        device = next(self.model.parameters()).device
        ids = torch.tensor([text[best:]], device=device)
        positions = torch.arange(best, len(text), device=device)[None, :]
        logits = self.model(input_ids=ids, position_ids=positions, use_cache=True,
                            logits_to_keep=1, **{self._cache_kw: cache}).logits[0, -1, :]  # fmt: skip
        self.prefilled += len(text) - best
        return [(k, v) for k, v in _layers(cache)], logits

    def _pick(self, logits: Any) -> Any:
        """The next token of each row: argmax when greedy, else a temperature / top-p draw."""
        import torch

        if self.temperature <= 0:
            return logits.argmax(dim=-1)
        if self._random is None:
            self._random = torch.Generator(device=logits.device)
            if self.seed is not None:
                self._random.manual_seed(int(self.seed))
            else:
                self._random.seed()
        probs = torch.softmax(logits.float() / self.temperature, dim=-1)
        if self.top_p is not None and self.top_p < 1.0:
            ordered, order = probs.sort(dim=-1, descending=True)
            drop = ordered.cumsum(dim=-1) - ordered > self.top_p  # keep the smallest nucleus
            ordered = ordered.masked_fill(drop, 0.0)
            probs = torch.zeros_like(probs).scatter(-1, order, ordered)
        # inverse-CDF sampling, one uniform draw per row (exact; several times faster than
        # torch.multinomial over a vocabulary on the CPU); right=True never lands on a token
        # of probability 0, and scaling by the total keeps the draw inside the vocabulary
        cdf = probs.cumsum(dim=-1)
        draw = torch.rand((len(cdf), 1), generator=self._random, device=cdf.device)
        return torch.searchsorted(cdf, draw * cdf[:, -1:], right=True)[:, 0]


def _layers(cache: Any) -> list[tuple[Any, Any]]:
    """A DynamicCache's keys and values per layer."""
    return [(layer.keys, layer.values) for layer in cache.layers]


def _left_pad(caches: list[Layers], lengths: list[int], width: int, room: int) -> Any:
    """One DynamicCache of the sequences' caches, each left-padded with zeros to ``width``, with
    ``room`` more tokens allocated up front (decoding writes into it instead of concatenating:
    a copy of the whole cache per token was a quarter of the CPU benchmark's time)."""
    import torch
    from transformers import DynamicCache

    data = []
    for layer in range(len(caches[0])):
        keys, values = [], []
        for layers, n in zip(caches, lengths, strict=True):
            k, v = layers[layer]
            pad = width - n
            keys.append(torch.nn.functional.pad(k, (0, 0, pad, 0)) if pad else k)
            values.append(torch.nn.functional.pad(v, (0, 0, pad, 0)) if pad else v)
        data.append((torch.cat(keys), torch.cat(values)))
    cache = DynamicCache(ddp_cache_data=data)
    cache.layers[:] = [_preallocated_layer(k, v, room) for k, v in data]
    return cache


def _preallocated_layer(keys: Any, values: Any, room: int) -> Any:
    """A transformers ``DynamicLayer`` holding ``keys`` and ``values`` in buffers with ``room``
    more tokens: ``update`` writes new tokens in place (growing the buffers when full) and its
    ``keys`` / ``values`` are views of the filled part."""
    from transformers.cache_utils import DynamicLayer

    class PreallocatedLayer(DynamicLayer):
        def __init__(self) -> None:
            super().__init__()
            self.device, self.is_initialized, self._filled = keys.device, True, 0
            self._keys = self._values = keys
            self._place(keys, values, keys.shape[-2] + room)

        def _place(self, k: Any, v: Any, capacity: int) -> None:
            shape = (*k.shape[:2], capacity, k.shape[-1])
            self._keys, self._values = k.new_zeros(shape), v.new_zeros(shape)
            self._filled = 0
            self.update(k, v)

        def update(self, key_states: Any, value_states: Any, *args: Any, **kwargs: Any) -> Any:
            end = self._filled + key_states.shape[-2]
            if end > self._keys.shape[-2]:
                old_k, old_v = self.keys, self.values
                self._place(old_k, old_v, 2 * end)
                end = self._filled + key_states.shape[-2]
            self._keys[:, :, self._filled : end] = key_states
            self._values[:, :, self._filled : end] = value_states
            self._filled = end
            self.keys, self.values = self._keys[:, :, :end], self._values[:, :, :end]
            return self.keys, self.values

        def batch_select_indices(self, indices: Any) -> None:
            self._keys, self._values = self._keys[indices], self._values[indices]
            self.keys = self._keys[:, :, : self._filled]
            self.values = self._values[:, :, : self._filled]

    return PreallocatedLayer()


def _has_sliding_layers(model: Any) -> bool:
    """Whether the model has sliding-window attention layers (their caches cannot be reused)."""
    config = getattr(model, "config", None)
    text = config.get_text_config(decoder=True) if hasattr(config, "get_text_config") else config
    kinds = getattr(text, "layer_types", None) or []
    return bool(getattr(text, "sliding_window", None) and getattr(text, "use_sliding_window", True)
                and (not kinds or any("sliding" in str(k) for k in kinds)))  # fmt: skip
