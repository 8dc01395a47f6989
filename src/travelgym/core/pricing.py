"""Model prices for a run's cost: a price table file (``--pricing FILE``) or, when the
``litellm`` extra is installed, the model cost map it ships, read from its package (never
downloaded at run time). A model with no known price gets none: the summaries then show its
tokens only.

A price table is a JSON object ``{"MODEL": {"input": D, "output": D}}``: dollars per million
input and output tokens; MODEL is the name the agent spec gives (``llm:MODEL``).
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

from travelgym.core.errors import UserError


class PricingError(UserError, ValueError):
    """A price table that cannot be used (the message names the file and the entry)."""


def _price(path: Path, model: Any, entry: Any) -> dict[str, float]:
    if not isinstance(entry, dict) or set(entry) != {"input", "output"}:
        raise PricingError(f"{path}: the price of {model!r} must be an object with exactly "
                           "'input' and 'output' (dollars per million tokens)")  # fmt: skip
    for key, value in entry.items():
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        if not ok or not math.isfinite(value) or value < 0:
            raise PricingError(f"{path}: {model!r} {key} price must be a number >= 0, got "
                               f"{value!r}")  # fmt: skip
    return {"input": float(entry["input"]), "output": float(entry["output"])}


def read_pricing(path: Path) -> dict[str, dict[str, float]]:
    """The price table of ``path`` (a :class:`PricingError` naming what is wrong)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise PricingError(f"cannot read {path}: {exc.strerror}") from None
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise PricingError(f"{path}: not valid JSON ({exc})") from None
    if not isinstance(data, dict) or not data:
        raise PricingError(f"{path}: a price table is a non-empty JSON object of model -> "
                           "{'input': ..., 'output': ...}")  # fmt: skip
    return {str(model): _price(path, model, entry) for model, entry in data.items()}


def litellm_prices(model: str) -> dict[str, float] | None:
    """``model``'s price from the cost map the installed ``litellm`` ships (``None`` without
    litellm or without an entry)."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # read it, never fetch it
    try:
        import litellm
    except ImportError:
        return None
    entry = getattr(litellm, "model_cost", {}).get(model)
    if not isinstance(entry, dict):
        return None
    prompt, completion = entry.get("input_cost_per_token"), entry.get("output_cost_per_token")
    if not all(
        isinstance(v, (int, float)) and not isinstance(v, bool) for v in (prompt, completion)
    ):
        return None
    return {"input": prompt * 1e6, "output": completion * 1e6}


def run_pricing(models: dict[str, str | None], table: dict[str, dict[str, float]] | None
                ) -> dict[str, dict[str, Any]]:  # fmt: skip
    """The prices a run records in its manifest: role -> ``{"model", "input", "output",
    "source"}`` for each role (``agent``, ``user``) whose model has a price in ``table`` or in
    litellm's map; roles without a model or a price are left out."""
    out = {}
    for role, model in models.items():
        if not model:
            continue
        price, source = (table or {}).get(model), "pricing file"
        if price is None:
            price, source = litellm_prices(model), "litellm model cost map"
        if price is not None:
            out[role] = {"model": model, **price, "source": source}
    return out
