"""The Ray backend's checks that need no cluster: how many episodes a cluster holds at once,
and the flags that only ``--backend ray`` takes."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from travelgym.cli import main
from travelgym.runner.ray_backend import RayBackendError, slots


def test_slots_count_one_cpu_per_episode_and_the_gpus_asked():
    assert slots({"CPU": 8.0}, 0) == 8
    assert slots({"CPU": 8.0, "GPU": 2.0}, 1) == 2  # GPUs bound it
    assert slots({"CPU": 8.0, "GPU": 2.0}, 0.5) == 4  # fractions share a GPU
    assert slots({"CPU": 3.0, "GPU": 8.0}, 1) == 3  # CPUs bound it


@pytest.mark.parametrize("resources,gpus,said", [({"CPU": 4.0}, 1, "has 0 GPU"),
                                                  ({"CPU": 4.0, "GPU": 1.0}, 2, "has 1 GPU"),
                                                  ({"CPU": 0.0}, 0, "no CPU")])  # fmt: skip
def test_a_cluster_too_small_for_one_episode_is_one_clear_error(resources, gpus, said):
    with pytest.raises(RayBackendError, match=said):
        slots(resources, gpus)


@pytest.mark.parametrize("flag", [["--ray-address", "auto"], ["--gpus-per-episode", "1"]])
def test_ray_flags_without_the_ray_backend_are_usage_errors(flag, tmp_path):
    result = CliRunner().invoke(main, ["run", "compass", "--agent", "scripted:greedy",
                                       "--out", str(tmp_path), *flag])  # fmt: skip
    assert result.exit_code == 2
    assert f"{flag[0]} applies to --backend ray only" in result.output
    assert not any(tmp_path.iterdir())  # refused before any work
