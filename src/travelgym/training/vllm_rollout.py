"""vLLM generation for ``travelgym train grpo`` (``vllm_mode``: ``colocate`` or ``server``).

Untested on a GPU: written against TRL 1.16's source and vLLM's documented interfaces, checked
on the CPU with stand-ins of those interfaces (``tests/training/test_vllm_rollout.py``).

The flow. :func:`~travelgym.training.grpo.grpo_config` sets TRL's ``use_vllm`` and
``vllm_mode``; TRL's ``GRPOTrainer`` then builds its ``VLLMGeneration``
(``trl/generation/vllm_generation.py``): in ``colocate`` mode an in-process ``vllm.LLM`` per
training process (``trainer.vllm_generation.llm``), in ``server`` mode a ``VLLMClient`` on the
main process talking to ``trl vllm-serve`` (vLLM's own server), with an NCCL group for the
weights. Before it calls ``rollout_func`` TRL pushes the policy's weights into vLLM whenever the
optimizer step changed (``GRPOTrainer._generate``: ``if self.use_vllm and
self.state.global_step != self._last_loaded_step: self.vllm_generation.sync_weights()``), so
every step's rollouts sample from the current policy; :func:`ensure_synced` repeats that check
(a no-op under TRL 1.16) so a TRL that stopped doing it would not silently sample from stale
weights. The runner then plays the step's rollouts in lockstep
(:func:`~travelgym.training.batched_rollout.run_rollouts`) with a :class:`VLLMGenerateBatch`:
each turn one vLLM call over the rollouts still going.

A turn is sampled with the temperature of the settings, ``top_p`` 1 and ``top_k`` 0 (as
``model.generate`` does here), its own ``max_tokens`` (the rollout's room), the tokenizer's
stop tokens as ``stop_token_ids`` with ``ignore_eos`` (exactly those end a turn, as with
transformers; vLLM would otherwise also stop at the generation config's EOS ids) and a seed of
its own (the G rollouts of a group open on the same context and must not draw the same
sample). vLLM keeps a stop token in the output's ``token_ids`` (its ``check_stop`` runs after
the token is appended); the output is cut after its first stop token and at its limit all the
same, the contract of the transformers ``generate_batch``. Colocate: one
``llm.generate(prompts, sampling_params=[one SamplingParams per prompt])``; server: one
``VLLMClient.generate`` request per sequence (a request has one seed and one ``max_tokens``),
sent concurrently so the server batches them.

The sampled tokens' log-probabilities (``logprobs=0``) go back to TRL, which by default
corrects for the vLLM / trainer mismatch with them (``vllm_importance_sampling_correction``):
:class:`LogprobLedger` places them on the model tokens of each rollout's completion; the
environment's tokens get NaN, which TRL treats as "no correction".

Imports vllm and trl only inside functions.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

VLLM_HINT = ("vLLM generation needs the vllm package and a CUDA GPU; {why} "
             "(pip install vllm on a GPU machine, or leave --vllm-mode unset)")  # fmt: skip
# backend(contexts, limits, seeds, temperature=, top_p=, stop_ids=) -> [(new ids, logprobs)]
Backend = Callable[..., list[tuple[list[int], list[float] | None]]]


def require_vllm() -> None:
    """Raise ``RuntimeError`` (one line) unless vllm is importable and CUDA is available."""
    import importlib.util

    if importlib.util.find_spec("vllm") is None:
        raise RuntimeError(VLLM_HINT.format(why="vllm is not installed"))
    import torch

    if not torch.cuda.is_available():
        raise RuntimeError(VLLM_HINT.format(why="torch sees no CUDA device"))


def ensure_synced(trainer: Any) -> bool:
    """Push the policy's weights into vLLM unless TRL already did for this optimizer step
    (TRL 1.16 does, just before ``rollout_func``); whether this call pushed them."""
    step = trainer.state.global_step
    if getattr(trainer, "_last_loaded_step", None) == step:
        return False
    trainer.vllm_generation.sync_weights()
    trainer._last_loaded_step = step
    return True


def sequence_seed(*parts: Any) -> int:
    """A 31-bit seed from ``parts`` (stable across processes and Python runs)."""
    digest = hashlib.blake2b(":".join(map(str, parts)).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") % (2**31)


def finish(ids: Sequence[int], logprobs: Sequence[float] | None, limit: int,
           stops: set[int]) -> tuple[list[int], list[float] | None]:  # fmt: skip
    """The new ids up to and including the first stop token, at most ``limit`` of them (and
    their log-probabilities)."""
    ids = list(ids)[:limit]
    cut = next((k + 1 for k, token in enumerate(ids) if token in stops), len(ids))
    return ids[:cut], (None if logprobs is None else [float(x) for x in logprobs[:cut]])


class LogprobLedger:
    """The log-probabilities of the sequences generated during one step, by context, so that
    :meth:`completion_logprobs` can place them on a finished rollout's completion."""

    def __init__(self) -> None:
        self.entries: dict[int, dict[int, list[tuple[list[int], list[float]]]]] = {}

    def record(self, context: Sequence[int], new: list[int], logprobs: list[float]) -> None:
        by_hash = self.entries.setdefault(len(context), {})
        by_hash.setdefault(hash(tuple(context)), []).append((new, logprobs))

    def completion_logprobs(self, prompt_ids: list[int], completion_ids: list[int]) -> list[float]:
        """One value per completion token: the sampled log-probability of each model token,
        NaN for the environment's tokens (and any token not found)."""
        out = [math.nan] * len(completion_ids)
        start, full = len(prompt_ids), prompt_ids + completion_ids
        done = 0  # completion tokens already placed
        for length in sorted(n for n in self.entries if start <= n < len(full)):
            k = length - start
            if k < done:
                continue
            for new, logprobs in self.entries[length].get(hash(tuple(full[:length])), []):
                if new and completion_ids[k : k + len(new)] == new:
                    out[k : k + len(new)] = logprobs
                    done = k + len(new)
                    break
        return out


