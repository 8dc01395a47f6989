"""vLLM generation for ``train grpo`` (``travelgym.training.vllm_rollout``) without vLLM or a GPU:
stand-ins of the interfaces it calls (vLLM's ``LLM.generate`` / ``SamplingParams`` /
``RequestOutput`` in colocate mode, TRL's ``VLLMClient.generate`` in server mode, TRL's weight
sync before ``rollout_func``) check our side: token-id prompts, one ``max_tokens`` per
sequence, stop tokens kept and cut as the transformers path does, seeds, the log-probabilities
placed on the model tokens, and one weight sync per optimizer step. Whether real vLLM behaves
as these stand-ins do is untested (no GPU machine with vLLM was available)."""

from __future__ import annotations

import inspect
import math
import random
import sys
import threading
import time
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import pytest

from tests.training.support import need_train_extra
from travelgym.core.environment import Transition
from travelgym.training.vllm_rollout import (
    LogprobLedger,
    VLLMGenerateBatch,
    colocate_backend,
    ensure_synced,
    finish,
    server_backend,
)

STOP, EOS = 3, 2  # our stop token; a generation-config EOS that is not one of ours


@dataclass(kw_only=True)
class SamplingParams:
    """vLLM's ``SamplingParams`` fields that we set (vllm/sampling_params.py); an unknown
    keyword is a TypeError, as there."""

    n: int = 1
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0
    min_p: float = 0.0
    repetition_penalty: float = 1.0
    max_tokens: int | None = 16
    stop_token_ids: list[int] | None = None
    ignore_eos: bool = False
    seed: int | None = None
    logprobs: int | None = None


@dataclass
class Logprob:  # vllm.logprobs.Logprob: logprob, rank, decoded_token
    logprob: float
    rank: int | None = 1
    decoded_token: str | None = None


@dataclass
class CompletionOutput:  # vllm.outputs.CompletionOutput (the fields TRL and we read)
    index: int
    token_ids: list[int]
    logprobs: list[dict[int, Logprob]] | None
    finish_reason: str | None = None
    stop_reason: int | str | None = None


@dataclass
class RequestOutput:  # vllm.outputs.RequestOutput
    prompt_token_ids: list[int]
    outputs: list[CompletionOutput] = field(default_factory=list)


def sample(context: list[int], params: SamplingParams) -> tuple[list[int], list[float], str, Any]:
    """A stand-in model with vLLM's stopping rules (vllm/v1/core/sched/utils.py ``check_stop``:
    the token is appended, then ``max_tokens``, the EOS unless ``ignore_eos``, and
    ``stop_token_ids`` (``stop_reason`` = the token) end the sequence, the token kept)."""
    rng = random.Random(f"{params.seed}|{context}") if params.seed is not None else random.Random()
    ids: list[int] = []
    vocab = sorted({STOP, EOS, *(params.stop_token_ids or ())}) + list(range(10, 30))
    while True:
        token = rng.choice(vocab)
        ids.append(token)
        if len(ids) >= params.max_tokens:
            return ids, logprobs_of(ids), "length", None
        if not params.ignore_eos and token == EOS:
            return ids, logprobs_of(ids), "stop", None
        if token in (params.stop_token_ids or ()):
            return ids, logprobs_of(ids), "stop", token


def logprobs_of(ids: list[int]) -> list[float]:
    return [-(t % 7 + 1) / 10 for t in ids]


class FakeLLM:
    """``vllm.LLM.generate(prompts, sampling_params, use_tqdm)`` (vllm/entrypoints/llm.py:
    "When it is a list, the list must have the same length as the prompts and it is paired one
    by one with the prompt"); records its calls."""

    def __init__(self) -> None:
        self.calls: list[tuple[list, list]] = []

    def generate(self, prompts, sampling_params=None, use_tqdm=True, lora_request=None):
        assert isinstance(sampling_params, list) and len(sampling_params) == len(prompts)
        self.calls.append((prompts, sampling_params))
        out = []
        for prompt, params in zip(prompts, sampling_params, strict=True):
            context = prompt["prompt_token_ids"]
            ids, lps, reason, stop = sample(context, params)
            top = [{t: Logprob(lp, rank=1)} for t, lp in zip(ids, lps, strict=True)]
            out.append(RequestOutput(context, [CompletionOutput(0, ids, top, reason, stop)]))
        return out


