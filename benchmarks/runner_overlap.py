"""How well the runner overlaps episodes: 32 LLM-agent episodes against a local fake
OpenAI-compatible endpoint with a fixed latency, run sequentially and concurrently.

Usage: python benchmarks/runner_overlap.py [--episodes 32] [--latency 0.25] [--json]
Target: concurrent at least 20x faster than sequential. Exits 1 when missed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # for tests.fakes

from tests.fakes.openai_server import Delay, FakeOpenAIServer, Reply  # noqa: E402

from travelgym.runner.batch import RunConfig, run_suite  # noqa: E402

TARGET = 20.0
ANSWER = json.dumps({"message": "How about this?", "recommendation": {"hotel": "pkg_1_1_2_1"}})


def run(episodes: int, concurrency: int, latency: float, data_dir: Path, out: Path) -> float:
    with FakeOpenAIServer(responder=lambda body: Delay(latency, Reply(content=ANSWER))) as server:
        cfg = RunConfig("compass", "llm:fake-model", out=out, limit=episodes,
                        concurrency=concurrency, base_url=server.base_url, data_dir=data_dir,
                        progress=False, options={"max_turns": 5},
                        client_options={"timeout_s": 30, "max_retries": 0})  # fmt: skip
        start = time.perf_counter()
        asyncio.run(run_suite(cfg))
        return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=32)
    parser.add_argument("--latency", type=float, default=0.25, help="seconds per model reply")
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        data_dir = args.data_dir or Path(tmp) / "data"
        run(1, 1, 0.0, data_dir, Path(tmp) / "warmup")  # builds data, warms caches
        sequential = run(args.episodes, 1, args.latency, data_dir, Path(tmp) / "seq")
        concurrent = run(args.episodes, args.episodes, args.latency, data_dir, Path(tmp) / "conc")
    result = {
        "episodes": args.episodes,
        "latency_s": args.latency,
        "sequential_s": round(sequential, 2),
        "concurrent_s": round(concurrent, 2),
        "speedup": round(sequential / concurrent, 1),
        "target": TARGET,
    }
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print("| episodes | latency per call | sequential | concurrent | speed-up |")
        print("| ---: | ---: | ---: | ---: | ---: |")
        print(
            f"| {args.episodes} | {args.latency:.2f} s | {sequential:.1f} s | {concurrent:.2f} s |"
            f" {result['speedup']}x |"
        )
    return 0 if result["speedup"] >= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
