"""The local Ray cluster of ``--backend ray`` listens on 127.0.0.1 only and has Ray's token
authentication on (``RAY_AUTH_MODE=token``); a cluster given by address is joined as it is.
Unit level: ``ray.init`` is replaced by a recorder, no cluster starts."""

from __future__ import annotations

import os

import pytest

from tests.training.support import need_extra
from travelgym.runner import ray_backend

need_extra("ray", ("ray",), module_level=True)


@pytest.fixture
def recorded(monkeypatch):
    """The calls ``connect`` makes to ``ray.init``: (kwargs, RAY_AUTH_MODE then, whether Ray
    resolves a loopback address to a routable one then)."""
    import ray
    from ray._private import services

    calls = []

    def fake_init(**kwargs):
        loopback = services.resolve_ip_for_localhost("127.0.0.1") == "127.0.0.1"
        calls.append((kwargs, os.environ.get("RAY_AUTH_MODE"), loopback))

    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", fake_init)
    # this test process keeps Ray's cached settings as they are
    monkeypatch.setattr(ray_backend, "refresh_ray_config", lambda: None, raising=False)
    # a user's own settings must not weaken the local cluster: an explicit opt-out included
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    return calls


def test_the_local_cluster_is_bound_to_loopback_with_token_auth(recorded):
    assert ray_backend.connect(None, num_cpus=2) is True
    ((kwargs, auth_mode, loopback),) = recorded
    assert kwargs["_node_ip_address"] == "127.0.0.1" and kwargs["num_cpus"] == 2
    assert loopback, "Ray would replace 127.0.0.1 by the machine's routable address"
    assert auth_mode == "token"
    assert kwargs["include_dashboard"] is False  # no dashboard on any interface either


def test_loopback_resolution_is_restored_after_the_start(recorded):
    from ray._private import ray_constants

    before = ray_constants.ENABLE_RAY_CLUSTER
    ray_backend.connect(None)
    assert before == ray_constants.ENABLE_RAY_CLUSTER


def test_a_cluster_given_by_address_is_joined_without_local_settings(recorded):
    """Variant: ``--ray-address`` joins a cluster its owner configured; nothing local is
    passed to it (a node address would be wrong there)."""
    assert ray_backend.connect("ray://head:10001") is True
    ((kwargs, _, _),) = recorded
    assert kwargs["address"] == "ray://head:10001"
    assert "_node_ip_address" not in kwargs and "num_cpus" not in kwargs


def test_the_ray_extra_requires_token_auth():
    """Token authentication exists from Ray 2.52: the extra asks for at least that."""
    from pathlib import Path

    import tomllib
    from packaging.requirements import Requirement

    pyproject = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    (ray_req,) = [Requirement(r) for r in pyproject["project"]["optional-dependencies"]["ray"]]
    assert ray_req.name == "ray"
    assert not ray_req.specifier.contains("2.51.9") and ray_req.specifier.contains("2.52.0")
