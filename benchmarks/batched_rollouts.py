"""Batched against sequential GRPO rollouts (tiny or ~100M random Llama, CPU or GPU): rollouts per second.

Both paths are ``travelgym train grpo``'s own (:class:`~travelgym.training.grpo.RolloutRunner`:
``rollouts="sequential"`` plays one rollout after another with ``generate_ids``;
``rollouts="batched"`` advances them in lockstep with one batched generation a turn, each
context's KV cache kept across turns: ``HFBatchGenerator``),
with the same settings in one run: Behavior2Trip easy train instances, the compact prompt, a
group of ``--group`` rollouts per instance, ``--prompts`` instances a step, sampled at
``--temperature`` (GRPO's default 1.0). Each path runs ``--repeats`` times, alternating, after
one warm-up step each; the figure is the ratio of the medians. That both paths give the same
tokens, masks and rewards under greedy decoding is tests/training/test_batched_rollout.py's job.

``--model-size``: ``tiny`` (GRPO's ``--model tiny``: hidden 64, 2 layers) or ``100m`` (the same
offline construction, a locally trained tokenizer and a randomly initialised Llama, at hidden
768, 16 layers, 12 heads: about 98M parameters), so that a GPU figure means something.
``--device``: ``auto`` (CUDA when torch sees it, else the CPU), ``cpu`` or ``cuda``;
``--dtype``: the policy's weights (``float32``, as GRPO without ``--bf16``, or ``bfloat16``).

    python benchmarks/batched_rollouts.py [--group 8] [--prompts 1] [--max-new-tokens 48]
        [--max-turns 3] [--repeats 3] [--threads 1] [--model-size tiny|100m]
        [--device auto|cpu|cuda] [--dtype float32|bfloat16] [--out FILE.json]

Not a test: timings depend on the machine (figures in docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

# --model-size: build_tiny_model's shape arguments (tiny: its defaults, GRPO's --model tiny)
SIZES = {"tiny": {}, "100m": {"hidden_size": 768, "num_layers": 16, "num_heads": 12}}


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
    ap.add_argument("--model-size", choices=sorted(SIZES), default="tiny")
    ap.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto")
    ap.add_argument("--dtype", choices=["float32", "bfloat16"], default="float32")
    ap.add_argument("--work", type=Path, default=Path("runs/bench-batched"))
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch

    from travelgym.llm.hf_client import load_model_and_tokenizer
    from travelgym.training.grpo import RolloutRunner, _sample_texts, build_env, load_policy
    from travelgym.training.grpo_config import GRPOSettings
    from travelgym.training.tiny import build_tiny_model

    torch.set_num_threads(args.threads)
    device = args.device
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    elif device == "cuda" and not torch.cuda.is_available():
        sys.exit("--device cuda: torch sees no CUDA device")
    settings = GRPOSettings(suite="behavior2trip", model="tiny", output_dir=args.work,
                            difficulty="easy", limit=max(args.prompts, 1),
                            num_generations=args.group, max_turns=args.max_turns,
                            max_new_tokens=args.max_new_tokens, max_completion_length=8000,
                            prompt="compact", temperature=args.temperature,
                            seed=0)  # fmt: skip
    env, ids = build_env(settings)
    if args.model_size == "tiny":
        model, tokenizer = load_policy(settings, env)
    else:  # the same construction (tokenizer, seed) at another shape, in a folder of its own
        init = build_tiny_model(args.work / f"init-{args.model_size}", seed=settings.seed,
                                extra_texts=_sample_texts(env),
                                **SIZES[args.model_size])  # fmt: skip
        model, tokenizer = load_model_and_tokenizer(str(init))
    model = model.to(device=device, dtype=getattr(torch, args.dtype)).eval()
    params = sum(p.numel() for p in model.parameters())
    print(f"model {args.model_size}: {params / 1e6:.1f}M parameters, {args.dtype} on {device}",
          file=sys.stderr, flush=True)  # fmt: skip
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
        if device == "cuda":
            torch.cuda.synchronize()
        return time.perf_counter() - tick, rollouts

    for mode in runners:  # warm-up (and the batched path's environments)
        step(mode)
    if device == "cuda":
        torch.cuda.reset_peak_memory_stats()
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
           "model_size": args.model_size, "parameters": params, "dtype": args.dtype,
           "device": device,
           "gpu": torch.cuda.get_device_name() if device == "cuda" else None,
           "peak_gpu_mib": (round(torch.cuda.max_memory_allocated() / 2**20)
                            if device == "cuda" else None),
           "cpu": platform.processor() or platform.machine(), "cores": os.cpu_count(),
           "torch": torch.__version__,
           "transformers": importlib.metadata.version("transformers")}  # fmt: skip
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
