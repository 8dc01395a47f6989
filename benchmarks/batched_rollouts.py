"""Batched against sequential GRPO rollouts on the CPU with the tiny model: rollouts per second.

Both paths are ``travelgym train grpo``'s own (:class:`~travelgym.training.grpo.RolloutRunner`:
``rollouts="sequential"`` plays one rollout after another with ``generate_ids``;
``rollouts="batched"`` advances them in lockstep with one batched generation a turn, each
context's KV cache kept across turns: ``HFBatchGenerator``),
with the same settings in one run: Behavior2Trip easy train instances, the compact prompt, a
group of ``--group`` rollouts per instance, ``--prompts`` instances a step, sampled at
``--temperature`` (GRPO's default 1.0). Each path runs ``--repeats`` times, alternating, after
one warm-up step each; the figure is the ratio of the medians. That both paths give the same
tokens, masks and rewards under greedy decoding is tests/training/test_batched_rollout.py's job.

    python benchmarks/batched_rollouts.py [--group 8] [--prompts 1] [--max-new-tokens 48]
        [--max-turns 3] [--repeats 3] [--threads 1] [--out FILE.json]

Not a test: timings depend on the machine (figures in docs/benchmarks.md).
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


def main() -> None:
    """Run both paths, print the table, optionally write the JSON."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--group", type=int, default=8)
    ap.add_argument("--prompts", type=int, default=1)
    ap.add_argument("--max-new-tokens", type=int, default=48)
    ap.add_argument("--max-turns", type=int, default=3)
    ap.add_argument("--temperature", type=float, default=1.0)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--work", type=Path, default=Path("runs/bench-batched"))
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch

    from travelgym.training.grpo import RolloutRunner, build_env, load_policy
    from travelgym.training.grpo_config import GRPOSettings

    torch.set_num_threads(args.threads)
    settings = GRPOSettings(suite="behavior2trip", model="tiny", output_dir=args.work,
                            difficulty="easy", limit=max(args.prompts, 1),
                            num_generations=args.group, max_turns=args.max_turns,
                            max_new_tokens=args.max_new_tokens, max_completion_length=8000,
                            prompt="compact", temperature=args.temperature,
                            seed=0)  # fmt: skip
    env, ids = build_env(settings)
    model, tokenizer = load_policy(settings, env)
    model = model.float().eval()
    items = [ids[i % len(ids)] for i in range(args.prompts) for _ in range(args.group)]
    runners = {m: RolloutRunner(settings.model_copy(update={"rollouts": m}), env, tokenizer)
               for m in ("sequential", "batched")}  # fmt: skip

    def step(mode: str) -> tuple[float, list]:
        runner = runners[mode]
        runner.count = 0  # the same environment seeds in both paths
        torch.manual_seed(0)
        tick = time.perf_counter()
        with torch.no_grad():
            if mode == "batched":
                rollouts = runner.batch(model, items)
            else:
                rollouts = [runner.rollout(model, i) for i in items]
        return time.perf_counter() - tick, rollouts

    for mode in runners:  # warm-up (and the batched path's environments)
        step(mode)
    times: dict[str, list[float]] = {m: [] for m in runners}
    results: dict[str, list] = {}
    for _ in range(args.repeats):
        for mode in runners:
            seconds, results[mode] = step(mode)
            times[mode].append(seconds)
    n = len(items)
    rate = {m: n / statistics.median(t) for m, t in times.items()}
    ratio = rate["batched"] / rate["sequential"]
    rollouts = results["batched"]
    row = {"group": args.group, "prompts": args.prompts, "rollouts_per_step": n,
           "max_new_tokens": args.max_new_tokens, "max_turns": args.max_turns,
           "temperature": args.temperature, "threads": args.threads, "repeats": args.repeats,
           "seconds": {m: [round(x, 3) for x in t] for m, t in times.items()},
           "rollouts_per_s": {m: round(r, 3) for m, r in rate.items()},
           "speedup": round(ratio, 2),
           "mean_turns": statistics.fmean(r.turns for r in rollouts),
           "mean_prompt_tokens": statistics.fmean(len(r.prompt_ids) for r in rollouts),
           "mean_model_tokens": statistics.fmean(r.model_tokens for r in rollouts),
           "cpu": platform.processor() or platform.machine(), "cores": os.cpu_count(),
           "torch": torch.__version__}  # fmt: skip
    for runner in runners.values():
        runner.close()
    env.close()
    print(f"{'path':<12}{'rollouts/s':>12}{'median s':>10}")
    for mode, t in times.items():
        print(f"{mode:<12}{rate[mode]:>12.3f}{statistics.median(t):>10.2f}")
    print(f"speedup {ratio:.2f}x")
    if args.out:
        args.out.write_text(json.dumps(row, indent=2))
    json.dump(row, sys.stdout)
    print()


if __name__ == "__main__":
    main()
