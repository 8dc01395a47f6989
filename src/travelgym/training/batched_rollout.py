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

For a transformers policy the ``generate_batch`` is
:class:`~travelgym.training.batched_generate.HFBatchGenerator` (one batch a turn, each
rollout's KV cache kept across its turns); with vLLM it is
:mod:`~travelgym.training.vllm_rollout`'s.
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