class FakeClient:
    """TRL 1.16's ``VLLMClient.generate`` (trl/generation/vllm_client.py), same signature; the
    server applies ``generation_kwargs`` (seed, stop_token_ids, ignore_eos) as request fields
    and answers ``{"prompt_ids", "completion_ids", "logprobs", "logprob_token_ids"}``, logprobs
    of shape (sequences, tokens, 1) for ``logprobs=0``."""

    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.lock = threading.Lock()

    def generate(self, prompts, features=None, n=1, repetition_penalty=1.0, temperature=1.0,
                 top_p=1.0, top_k=0, min_p=0.0, max_tokens=16, logprobs=0,
                 structured_outputs_regex=None, generation_kwargs=None):  # fmt: skip
        body = {"n": n, "temperature": temperature, "top_p": top_p, "top_k": top_k,
                "max_tokens": max_tokens, "logprobs": logprobs, **(generation_kwargs or {})}  # fmt: skip
        with self.lock:
            self.requests.append({"prompts": prompts, **body})
        time.sleep(0.001 * (len(prompts[0]) % 5))  # answers arrive out of order
        params = SamplingParams(**{k: v for k, v in body.items() if k != "n"})
        results = [sample(p, params) for p in prompts]
        return {"prompt_ids": prompts, "completion_ids": [r[0] for r in results],
                "logprobs": [[[lp] for lp in r[1]] for r in results],
                "logprob_token_ids": [[[t] for t in r[0]] for r in results]}  # fmt: skip


def test_the_client_stand_in_has_trls_signature():
    need_train_extra()
    from trl.generation.vllm_client import VLLMClient

    def shape(fn):  # parameter names, kinds and defaults (not the annotations)
        return [(p.name, p.kind, p.default) for p in inspect.signature(fn).parameters.values()]

    assert shape(FakeClient.generate) == shape(VLLMClient.generate)


def test_colocate_token_prompts_per_sequence_params_and_stops():
    need_train_extra()  # the colocated backend reads logprobs with TRL's helper
    llm = FakeLLM()
    gen = VLLMGenerateBatch(colocate_backend(llm, SamplingParams), temperature=0.7,
                            stop_ids=[STOP, 5], seed="0/0")  # fmt: skip
    contexts = [[1, 10, 11], [1, 12], [1, 10, 11], [1, 13, 14, 15]]
    limits = [40, 3, 40, 0]
    out = gen(contexts, limits, keys=None)
    prompts, params = llm.calls[0]
    # token ids, not text; the context with no room left is not sent
    assert prompts == [{"prompt_token_ids": c} for c in contexts[:3]]
    assert [p.max_tokens for p in params] == [40, 3, 40]
    assert all(p.stop_token_ids == [STOP, 5] and p.ignore_eos and p.logprobs == 0
               and p.temperature == 0.7 and p.top_k == 0 and p.top_p == 1.0 and p.n == 1
               for p in params)  # fmt: skip
    # identical contexts (a group's first turn) get different seeds, hence different samples
    assert len({p.seed for p in params}) == 3 and out[0] != out[2]
    assert out[3] == []
    for ids, limit in zip(out[:3], limits[:3], strict=True):
        assert len(ids) <= limit
        assert ids[-1] in (STOP, 5) or len(ids) == limit  # the hf contract: stop token kept
        assert not {STOP, 5} & set(ids[:-1])
    # EOS (not one of our stop tokens) does not end a turn: ignore_eos
    many = gen([[1, i] for i in range(40)], [40] * 40)
    assert any(EOS in ids[:-1] for ids in many)


def test_seeds_reproduce_and_follow_keys_not_positions():
    need_train_extra()  # the colocated backend reads logprobs with TRL's helper

    def run(contexts, keys, base="7/0"):
        return VLLMGenerateBatch(colocate_backend(FakeLLM(), SamplingParams), temperature=1.0,
                                 stop_ids=[STOP], seed=base)(contexts, [20] * len(contexts),
                                                             keys=keys)  # fmt: skip

    same = [[1, 10]] * 4
    assert run(same, None) == run(same, None)  # reproducible from the base seed
    assert run(same, None) != run(same, None, base="8/0")  # another run or process
    forward, backward = run(same, [4, 5, 6, 7]), run(same, [7, 6, 5, 4])
    assert forward == backward[::-1]  # a rollout's sample depends on its key, not its slot
    gen = VLLMGenerateBatch(colocate_backend(FakeLLM(), SamplingParams), temperature=1.0,
                            stop_ids=[STOP], seed="7/0")  # fmt: skip
    first, second = gen(same[:1], [20], keys=[4]), gen(same[:1], [20], keys=[4])
    assert first == forward[:1] and second != first  # the next turn of key 4: a new seed


