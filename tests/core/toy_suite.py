"""The source of a minimal third suite, installed by tests into a temporary package: one toy
task kind (add two numbers), one tool, one scripted agent, one scorer. It uses only travelgym's
public protocol, as a suite in another package would."""

SOURCE = r'''
"""Toy: add two numbers with the ``add`` tool."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from travelgym.core import AgentFactory, AgentKind, BuiltData, EpisodeBase, Suite
from travelgym.core import SuiteOptions, SuiteRun, suite_flag
from travelgym.paths import suite_dir
from travelgym.runner.run_summary import summarize_run
from travelgym.toolkit.registry import ToolContext, ToolRegistry
from travelgym.toolkit.toolset import ToolSet


class ToyTask(BaseModel):
    task_id: str
    a: int
    b: int


TASKS = [ToyTask(task_id=f"toy-{i}", a=i, b=10 * i) for i in range(5)]


class ToyContext(ToolContext):
    calls = 0


def add(a: int, b: int, ctx: ToyContext) -> dict:
    """Add two integers.

    Args:
        a: the first number
        b: the second number
    """
    ctx.calls += 1
    return {"sum": a + b}


class ToyEpisode(EpisodeBase):
    format_version: str = "1"
    suite: Literal["toy"] = "toy"
    termination: Literal["answered", "error"] = "answered"
    answer: int | None = None


class ToyAgent:
    def __init__(self, wrong: bool) -> None:
        self.wrong = wrong

    def solve(self, task: ToyTask, registry: ToolRegistry, ctx: ToyContext) -> int:
        result = registry.call("add", {"a": task.a, "b": task.b}, ctx)
        return result.payload()["sum"] + (1 if self.wrong else 0)


class ToyOptions(SuiteOptions):
    offset: int = suite_flag(0, help="Added to the second number of every task.",
                             commands=("run", "tasks"), ge=0)
    # the same flag as COMPASS's --level (an integer there), with the toy's own meaning
    level: Literal["kids", "grownups"] | None = suite_flag(
        None, help="kids: the tasks whose first number is below 3; grownups: the others.",
        commands=("run", "tasks"))


class ToyRun(SuiteRun):
    def __init__(self, options, task_ids, limit, data_dir) -> None:
        self.db_path = ToySuite().build(ToyOptions(), 0, data_dir).path
        self.db_hash, self.tasks_sha256 = "toy-db", "toy-tasks"
        self.offset, self.level = options.offset, options.level
        chosen = [t for t in offset_tasks(options) if not task_ids or t.task_id in task_ids]
        self.tasks = chosen[:limit] if limit else chosen

    def manifest(self) -> dict[str, Any]:
        return {"offset": self.offset, "level": self.level}

    def agent_factory(self, spec, base_url, client_options, seed=0) -> AgentFactory:
        return AgentFactory(lambda: ToyAgent(spec.arg == "wrong"))

    async def episode(self, task, agent, trial, seed) -> ToyEpisode:
        answer = agent.solve(task, ToySuite().tool_registry(), ToyContext())
        return ToyEpisode(episode_id=f"{task.task_id}#{trial}", task_id=task.task_id,
                          trial=trial, agent="toy", seed=seed, answer=answer,
                          score={"correct": answer == task.a + task.b, "sum": task.a + task.b})


def offset_tasks(options) -> list[ToyTask]:
    kept = [t for t in TASKS if options.level is None or (t.a < 3) == (options.level == "kids")]
    return [t.model_copy(update={"b": t.b + options.offset}) for t in kept]


def score_entries(entries: list[dict], options=None) -> dict[str, Any]:
    by_id = {t.task_id: t for t in offset_tasks(options or ToyOptions())}
    right = [e.get("answer", e.get("sum")) == by_id[e["task_id"]].a + by_id[e["task_id"]].b
             for e in entries]
    return {"n": len(right), "accuracy": round(100 * sum(right) / max(1, len(right)), 1)}


class ToySuite(Suite):
    """An evaluation-only suite in the protocol's ten members (and its own ``--offset`` and
    ``--level`` flags, and an answers-file format besides run directories)."""

    name = "toy"
    title = "Toy"
    episode_model = ToyEpisode
    agent_kinds = (AgentKind("scripted", "NAME", ("right", "wrong"), calls_llm=False),)

    def build(self, options, seed, data_dir, force=False) -> BuiltData:
        path = suite_dir(self.name, data_dir) / "toy.sqlite"
        if force or not path.exists():
            with sqlite3.connect(path) as conn:
                conn.execute("CREATE TABLE IF NOT EXISTS t (x INTEGER)")
            return BuiltData(path, {"content_hash": "toy-db"}, True)
        return BuiltData(path, {"content_hash": "toy-db"}, False)

    def toolset(self) -> ToolSet:
        return ToolSet((add,), "Toy tools")

    def list_tasks(self, options, data_dir=None):
        return offset_tasks(options)

    def open_run(self, options, task_ids, limit, db_seed, data_dir) -> ToyRun:
        return ToyRun(options, task_ids, limit, data_dir)

    def summarize_episodes(self, episodes, manifest=None) -> dict[str, Any]:
        manifest = manifest or {}
        return score_entries(episodes, ToyOptions(offset=manifest.get("offset", 0),
                                                  level=manifest.get("level")))

    def succeeded(self, episode) -> bool:
        return bool((episode.get("score") or {}).get("correct"))

    # optional: the toy's own flags and an answers-file format
    Options = ToyOptions
    answer_markers = ("sum",)  # answers files: {"task_id": ..., "sum": ...}

    def score(self, answers, seed, data_dir, notes, options=None, base_url=None):
        if answers.is_dir():
            return summarize_run(self, answers)
        entries = [json.loads(line) for line in answers.read_text().splitlines() if line.strip()]
        return score_entries(entries)
'''
