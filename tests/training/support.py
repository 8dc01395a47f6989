"""Shared by the tests that run torch / transformers / trl (the ``train`` extra): without the
extra they skip on a developer machine and fail in CI (``CI`` set), like the local-model tests."""

from __future__ import annotations

import os

import pytest

from travelgym.training.extras import missing_modules

TRAIN_MODULES = ("torch", "transformers", "trl", "accelerate", "datasets", "tokenizers")


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def need_extra(extra: str, modules: tuple[str, ...], module_level: bool = False) -> None:
    """Skip (developer machine) or fail (CI) when ``extra`` (its ``modules``) is missing;
    ``module_level``: skip the whole calling test module."""
    missing = missing_modules(modules)
    if missing:
        message = f"the {extra} extra is not installed (missing {', '.join(missing)})"
        if in_ci():
            pytest.fail(message, pytrace=False)
        pytest.skip(message, allow_module_level=module_level)


def need_train_extra() -> None:
    """Skip (developer machine) or fail (CI) when the train extra is missing."""
    need_extra("train", TRAIN_MODULES)


def light_env() -> dict[str, str]:
    """The environment for CLI subprocesses running a tiny model: offline, one torch thread
    (on oversubscribed vCPUs two threads make small matmuls 100x slower), short replies."""
    return {**os.environ, "HF_HUB_OFFLINE": "1", "TRAVELGYM_TORCH_THREADS": "1",
            "TRAVELGYM_HF_MAX_NEW_TOKENS": "24"}  # fmt: skip
