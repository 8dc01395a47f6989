"""One TravelPlanner run: the ingested data (or ``--data`` files), the chosen queries, the agents
and the episodes, each plan checked against the database or the query's reference
information."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from travelgym.core.suite import AgentFactory, SuiteRun
from travelgym.suites.travelplanner.episode import PlannerEpisode, run_planner_episode
from travelgym.suites.travelplanner.records import Query, select_queries
from travelgym.suites.travelplanner.source import PlannerData, reference_sandbox

EVALUATION_VERSION = "1"


def agent_factory(spec: Any, base_url: str | None, client_options: dict[str, Any] | None,
                  max_steps: int) -> AgentFactory:  # fmt: skip
    """Fresh agents for ``spec``: ``scripted``, ``llm:MODEL`` (native tool calls; ``tool:MODEL``
    its earlier name), ``react:MODEL``,
    ``b2t:MODEL``, ``local:GGUF`` or ``hf:CKPT`` (the last two in the B2T format)."""
    if spec.kind == "scripted":
        from travelgym.suites.travelplanner.agents.scripted import ScriptedPlanner

        return AgentFactory(ScriptedPlanner)
    from travelgym.runner.specs import make_model_client
    from travelgym.suites.travelplanner.agents.llm import (
        B2TPlanner,
        ReactPlanner,
        ToolCallingAgent,
    )

    model = spec.text if spec.kind in ("local", "hf") else spec.arg
    client = make_model_client(model, base_url, client_options or {})
    if spec.kind in ("llm", "tool"):
        return AgentFactory(lambda: ToolCallingAgent(client, max_steps, kind=spec.kind), [client])
    if spec.kind == "react":
        return AgentFactory(lambda: ReactPlanner(client, max_steps), [client])
    return AgentFactory(lambda: B2TPlanner(client, max_steps, kind=spec.kind), [client])


class PlannerRun(SuiteRun):
    """The run's data, its queries and the options that change results."""

    def __init__(self, options: Any, task_ids: list[str] | None, limit: int | None,
                 data_dir: Path | None) -> None:  # fmt: skip
        self.options = options
        self.data = PlannerData.open(options.data, options.database, data_dir, options.split)
        try:
            self.split = self.data.split(options.split)
            queries = self.data.queries(self.split)
            self.tasks = select_queries(queries, task_ids, options.difficulty, limit)
        except BaseException:
            self.data.close()
            raise
        self.db_path, self.db_hash = self.data.path, self.data.content_hash
        self.tasks_sha256 = self.data.queries_sha256(queries)

    def manifest(self) -> dict[str, Any]:
        """Split, mode, level, step limit, the sandbox the plans are checked against."""
        return {"split": self.split, "mode": self.options.mode,
                "difficulty": self.options.difficulty, "max_steps": self.options.max_steps,
                "checked_against": "database" if self.data.has_database else "reference",
                "evaluation_version": EVALUATION_VERSION}  # fmt: skip

    def data_identity(self) -> dict[str, Any]:
        """The evaluation version and what plans are checked against."""
        return {"evaluation_version": EVALUATION_VERSION,
                "checked_against": "database" if self.data.has_database else "reference"}  # fmt: skip

    def agent_factory(self, spec, base_url, client_options, seed=0) -> AgentFactory:
        """See :func:`agent_factory`."""
        return agent_factory(spec, base_url, client_options, self.options.max_steps)

    async def episode(self, task: Query, agent: Any, trial: int, seed: int) -> PlannerEpisode:
        """One episode: tools over the database (else the query's reference information)."""
        check = self.data.sandbox_for(task)
        tools = self.data.database if self.data.database is not None else reference_sandbox(task)
        return await run_planner_episode(task, agent, self.options.mode, tools, check,
                                         seed=seed, trial=trial)  # fmt: skip

    async def aclose(self) -> None:
        """Close the data's connection."""
        self.data.close()
