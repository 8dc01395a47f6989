"""GRPO end to end on the CPU with the tiny model: a few TRL steps on Behavior2Trip and COMPASS
(small databases), checkpoints that ``travelgym run --agent hf:CKPT`` evaluates, the reward
curve, TRL's loss mask taken from the rollouts' ``env_mask``."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from tests.training.support import light_env, need_train_extra
from travelgym.cli import main
from travelgym.runner.store import EPISODES
from travelgym.suites.behavior2trip.instances import ensure_instances

pytestmark = [
    pytest.mark.train,
    pytest.mark.filterwarnings("ignore:.*(gradient|activation)_checkpointing.*:FutureWarning"),
]
MODEL_FILES = ("config.json", "model.safetensors", "tokenizer.json", "chat_template.jinja")


@pytest.fixture(scope="module", autouse=True)
def train_extra():
    need_train_extra()


@pytest.fixture(scope="module")
def trips_data(trips_database, trips_instances):
    data = trips_database.path.parent.parent
    ensure_instances(trips_database, data)
    return data


def episodes(run_dir) -> list[dict]:
    return [json.loads(x) for x in (run_dir / EPISODES).read_text().splitlines() if x.strip()]


def run_cli(*args: str) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "travelgym.cli", *args, "--no-progress"],
                          capture_output=True, text=True, timeout=600, env=light_env())  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


@pytest.fixture(scope="module")
def b2t_run(tmp_path_factory, trips_data):
    """Two GRPO steps on two easy Behavior2Trip instances, group size 2. The rewards are made
    to differ within each group (the random model's are all equal, so nothing would be
    learnt) to check that the learning signal reaches the weights."""
    import torch

    from travelgym.training import grpo
    from travelgym.training.grpo_config import GRPOSettings

    out = tmp_path_factory.mktemp("grpo") / "b2t"
    settings = GRPOSettings(suite="behavior2trip", model="tiny", output_dir=out,
                            data_dir=trips_data, difficulty="easy", limit=2, num_generations=2,
                            max_steps=2, max_turns=2, max_new_tokens=12,
                            max_completion_length=3000, learning_rate=1e-2, save_steps=1,
                            torch_threads=1)  # fmt: skip
    calls = iter(range(1000))
    original = grpo.RolloutRunner.reward
    grpo.RolloutRunner.reward = lambda self, rollout: original(self, rollout) + next(calls) % 2
    try:
        result = grpo.train_grpo(settings, echo=False)
    finally:
        grpo.RolloutRunner.reward = original
    torch.set_num_threads(1)
    return out, result


@pytest.mark.slow
def test_grpo_behavior2trip_steps_checkpoints_and_curve(b2t_run):
    from safetensors.torch import load_file

    out, result = b2t_run
    assert result["steps"] == 2
    assert [p.rsplit("/", 1)[-1] for p in result["checkpoints"]] == ["checkpoint-1", "checkpoint-2"]
    for directory in (out, out / "checkpoint-1", out / "checkpoint-2"):
        assert all((directory / f).exists() for f in MODEL_FILES), directory
    rows = [json.loads(x) for x in (out / "reward_curve.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == [1, 2] and rows == result["curve"]
    for row in rows:
        assert row["n"] == 2 and len(row["rewards"]) == 2 and len(row["items"]) == 1
        assert row["mean_reward"] == pytest.approx(sum(row["rewards"]) / 2)
        assert row["env_reward"] <= 0.0 and row["turns"] <= 2
        assert row["completion_tokens"] > row["model_tokens"] > 0  # environment tokens too
    # TRL counted only the model's tokens as completion: it took env_mask as its loss mask
    logged = [h for h in result["log_history"] if "completions/mean_length" in h]
    assert [h["completions/mean_length"] for h in logged] == [r["model_tokens"] for r in rows]
    assert all(h["reward_std"] > 0 for h in logged)
    before = load_file(out / "tiny-init" / "model.safetensors")
    after = load_file(out / "model.safetensors")
    assert any(not before[k].equal(after[k]) for k in before)  # the policy was updated
    settings = json.loads((out / "grpo_settings.json").read_text())
    assert settings["num_generations"] == 2 and settings["suite"] == "behavior2trip"


@pytest.mark.slow
def test_checkpoints_evaluate_with_the_runner(b2t_run, trips_data, compass_db, tmp_path):
    out, _ = b2t_run
    ckpt = out / "checkpoint-1"
    run_cli("run", "behavior2trip", "--agent", f"hf:{ckpt}", "--split", "train", "--difficulty",
            "easy", "--limit", "1", "--max-steps", "2", "--data-dir", str(trips_data), "--out",
            str(tmp_path / "b2t"))  # fmt: skip
    (episode,) = episodes(tmp_path / "b2t" / f"hf-{str(ckpt).replace('/', '_')}")
    assert episode["agent"] == f"b2t:hf:{ckpt}" and episode["error"] is None
    assert episode["llm_calls"] >= 1 and episode["usage"]["completion_tokens"] > 0
    assert episode["score"] is not None and episode["score"]["delivered"] is False
    run_cli("run", "compass", "--agent", f"hf:{out}", "--user", "template", "--limit", "1",
            "--max-turns", "2", "--data-dir", str(compass_db.parent.parent), "--out",
            str(tmp_path / "compass"))  # fmt: skip
    (episode,) = episodes(tmp_path / "compass" / f"hf-{str(out).replace('/', '_')}")
    assert episode["agent"] == f"hf:{out}" and episode["error"] is None
    assert any(m["role"] == "assistant" for m in episode["messages"])
    assert episode["score"] is not None and "feasible" in episode["score"]


@pytest.mark.slow
def test_grpo_compass_from_the_cli(tmp_path, compass_db, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    out = tmp_path / "compass"
    config = tmp_path / "grpo.json"
    config.write_text(json.dumps({
        "suite": "compass", "model": "tiny", "output_dir": str(out), "level": 1, "limit": 1,
        "data_dir": str(compass_db.parent.parent), "num_generations": 2, "max_steps": 5,
        "max_turns": 2, "user_turns": 1, "max_new_tokens": 10, "save_steps": 1,
        "torch_threads": 1}))  # fmt: skip
    result = CliRunner().invoke(main, ["train", "grpo", "--config", str(config), "--max-steps",
                                       "1", "--no-loss-mask"])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "1 GRPO steps" in result.output and f"hf:{out}" in result.output
    settings = json.loads((out / "grpo_settings.json").read_text())
    assert settings["max_steps"] == 1 and settings["no_loss_mask"] is True  # flags override
    assert settings["options"] == {"level": 1, "user_turns": 1}  # the suite's, from the file
    (row,) = [json.loads(x) for x in (out / "reward_curve.jsonl").read_text().splitlines()]
    assert row["n"] == 2 and row["rewards"] == [0.0, 0.0]  # a random model recommends nothing
    assert row["model_tokens"] == row["completion_tokens"]  # no loss mask: every token trained
    state = json.loads((out / "checkpoint-1" / "trainer_state.json").read_text())
    logged = next(h for h in state["log_history"] if "completions/mean_length" in h)
    assert logged["completions/mean_length"] == row["completion_tokens"]
    assert all((out / f).exists() for f in MODEL_FILES)
