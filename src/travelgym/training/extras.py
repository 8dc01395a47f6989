"""The optional ``train`` extra (torch, transformers, trl, ...): a clear error when it is
missing, raised before anything heavy is imported."""

from __future__ import annotations

import importlib.util

TRAIN_EXTRA_HINT = "pip install 'travelgym[train]'"
TRAIN_MODULES = ("torch", "transformers", "trl", "accelerate", "datasets", "tokenizers")


class MissingExtraError(ValueError):
    """An optional dependency is not installed (the message says what to install)."""


def missing_modules(modules: tuple[str, ...] = TRAIN_MODULES) -> list[str]:
    """The modules of ``modules`` that cannot be imported."""
    return [m for m in modules if importlib.util.find_spec(m) is None]


def require_train_extra(modules: tuple[str, ...] = TRAIN_MODULES, what: str = "this") -> None:
    """Raise :class:`MissingExtraError` naming the missing modules and the install command."""
    missing = missing_modules(modules)
    if missing:
        raise MissingExtraError(f"{what} needs the train extra (missing {', '.join(missing)}): "
                                f"{TRAIN_EXTRA_HINT}")  # fmt: skip
