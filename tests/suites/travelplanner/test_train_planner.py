"""``travelgym train grpo --suite travelplanner --model tiny`` runs a GRPO step on the ingested
train split (the tiny model's plans are rewarded by the constraint verdicts), and the rewards
of hand-made scores."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.training.support import light_env, need_train_extra
from travelgym.suites.travelplanner.ingest import ingest
from travelgym.suites.travelplanner.training import format_reward, planner_reward, sft_keep


def test_rewards_follow_the_verdicts():
    assert planner_reward(None).total == 0.0
    assert planner_reward({"delivered": False}).total == 0.0
    all_pass = {"delivered": True, "commonsense": dict.fromkeys("abcdefgh", True),
                "hard": {"budget": True, "cuisine": None}, "hard_applicable": ["budget"],
                "final": True}  # fmt: skip
    assert planner_reward(all_pass).total == 1.0
    gated = {**all_pass, "commonsense": {**all_pass["commonsense"], "a": False}, "hard": {},
             "final": False}  # fmt: skip
    assert planner_reward(gated).total == pytest.approx(0.5 * 7 / 8)
    assert format_reward({"score": gated}) == 1.0 and format_reward({"score": None}) == 0.0
    assert sft_keep({"score": all_pass}, 1.0) is None
    assert sft_keep({"score": gated}, 1.0) == "below_min_score"


@pytest.mark.slow
@pytest.mark.train
def test_train_grpo_travelplanner_tiny_runs_a_step(tp_suite_data, tmp_path):
    need_train_extra()
    dataset, database = tp_suite_data
    data_dir = tmp_path / "data"
    ingest(dataset, database, data_dir)
    out = tmp_path / "grpo"
    proc = subprocess.run(
        [sys.executable, "-m", "travelgym.cli", "train", "grpo", "--suite", "travelplanner",
         "--model", "tiny", "--max-steps", "1", "--num-generations", "2", "--limit", "1",
         "--max-turns", "2", "--max-new-tokens", "16", "--max-completion-length", "512",
         "--data-dir", str(data_dir), "--output-dir", str(out), "--json"],
        capture_output=True, text=True, timeout=900, env=light_env(),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    curve = [json.loads(x) for x in (out / "reward_curve.jsonl").read_text().splitlines()]
    assert len(curve) == 1 and curve[0]["n"] == 2 and curve[0]["items"] == ["train-1"]
    assert all(0.0 <= r <= 1.0 for r in curve[0]["rewards"])
    assert (out / "config.json").exists()
    # RQ4's path: the trained checkpoint is evaluated by the runner as an agent of this suite
    runs = tmp_path / "runs"
    evaluated = subprocess.run(
        [sys.executable, "-m", "travelgym.cli", "run", "travelplanner", "--agent", f"hf:{out}",
         "--split", "train", "--limit", "1", "--max-steps", "2", "--data-dir", str(data_dir),
         "--out", str(runs), "--no-progress", "--json"],
        capture_output=True, text=True, timeout=900, env=light_env(),
    )  # fmt: skip
    assert evaluated.returncode == 0, evaluated.stderr[-3000:]
    (run_dir,) = [p for p in runs.iterdir() if p.is_dir()]
    (episode,) = [json.loads(x) for x in (run_dir / "episodes.jsonl").read_text().splitlines()]
    assert str(out) in episode["agent"] and episode["error"] is None
    assert episode["llm_calls"] >= 1 and episode["score"] is not None
