"""``travelgym train grpo``: GRPO on a suite (Behavior2Trip, COMPASS) with TRL's ``GRPOTrainer``.

Generation is ours, through TRL's ``rollout_func``: for each prompt of a step (an instance or
task id, repeated ``num_generations`` times by TRL's sampler) :func:`~travelgym.training.rollout.
run_rollout` plays one multi-turn episode with the trainer's current policy (unwrapped, eval
mode, no gradients, ``model.generate`` sampling at ``temperature``). It returns the token ids,
the ``env_mask`` that TRL multiplies into its loss mask (tool / memory responses and user
replies masked; everything kept with ``no_loss_mask``) and each rollout's reward as an extra
field that the reward function hands back. The reward is the environment's (the suite's reward:
``R_total`` or the COMPASS reward) or, with ``reward="format"``, the suite's warm-up reward
(:meth:`~travelgym.core.suite.Suite.warmup_reward`).

Every step's rewards go to ``OUTPUT_DIR/reward_curve.jsonl``; checkpoints (model and tokenizer
with its chat template) go to ``OUTPUT_DIR/checkpoint-N`` every ``save_steps`` and to
``OUTPUT_DIR`` at the end, so ``hf:OUTPUT_DIR`` evaluates with ``travelgym run``.

With ``vllm_mode`` (``colocate`` or ``server``; untested on a GPU) TRL's vLLM integration generates
instead of ``model.generate``: the step's rollouts in lockstep, one vLLM call a turn
(:mod:`~travelgym.training.vllm_rollout`), TRL pushing the weights into vLLM each step.

Imports torch, transformers, trl and datasets: only the train command imports this module.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import torch
from datasets import Dataset
from transformers import TrainerCallback
from trl import GRPOConfig, GRPOTrainer

from travelgym.core.registry import get_suite
from travelgym.llm.hf_client import generate_ids, load_model_and_tokenizer, stop_token_ids
from travelgym.training.batched_generate import HFBatchGenerator
from travelgym.training.batched_rollout import run_rollouts
from travelgym.training.grpo_config import GRPOSettings
from travelgym.training.rollout import Rollout, run_rollout
from travelgym.training.vllm_rollout import (
    VLLMGenerateBatch,
    ensure_synced,
    require_vllm,
    trainer_backend,
)

CURVE = "reward_curve.jsonl"
SETTINGS = "grpo_settings.json"


def build_env(settings: GRPOSettings) -> tuple[Any, list[str]]:
    """The training environment of the settings (the suite's
    :meth:`~travelgym.core.suite.Suite.grpo_env`) and the ids of its instances / tasks."""
    env = get_suite(settings.suite).grpo_env(settings)
    return env, list(env.item_ids)


def load_policy(settings: GRPOSettings, env: Any) -> tuple[Any, Any]:
    """The policy and its tokenizer: ``tiny`` (built under ``output_dir/tiny-init`` from the
    seed, its tokenizer trained on the environments' text), ``smollm2`` or a checkpoint."""
    ref = settings.model
    if ref == "tiny":
        from travelgym.training.tiny import build_tiny_model

        ref = str(build_tiny_model(settings.output_dir / "tiny-init", seed=settings.seed,
                                   extra_texts=_sample_texts(env)))  # fmt: skip
    model, tokenizer = load_model_and_tokenizer(ref)
    return model, tokenizer


def _sample_texts(env: Any, count: int = 40) -> list[str]:
    """Opening messages of the first episodes (for the tiny tokenizer's corpus)."""
    options = [{env.task_key: i} for i in env.item_ids[:count]]
    return [env.reset(options=o)[0][-1]["content"] for o in options]


class RolloutRunner:
    """TRL's ``rollout_func``: one multi-turn rollout per prompt with the current policy."""

    def __init__(self, settings: GRPOSettings, env: Any, tokenizer: Any) -> None:
        self.settings, self.env, self.tokenizer = settings, env, tokenizer
        self.suite = get_suite(settings.suite)
        self.key = env.task_key
        self.stop_ids = stop_token_ids(tokenizer)
        self.prompt_fn = self.suite.compact_prompt() if settings.prompt == "compact" else None
        self.pending: list[Rollout] = []
        self.count = 0
        self.envs: list[Any] = [env]  # batched rollouts: one environment per rollout of a step
        self.vllm: Any = None  # vllm_mode: the VLLMGenerateBatch, made on the first step

    def close(self) -> None:
        """Close the environments the batched rollouts added (not the one it was given)."""
        for env in self.envs[1:]:
            env.close()
        self.envs = self.envs[:1]

    def _kwargs(self) -> dict[str, Any]:
        s = self.settings
        return {"max_turns": s.max_turns, "max_new_tokens": s.max_new_tokens,
                "max_completion_length": s.max_completion_length,
                "loss_mask": not s.no_loss_mask, "prompt_fn": self.prompt_fn,
                "assistant_prefix": s.assistant_prefix}  # fmt: skip

    def batch(self, model: Any, items: list[str]) -> list[Rollout]:
        """One rollout per item, in lockstep (``rollouts="batched"``): the same seeds and
        options as :meth:`rollout` one by one, an environment of its own for each."""
        s = self.settings
        # a new generator (its KV caches) per call: the weights change every step
        generate_batch = HFBatchGenerator(model, temperature=s.temperature, seed=s.seed + self.count,
                                          stop_ids=self.stop_ids,
                                          pad_id=self.tokenizer.pad_token_id)  # fmt: skip
        return self._lockstep(items, generate_batch)

    def _lockstep(self, items: list[str], generate_batch: Any) -> list[Rollout]:
        """:func:`run_rollouts` over the items, an environment of its own for each."""
        while len(self.envs) < len(items):
            self.envs.append(self.suite.grpo_env(self.settings))
        seeds = [self.settings.seed + self.count + 1 + i for i in range(len(items))]
        self.count += len(items)
        return run_rollouts(self.envs[: len(items)], self.tokenizer, generate_batch, seeds=seeds,
                            options=[{self.key: item} for item in items],
                            **self._kwargs())  # fmt: skip

    def vllm_batch(self, trainer: Any, items: list[str]) -> tuple[list[Rollout], list[list[float]]]:
        """One rollout per item in lockstep, generated by TRL's vLLM (``vllm_mode``; see
        :mod:`~travelgym.training.vllm_rollout`), with the same seeds and options as
        :meth:`batch`; and each rollout's per-token sampling log-probabilities."""
        s = self.settings
        ensure_synced(trainer)
        if self.vllm is None:
            self.vllm = VLLMGenerateBatch(trainer_backend(trainer), temperature=s.temperature,
                                          stop_ids=self.stop_ids,
                                          seed=f"{s.seed}/{trainer.accelerator.process_index}")  # fmt: skip
        ledger = self.vllm.new_step()
        rollouts = self._lockstep(items, self.vllm)
        return rollouts, [ledger.completion_logprobs(r.prompt_ids, r.completion_ids)
                          for r in rollouts]  # fmt: skip

    def rollout(self, model: Any, item: str) -> Rollout:
        s = self.settings

        def generate(ids: list[int], max_new: int) -> list[int]:
            return generate_ids(model, ids, max_new, temperature=s.temperature,
                                stop_ids=self.stop_ids, pad_id=self.tokenizer.pad_token_id)  # fmt: skip

        self.count += 1
        return run_rollout(self.env, self.tokenizer, generate, seed=s.seed + self.count,
                           options={self.key: item}, **self._kwargs())  # fmt: skip

    def reward(self, rollout: Rollout) -> float:
        if self.settings.reward == "format":
            return self.suite.warmup_reward(rollout.episode, rollout.breakdown)
        return rollout.reward

    def __call__(self, prompts: list[Any], trainer: Any) -> dict[str, Any]:
        if self.settings.vllm_mode is not None:
            return self._output(*self.vllm_batch(trainer, [str(p) for p in prompts]))
        model = trainer.accelerator.unwrap_model(trainer.model)
        training = model.training
        model.eval()
        device = next(model.parameters()).device.type
        try:  # sampled with the precision the loss is computed in
            with (
                torch.no_grad(),
                torch.autocast(device, torch.bfloat16, enabled=self.settings.bf16),
            ):
                if self.settings.rollouts == "batched":
                    rollouts = self.batch(model, [str(p) for p in prompts])
                else:
                    rollouts = [self.rollout(model, str(p)) for p in prompts]
        finally:
            model.train(training)
        return self._output(rollouts, None)

    def _output(self, rollouts: list[Rollout], logprobs: list[list[float]] | None,
                ) -> dict[str, Any]:  # fmt: skip
        """TRL's ``rollout_func`` result (``logprobs``: None, TRL recomputes them; with vLLM the
        sampled tokens' log-probabilities, for TRL's importance sampling correction)."""
        self.pending.extend(rollouts)
        return {"prompt_ids": [r.prompt_ids for r in rollouts],
                "completion_ids": [r.completion_ids for r in rollouts],
                "logprobs": logprobs,
                "env_mask": [r.env_mask for r in rollouts],
                "rollout_reward": [self.reward(r) for r in rollouts],
                "env_reward": [r.reward for r in rollouts]}  # fmt: skip


def rollout_reward(prompts: list[Any], completions: list[Any], rollout_reward: list[float],
                   **kwargs: Any) -> list[float]:  # fmt: skip
    """The reward function: the rewards the rollouts computed."""
    return [float(r) for r in rollout_reward]


class RewardCurve(TrainerCallback):
    """Appends one row per optimizer step to ``reward_curve.jsonl`` (and a line to stderr)."""

    def __init__(self, runner: RolloutRunner, path: Path, echo: bool = True) -> None:
        self.runner, self.path, self.echo = runner, path, echo
        self._tick = time.perf_counter()

    def on_step_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self._tick = time.perf_counter()

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        rollouts, self.runner.pending = self.runner.pending, []
        if not rollouts:
            return
        rewards = [self.runner.reward(r) for r in rollouts]
        row = {"step": state.global_step, "mean_reward": round(statistics.fmean(rewards), 6),
               "std_reward": round(statistics.pstdev(rewards), 6),
               "min_reward": min(rewards), "max_reward": max(rewards), "n": len(rewards),
               "rewards": [round(x, 6) for x in rewards],
               "env_reward": round(statistics.fmean(r.reward for r in rollouts), 6),
               "turns": round(statistics.fmean(r.turns for r in rollouts), 3),
               "model_tokens": round(statistics.fmean(r.model_tokens for r in rollouts), 1),
               "completion_tokens": round(statistics.fmean(len(r.completion_ids)
                                                           for r in rollouts), 1),
               "stops": dict(Counter(r.stop for r in rollouts)),
               "items": sorted({str(r.info.get(self.runner.key)) for r in rollouts}),
               "sample": _first_reply(rollouts[0]),
               "seconds": round(time.perf_counter() - self._tick, 2)}  # fmt: skip
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(row) + "\n")
        if self.echo:
            print(f"step {row['step']}: mean reward {row['mean_reward']:.4f} "
                  f"(n={row['n']}, {row['seconds']:.0f}s)", file=sys.stderr, flush=True)  # fmt: skip


