"""``GRPOSettings``: everything ``travelgym train grpo`` needs, from a config file and flags.

A config file is JSON (``.json``), YAML (``.yaml``/``.yml``, needs PyYAML) or TOML (``.toml``)
holding a mapping of these fields (a TOML file may put them under a ``[grpo]`` table);
command-line flags override it. Unknown fields and bad values are errors that name the field.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)

from travelgym.training.base import training_suite_names, training_suites


def default_suite() -> str:
    """The suite ``travelgym train grpo`` trains when none is named: the one whose
    ``training_default`` is set (else the first installed suite that trains)."""
    chosen = [s.name for s in training_suites() if s.training_default]
    return (chosen or training_suite_names())[0]


def setting_owners(name: str) -> list[Any]:
    """The suites that read the suite-specific GRPO setting ``name`` (``training_settings``)."""
    return [s for s in training_suites() if name in s.training_settings]


def _option_names(model: Any) -> set[str]:
    """The names a ``TrainingOptions`` model takes: its fields and their aliases."""
    names = set(model.model_fields)
    for info in model.model_fields.values():
        alias = info.validation_alias
        names.update(getattr(alias, "choices", None) or ([alias] if isinstance(alias, str) else []))
    return names


def training_option_owners(name: str) -> list[Any]:
    """The suites whose ``TrainingOptions`` take the option ``name``."""
    return [s for s in training_suites()
            if s.TrainingOptions is not None and name in _option_names(s.TrainingOptions)]  # fmt: skip


# settings naming a directory: training writes the output directory and reads the data
# directory (building what is missing there: a read-only one of built data serves)
DIRECTORIES = ("output_dir", "data_dir")


class SettingsError(ValueError):
    """A config file that cannot be read, or settings that are not valid."""


class GRPOSettings(BaseModel):
    """GRPO on one suite; see ``docs/training/grpo.md`` for each field."""

    model_config = ConfigDict(extra="forbid")

    suite: str = Field(default_factory=default_suite)
    model: str = "tiny"  # a checkpoint directory, "smollm2" or "tiny"
    output_dir: Path = Path("runs/grpo")
    # instances / tasks
    split: Literal["train", "test"] = "train"
    limit: int | None = Field(default=None, ge=1)
    db_seed: int = Field(default=0, ge=0)
    data_dir: Path | None = None
    # the suite's own settings (its ``TrainingOptions``: which tasks, which user, the data's
    # scale), by name; given at the top level of a config or as flags, they are gathered here
    options: dict[str, Any] = Field(default_factory=dict)
    # GRPO
    num_generations: int = Field(default=4, ge=2)  # the group size
    per_device_batch_size: int | None = Field(default=None, ge=1)  # rollouts; default G
    gradient_accumulation_steps: int = Field(default=1, ge=1)
    beta: float = Field(default=0.0, ge=0.0)  # KL coefficient (0: no reference model)
    epsilon: float = Field(default=0.2, gt=0.0)  # clip range
    loss_type: str = "grpo"
    learning_rate: float = Field(default=1e-6, gt=0.0)
    max_steps: int = Field(default=10, ge=1)
    seed: int = 0
    temperature: float = Field(default=1.0, gt=0.0)
    # rollouts
    max_turns: int = Field(default=8, ge=1)  # model messages per episode
    max_new_tokens: int = Field(default=256, ge=1)  # per model message
    max_completion_length: int = Field(default=4096, ge=8)  # model + environment tokens
    reward: Literal["full", "format"] = "full"  # format: a suite's warm-up reward
    prompt: Literal["full", "compact"] = "full"  # compact: a suite's short prompt
    assistant_prefix: str = ""  # opens every assistant turn (e.g. "<think>")
    # batched: a step's rollouts in lockstep, one batched generate a turn (batched_rollout)
    rollouts: Literal["sequential", "batched"] = "sequential"
    # vLLM generation through TRL (vllm_rollout; None: transformers generate); names as TRL's
    vllm_mode: Literal["colocate", "server"] | None = None
    vllm_server_base_url: str | None = None  # server mode (TRL: host 0.0.0.0, port 8000)
    vllm_gpu_memory_utilization: float | None = Field(default=None, gt=0.0, le=1.0)  # colocate
    vllm_max_model_length: int | None = Field(default=None, ge=8)  # colocate
    # ablations (paper Table 4)
    no_memory: bool = False
    no_penalty: bool = False
    no_loss_mask: bool = False
    # bookkeeping
    save_steps: int = Field(default=50, ge=1)
    logging_steps: int = Field(default=1, ge=1)
    bf16: bool = False
    torch_threads: int | None = Field(default=None, ge=1)

    @field_validator("suite")
    @classmethod
    def _known_suite(cls, value: str) -> str:
        names = training_suite_names()
        if value not in names:
            raise ValueError(f"unknown suite {value!r}: use {' or '.join(names)}")
        return value

    _suite_options: Any = PrivateAttr(default=None)

    @model_validator(mode="before")
    @classmethod
    def _gather_suite_options(cls, data: Any) -> Any:
        """A suite's training option given at the top level (``level: 2``, ``--level 2``) goes
        to ``options`` (over the same name given there)."""
        if not isinstance(data, dict):
            return data
        moved = {k: v for k, v in data.items()
                 if k not in cls.model_fields and training_option_owners(k)}  # fmt: skip
        if not moved:
            return data
        rest = {k: v for k, v in data.items() if k not in moved}
        given = data.get("options")
        return {**rest, "options": {**(given if isinstance(given, dict) else {}), **moved}}

    @property
    def suite_options(self) -> Any:
        """The suite's ``TrainingOptions`` as set (``None`` for a suite without any)."""
        return self._suite_options

    def _read_suite_options(self) -> None:
        """Validate ``options`` with the suite's ``TrainingOptions``: an option of another suite
        is named with the suites that read it, a bad value with its field."""
        from travelgym.core.registry import get_suite

        model = get_suite(self.suite).TrainingOptions
        known = _option_names(model) if model is not None else set()
        for name, value in self.options.items():
            if name in known:
                continue
            owners = training_option_owners(name)
            if not owners:
                raise ValueError(f"options.{name}: {self.suite} has no training option {name!r}")
            titles = " and ".join(s.title for s in owners)
            shown = name if value is True else f"{name}={value}"
            raise ValueError(f"{shown}: {titles} settings, not for {self.suite}")
        if model is None:
            return
        try:
            self._suite_options = model(**self.options)
        except ValidationError as exc:
            first = exc.errors(include_url=False)[0]
            raise ValueError(f"{'.'.join(map(str, first['loc']))}: {first['msg']}") from None

    @model_validator(mode="after")
    def _check(self) -> GRPOSettings:
        self._read_suite_options()
        # a suite-specific setting (some suites' ``training_settings``) away from its default,
        # for a suite that does not read it, is an error rather than silently ignored
        used, owners = [], []
        for name, info in type(self).model_fields.items():
            found = setting_owners(name)
            if not found or any(s.name == self.suite for s in found):
                continue
            value, default = getattr(self, name), info.get_default(call_default_factory=True)
            if value != default:
                used.append(name if value is True or default is None else f"{name}={value}")
                owners += [s for s in found if s not in owners]
        if used:
            titles = " and ".join(s.title for s in owners)
            raise ValueError(f"{', '.join(used)}: {titles} settings, not for {self.suite}")
        self._check_vllm()
        if self.batch_size % self.num_generations:
            raise ValueError(f"per_device_batch_size ({self.batch_size}) must be a multiple of "
                             f"num_generations ({self.num_generations})")  # fmt: skip
        return self

    def _check_vllm(self) -> None:
        """vLLM settings: lockstep rollouts, a checkpoint directory, each option with its mode."""
        mode = self.vllm_mode
        if mode is None:
            given = [n for n in ("vllm_server_base_url", "vllm_gpu_memory_utilization",
                                 "vllm_max_model_length") if getattr(self, n) is not None]  # fmt: skip
            if given:
                raise ValueError(f"{', '.join(given)}: vLLM settings, need vllm_mode")
            return
        if self.rollouts != "batched":
            raise ValueError("vllm_mode needs rollouts: batched (one vLLM call a turn over the "
                             "step's rollouts)")  # fmt: skip
        if self.model == "smollm2":
            raise ValueError("vllm_mode needs a checkpoint directory as model (vLLM loads it by "
                             "path), not smollm2 (a GGUF file)")  # fmt: skip
        wrong = (["vllm_gpu_memory_utilization", "vllm_max_model_length"] if mode == "server"
                 else ["vllm_server_base_url"])  # fmt: skip
        wrong = [n for n in wrong if getattr(self, n) is not None]
        if wrong:
            other = "colocate" if mode == "server" else "server"
            raise ValueError(f"{', '.join(wrong)}: for vllm_mode {other}, not {mode}")

    @property
    def batch_size(self) -> int:
        """Rollouts per device per step (``per_device_batch_size``, default the group size)."""
        return self.per_device_batch_size or self.num_generations


