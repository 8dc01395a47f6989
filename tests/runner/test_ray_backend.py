"""The Ray backend (``run --backend ray``) on a local Ray cluster of 2 CPUs, started once for the
module: its episodes equal the asyncio backend's on both suites, a worker SIGKILLed mid-run
loses no episode, a run resumes across backends, and the one budget counts the calls of a
worker that died."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from pathlib import Path

import pytest

from tests.runner.faults import child_env, normalise, raw_episodes
from tests.training.support import need_extra
from travelgym.runner.batch import RunConfig, run_suite
from travelgym.runner.store import EPISODES

pytestmark = pytest.mark.ray
need_extra("ray", ("ray",), module_level=True)

COMPASS = ("compass", "scripted:sampled", 4)  # suite, agent, tasks
TRIPS = ("behavior2trip", "scripted", 4)


@pytest.fixture(scope="module")
def ray_cluster():
    """A local Ray cluster of 2 CPUs whose workers import this checkout."""
    import ray

    saved = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = child_env()["PYTHONPATH"]  # inherited by the workers
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()
    if saved is None:
        os.environ.pop("PYTHONPATH", None)
    else:
        os.environ["PYTHONPATH"] = saved


@pytest.fixture(scope="module")
def data_dirs(compass_db, trips_database):
    from travelgym.suites.behavior2trip.instances import ensure_instances

    trips_dir = trips_database.path.parent.parent
    ensure_instances(trips_database, trips_dir, splits=("test",))
    return {"compass": compass_db.parent.parent, "behavior2trip": trips_dir}


def _run(case, data_dirs, out: Path, backend: str, **kw) -> dict:
    suite, agent, limit = case
    cfg = RunConfig(suite, agent, out, limit=kw.pop("limit", limit), concurrency=2,
                    data_dir=data_dirs[suite], progress=False, backend=backend, **kw)  # fmt: skip
    return asyncio.run(run_suite(cfg))


def _episodes(run_dir: Path) -> dict[tuple[str, int], dict]:
    lines = raw_episodes(run_dir / EPISODES)
    keyed = {(e["task_id"], e["trial"]): normalise(e) for e in lines}
    assert len(keyed) == len(lines), "an episode was saved twice"
    return keyed


def _scores(summary: dict) -> dict:
    """A summary without this session's figures, its per-task lists in a fixed order
    (episodes are saved as they finish, with either backend)."""
    found = {k: v for k, v in summary.items() if k not in ("episodes_wall_s", "ray")}
    for key, value in found.items():
        if isinstance(value, list):
            found[key] = sorted(value, key=lambda x: json.dumps(x, sort_keys=True))
    return found


@pytest.fixture(scope="module")
def reference(data_dirs, tmp_path_factory):
    """Each suite's asyncio run: (summary, episodes)."""
    out = tmp_path_factory.mktemp("asyncio")
    found = {}
    for case in (COMPASS, TRIPS):
        summary = _run(case, data_dirs, out / case[0], "asyncio")
        found[case[0]] = (summary, _episodes(out / case[0]))
    return found


@pytest.mark.slow
@pytest.mark.parametrize("case", [COMPASS, TRIPS], ids=lambda c: c[0])
def test_ray_results_equal_asyncio_results(ray_cluster, data_dirs, reference, tmp_path, case):
    summary = _run(case, data_dirs, tmp_path, "ray")
    want_summary, want = reference[case[0]]
    assert len(want) == case[2]
    assert _episodes(tmp_path) == want  # same episodes apart from timings
    assert _scores(summary) == _scores(want_summary)
    assert summary["ray"]["workers"] == 2 and summary["ray"]["workers_lost"] == 0


@pytest.mark.slow
def test_a_worker_killed_mid_run_loses_no_episode(ray_cluster, data_dirs, reference, tmp_path,
                                                  monkeypatch):  # fmt: skip
    import travelgym.runner.ray_backend as backend

    killed: list[int] = []

    class KillingPool(backend.EpisodePool):
        """Kills every worker (SIGKILL) as the first episode comes back: one is mid-episode."""

        def run(self, pending, on_episode):
            pids = ray_cluster.get([w.pid.remote() for w in self.workers])

            def save(episode):
                on_episode(episode)
                if not killed:
                    for pid in pids:
                        os.kill(pid, signal.SIGKILL)
                    killed.extend(pids)

            super().run(pending, save)

    monkeypatch.setattr(backend, "EpisodePool", KillingPool)
    summary = _run(COMPASS, data_dirs, tmp_path, "ray")
    assert len(killed) == 2
    assert summary["ray"]["workers_lost"] == 2  # both noticed, both replaced
    assert summary["ray"]["episodes_retried"] >= 1
    assert summary["ray"]["workers"] == 4
    assert _episodes(tmp_path) == reference["compass"][1]  # none lost, none twice


