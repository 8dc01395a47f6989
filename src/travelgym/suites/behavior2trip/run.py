"""One Behavior2Trip run: the agents of a spec, the chosen instances over the POI database,
and one planning episode per instance (scored by the 32 checks, optionally graded by a judge,
with RQ1's simulated user when asked)."""

from __future__ import annotations

from typing import Any

from travelgym.core.suite import AgentFactory, SuiteRun
from travelgym.suites.behavior2trip.instance_sets import (
    MANIFEST_BEFORE,
    load_split,
    select_instances,
    versions,
)
from travelgym.suites.behavior2trip.options import TripOptions
from travelgym.suites.behavior2trip.trip_episode import TripEpisode


def agent_factory(spec: Any, base_url: str | None = None, client_options: dict | None = None,
                  max_steps: int = 25) -> AgentFactory:  # fmt: skip
    """Fresh Behavior2Trip agents for ``spec``: ``scripted``, ``oracle``, ``llm:MODEL`` (native
    tool calls), ``react:MODEL``, ``b2t:MODEL``,
    ``local:GGUF`` (the B2T agent on a llama.cpp server this process runs) or ``hf:CKPT`` (the
    B2T agent on a transformers checkpoint, e.g. a GRPO output)."""
    if spec.kind == "scripted":
        from travelgym.suites.behavior2trip.agents.scripted import ScriptedTripAgent

        return AgentFactory(ScriptedTripAgent)
    if spec.kind == "oracle":
        from travelgym.suites.behavior2trip.agents.oracle import OracleTripAgent

        return AgentFactory(OracleTripAgent)
    from travelgym.runner.specs import make_model_client

    model = spec.text if spec.kind in ("local", "hf") else spec.arg
    client = make_model_client(model, base_url, client_options)
    if spec.kind == "react":
        from travelgym.suites.behavior2trip.agents.react import ReactAgent as cls
    elif spec.kind == "llm":
        from travelgym.suites.behavior2trip.agents.tool_agent import ToolCallingTripAgent as cls
    else:
        from travelgym.suites.behavior2trip.agents.b2t_agent import B2TAgent as cls
    return AgentFactory(lambda: cls(client, max_steps=max_steps), [client])


class Behavior2TripRun(SuiteRun):
    """One Behavior2Trip run: the POI database, the chosen instances, the checks' caches."""

    def __init__(self, options: TripOptions, task_ids, limit, db_seed, data_dir) -> None:
        from travelgym.db import connect_readonly
        from travelgym.suites.behavior2trip.checks import PlanDB

        db, instances, sha = load_split(options.split, db_seed, data_dir, options.scale,
                                        options.instances, task_ids, options.difficulty,
                                        limit, options.noise)  # fmt: skip
        self.options = options
        self.tasks = select_instances(instances, task_ids, options.difficulty, limit)
        self.db_path, self.db_hash, self.tasks_sha256 = db.path, db.metadata["content_hash"], sha
        self.conn = connect_readonly(db.path)
        self.score_db = PlanDB(self.conn)  # its look-up caches serve every episode
        self.judge = None  # the judge's client, made with the agents' (same endpoint)
        self.user_client = None  # RQ1's LLM user (--clarify MODEL), on the same endpoint

    identity_keys = MANIFEST_BEFORE

    def manifest(self) -> dict[str, Any]:
        return {"user": None, "split": self.options.split, "difficulty": self.options.difficulty,
                "max_turns": self.options.max_steps, "db_scale": self.options.scale,
                "judge": self.options.judge, "no_trajectory": self.options.no_trajectory,
                "clarify": self.options.clarify, "clarify_turns": self.options.ask_limit,
                "instances": self.options.instances, **self._noise(), **versions()}  # fmt: skip

    def _noise(self) -> dict[str, Any]:
        """The manifest's ``noise`` key: the level, only above 0 (see :attr:`identity_keys`)."""
        return {"noise": self.options.noise} if self.options.noise else {}

    def agent_factory(self, spec, base_url, client_options, seed=0) -> AgentFactory:
        factory = agent_factory(spec, base_url, client_options, self.options.max_steps)
        if self.options.judge is not None and self.judge is None:
            from travelgym.runner.specs import make_model_client

            # the judge shares the run's endpoint and caps but never the agent's sampling
            caps = {k: v for k, v in client_options.items() if k != "default_params"}
            self.judge = make_model_client(self.options.judge, base_url, caps)
            factory.clients.append(self.judge)
        if self.options.clarify not in (None, "template") and self.user_client is None:
            from travelgym.runner.specs import make_model_client, user_client_options

            self.user_client = make_model_client(self.options.clarify, base_url,
                                                 user_client_options(client_options))  # fmt: skip
            factory.clients.append(self.user_client)
        return factory

    async def episode(self, task: Any, agent: Any, trial: int, seed: int) -> TripEpisode:
        from travelgym.suites.behavior2trip.episode import run_trip_episode

        user = None
        if self.options.clarify is not None:
            from travelgym.suites.behavior2trip.clarify_user import SimulatedUser

            user = SimulatedUser(task.profile, self.options.ask_limit, self.user_client,
                                 self.options.clarify)  # fmt: skip
        episode = await run_trip_episode(task, agent, self.conn, seed=seed, trial=trial,
                                         score_db=self.score_db,
                                         withhold_trajectory=self.options.no_trajectory,
                                         user=user)  # fmt: skip
        if self.judge is not None and episode.score is not None:
            from travelgym.suites.behavior2trip.judge import judge_plan

            verdict = await judge_plan(self.judge, task, episode.final_answer)
            episode.score = {**episode.score, "judge": verdict.model_dump(mode="json")}
        return episode

    async def aclose(self) -> None:
        self.conn.close()

    def data_identity(self) -> dict[str, Any]:
        return {"db_scale": self.options.scale, "instances": self.options.instances,
                **self._noise(), **versions()}  # fmt: skip
