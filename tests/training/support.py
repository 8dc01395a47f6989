"""Shared by the tests that run torch / transformers / trl (the ``train`` extra): without the
extra they skip on a developer machine and fail in CI (``CI`` set), like the local-model tests."""

from __future__ import annotations

import os

import pytest

from travelgym.training.extras import missing_modules

TRAIN_MODULES = ("torch", "transformers", "trl", "accelerate", "datasets", "tokenizers")


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def need_train_extra() -> None:
    """Skip (developer machine) or fail (CI) when the train extra is missing."""
    missing = missing_modules(TRAIN_MODULES)
    if missing:
        message = f"the train extra is not installed (missing {', '.join(missing)})"
        if in_ci():
            pytest.fail(message)
        pytest.skip(message)


def light_env() -> dict[str, str]:
    """The environment for CLI subprocesses running a tiny model: offline, one torch thread
    (on oversubscribed vCPUs two threads make small matmuls 100x slower), short replies."""
    return {**os.environ, "HF_HUB_OFFLINE": "1", "TRAVELGYM_TORCH_THREADS": "1",
            "TRAVELGYM_HF_MAX_NEW_TOKENS": "24"}  # fmt: skip
