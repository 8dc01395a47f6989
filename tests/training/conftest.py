"""Fixtures of the training tests: a tiny model (random Llama, locally trained tokenizer)."""

from __future__ import annotations

import os

import pytest

from tests.training.support import need_train_extra


@pytest.fixture(scope="session")
def tiny_dir(tmp_path_factory):
    """A tiny checkpoint directory built from seed 0 (torch on one CPU thread)."""
    need_train_extra()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch

    from travelgym.training.tiny import build_tiny_model

    torch.set_num_threads(1)
    return build_tiny_model(tmp_path_factory.mktemp("tiny") / "model", seed=0)


@pytest.fixture(scope="session")
def tiny_tokenizer(tiny_dir):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(tiny_dir)


@pytest.fixture(scope="session")
def b2t_train_instances(trips_database, trips_instances):
    """The first two Behavior2Trip training instances of the test database."""
    from travelgym.suites.behavior2trip.instances import ensure_instances, load_instances

    paths = ensure_instances(trips_database, trips_database.path.parent.parent)
    return load_instances(paths["train"], check=False)[:2]
