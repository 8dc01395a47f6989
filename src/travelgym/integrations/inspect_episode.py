"""The inspect_ai solver, scorer and metric of the travelgym tasks (:mod:`.inspect_tasks`).

The solver runs the suite's own episode (``SuiteRun.episode``) with the suite's model agent on
inspect's model (``inspect:NAME`` clients, :mod:`travelgym.llm.inspect_client`), so the
suite's tools reach the model as inspect tools and a simulated user stays in the loop; the
agent's conversation becomes the sample's messages (tool calls, tool results and user turns:
what ``inspect view`` shows). The scorer hands on the score the episode carries, with the
episode JSON in the score's metadata; the metric aggregates those episodes with the suite's
own summary (:meth:`~travelgym.core.Suite.summarize_episodes`), so the figures are the ones
``travelgym run`` prints for the same episodes.
"""

from __future__ import annotations

import asyncio
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspect_ai.model import ModelOutput
from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, metric, scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver

from travelgym.core.errors import Unsupported
from travelgym.core.registry import get_suite
from travelgym.core.suite import AgentFactory, Suite, SuiteOptions, SuiteRun
from travelgym.llm.inspect_client import to_inspect_messages
from travelgym.runner.specs import client_kwargs, parse_agent_spec

EPISODE_KEY = "episode"  # where a sample's episode JSON sits in its score's metadata
MODEL_SLOT = "{model}"  # in an agent spec: the eval's model, filled in per sample
SUITES: dict[str, Suite] = {}  # the suites tasks were defined for, by name


def headline(suite: Suite, episodes: list[dict[str, Any]]) -> dict[str, Any]:
    """The suite's headline figures of ``episodes`` (its own summary); for a suite that cannot
    summarize episodes outside a run directory, the mean of each plain field of their scores."""
    try:
        return suite.headline_metrics(suite.summarize_episodes(episodes))
    except Unsupported:
        fields: dict[str, list[float]] = {}
        for episode in episodes:
            for key, value in (episode.get("score") or {}).items():
                if isinstance(value, bool | int | float):
                    fields.setdefault(key, []).append(float(value))
        return {k: sum(v) / len(v) for k, v in fields.items()}


@dataclass
class EpisodeRunner:
    """One task's runs: the suite's run opened for the dataset (the first model evaluated
    uses it; another model of the same eval gets a run of its own), one agent factory per
    model, and each finished episode until the scorer takes it."""

    suite: Suite
    options: SuiteOptions
    agent: str  # the agent spec, MODEL_SLOT standing for the eval's model
    seed: int
    db_seed: int
    task_ids: list[str] | None
    limit: int | None
    data_dir: Path | None
    base_url: str | None
    first_run: SuiteRun
    runs: dict[str, tuple[SuiteRun, AgentFactory, dict[str, Any]]] = field(default_factory=dict)
    episodes: dict[tuple[str, int], dict[str, Any]] = field(default_factory=dict)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    @property
    def name(self) -> str:
        return self.suite.name

    def _repr_params_(self) -> dict[str, Any]:
        """What inspect logs as the solver's and scorer's parameters."""
        return {"suite": self.suite.name, "agent": self.agent, "seed": self.seed,
                "db_seed": self.db_seed, "options": self.options.model_dump(mode="json")}  # fmt: skip

    def spec_for(self, model: str) -> Any:
        """The agent spec of ``model`` (the eval's model put in the spec's slot)."""
        return parse_agent_spec(self.suite, self.agent.replace(MODEL_SLOT, model))

    async def run_for(self, model: str) -> tuple[SuiteRun, AgentFactory, dict[str, Any]]:
        """The run, agent factory and tasks by id of ``model``, made on its first sample."""
        async with self.lock:
            if model not in self.runs:
                run = self.first_run if not self.runs else await asyncio.to_thread(
                    self.suite.open_run, self.options, self.task_ids, self.limit, self.db_seed,
                    self.data_dir)  # fmt: skip
                factory = run.agent_factory(self.spec_for(model), self.base_url,
                                            client_kwargs({}, None), self.seed)  # fmt: skip
                self.runs[model] = (run, factory, {t.task_id: t for t in run.tasks})
            return self.runs[model]


@solver
def suite_episode(runner: EpisodeRunner) -> Solver:
    """Run the suite's episode of the sample's task with the eval's model as the agent."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        model = str(state.model)
        run, factory, tasks = await runner.run_for(model)
        task = tasks[str(state.sample_id)]
        episode = await run.episode(task, factory.make(), state.epoch - 1, runner.seed)
        data = episode.model_dump(mode="json")
        runner.episodes[(str(state.sample_id), state.epoch)] = data
        if data.get("messages"):
            state.messages = to_inspect_messages(data["messages"])
        replies = [m for m in data.get("messages") or [] if m.get("role") == "assistant"]
        final = next((m.get("content") for m in reversed(replies) if m.get("content")), "")
        state.output = ModelOutput.from_content(model, final or "")
        state.completed = True
        return state

    return solve


def episode_explanation(episode: dict[str, Any]) -> str:
    """How the episode ended, in one line (with its error, if any)."""
    error = episode.get("error")
    first = str(error).splitlines()[0] if error else ""
    return f"termination: {episode.get('termination')}" + (f"; error: {first}" if first else "")


@scorer(metrics=[])
def suite_score(runner: EpisodeRunner) -> Scorer:
    """The suite's score of the sample's episode: its headline figures as the value, the
    episode JSON as the metadata."""

    async def score(state: TaskState, target: Target) -> Score:
        episode = runner.episodes.pop((str(state.sample_id), state.epoch), None)
        if episode is None:
            return Score(value=math.nan, explanation="no travelgym episode ran for this sample")
        return Score(value=headline(runner.suite, [episode]), explanation=episode_explanation(episode),
                     metadata={EPISODE_KEY: episode})  # fmt: skip

    return score


@metric(scores="unreduced")
def suite_metrics(suite: str) -> Metric:
    """The suite's headline figures over every scored episode (each epoch's: trials count
    as ``travelgym run`` counts them), from its own summary of those episodes."""

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        episodes = [s.score.metadata[EPISODE_KEY] for s in scores
                    if s.score.metadata and EPISODE_KEY in s.score.metadata]  # fmt: skip
        return headline(SUITES.get(suite) or get_suite(suite), episodes)

    return compute
