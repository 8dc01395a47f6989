"""``travelgym train``: GRPO and SFT on the environments (registered by ``travelgym.cli``).

Both commands need the ``train`` extra; the trainers are imported only when a command runs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource

from travelgym.cli.common import data_dir_option, int_option, json_option, suite_flags
from travelgym.clikit import (
    FiniteFloat,
    FiniteFloatRange,
    GuardedGroup,
    InputPath,
    OutputPath,
    RuledCommand,
)
from travelgym.training.base import training_suite_names
from travelgym.training.grpo_config import GRPOSettings, default_suite, setting_owners

# GRPO settings that a flag of the same name (dashes for underscores) overrides; the other
# flags are the suites' own (their ``TrainingOptions``)
_GRPO_FIELDS = frozenset(GRPOSettings.model_fields) - {"options"}


def _owners(setting: str, attr: str = "name") -> str:
    """The suites that read a suite-specific GRPO setting, for its help (names or titles)."""
    return " and ".join(getattr(s, attr) for s in setting_owners(setting))


def _need_extra(what: str) -> None:
    from travelgym.training.extras import MissingExtraError, require_train_extra

    try:
        require_train_extra(what=what)
    except MissingExtraError as exc:
        raise click.ClickException(str(exc)) from None


def _given(ctx: click.Context, name: str) -> bool:
    return ctx.get_parameter_source(name) in (ParameterSource.COMMANDLINE,
                                              ParameterSource.ENVIRONMENT)  # fmt: skip


def _check_model(model: str) -> None:
    """Refuse a ``--model`` that names no model before anything is written or loaded."""
    if model != "tiny":
        from travelgym.llm.hf_client import resolve_checkpoint

        resolve_checkpoint(model)


@click.group(cls=GuardedGroup)
def train() -> None:
    """Train models on the environments (needs: pip install 'travelgym[train]')."""


@train.command("grpo", cls=RuledCommand)
@suite_flags("grpo")
@click.option("--config", "config", type=InputPath(), default=None,
              help="Settings file (.json, .yaml, .toml); flags override it.")  # fmt: skip
@click.option("--suite", type=click.Choice(training_suite_names()), default=default_suite(),
              show_default=True)  # fmt: skip
@click.option("--model", default="tiny", show_default=True,
              help="A checkpoint directory, smollm2 (GGUF, needs gguf) or tiny (random, built).")  # fmt: skip
@click.option("--output-dir", type=OutputPath("dir"), default=None,
              help="Where the model, checkpoints and log go.  [default: runs/grpo]")  # fmt: skip
@click.option("--split", type=click.Choice(["train", "test"]), default="train", show_default=True)
@int_option("--limit", at_least=1, help="First N instances/tasks.")
@int_option("--db-seed", at_least=0, default=0, help="Seed of the generated database.")
@data_dir_option
@int_option("--num-generations", at_least=2, default=4, help="GRPO group size.")
@int_option("--per-device-batch-size", at_least=1,
            help="Rollouts per device per step (default: the group size).")  # fmt: skip
@click.option("--gradient-accumulation-steps", type=click.IntRange(min=1), default=1)
@click.option("--beta", type=FiniteFloat(), default=0.0, show_default=True, help="KL coefficient.")
@click.option("--epsilon", type=FiniteFloat(), default=0.2, show_default=True, help="Clip range.")
@click.option("--loss-type", default="grpo", show_default=True, help="TRL loss type.")
@click.option("--learning-rate", type=FiniteFloat(), default=1e-6, show_default=True)
@int_option("--max-steps", at_least=1, default=10)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--temperature", type=FiniteFloat(), default=1.0, show_default=True)
@int_option("--max-turns", at_least=1, default=8, help="Model messages per episode.")
@int_option("--max-new-tokens", at_least=1, default=256, help="Tokens per model message.")
@int_option("--max-completion-length", at_least=8, default=4096,
            help="Model and environment tokens per episode.")  # fmt: skip
@click.option("--reward", type=click.Choice(["full", "format"]), default="full", show_default=True,
              help=f"format: the {_owners('reward', 'title')} warm-up reward (action syntax only).")  # fmt: skip
@click.option("--prompt", type=click.Choice(["full", "compact"]), default="full",
              show_default=True, help="compact: a short B2T prompt for small models.")  # fmt: skip
@click.option("--assistant-prefix", default="", help="Text opening every assistant turn.")
@click.option("--rollouts", type=click.Choice(["sequential", "batched"]), default="sequential",
              show_default=True,
              help="batched: a step's rollouts in lockstep, one batched generate a turn.")  # fmt: skip
@click.option("--vllm-mode", type=click.Choice(["colocate", "server"]), default=None,
              help="Generate with vLLM through TRL (GPU, needs vllm and --rollouts batched): "
                   "colocate in each training process, or server (trl vllm-serve). Untested.")  # fmt: skip
@click.option("--vllm-server-base-url", default=None,
              help="vllm-mode server: the server's URL (default http://0.0.0.0:8000).")  # fmt: skip
@click.option("--vllm-gpu-memory-utilization", type=FiniteFloatRange(0, 1, min_open=True),
              default=None, help="vllm-mode colocate: vLLM's share of GPU memory (TRL: 0.3).")  # fmt: skip
@int_option("--vllm-max-model-length", at_least=8,
            help="vllm-mode colocate: vLLM's context length (default: the model's).")  # fmt: skip
@click.option("--no-memory", is_flag=True,
              help=f"Ablation: no memory module ({_owners('no_memory')}).")  # fmt: skip
@click.option("--no-penalty", is_flag=True,
              help=f"Ablation: no P_action ({_owners('no_penalty')}).")  # fmt: skip
@click.option("--no-loss-mask", is_flag=True, help="Ablation: train on environment tokens too.")
@int_option("--save-steps", at_least=1, default=50)
@int_option("--logging-steps", at_least=1, default=1)
@click.option("--bf16", is_flag=True, help="bfloat16 mixed precision.")
@int_option("--torch-threads", at_least=1, help="torch CPU threads.")
@json_option("Print the result as JSON.")
@click.option(
    "--unsafe-sandbox",
    is_flag=True,
    help="Where bubblewrap cannot run, run the Python tool's code WITHOUT a sandbox.",
)
@click.pass_context
def grpo_cmd(ctx: click.Context, config: Path | None, as_json: bool, unsafe_sandbox: bool,
             **options: Any) -> None:  # fmt: skip
    """GRPO on one suite with TRL (multi-turn rollouts, B2T loss mask, reward curve).

    Rollouts call the tools for real: the Python tool's code runs in the same sandbox as in
    evaluation, and refuses (a tool error naming bubblewrap) where there is none."""
    from travelgym import sandbox
    from travelgym.training.grpo_config import SettingsError, load_settings

    sandbox.allow_unsafe(unsafe_sandbox)
    overrides = {k: v for k, v in options.items() if k in _GRPO_FIELDS and _given(ctx, k)}
    # the suites' own training flags (``TrainingOptions``), given: read by the chosen suite
    overrides.update({k: v for k, v in options.items() if k not in _GRPO_FIELDS and v is not None})
    try:
        settings = load_settings(config, **overrides)
    except SettingsError as exc:
        raise click.ClickException(str(exc)) from None
    _check_model(settings.model)
    _need_extra("travelgym train grpo")
    if settings.vllm_mode is not None:  # before any model is loaded
        from travelgym.training.vllm_rollout import require_vllm

        try:
            require_vllm()
        except RuntimeError as exc:
            raise click.ClickException(str(exc)) from None
    from travelgym.training.grpo import train_grpo

    result = train_grpo(settings, echo=not as_json)
    if as_json:
        click.echo(json.dumps(result, indent=2))
        return
    means = " ".join(f"{row['mean_reward']:.3f}" for row in result["curve"])
    click.echo(f"{result['steps']} GRPO steps; mean reward by step: {means or '-'}")
    click.echo(f"model in {result['output_dir']} (evaluate: --agent hf:{result['output_dir']})")


@train.command("sft")
@click.argument("data", type=InputPath())
@click.option("--model", required=True, help="A checkpoint directory, smollm2 or tiny.")
@click.option("--output-dir", type=OutputPath("dir"), required=True)
@click.option("--max-steps", type=int, default=-1, show_default=True,
              help="Optimizer steps (-1: --epochs).")  # fmt: skip
@click.option("--epochs", type=FiniteFloat(), default=1.0, show_default=True)
@click.option("--learning-rate", type=FiniteFloat(), default=2e-5, show_default=True)
@int_option("--batch-size", at_least=1, default=1)
@int_option("--max-length", at_least=8, default=4096)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--tools", type=click.Choice(["prompted", "native"]), default="prompted",
              show_default=True,
              help="prompted: tool calls as text, as hf: and GRPO use; native: the chat template's.")  # fmt: skip
@int_option("--torch-threads", at_least=1)
@json_option("Print the result as JSON.")
def sft_cmd(data: Path, model: str, output_dir: Path, max_steps: int, epochs: float,
            learning_rate: float, batch_size: int, max_length: int, seed: int, tools: str,
            torch_threads: int | None, as_json: bool) -> None:  # fmt: skip
    """Fine-tune on DATA (the JSONL of `travelgym export sft --format openai`) with TRL."""
    from travelgym.training.sft_train import SFTDataError, read_examples

    try:
        read_examples(data)  # bad data fails before the heavy imports
    except SFTDataError as exc:
        raise click.ClickException(str(exc)) from None
    _check_model(model)
    _need_extra("travelgym train sft")
    from travelgym.training.sft_train import train_sft

    result = train_sft(data, model, output_dir, max_steps=max_steps, epochs=epochs,
                       learning_rate=learning_rate, batch_size=batch_size, max_length=max_length,
                       seed=seed, tools=tools, torch_threads=torch_threads)  # fmt: skip
    if as_json:
        click.echo(json.dumps(result, indent=2))
        return
    click.echo(f"{result['steps']} SFT steps on {result['examples']} examples, loss "
               f"{result['train_loss']:.4f}; model in {result['output_dir']}")  # fmt: skip