def test_finish_cuts_like_the_transformers_path():
    stops = {STOP, 9}
    assert finish([10, 9, 11, STOP], [-1, -2, -3, -4], 10, stops) == ([10, 9], [-1.0, -2.0])
    assert finish([10, 11, 12, 13], None, 3, stops) == ([10, 11, 12], None)
    assert finish([], [], 5, stops) == ([], [])


def test_a_backend_returning_too_much_is_cut():
    def backend(contexts, limits, seeds, **kw):
        return [([10, 11, STOP, 12, 13, 14], [-0.5] * 6), ([10] * 9, [-0.5] * 9)]

    gen = VLLMGenerateBatch(backend, temperature=1.0, stop_ids=[STOP])
    assert gen([[1], [2]], [8, 4]) == [[10, 11, STOP], [10] * 4]
    with pytest.raises(ValueError, match="one limit"):
        gen([[1]], [1, 2])


def test_server_one_request_per_sequence_in_order():
    client = FakeClient()
    gen = VLLMGenerateBatch(server_backend(client, max_workers=4), temperature=0.9,
                            stop_ids=[STOP], seed="1/2")  # fmt: skip
    contexts = [[1] * n for n in range(1, 9)]
    limits = [5 + i for i in range(8)]
    out = gen(contexts, limits, keys=list(range(8)))
    assert len(client.requests) == 8
    by_prompt = {tuple(r["prompts"][0]): r for r in client.requests}
    for ctx, limit, ids in zip(contexts, limits, out, strict=True):
        request = by_prompt[tuple(ctx)]
        assert request["prompts"] == [ctx] and request["max_tokens"] == limit
        assert request["n"] == 1 and request["logprobs"] == 0 and request["temperature"] == 0.9
        assert request["stop_token_ids"] == [STOP] and request["ignore_eos"] is True
        params = SamplingParams(max_tokens=limit, stop_token_ids=[STOP], ignore_eos=True,
                                seed=request["seed"])  # fmt: skip
        assert ids == sample(ctx, params)[0]  # each answer back in its context's place
    assert len({r["seed"] for r in client.requests}) == 8


def test_ledger_places_logprobs_on_model_tokens():
    ledger = LogprobLedger()
    prompt = [1, 2, 3]
    turn1, delta, turn2 = [10, 11, STOP], [20, 21], [12, STOP]
    ledger.record(prompt, turn1, [-0.1, -0.2, -0.3])
    ledger.record(prompt + turn1 + delta, turn2, [-0.4, -0.5])
    ledger.record(prompt, [10, 14], [-0.7, -0.8])  # another rollout of the group
    values = ledger.completion_logprobs(prompt, turn1 + delta + turn2)
    assert values[:3] == [-0.1, -0.2, -0.3] and values[5:] == [-0.4, -0.5]
    assert all(math.isnan(v) for v in values[3:5])
    assert ledger.completion_logprobs(prompt, [10, 14])[:2] == [-0.7, -0.8]
    assert all(math.isnan(v) for v in ledger.completion_logprobs([9], [10, 11]))


def test_ensure_synced_once_per_step():
    synced = []
    trainer = SimpleNamespace(state=SimpleNamespace(global_step=3), _last_loaded_step=2,
                              vllm_generation=SimpleNamespace(sync_weights=lambda: synced.append(1)))  # fmt: skip
    assert ensure_synced(trainer) and not ensure_synced(trainer) and synced == [1]
    trainer.state.global_step = 4
    assert ensure_synced(trainer) and synced == [1, 1]


def test_trl_syncs_vllm_weights_before_rollout_func_once_per_step():
    """TRL 1.16's own ``GRPOTrainer._generate`` (run on a stand-in trainer): the weights are
    pushed before ``rollout_func`` when the step changed, and our check then pushes nothing."""
    need_train_extra()
    from trl import GRPOTrainer

    class Stop(Exception):
        pass

    synced, seen = [], []

    def rollout_func(prompts, trainer):
        seen.append((len(synced), ensure_synced(trainer)))
        raise Stop

    trainer = SimpleNamespace(
        accelerator=SimpleNamespace(device="cpu", is_main_process=True),
        model=SimpleNamespace(training=True), args=SimpleNamespace(report_to=[]),
        state=SimpleNamespace(global_step=0), _last_loaded_step=-1, use_vllm=True,
        vllm_generation=SimpleNamespace(sync_weights=lambda: synced.append(1)),
        rollout_func=rollout_func)  # fmt: skip
    for step in (0, 0, 1):
        trainer.state.global_step = step
        with pytest.raises(Stop):
            GRPOTrainer._generate(trainer, ["b2t-train-easy-0000"])
    assert seen == [(1, False), (1, False), (2, False)]  # one sync per step, all by TRL