def _first_reply(rollout: Rollout, chars: int = 300) -> str:
    """The start of a rollout's first model message (for the curve file)."""
    replies = [m["content"] for m in rollout.messages if m["role"] == "assistant"]
    return (replies[0] or "")[:chars] if replies else ""


def grpo_config(settings: GRPOSettings) -> GRPOConfig:
    """TRL's ``GRPOConfig`` for the settings (checkpoints: model and tokenizer only)."""
    return GRPOConfig(output_dir=str(settings.output_dir), num_generations=settings.num_generations,
                      per_device_train_batch_size=settings.batch_size,
                      gradient_accumulation_steps=settings.gradient_accumulation_steps,
                      beta=settings.beta, epsilon=settings.epsilon, loss_type=settings.loss_type,
                      learning_rate=settings.learning_rate, max_steps=settings.max_steps,
                      seed=settings.seed, temperature=settings.temperature,
                      max_completion_length=settings.max_completion_length,
                      save_strategy="steps", save_steps=settings.save_steps,
                      save_only_model=True, logging_steps=settings.logging_steps,
                      report_to="none", bf16=settings.bf16, log_completions=False,
                      use_cpu=not torch.cuda.is_available(),
                      **vllm_options(settings))  # fmt: skip


def vllm_options(settings: GRPOSettings) -> dict[str, Any]:
    """TRL's vLLM arguments of the settings (none without ``vllm_mode``)."""
    if settings.vllm_mode is None:
        return {}
    names = ("vllm_server_base_url", "vllm_gpu_memory_utilization", "vllm_max_model_length")
    given = {n: getattr(settings, n) for n in names if getattr(settings, n) is not None}
    return {"use_vllm": True, "vllm_mode": settings.vllm_mode, **given}


