"""The inspect_ai solver, scorer and metric of the travelgym tasks (:mod:`.inspect_tasks`).

The solver runs the suite's own episode (``SuiteRun.episode``) with the suite's model agent on
inspect's model (``inspect:NAME`` clients, :mod:`travelgym.llm.inspect_client`), so the
suite's tools reach the model as inspect tools and a simulated user stays in the loop; the
agent's conversation becomes the sample's messages (tool calls, tool results and user turns:
what ``inspect view`` shows). The scorer hands on the score the episode carries, with the
episode JSON in the score's metadata; the metric aggregates those episodes with the run
summary every suite shares (:func:`travelgym.core.summary.summarize_episodes`), so the figures
and the outcome counts are the ones ``travelgym run`` prints for the same episodes.

An episode that ends in an infrastructure error (:mod:`travelgym.core.outcomes`) raises
:class:`EpisodeInfraError` out of the solver: inspect records a sample error (and fails the
eval unless its ``fail_on_error`` tolerates it), and ``inspect eval-retry`` runs the sample
again. A model error is scored like a completed episode. Episodes are kept per model, sample
and epoch, so several models evaluated with one task never see each other's episodes.
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

from travelgym.core.outcomes import count_outcomes, outcome_of
from travelgym.core.registry import get_suite
from travelgym.core.suite import AgentFactory, Suite, SuiteOptions, SuiteRun
from travelgym.core.summary import summarize_episodes
from travelgym.llm.inspect_client import to_inspect_messages
from travelgym.runner.specs import client_kwargs, parse_agent_spec

EPISODE_KEY = "episode"  # where a sample's episode JSON sits in its score's metadata
MODEL_SLOT = "{model}"  # in an agent spec: the eval's model, filled in per sample
SUITES: dict[str, Suite] = {}  # the suites tasks were defined for, by name
#: the outcome counts (:func:`~travelgym.core.outcomes.count_outcomes`) the metric reports
OUTCOME_COUNTS = ("completed", "model_errors", "infra_errors")
# (model, sample id, epoch): whose episode it is
EpisodeKey = tuple[str, str, int]


class EpisodeInfraError(Exception):
    """Raised out of the solver when the sample's episode ended in an infrastructure error
    (the endpoint down, a timeout, a framework bug: nothing the model did), so that inspect
    records a sample error instead of a score and ``inspect eval-retry`` runs it again. The
    message names the episode's cause; ``cause`` holds it."""

    def __init__(self, episode: dict[str, Any]) -> None:
        self.cause = outcome_of(episode)[1] or "unknown"
        error = str(episode.get("error") or "").strip()
        detail = f": {error.splitlines()[0]}" if error else ""
        super().__init__(f"travelgym episode {episode.get('task_id')} (trial {episode.get('trial')}) "
                         f"ended in an infra error ({self.cause}){detail}; it is not scored "
                         "(inspect eval-retry runs it again)")  # fmt: skip


def headline(suite: Suite, episodes: list[dict[str, Any]]) -> dict[str, float]:
    """The suite's headline figures of ``episodes`` (from the shared run summary: infra errors
    left out)."""
    return suite.headline_metrics(summarize_episodes(suite, episodes))


def metrics_of(suite: Suite, episodes: list[dict[str, Any]]) -> dict[str, float]:
    """The metric's values: the headline figures of ``episodes`` and their outcome counts
    (:data:`OUTCOME_COUNTS`), the counts of ``travelgym run``'s outcome table."""
    counts = count_outcomes(episodes)
    return {**headline(suite, episodes), **{k: float(counts[k]) for k in OUTCOME_COUNTS}}


@dataclass
class EpisodeRunner:
    """One task's runs: the suite's run opened for the dataset (the first model evaluated
    uses it; another model, of the same eval or a later one, gets a run of its own), one agent
    factory per model, and each finished episode, by (model, sample id, epoch), until the
    scorer takes it."""

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
    episodes: dict[EpisodeKey, dict[str, Any]] = field(default_factory=dict)
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


def episode_key(state: TaskState) -> EpisodeKey:
    """Whose episode ``state``'s is: models evaluated at once run the same samples and epochs."""
    return str(state.model), str(state.sample_id), state.epoch


@solver
def suite_episode(runner: EpisodeRunner) -> Solver:
    """Run the suite's episode of the sample's task with the eval's model as the agent; an
    episode that ends in an infra error raises :class:`EpisodeInfraError` (a sample error)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        model = str(state.model)
        run, factory, tasks = await runner.run_for(model)
        task = tasks[str(state.sample_id)]
        episode = await run.episode(task, factory.make(), state.epoch - 1, runner.seed)
        data = episode.model_dump(mode="json")
        # kept even when it raises below: with inspect's score_on_error the scorer still runs
        runner.episodes[episode_key(state)] = data
        if data.get("messages"):
            state.messages = to_inspect_messages(data["messages"])
        if outcome_of(data)[0] == "infra_error":
            raise EpisodeInfraError(data)
        replies = [m for m in data.get("messages") or [] if m.get("role") == "assistant"]
        final = next((m.get("content") for m in reversed(replies) if m.get("content")), "")
        state.output = ModelOutput.from_content(model, final or "")
        state.completed = True
        return state

    return solve


def episode_explanation(episode: dict[str, Any]) -> str:
    """How the episode ended, in one line: its termination, outcome (and cause) and error."""
    error = episode.get("error")
    first = str(error).splitlines()[0] if error else ""
    outcome, cause = outcome_of(episode)
    return (f"termination: {episode.get('termination')}; outcome: {outcome}"
            + (f" ({cause})" if cause else "") + (f"; error: {first}" if first else ""))  # fmt: skip


@scorer(metrics=[])
def suite_score(runner: EpisodeRunner) -> Scorer:
    """The suite's score of the sample's episode: its headline figures as the value, the
    episode JSON as the metadata."""

    async def score(state: TaskState, target: Target) -> Score:
        episode = runner.episodes.pop(episode_key(state), None)
        if episode is None:
            return Score(value=math.nan, explanation="no travelgym episode ran for this sample")
        return Score(value=headline(runner.suite, [episode]), explanation=episode_explanation(episode),
                     metadata={EPISODE_KEY: episode})  # fmt: skip

    return score


@metric(scores="unreduced")
def suite_metrics(suite: str) -> Metric:
    """The suite's headline figures over every scored episode (each epoch's: trials count
    as ``travelgym run`` counts them) and their outcome counts, from the run summary of those
    episodes. A sample whose episode raised :class:`EpisodeInfraError` is unscored, so it is
    counted in ``infra_errors`` only when inspect scores errors (``score_on_error``)."""

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        episodes = [s.score.metadata[EPISODE_KEY] for s in scores
                    if s.score.metadata and EPISODE_KEY in s.score.metadata]  # fmt: skip
        return metrics_of(SUITES.get(suite) or get_suite(suite), episodes)

    return compute