class ScriptedEnv:
    """An environment (``travelgym.core.environment``): a task, then a tool reply per model
    message; the episode ends after 1 or 2 messages (by seed)."""

    task_key = "instance_id"
    native_tools = False

    def __init__(self) -> None:
        self.turns, self.length = 0, 1

    def reset(self, seed, options):
        self.turns, self.length = 0, 1 + (seed or 0) % 2
        return [{"role": "system", "content": "Plan trips."},
                {"role": "user", "content": f"Plan {options['instance_id']}."}], dict(options)  # fmt: skip

    def transition(self, text):
        self.turns += 1
        done = self.turns >= self.length
        return Transition([{"role": "user", "content": f"tool result {self.turns}"}],
                          float(done), done, False)  # fmt: skip

    @property
    def done(self):
        return self.turns >= self.length

    def breakdown(self):
        return {"turns": self.turns}

    def cut(self):
        return 0.0, {"turns": self.turns}

    def episode(self):
        return {"turns": self.turns}

    def close(self):
        pass


@pytest.mark.train
def test_runner_rollouts_through_colocated_vllm(tiny_dir, monkeypatch):
    """RolloutRunner with ``vllm_mode`` on a stand-in trainer: lockstep rollouts whose model
    tokens are exactly what the stand-in LLM produced, with its log-probabilities, and NaN on
    the environment's tokens."""
    need_train_extra()
    from transformers import AutoTokenizer

    from travelgym.training.grpo import RolloutRunner
    from travelgym.training.grpo_config import GRPOSettings

    settings = GRPOSettings(suite="behavior2trip", model=str(tiny_dir), num_generations=2,
                            per_device_batch_size=4, rollouts="batched", vllm_mode="colocate",
                            max_turns=3, max_new_tokens=12, max_completion_length=3000)  # fmt: skip
    tok = AutoTokenizer.from_pretrained(tiny_dir)
    monkeypatch.setitem(sys.modules, "vllm", SimpleNamespace(SamplingParams=SamplingParams))
    runner = RolloutRunner(settings, ScriptedEnv(), tok)
    runner.suite = SimpleNamespace(grpo_env=lambda s: ScriptedEnv())
    llm, synced = FakeLLM(), []
    trainer = SimpleNamespace(
        state=SimpleNamespace(global_step=0), _last_loaded_step=0,
        args=SimpleNamespace(vllm_mode="colocate"), accelerator=SimpleNamespace(process_index=0),
        vllm_generation=SimpleNamespace(llm=llm, sync_weights=lambda: synced.append(1)))  # fmt: skip
    out = runner(["a", "a", "b", "b"], trainer)
    assert synced == []  # TRL had synced this step already
    # one call a turn over the rollouts still going: 4, then the 2 of 2 turns
    assert [len(prompts) for prompts, _ in llm.calls] == [4, 2]
    generated: dict[tuple, list] = {}  # what the stand-in produced, by context
    for prompts, params in llm.calls:
        for prompt, p in zip(prompts, params, strict=True):
            context = prompt["prompt_token_ids"]
            generated.setdefault(tuple(context), []).append(sample(context, p)[:2])
    stops = set(runner.stop_ids)
    assert stops == set(llm.calls[0][1][0].stop_token_ids)
    turns = []
    for prompt_ids, completion, mask, lps in zip(out["prompt_ids"], out["completion_ids"],
                                                 out["env_mask"], out["logprobs"], strict=True):  # fmt: skip
        assert len(lps) == len(completion) == len(mask)
        k, count = 0, 0
        while k < len(completion):
            if mask[k] == 0:
                assert math.isnan(lps[k])
                k += 1
                continue
            answers = [finish(ids, lp, 12, stops)
                       for ids, lp in generated[tuple(prompt_ids + completion[:k])]]  # fmt: skip
            new, new_lp = next(a for a in answers if completion[k : k + len(a[0])] == a[0])
            assert lps[k : k + len(new)] == new_lp
            k, count = k + len(new), count + 1
        turns.append(count)
    assert turns == [1 + (settings.seed + 1 + i) % 2 for i in range(4)]
    assert out["prompt_ids"][0] == out["prompt_ids"][1]
    assert out["completion_ids"][0] != out["completion_ids"][1]  # a group's samples differ
    assert len(runner.pending) == 4
