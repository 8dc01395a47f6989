"""``travelgym train`` without running a trainer: the settings files and flags, clear errors for
bad configs and a missing extra, and the benchmark staying free of torch."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.util import find_spec

import pytest
from click.testing import CliRunner

from travelgym.cli import main
from travelgym.training import extras
from travelgym.training.grpo_config import GRPOSettings, SettingsError, load_settings

HEAVY = ("torch", "transformers", "trl", "datasets", "accelerate", "tokenizers")


def test_light_imports_do_not_load_torch():
    code = ("import sys, travelgym, travelgym.cli, travelgym.training.rewards, "
            "travelgym.suites.behavior2trip.environment, travelgym.suites.compass.environment, "
            "travelgym.suites.travelplanner.environment, travelgym.toolkit.signature, "
            "travelgym.training.rollout, travelgym.training.trl_env, "
            "travelgym.training.grpo_config, travelgym.cli.train, "
            "travelgym.llm.hf_client, travelgym.llm.factory, travelgym.runner.specs, "
            f"travelgym.suites.behavior2trip.suite; print([m for m in {HEAVY!r} if m in sys.modules])")  # fmt: skip
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_settings_from_json_yaml_toml_and_overrides(tmp_path):
    values = {"suite": "behavior2trip", "model": "tiny", "num_generations": 2, "beta": 0.04,
              "difficulty": "easy", "no_memory": True}  # fmt: skip
    (tmp_path / "a.json").write_text(json.dumps(values))
    (tmp_path / "a.yaml").write_text("\n".join(f"{k}: {str(v).lower() if isinstance(v, bool) else v}"
                                               for k, v in values.items()))  # fmt: skip
    toml = "\n".join(f"{k} = {json.dumps(v)}" for k, v in values.items())
    (tmp_path / "a.toml").write_text(toml)
    (tmp_path / "b.toml").write_text("[grpo]\n" + toml)
    names = ["a.json", "a.toml", "b.toml"] + (["a.yaml"] if find_spec("yaml") else [])
    loaded = [load_settings(tmp_path / n) for n in names]
    assert all(s == loaded[0] for s in loaded)
    assert loaded[0].beta == 0.04 and loaded[0].no_memory and loaded[0].batch_size == 2
    assert load_settings(tmp_path / "a.json", beta=0.0, max_steps=3).model_dump() == {
        **loaded[0].model_dump(), "beta": 0.0, "max_steps": 3}  # fmt: skip
    assert load_settings() == GRPOSettings()


@pytest.mark.parametrize("name, text, message", [
    ("x.json", '{"num_generations": 1}', "num_generations"),
    ("x.json", '{"nope": 1}', "nope: Extra inputs"),
    ("x.json", '{"suite": "compass", "no_penalty": true}', "not for compass"),
    ("x.json", '{"suite": "behavior2trip", "level": 2}', "not for behavior2trip"),
    ("x.json", '{"suite": "nope"}', "unknown suite 'nope'"),
    ("x.json", '{"num_generations": 4, "per_device_batch_size": 6}', "multiple of"),
    ("x.json", "{not json", "not valid JSON"),
    ("x.toml", "a = ", "not valid TOML"),
    ("x.json", "[1, 2]", "must be a mapping"),
    ("x.ini", "[a]", "unknown config format"),
    # the directories training writes: "" was the current directory, a bad place failed late
    ("x.json", '{"output_dir": ""}', "output_dir: an empty path"),
    ("x.json", '{"data_dir": " "}', "data_dir: an empty path"),
    ("x.json", '{"output_dir": "/proc/travelgym/x"}', "output_dir: cannot create"),
    ("x.json", '{"data_dir": "/dev/null"}', "data_dir: /dev/null is a character device"),
])  # fmt: skip
def test_bad_settings_are_clear_errors(tmp_path, name, text, message):
    (tmp_path / name).write_text(text)
    with pytest.raises(SettingsError, match=message):
        load_settings(tmp_path / name)
    result = CliRunner().invoke(main, ["train", "grpo", "--config", str(tmp_path / name)])
    assert result.exit_code == 1 and "Error:" in result.output and message.split(":")[0] in (
        result.output)  # fmt: skip


def test_missing_config_and_missing_extra(tmp_path, monkeypatch, trips_database):
    result = CliRunner().invoke(main, ["train", "grpo", "--config", str(tmp_path / "none.json")])
    assert result.exit_code == 2 and "none.json' does not exist" in result.output
    monkeypatch.setattr(extras, "missing_modules", lambda modules=(): ["trl"])
    result = CliRunner().invoke(main, ["train", "grpo", "--max-steps", "1"])
    assert result.exit_code == 1
    assert "pip install 'travelgym[train]'" in result.output and "trl" in result.output
    data = tmp_path / "data.jsonl"
    data.write_text(json.dumps({"messages": [{"role": "user", "content": "hi"},
                                             {"role": "assistant", "content": "hello"}]}) + "\n")  # fmt: skip
    result = CliRunner().invoke(main, ["train", "sft", str(data), "--model", "tiny",
                                       "--output-dir", str(tmp_path / "out")])  # fmt: skip
    assert result.exit_code == 1 and "pip install 'travelgym[train]'" in result.output
    checkpoint = tmp_path / "ckpt"
    checkpoint.mkdir()
    (checkpoint / "config.json").write_text("{}")
    result = CliRunner().invoke(main, ["run", "behavior2trip", "--agent", f"hf:{checkpoint}",
                                       "--limit", "1", "--no-progress",
                                       "--data-dir", str(trips_database.path.parent.parent),
                                       "--out", str(tmp_path / "runs")])  # fmt: skip
    assert result.exit_code == 1 and "needs the train extra" in result.output


def test_bad_sft_data(tmp_path):
    data = tmp_path / "data.jsonl"
    data.write_text('{"messages": []}\n')
    result = CliRunner().invoke(main, ["train", "sft", str(data), "--model", "tiny",
                                       "--output-dir", str(tmp_path / "out")])  # fmt: skip
    assert result.exit_code == 1 and "data.jsonl:1: no messages" in result.output
    data.write_text("not json\n")
    result = CliRunner().invoke(main, ["train", "sft", str(data), "--model", "tiny",
                                       "--output-dir", str(tmp_path / "out")])  # fmt: skip
    assert result.exit_code == 1 and "data.jsonl:1: not valid JSON" in result.output


@pytest.mark.parametrize("values, message", [
    ({"vllm_mode": "colocate"}, "vllm_mode needs rollouts: batched"),
    ({"vllm_mode": "server", "rollouts": "batched", "model": "smollm2"}, "checkpoint directory"),
    ({"vllm_server_base_url": "http://h:8000"}, "vllm_server_base_url: vLLM settings, need vllm_mode"),
    ({"vllm_mode": "colocate", "rollouts": "batched", "vllm_server_base_url": "http://h:8000"},
     "vllm_server_base_url: for vllm_mode server, not colocate"),
    ({"vllm_mode": "server", "rollouts": "batched", "vllm_gpu_memory_utilization": 0.5},
     "vllm_gpu_memory_utilization: for vllm_mode colocate, not server"),
    ({"vllm_mode": "colocate", "rollouts": "batched", "vllm_gpu_memory_utilization": 1.5},
     "vllm_gpu_memory_utilization"),
    ({"vllm_mode": "cuda", "rollouts": "batched"}, "vllm_mode"),
])  # fmt: skip
def test_vllm_settings_are_checked(values, message):
    with pytest.raises(SettingsError, match=message):
        load_settings(**values)


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:.*(gradient|activation)_checkpointing.*:FutureWarning")
def test_vllm_settings_reach_trls_config(tmp_path):
    from tests.training.support import need_train_extra

    need_train_extra()
    from travelgym.training.grpo import grpo_config

    assert not grpo_config(GRPOSettings(output_dir=tmp_path)).use_vllm
    config = grpo_config(load_settings(output_dir=tmp_path, rollouts="batched",
                                       vllm_mode="colocate", vllm_gpu_memory_utilization=0.45,
                                       vllm_max_model_length=20000))  # fmt: skip
    assert (config.use_vllm, config.vllm_mode, config.vllm_gpu_memory_utilization,
            config.vllm_max_model_length) == (True, "colocate", 0.45, 20000)  # fmt: skip
    config = grpo_config(load_settings(output_dir=tmp_path, rollouts="batched",
                                       vllm_mode="server", vllm_server_base_url="http://h:8001"))  # fmt: skip
    assert (config.use_vllm, config.vllm_mode, config.vllm_server_base_url) == (
        True, "server", "http://h:8001")  # fmt: skip
    assert config.vllm_gpu_memory_utilization == 0.3  # TRL's default, untouched


def test_vllm_mode_without_vllm_fails_fast(monkeypatch, tmp_path):
    """One clear line, before any environment or model is built."""
    import importlib.util

    from tests.training.support import need_train_extra

    need_train_extra()  # without it, train grpo stops earlier: the train extra is named instead

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "vllm" else real(name, *a))  # fmt: skip
    args = ["train", "grpo", "--vllm-mode", "colocate", "--rollouts", "batched",
            "--output-dir", str(tmp_path / "out")]  # fmt: skip
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert lines == ["Error: vLLM generation needs the vllm package and a CUDA GPU; vllm is not "
                     "installed (pip install vllm on a GPU machine, or leave --vllm-mode unset)"]  # fmt: skip
    assert not (tmp_path / "out").exists()  # nothing was written, no model loaded
    # vllm importable but no CUDA device
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: object() if name == "vllm" else real(name, *a))  # fmt: skip
    if not extras.missing_modules(("torch",)):
        import torch

        monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 1 and "torch sees no CUDA device" in result.output
    result = CliRunner().invoke(main, ["train", "grpo", "--vllm-mode", "server"])
    assert result.exit_code == 1 and "vllm_mode needs rollouts: batched" in result.output


def test_suite_training_flags_come_from_the_suites():
    """``train grpo``'s --level, --user, --user-turns, --difficulty and --scale are the suites'
    ``TrainingOptions`` flags, in each suite's help section; cli/train.py names none."""
    import importlib
    from pathlib import Path

    from travelgym.core.options import declared_flags
    from travelgym.core.registry import all_suites

    declared = {name: suite.name for suite in all_suites()
                if suite.TrainingOptions is not None
                for name in declared_flags(suite.TrainingOptions)}  # fmt: skip
    assert {"level", "user", "user_turns", "difficulty", "scale"} <= set(declared)
    source = Path(importlib.import_module("travelgym.cli.train").__file__).read_text()
    for name in declared:
        assert f'"--{name.replace("_", "-")}"' not in source
    help_text = CliRunner().invoke(main, ["train", "grpo", "--help"]).output
    compass = help_text[help_text.index("compass options") :]
    assert "--level" in compass and "--user-turns" in compass
    assert "--difficulty" in help_text[help_text.index("behavior2trip") :]