class VLLMGenerateBatch:
    """A ``generate_batch`` for :func:`~travelgym.training.batched_rollout.run_rollouts` over a
    vLLM backend (:func:`colocate_backend` or :func:`server_backend`); see the module docstring.
    ``seed``: the base of the per-sequence seeds (the run's seed and the process index)."""

    def __init__(self, backend: Backend, *, temperature: float, stop_ids: Sequence[int],
                 seed: Any = 0, top_p: float = 1.0) -> None:  # fmt: skip
        self.backend, self.temperature, self.top_p = backend, temperature, top_p
        self.stop_ids, self.stops, self.seed = list(stop_ids), set(stop_ids), seed
        self.calls = 0  # sequences generated (seeds without keys)
        self.turns: Counter[int] = Counter()  # sequences generated per key
        self.ledger = LogprobLedger()

    def new_step(self) -> LogprobLedger:
        """Start a step's ledger (and return it)."""
        self.ledger = LogprobLedger()
        return self.ledger

    def seeds(self, count: int, keys: Sequence[int] | None) -> list[int]:
        """A seed per sequence: by rollout key and turn when keys are given, else by a running
        count of the sequences generated."""
        if keys is None:
            first, self.calls = self.calls, self.calls + count
            return [sequence_seed(self.seed, "n", first + i) for i in range(count)]
        out = []
        for key in keys:
            out.append(sequence_seed(self.seed, "key", key, self.turns[key]))
            self.turns[key] += 1
        return out

    def __call__(self, contexts: list[list[int]], limits: list[int],
                 keys: Sequence[int] | None = None) -> list[list[int]]:  # fmt: skip
        if len(contexts) != len(limits) or (keys is not None and len(keys) != len(contexts)):
            raise ValueError("one limit (and key) per context")
        seeds = self.seeds(len(contexts), keys)
        live = [i for i, n in enumerate(limits) if n > 0]
        out: list[list[int]] = [[] for _ in contexts]
        if not live:
            return out
        results = self.backend([contexts[i] for i in live], [limits[i] for i in live],
                               [seeds[i] for i in live], temperature=self.temperature,
                               top_p=self.top_p, stop_ids=self.stop_ids)  # fmt: skip
        if len(results) != len(live):
            raise ValueError(f"vLLM returned {len(results)} outputs for {len(live)} prompts")
        for i, (ids, logprobs) in zip(live, results, strict=True):
            new, lps = finish(ids, logprobs, limits[i], self.stops)
            out[i] = new
            self.ledger.record(contexts[i], new, lps if lps is not None else [math.nan] * len(new))
        return out


