"""One COMPASS run: the database, the ground truth, the chosen tasks and the simulated user;
every episode is played by the one episode loop (:func:`~travelgym.suites.compass.episode.play_episode`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from travelgym.core.suite import AgentFactory, SuiteRun
from travelgym.suites.compass.options import CompassOptions
from travelgym.suites.compass.trajectory import Episode


class CompassRun(SuiteRun):
    """One COMPASS run: database, ground truth, the chosen tasks, the simulated user."""

    # runs written before per-conversation personas used the task file's, and before the
    # simulator was versioned its version 1: a run is never resumed with another simulator
    identity_keys = {"personas": "task", "user_simulator_version": "1"}

    def __init__(self, options: CompassOptions, task_ids: list[str] | None, limit: int | None,
                 db_seed: int, data_dir: Path | None) -> None:  # fmt: skip
        from travelgym.db import connect_readonly
        from travelgym.suites.compass.build import ensure_database
        from travelgym.suites.compass.context import ToolCache
        from travelgym.suites.compass.ground_truth import ensure_ground_truth
        from travelgym.suites.compass.task_sets import task_set

        db = ensure_database(seed=db_seed, data_dir=data_dir)
        tasks = task_set(db_seed, data_dir)
        self.options = options
        # only the chosen tasks are drawn (of a generated set) and their ground truth computed
        # where the full files are not built yet
        self.tasks = tasks.select(task_ids, options.level, limit)
        _, self.truths = ensure_ground_truth(seed=db_seed, data_dir=data_dir, tasks=tasks,
                                             task_ids=[t.task_id for t in self.tasks])  # fmt: skip
        self.trials = options.trials
        self.db_path, self.db_hash = db.path, db.metadata["content_hash"]
        self.task_file = tasks.identity()
        self.tasks_sha256 = self.task_file["tasks_sha256"]
        self.conn = connect_readonly(db.path)
        self.tool_cache = ToolCache.for_database(db.path, self.db_hash)
        self.backend: Any = None
        self.label = ""
        self._personas: dict[int, dict[tuple[str, int], Any]] = {}  # run seed -> assignment

    def manifest(self) -> dict[str, Any]:
        from travelgym.suites.compass.user.simulator import USER_SIMULATOR_VERSION

        identity = {k: v for k, v in self.task_file.items() if k != "tasks_sha256"}
        return {"user": self.options.user, "max_turns": self.options.max_turns,
                "personas": self.options.personas, "prompt": self.options.prompt,
                "user_simulator_version": USER_SIMULATOR_VERSION, **identity}  # fmt: skip

    def persona(self, task: Any, trial: int, seed: int) -> Any:
        """The persona of the conversation (task, trial) of this run with run seed ``seed``."""
        from travelgym.suites.compass.personas import assign_personas

        if seed not in self._personas:
            self._personas[seed] = assign_personas(self.options.personas, seed, self.tasks,
                                                   self.trials)  # fmt: skip
        return self._personas[seed][(task.task_id, trial)]

    def agent_factory(self, spec: Any, base_url: str | None, client_options: dict[str, Any],
                      seed: int = 0) -> AgentFactory:  # fmt: skip
        from travelgym.runner.specs import user_client_options
        from travelgym.suites.compass.specs import agent_factory, user_backend

        self.label = spec.text
        factory = agent_factory(spec, base_url, client_options, seed, self.options.prompt)
        self.backend = user_backend(self.options.user, base_url,
                                    user_client_options(client_options))  # fmt: skip
        user_client = getattr(self.backend, "client", None)
        if user_client is not None:
            factory.clients.append(user_client)
        return factory

    async def episode(self, task: Any, agent: Any, trial: int, seed: int) -> Episode:
        """The conversation of ``agent`` (what :meth:`agent_factory` makes, a policy: a model's
        messages, or a scripted or code agent's turns), played by the one episode loop over the
        training environment (the run's user, personas and shared tool results; scored
        unranked, as every evaluation episode)."""
        from travelgym.suites.compass.episode import play_episode

        return await play_episode(task, agent, self.backend, self.conn,
                                  self.truths[task.task_id], seed=seed, trial=trial,
                                  max_turns=self.options.max_turns, user_name=self.options.user,
                                  persona=self.persona, tool_cache=self.tool_cache,
                                  agent_name=self.label)  # fmt: skip

    async def aclose(self) -> None:
        self.conn.close()

    def data_identity(self) -> dict[str, Any]:
        from travelgym.suites.compass.ground_truth import GROUND_TRUTH_FORMAT_VERSION

        keep = ("tasks_format_version", "tasks_db_seed", "task_seed")
        return {**{k: self.task_file[k] for k in keep},
                "ground_truth_format_version": GROUND_TRUTH_FORMAT_VERSION}  # fmt: skip