def test_suite_training_options_are_read_by_the_chosen_suite(tmp_path):
    settings = load_settings(suite="compass", level=2, user_turns=3)
    assert (settings.suite_options.level, settings.suite_options.user_turns) == (2, 3)
    assert settings.options == {"level": 2, "user_turns": 3}
    # a settings file may nest them, and a flag overrides the file's value
    (tmp_path / "c.json").write_text(json.dumps({"suite": "compass", "options": {"level": 1}}))
    assert load_settings(tmp_path / "c.json", level=3).suite_options.level == 3
    # the name settings files used before (db_scale) still reads
    assert load_settings(suite="behavior2trip", db_scale="full").suite_options.scale == "full"
    for values, message in (({"suite": "compass", "level": 9}, "level: Input should be less"),
                            ({"suite": "behavior2trip", "user_turns": 2},
                             "user_turns=2: COMPASS settings, not for behavior2trip"),
                            ({"suite": "compass", "options": {"nope": 1}},
                             "compass has no training option 'nope'")):  # fmt: skip
        with pytest.raises(SettingsError, match=message):
            load_settings(**values)


@pytest.mark.parametrize("args, message", [
    (["--suite", "behavior2trip", "--level", "2"], "--level applies to compass only"),
    (["--suite", "compass", "--difficulty", "easy"], "--difficulty applies to"),
    (["--suite", "compass", "--level", "7"], "--level"),
])  # fmt: skip
def test_a_suite_training_flag_for_another_suite_is_a_usage_error(args, message):
    result = CliRunner().invoke(main, ["train", "grpo", *args])
    assert result.exit_code == 2 and message in result.output


@pytest.mark.parametrize("command", ["grpo", "sft"])
@pytest.mark.parametrize("model", ["", "/nonexistent/checkpoint", "not-a-model"])
def test_a_model_that_names_none_is_one_line_before_anything_is_written(tmp_path, command,
                                                                        model):  # fmt: skip
    """``--model ''`` (or a missing path) ended in a traceback after the settings file was
    written into the output directory."""
    out = tmp_path / "out"
    data = tmp_path / "data.jsonl"
    data.write_text(json.dumps({"messages": [{"role": "user", "content": "hi"},
                                             {"role": "assistant", "content": "x"}]}) + "\n")  # fmt: skip
    args = ["train", command, *([str(data)] if command == "sft" else []), "--model", model,
            "--output-dir", str(out)]  # fmt: skip
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1, result.output
    assert "not a checkpoint directory" in result.output and "Traceback" not in result.output
    assert not out.exists()