def read_config(path: str | Path) -> dict[str, Any]:
    """The mapping in a JSON, YAML or TOML config file (SettingsError when unreadable)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SettingsError(f"{path}: cannot read the config file ({exc.strerror})") from None
    suffix = path.suffix.lower()
    try:
        if suffix == ".json":
            data = json.loads(text)
        elif suffix in (".yaml", ".yml"):
            try:
                import yaml
            except ImportError:
                raise SettingsError(
                    f"{path}: YAML configs need PyYAML (pip install pyyaml)"
                ) from None
            data = yaml.safe_load(text)
        elif suffix == ".toml":
            if sys.version_info >= (3, 11):
                import tomllib
            else:  # pragma: no cover - Python 3.10
                import tomli as tomllib
            data = tomllib.loads(text)
            data = data.get("grpo", data)
        else:
            raise SettingsError(f"{path}: unknown config format {suffix!r} (use .json, .yaml, "
                                ".yml or .toml)")  # fmt: skip
    except SettingsError:
        raise
    except Exception as exc:  # noqa: BLE001 - each parser has its own error type
        raise SettingsError(f"{path}: not valid {suffix[1:].upper()}: {exc}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise SettingsError(f"{path}: the config must be a mapping of settings")
    return data


def load_settings(config: str | Path | None = None, **overrides: Any) -> GRPOSettings:
    """The settings of ``config`` (optional file) with ``overrides`` on top."""
    from travelgym.clikit.paths import data_dir_problem, output_problem

    data = read_config(config) if config is not None else {}
    data.update(overrides)
    where = f"{config}: " if config is not None else ""
    try:
        settings = GRPOSettings.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'settings'}: {e['msg']}"
                             for e in exc.errors())  # fmt: skip
        raise SettingsError(f"{where}invalid GRPO settings: {problems}") from None
    # the directories written, checked before any model is loaded (as the flags' own are)
    for name in DIRECTORIES:
        given = data.get(name)
        if isinstance(given, str) and not given.strip():  # "" would be the current directory
            raise SettingsError(f"{where}invalid GRPO settings: {name}: an empty path")
        path = getattr(settings, name)
        problem = (None if path is None else data_dir_problem(path) if name == "data_dir"
                   else output_problem(path, "dir"))  # fmt: skip
        if problem is not None:
            raise SettingsError(f"{where}invalid GRPO settings: {name}: {problem}")
    return settings