def train_grpo(settings: GRPOSettings, *, echo: bool = True) -> dict[str, Any]:
    """Run GRPO with the settings; returns ``{"output_dir", "steps", "curve", "checkpoints",
    "log_history"}`` (the curve: the rows of ``reward_curve.jsonl``; the log history: TRL's
    logged metrics)."""
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    if settings.vllm_mode is not None:
        require_vllm()  # before building anything
    if settings.torch_threads is not None:
        torch.set_num_threads(settings.torch_threads)
    out = settings.output_dir
    out.mkdir(parents=True, exist_ok=True)
    (out / SETTINGS).write_text(settings.model_dump_json(indent=2))
    curve_path = out / CURVE
    curve_path.unlink(missing_ok=True)
    env, ids = build_env(settings)
    runner: RolloutRunner | None = None
    try:
        model, tokenizer = load_policy(settings, env)
        runner = RolloutRunner(settings, env, tokenizer)
        dataset = Dataset.from_list([{"prompt": i} for i in ids])
        trainer = GRPOTrainer(model=model, reward_funcs=[rollout_reward],
                              args=grpo_config(settings), train_dataset=dataset,
                              processing_class=tokenizer, rollout_func=runner,
                              callbacks=[RewardCurve(runner, curve_path, echo)])  # fmt: skip
        trainer.train()
        trainer.save_model(str(out))
        tokenizer.save_pretrained(str(out))
    finally:
        if runner is not None:
            runner.close()
        env.close()
    curve = [json.loads(x) for x in curve_path.read_text().splitlines() if x.strip()]
    checkpoints = sorted((str(p) for p in out.glob("checkpoint-*")),
                         key=lambda p: int(p.rsplit("-", 1)[-1]))  # fmt: skip
    return {"output_dir": str(out), "steps": trainer.state.global_step, "curve": curve,
            "checkpoints": checkpoints, "log_history": trainer.state.log_history}  # fmt: skip