def colocate_backend(llm: Any, sampling_params: Any = None) -> Backend:
    """Generation on TRL's in-process ``vllm.LLM``: one ``llm.generate`` with one
    ``SamplingParams`` per prompt (``sampling_params``: the class, default vLLM's)."""

    def generate(contexts: list[list[int]], limits: list[int], seeds: list[int], *,
                 temperature: float, top_p: float,
                 stop_ids: list[int]) -> list[tuple[list[int], list[float] | None]]:  # fmt: skip
        params_cls = sampling_params
        if params_cls is None:
            from vllm import SamplingParams as params_cls
        from trl.generation.vllm_generation import extract_logprobs

        params = [params_cls(n=1, temperature=temperature, top_p=top_p, top_k=0, min_p=0.0,
                             repetition_penalty=1.0, max_tokens=limit, stop_token_ids=stop_ids,
                             ignore_eos=True, seed=seed, logprobs=0)
                  for limit, seed in zip(limits, seeds, strict=True)]  # fmt: skip
        outputs = llm.generate([{"prompt_token_ids": ids} for ids in contexts],
                               sampling_params=params, use_tqdm=False)  # fmt: skip
        ids = [list(o.token_ids) for out in outputs for o in out.outputs]
        logprobs, _ = extract_logprobs(outputs)
        if logprobs is None:
            return [(x, None) for x in ids]
        return [(x, [lp[0] for lp in seq]) for x, seq in zip(ids, logprobs, strict=True)]

    return generate


def server_backend(client: Any, max_workers: int = 64) -> Backend:
    """Generation on a vLLM server through TRL's ``VLLMClient``: one ``client.generate``
    request per sequence (its own ``max_tokens`` and seed), at most ``max_workers`` at once."""

    def generate(contexts: list[list[int]], limits: list[int], seeds: list[int], *,
                 temperature: float, top_p: float,
                 stop_ids: list[int]) -> list[tuple[list[int], list[float] | None]]:  # fmt: skip
        def one(i: int) -> tuple[list[int], list[float] | None]:
            extra = {"seed": seeds[i], "stop_token_ids": stop_ids, "ignore_eos": True}
            out = client.generate(prompts=[contexts[i]], n=1, repetition_penalty=1.0,
                                  temperature=temperature, top_p=top_p, top_k=0, min_p=0.0,
                                  max_tokens=limits[i], logprobs=0,
                                  generation_kwargs=extra)  # fmt: skip
            logprobs = out.get("logprobs")
            scores = [lp[0] for lp in logprobs[0]] if logprobs else None
            return list(out["completion_ids"][0]), scores

        with ThreadPoolExecutor(max_workers=max(1, min(max_workers, len(contexts)))) as pool:
            return list(pool.map(one, range(len(contexts))))

    return generate


def trainer_backend(trainer: Any) -> Backend:
    """The backend of a ``GRPOTrainer`` built with ``use_vllm``: its colocated ``LLM``, or its
    ``VLLMClient`` (on the main process; the other processes open a client of their own, for
    generation only: TRL's main process alone pushes the weights)."""
    args, generation = trainer.args, trainer.vllm_generation
    if getattr(generation, "enable_sleep_mode", False):
        raise ValueError("vLLM sleep mode is not supported by travelgym's rollouts")
    if args.vllm_mode == "colocate":
        if getattr(generation, "tensor_parallel_size", 1) != 1:
            raise ValueError("colocated vLLM with tensor parallelism is not supported by "
                             "travelgym's rollouts; use vllm_mode server")  # fmt: skip
        return colocate_backend(generation.llm)
    client = getattr(generation, "vllm_client", None)
    if client is None:
        from trl.generation.vllm_client import VLLMClient

        url = args.vllm_server_base_url or f"http://{args.vllm_server_host}:{args.vllm_server_port}"
        client = VLLMClient(base_url=url, connection_timeout=args.vllm_server_timeout)
    return server_backend(client)
