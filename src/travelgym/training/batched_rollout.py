"""Batched rollouts: all rollouts of a GRPO step advance in lockstep, one batched generate a turn.

:func:`run_rollouts` plays one episode per environment (the group x the prompts of the batch,
each rollout on an environment of its own) with a ``generate_batch`` callable:
``generate_batch(contexts, max_new_tokens) -> new_ids`` (a list of contexts and each one's
token limit; a list of new ids, each ending with a stop token unless its limit ran out). Each
turn the still-active rollouts make one request each
(:meth:`~travelgym.training.rollout.RolloutState.request`), one batched generate answers them
all, then each environment steps on its own model message; finished rollouts drop out. Every
rollout is a :class:`~travelgym.training.rollout.RolloutState`, the state machine
:func:`~travelgym.training.rollout.run_rollout` drives one at a time, so prompt ids, completion
ids, ``env_mask``, reward and breakdown are built exactly as there.

:func:`hf_generate_batch` is the transformers ``generate_batch``: the contexts left-padded into
one tensor with an attention mask, one ``model.generate`` over them, each sequence stopping at
its own stop token or its own ``max_new_tokens`` (a per-sequence stopping criterion; the batch
ends when every sequence has). Under greedy decoding in fp32 its tokens are those of
:func:`~travelgym.llm.hf_client.generate_ids` one sequence at a time (tested with the tiny
model); sampled, it draws from the same distributions with another random stream.

Imports torch and transformers only inside :func:`hf_generate_batch`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from travelgym.training.rollout import Rollout, RolloutState

GenerateBatchFn = Callable[[list[list[int]], list[int]], list[list[int]]]


def run_rollouts(envs: Sequence[Any], tokenizer: Any, generate_batch: GenerateBatchFn, *,
                 seeds: Sequence[int | None] | None = None,
                 options: Sequence[dict[str, Any] | None] | None = None,
                 **settings: Any) -> list[Rollout]:  # fmt: skip
    """One rollout per environment in ``envs`` (distinct objects: each plays its own episode),
    in lockstep (see the module docstring). ``seeds`` and ``options``: one per environment
    (for ``env.reset``); ``settings``: :func:`~travelgym.training.rollout.run_rollout`'s
    keyword arguments (``max_turns``, ``max_new_tokens``, ``max_completion_length``,
    ``loss_mask``, ``prompt_fn``, ``assistant_prefix``, ``template_kwargs``). Returns the
    rollouts in the order of ``envs``."""
    count = len(envs)
    if len({id(env) for env in envs}) != count:
        raise ValueError("run_rollouts needs a distinct environment per rollout")
    seeds = list(seeds) if seeds is not None else [None] * count
    options = list(options) if options is not None else [None] * count
    if len(seeds) != count or len(options) != count:
        raise ValueError(f"{count} environments need {count} seeds and options "
                         f"(got {len(seeds)} and {len(options)})")  # fmt: skip
    states = [RolloutState(env, tokenizer, seed=seed, options=option, **settings)
              for env, seed, option in zip(envs, seeds, options, strict=True)]  # fmt: skip
    while active := [s for s in states if not s.done]:
        requests = [s.request() for s in active]
        contexts = [r[0] for r in requests if r is not None]
        limits = [r[1] for r in requests if r is not None]
        outputs = generate_batch(contexts, limits)
        if len(outputs) != len(active):
            raise ValueError(f"generate_batch returned {len(outputs)} outputs for "
                             f"{len(active)} contexts")  # fmt: skip
        for state, new in zip(active, outputs, strict=True):
            state.advance(new)
    return [s.rollout for s in states if s.rollout is not None]


def hf_generate_batch(model: Any, contexts: list[list[int]], max_new_tokens: list[int], *,
                      temperature: float = 0.0, top_p: float | None = None,
                      seed: int | None = None, stop_ids: list[int] | None = None,
                      pad_id: int | None = None,
                      max_batch: int | None = None) -> list[list[int]]:  # fmt: skip
    """New token ids for each context with one batched ``model.generate`` (per ``max_batch``
    contexts at most, when given): left padding with ``pad_id``, greedy when ``temperature`` is
    0, else sampled (with ``seed``: reproducibly, without touching the global random state).
    Each sequence ends at its first stop token (kept) or at its own ``max_new_tokens``."""
    if len(contexts) != len(max_new_tokens):
        raise ValueError("one max_new_tokens per context")
    if pad_id is None:
        raise ValueError("batched generation needs a pad token id (left padding)")
    step = max_batch or len(contexts) or 1
    out: list[list[int]] = []
    for start in range(0, len(contexts), step):
        out += _generate_chunk(model, contexts[start : start + step],
                               max_new_tokens[start : start + step], temperature, top_p,
                               None if seed is None else seed + start, stop_ids or [],
                               pad_id)  # fmt: skip
    return out


def _generate_chunk(model: Any, contexts: list[list[int]], limits: list[int], temperature: float,
                    top_p: float | None, seed: int | None, stop_ids: list[int],
                    pad_id: int) -> list[list[int]]:  # fmt: skip
    """:func:`hf_generate_batch` for one batch."""
    import torch
    from transformers import StoppingCriteria, StoppingCriteriaList

    out: list[list[int]] = [[] for _ in contexts]
    live = [i for i, n in enumerate(limits) if n > 0]
    if not live:
        return out
    device = next(model.parameters()).device
    width = max(len(contexts[i]) for i in live)
    rows = [[pad_id] * (width - len(contexts[i])) + list(contexts[i]) for i in live]
    inputs = torch.tensor(rows, device=device)
    attention = torch.tensor([[0] * (width - len(contexts[i])) + [1] * len(contexts[i])
                              for i in live], device=device)  # fmt: skip
    own = torch.tensor([limits[i] for i in live], device=device)

    class OwnLimit(StoppingCriteria):
        """Each sequence is done once it has its own ``max_new_tokens``."""

        def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
            return (input_ids.shape[1] - width) >= own

    kwargs: dict[str, Any] = {"max_new_tokens": max(limits[i] for i in live),
                              "do_sample": temperature > 0, "eos_token_id": stop_ids or None,
                              "pad_token_id": pad_id, "attention_mask": attention,
                              "stopping_criteria": StoppingCriteriaList([OwnLimit()])}  # fmt: skip
    if temperature > 0:
        kwargs.update(temperature=temperature, top_p=top_p if top_p is not None else 1.0,
                      top_k=0)  # fmt: skip
    else:
        kwargs.update(temperature=None, top_p=None, top_k=None)
    with torch.no_grad():
        if seed is None:
            generated = model.generate(inputs, **kwargs)
        else:
            devices = [device] if device.type == "cuda" else []
            with torch.random.fork_rng(devices=devices):
                torch.manual_seed(int(seed))
                generated = model.generate(inputs, **kwargs)
    stops = set(stop_ids)
    for row, i in enumerate(live):
        new = generated[row, width : width + limits[i]].tolist()
        cut = next((k + 1 for k, token in enumerate(new) if token in stops), len(new))
        out[i] = new[:cut]
    return out
