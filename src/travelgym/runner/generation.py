"""Generation options of an agent's model calls (sampling, output length, reasoning effort,
extra request fields): from a named preset, a config file and flags, validated strictly, sent
with every call of the agent's client and recorded in the run manifest.

Later sources override earlier ones: preset, then ``--gen-config FILE`` (JSON, or TOML when the
name ends in ``.toml``), then the per-option flags. Nothing given: nothing is sent, and the
provider's defaults apply. The options apply to the agent's model only, never to a simulated
user's.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from travelgym.core.errors import UserError

#: The reasoning efforts the OpenAI chat-completions API accepts.
REASONING_EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh", "max")

#: Request fields ``extra_body`` may not set: the options above, and what the client sends.
RESERVED_BODY_KEYS = frozenset({"temperature", "top_p", "max_tokens", "reasoning_effort",
                                "seed", "model", "messages", "tools", "stream"})  # fmt: skip

#: The paper's agent settings (COMPASS Appendix G.2) by name.
PRESETS: dict[str, dict[str, Any]] = {
    # "all other agent models use temperature 0 (greedy decoding)"
    "paper-default": {"temperature": 0},
    # "Qwen3 models employ sampling temperature 0.7 ... with thinking mode enabled"
    "qwen3-thinking": {
        "temperature": 0.7,
        "extra_body": {"chat_template_kwargs": {"enable_thinking": True}},
    },
    # "GPT-5 agents use the default thinking setting (medium level thinking)": no temperature
    "gpt5": {"reasoning_effort": "medium"},
}


class GenerationError(UserError, ValueError):
    """Generation options that cannot be used (a bad value, an unknown key, an unreadable
    file); the message is one line naming where the option came from."""


class GenerationOptions(BaseModel):
    """The generation options an agent's requests carry (``None``: not sent)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    temperature: float | None = Field(default=None, ge=0, le=2)
    top_p: float | None = Field(default=None, gt=0, le=1)
    max_tokens: int | None = Field(default=None, ge=1)
    reasoning_effort: Literal[REASONING_EFFORTS] | None = None  # type: ignore[valid-type]
    seed: int | None = None
    extra_body: dict[str, Any] | None = None


OPTION_NAMES = tuple(GenerationOptions.model_fields)


def validate_generation(given: Any, source: str) -> dict[str, Any]:
    """``given`` (a mapping of option names to values) checked as generation options; the
    options that are set, as a plain dict. A bad one is a :class:`GenerationError` naming
    ``source`` (a file, a flag, a preset)."""
    if not isinstance(given, dict):
        raise GenerationError(f"{source}: generation options must be an object of "
                              f"{', '.join(OPTION_NAMES)}")  # fmt: skip
    try:
        options = GenerationOptions.model_validate(given)
    except ValidationError as exc:
        raise GenerationError(f"{source}: {_explain(exc)}") from None
    out = options.model_dump(exclude_none=True)
    body = out.get("extra_body")
    if body is not None:
        clash = sorted(RESERVED_BODY_KEYS & set(body))
        if clash:
            raise GenerationError(f"{source}: extra_body may not set {', '.join(clash)} (give "
                                  "the option itself)")  # fmt: skip
        try:
            json.dumps(body, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise GenerationError(f"{source}: extra_body is not JSON data ({exc})") from None
    return out


def _explain(exc: ValidationError) -> str:
    err = exc.errors(include_url=False)[0]
    where = ".".join(str(p) for p in err["loc"])
    if err["type"] == "extra_forbidden":
        return f"unknown generation option {where!r} (options: {', '.join(OPTION_NAMES)})"
    return f"generation option {where}: {err['msg']}"


def load_gen_config(path: Path) -> dict[str, Any]:
    """The generation options of a config file (JSON, or TOML for ``*.toml``), validated."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise GenerationError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        if path.suffix.lower() == ".toml":
            import tomllib

            data: Any = tomllib.loads(raw.decode("utf-8"))
        else:
            data = json.loads(raw)
    except (ValueError, RecursionError) as exc:  # JSON, TOML and UTF-8 errors
        kind = "TOML" if path.suffix.lower() == ".toml" else "JSON"
        detail = " ".join(str(exc).split())[:200]
        raise GenerationError(f"{path}: not valid {kind} ({detail})") from None
    return validate_generation(data, str(path))


def resolve_generation(preset: str | None = None, config: Path | None = None,
                       flags: dict[str, Any] | None = None) -> dict[str, Any]:  # fmt: skip
    """The run's generation options: ``preset`` (a name of :data:`PRESETS`), overridden by the
    file ``config``, overridden by ``flags`` (option name -> value; ``None``: not given)."""
    merged: dict[str, Any] = {}
    if preset is not None:
        if preset not in PRESETS:
            raise GenerationError(f"unknown generation preset {preset!r}: choose "
                                  f"{', '.join(PRESETS)}")  # fmt: skip
        merged.update(PRESETS[preset])
    if config is not None:
        merged.update(load_gen_config(config))
    for name, value in (flags or {}).items():
        if value is not None:
            merged.update(validate_generation({name: value}, "--" + _flag(name)))
    return dict(sorted(validate_generation(merged, "generation options").items()))


def _flag(name: str) -> str:
    return {"seed": "gen-seed"}.get(name, name.replace("_", "-"))


def parse_extra_body(text: str | None) -> dict[str, Any] | None:
    """The ``--extra-body`` flag's JSON object (``None`` when not given)."""
    if text is None:
        return None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise GenerationError(f"--extra-body: not valid JSON ({exc})") from None
    if not isinstance(value, dict):
        raise GenerationError("--extra-body: must be a JSON object of request fields")
    return value
