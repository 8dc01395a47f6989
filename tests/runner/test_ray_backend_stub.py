"""The local Ray cluster's settings (issue 34) where Ray itself is not installed: a stand-in
``ray`` module records what :func:`~travelgym.runner.ray_backend.connect` asks of ``ray.init``,
so the loopback bind and token authentication are checked on every machine, not only where the
``ray`` extra is (``test_ray_local_cluster.py`` checks them against the real module)."""

from __future__ import annotations

import os
import sys
import types
from pathlib import Path

import pytest
import tomllib
from packaging.requirements import Requirement

from travelgym.runner import ray_backend


def _fake_ray(cluster_flag: bool, fail: bool = False) -> tuple[types.ModuleType, list]:
    """A ``ray`` stand-in (with Ray's ``ENABLE_RAY_CLUSTER`` switch where ``cluster_flag``) and
    the list its ``init`` records (kwargs, ``RAY_AUTH_MODE``, the switch) into."""
    calls: list = []
    ray = types.ModuleType("ray")
    constants = types.SimpleNamespace(ENABLE_RAY_CLUSTER=True)
    if cluster_flag:
        ray._private = types.SimpleNamespace(ray_constants=constants)

    def init(**kwargs):
        calls.append((kwargs, os.environ.get("RAY_AUTH_MODE"), constants.ENABLE_RAY_CLUSTER))
        if fail:
            raise RuntimeError("no room for the raylet")

    ray.init = init
    ray.is_initialized = lambda: False
    ray.shutdown = lambda: None
    ray.constants = constants  # the test's handle on the switch
    return ray, calls


@pytest.fixture
def user_settings(monkeypatch):
    """A user who turned Ray's authentication off: the local cluster must not follow that."""
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")


@pytest.mark.parametrize("cluster_flag", [True, False], ids=["ray with the switch", "without"])
def test_the_local_cluster_listens_on_loopback_with_token_auth(monkeypatch, user_settings,
                                                              cluster_flag):  # fmt: skip
    ray, calls = _fake_ray(cluster_flag)
    monkeypatch.setitem(sys.modules, "ray", ray)
    assert ray_backend.connect(None, num_cpus=3) is True
    ((kwargs, auth_mode, cluster_mode),) = calls
    assert kwargs.get("_node_ip_address") == "127.0.0.1" and kwargs["num_cpus"] == 3
    assert auth_mode == "token"
    assert kwargs["include_dashboard"] is False
    if cluster_flag:  # single-machine mode while it starts (Ray keeps 127.0.0.1 then), restored
        assert cluster_mode is False and ray.constants.ENABLE_RAY_CLUSTER is True


def test_a_failed_start_restores_rays_switch(monkeypatch, user_settings):
    # variant: ray.init raising leaves Ray's module state as it was, and says one line
    ray, calls = _fake_ray(True, fail=True)
    monkeypatch.setitem(sys.modules, "ray", ray)
    with pytest.raises(ray_backend.RayBackendError, match="no room for the raylet"):
        ray_backend.connect(None)
    assert calls and calls[0][0].get("_node_ip_address") == "127.0.0.1"
    assert ray.constants.ENABLE_RAY_CLUSTER is True


def test_a_cluster_given_by_address_is_joined_as_configured(monkeypatch, user_settings):
    ray, calls = _fake_ray(True)
    monkeypatch.setitem(sys.modules, "ray", ray)
    assert ray_backend.connect("ray://head:10001") is True
    ((kwargs, auth_mode, _),) = calls
    assert kwargs["address"] == "ray://head:10001" and "_node_ip_address" not in kwargs
    assert auth_mode == "disabled"  # its owner's settings, not the local cluster's


def test_the_ray_extra_needs_a_ray_with_token_auth():
    """Token authentication exists from Ray 2.52."""
    pyproject = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    (req,) = [Requirement(r) for r in pyproject["project"]["optional-dependencies"]["ray"]]
    assert req.name == "ray"
    assert not req.specifier.contains("2.51.9") and req.specifier.contains("2.52.0")