def test_an_episode_that_keeps_losing_its_worker_stops_the_run_cleanly(
    ray_cluster, data_dirs, reference, tmp_path, monkeypatch
):
    import travelgym.runner.ray_backend as backend

    killed: list[int] = []

    class KillingPool(backend.EpisodePool):
        """Kills a worker once, after the first episode comes back (one attempt allowed; an
        episode the other worker returns before the loss is noticed must not kill it again)."""

        def run(self, pending, on_episode):
            pids = ray_cluster.get([w.pid.remote() for w in self.workers])

            def save(episode):
                on_episode(episode)
                if not killed:
                    os.kill(pids[0], signal.SIGKILL)
                    killed.append(pids[0])

            super().run(pending, save)

    monkeypatch.setattr(backend, "EpisodePool", KillingPool)
    monkeypatch.setattr(backend, "MAX_ATTEMPTS", 1)
    with pytest.raises(backend.RayBackendError, match="lost its Ray worker 1 times"):
        _run(COMPASS, data_dirs, tmp_path, "ray")
    assert 1 <= len(_episodes(tmp_path)) < COMPASS[2]  # what was saved stays readable
    _run(COMPASS, data_dirs, tmp_path, "asyncio", resume=True)
    assert _episodes(tmp_path) == reference["compass"][1]


@pytest.mark.parametrize("first,then", [("asyncio", "ray"), ("ray", "asyncio")])
def test_resume_across_backends(ray_cluster, data_dirs, reference, tmp_path, first, then):
    _run(COMPASS, data_dirs, tmp_path, first)
    path = tmp_path / EPISODES
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:2]) + lines[2][:40])  # killed while writing the third
    _run(COMPASS, data_dirs, tmp_path, then, resume=True)
    assert _episodes(tmp_path) == reference["compass"][1]
    quarantined = raw_episodes(tmp_path / "episodes.quarantine.jsonl")
    assert [q["line"] for q in quarantined] == [3]  # the torn line kept, nothing else


def test_one_budget_counts_the_calls_of_a_dead_worker(ray_cluster):
    from ray.exceptions import WorkerCrashedError

    from travelgym.llm.protocol import LLMError, Usage
    from travelgym.runner.ray_worker import BudgetKeeper, RemoteBudget

    keeper = ray_cluster.remote(BudgetKeeper).options(num_cpus=0).remote(3, None)

    @ray_cluster.remote(max_retries=0)
    def spend_then_die(budget: RemoteBudget) -> None:
        for _ in range(2):
            budget.acquire()
            budget.record(Usage(prompt_tokens=5, completion_tokens=1))
        os._exit(1)

    with pytest.raises(WorkerCrashedError):
        ray_cluster.get(spend_then_die.remote(RemoteBudget(keeper)))
    budget = RemoteBudget(keeper)
    assert budget.snapshot()["calls"] == 2 and budget.snapshot()["total_tokens"] == 12
    budget.acquire()  # the third and last call of the cap
    with pytest.raises(LLMError) as refused:
        budget.acquire()
    assert refused.value.category == "budget" and "3/3" in str(refused.value)
    ray_cluster.kill(keeper)


def test_the_run_caps_hold_across_workers(ray_cluster, compass_db, tmp_path, monkeypatch):
    from tests.fakes.openai_server import FakeOpenAIServer, Reply

    monkeypatch.setenv("OPENAI_API_KEY", "test")
    with FakeOpenAIServer(responder=lambda body: Reply("I cannot find anything.")) as server:
        cfg = RunConfig("compass", "llm:fake-model", tmp_path, limit=4, concurrency=2,
                        data_dir=compass_db.parent.parent, progress=False, backend="ray",
                        base_url=server.base_url, client_options={"max_calls": 3})  # fmt: skip
        summary = asyncio.run(run_suite(cfg))
        requests = len(server.requests)
    episodes = raw_episodes(tmp_path / EPISODES)
    assert requests == 3 and sum(e["llm_calls"] for e in episodes) == 3  # 2 workers, 1 cap
    assert summary["ray"]["budget"]["calls"] == 3
    used = [e["usage"]["prompt_tokens"] + e["usage"]["completion_tokens"] for e in episodes]
    assert summary["ray"]["budget"]["total_tokens"] == sum(used) > 0
    refused = [e for e in episodes if e["llm_calls"] == 0]
    assert refused and all("call budget exhausted (3/3)" in e["error"] for e in refused)
