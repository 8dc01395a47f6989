"""TravelPlanner (Xie et al., 2024) behind the Suite protocol: the user ingests the dataset
(and optionally the database) once, or passes it to ``run --data``; an episode is one query,
planned in sole-planning mode (the reference information in the prompt) or two-stage mode (the
7 tools), and scored by the 8 commonsense and 5 hard constraints."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from travelgym.core.agent_kinds import model_kinds, rule_kinds
from travelgym.core.answers import delivered_answer
from travelgym.core.capabilities import RawIngest
from travelgym.core.suite import (
    BuiltData,
    Imported,
    ProgressTally,
    Suite,
    SuiteOptions,
    suite_flag,
)
from travelgym.suites.travelplanner.planner_episode import PlannerEpisode

DATA_HELP = ("TravelPlanner dataset file or directory (CSV, JSONL or Parquet as `datasets` "
             "exports it) to use instead of the ingested one (ingested into a cache once).")  # fmt: skip
DATABASE_HELP = ("TravelPlanner's database directory (flights/, accommodations/, ...); plans "
                 "are checked against it (else against each query's reference information).")  # fmt: skip


class PlannerOptions(SuiteOptions):
    """TravelPlanner's own flags."""

    split: Literal["train", "validation", "test"] | None = suite_flag(
        None, help="TravelPlanner split (default: the only one ingested, else validation).",
        commands=("run", "tasks", "score", "ingest", "export"))  # fmt: skip
    difficulty: Literal["easy", "medium", "hard"] | None = suite_flag(
        None, help="Only queries of this difficulty.", commands=("run", "tasks", "export"),
        conflicts=("task_ids",), counterpart="level")  # fmt: skip
    mode: Literal["sole-planning", "two-stage"] = suite_flag(
        "sole-planning", help="TravelPlanner mode: sole-planning (the reference information in "
        "the prompt, no tools) or two-stage (the 7 tools).", commands=("run",))  # fmt: skip
    data: str | None = suite_flag(None, help=DATA_HELP, metavar="PATH", path="any",
                                  commands=("run", "tasks", "score", "export"))  # fmt: skip
    database: str | None = suite_flag(None, help=DATABASE_HELP, metavar="DIR", path="dir",
                                      commands=("run", "tasks", "score", "ingest",
                                                "export"))  # fmt: skip
    dataset: str | None = suite_flag(None, help="TravelPlanner dataset file or directory to "
                                     "ingest (CSV, JSONL or Parquet), or a Hugging Face dataset "
                                     "read through `datasets` (osunlp/TravelPlanner[:SPLIT]; "
                                     "offline from its local cache).", commands=("ingest",),
                                     metavar="PATH|NAME")  # fmt: skip
    max_steps: int = suite_flag(30, help="The most agent steps of an episode (two-stage).",
                                commands=("run",), counterpart="max_turns", ge=1, le=200)  # fmt: skip


class PlannerTrainingOptions(SuiteOptions):
    """TravelPlanner's own flags of ``train grpo``."""

    difficulty: Literal["easy", "medium", "hard"] | None = suite_flag(
        None, help="Train on queries of this difficulty only.", commands=("grpo",))  # fmt: skip


def _data(options: PlannerOptions, data_dir: Path | None):
    from travelgym.suites.travelplanner.source import PlannerData

    return PlannerData.open(options.data, options.database, data_dir, options.split)


class TravelPlannerSuite(Suite, RawIngest):
    """TravelPlanner (sole-planning and two-stage tool use, 13 constraints)."""

    name = "travelplanner"
    title = "TravelPlanner"
    headline_metric = "Final"
    description = ("TravelPlanner (Xie et al., 2024) on data you supply: plan a US trip from "
                   "reference information or with 7 tools; 8 commonsense and 5 hard constraints")  # fmt: skip
    order = 2
    Options = PlannerOptions
    episode_model = PlannerEpisode
    # tool:MODEL is the name llm:MODEL had before issue 33 (runs made with it resume)
    agent_kinds = (*rule_kinds("scripted"), *model_kinds("llm", "tool", "react", "b2t"))
    agent_usage = ("scripted, llm:MODEL (also tool:MODEL), react:MODEL, b2t:MODEL, local:smollm2, "
                   "hf:CKPT or package.module:factory")  # fmt: skip
    default_agents = ("scripted",)
    model_agent = "llm"
    answer_markers = ("idx", "plan")  # a TravelPlanner submission line
    summary_details = ("constraints",)
    metric_columns = Imported("travelgym.suites.travelplanner.scoring:METRIC_COLUMNS")  # type: ignore[assignment]

    answer_key_fields = ("annotated_plan",)  # the reference plan: kept out of datasets

    def dataset_splits(self, options: PlannerOptions, data_dir: Path | None = None) -> dict:
        """The ``--split`` given, else every split of the data."""
        if options.split is not None:
            return {options.split: options}
        data = _data(options, data_dir)
        data.close()
        given = options.model_dump(exclude_unset=True)
        return {s: PlannerOptions(**{**given, "split": s}) for s in data.splits}

    def options_of_run(self, manifest: dict[str, Any]) -> PlannerOptions:
        """The split a run was made on."""
        return PlannerOptions(split=manifest.get("split"))

    # data
    def ingest(self, raw_dir, out, options, data_dir) -> dict[str, Any]:
        """Ingest ``--dataset`` (or RAW_DIR) and ``--database`` into the data directory (or
        ``--out``)."""
        from travelgym.core.errors import UserError
        from travelgym.suites.travelplanner.hub import parse_hub_name
        from travelgym.suites.travelplanner.ingest import ingest

        dataset = options.dataset or raw_dir
        if dataset is None:
            raise UserError("travelplanner ingest needs --dataset PATH (the dataset file or "
                            "directory) or --dataset osunlp/TravelPlanner[:SPLIT], and "
                            "optionally --database DIR")  # fmt: skip
        if not Path(dataset).expanduser().exists() and not parse_hub_name(str(dataset)):
            raise UserError(f"--dataset {dataset}: no such file or directory (nor a Hugging "
                            f"Face dataset name such as osunlp/TravelPlanner:validation)")  # fmt: skip
        return ingest(dataset, Path(options.database) if options.database else None,
                      data_dir, split=options.split, out=out)  # fmt: skip

    def build(self, options, seed, data_dir, force=False) -> BuiltData:
        """The ingested file (TravelPlanner is ingested, never built)."""
        data = _data(options, data_dir)
        data.close()
        meta = {k: str(v) for k, v in data.meta.items()}
        return BuiltData(data.path, meta, False)

    def stats(self, options, seed, db, data_dir, plots) -> dict[str, Any]:
        """The ingested data's metadata (queries per split, records per table)."""
        from travelgym.suites.travelplanner.ingest import open_ingested

        path, meta = open_ingested(data_dir, db) if db is not None else (None, None)
        if meta is None:
            data = _data(options, data_dir)
            data.close()
            path, meta = data.path, data.meta
        return {**meta, "path": str(path)}

    def format_stats(self, result: dict[str, Any]) -> str:
        """See :func:`~travelgym.suites.travelplanner.listing.format_stats`."""
        from travelgym.suites.travelplanner.listing import format_stats

        return format_stats(result)

    # tools
    def toolset(self):
        """The 7 tools."""
        from travelgym.suites.travelplanner.tools import PLANNER_TOOLSET

        return PLANNER_TOOLSET

    def tool_server(self, options, seed, db, data_dir):
        """Contexts over the ingested database (``--db``: another ingested file)."""
        from travelgym.suites.travelplanner.sandbox_db import DatabaseSandbox
        from travelgym.suites.travelplanner.tools import TOOLS_INTRO, PlannerContext

        path = db if db is not None else self.build(options, seed, data_dir).path
        DatabaseSandbox.from_path(path).close()  # refuses data ingested without the database
        return (lambda: PlannerContext(DatabaseSandbox.from_path(path))), TOOLS_INTRO

    # tasks
    def list_tasks(self, options, data_dir: Path | None = None) -> list[Any]:
        """The public view of the split's queries (of one level with ``--difficulty``)."""
        from travelgym.suites.travelplanner.listing import TaskRecord

        data = _data(options, data_dir)
        try:
            queries = data.queries(options.split)
        finally:
            data.close()
        return [TaskRecord.of(q) for q in queries if options.difficulty in (None, q.level)]

    def format_tasks(self, tasks: list[Any]) -> str:
        """The queries as a table."""
        from travelgym.suites.travelplanner.listing import format_tasks

        return format_tasks(tasks)

    # runs
    def open_run(self, options, task_ids, limit, db_seed, data_dir):
        """See :class:`~travelgym.suites.travelplanner.run.PlannerRun`."""
        from travelgym.suites.travelplanner.run import PlannerRun

        return PlannerRun(options, task_ids, limit, data_dir)

    def tally(self) -> ProgressTally:
        """DR and Final so far."""
        return ProgressTally([("DR", lambda s: s.get("delivered"), 0),
                              ("Final", lambda s: s.get("final"), 1)])  # fmt: skip

    def format_results(self, results: dict[str, dict[str, Any]]) -> str:
        """The metrics by agent and level."""
        from travelgym.suites.travelplanner.scoring import format_table

        return format_table(results)

    def summarize_episodes(self, episodes: list[dict[str, Any]],
                           manifest: dict[str, Any] | None = None) -> dict[str, Any]:  # fmt: skip
        """:func:`~travelgym.suites.travelplanner.scoring.summarize_episodes`, with the run's
        mode."""
        from travelgym.suites.travelplanner.scoring import summarize_episodes

        return {**summarize_episodes(list(episodes)), "mode": (manifest or {}).get("mode")}

    def succeeded(self, episode: dict[str, Any]) -> bool:
        """The final pass: the plan meets every commonsense and hard constraint."""
        from travelgym.suites.travelplanner.plans import result_of_score

        score = episode.get("score")
        return bool(score and "result" in score and result_of_score(score).final_pass)

    def headline_metrics(self, summary: dict[str, Any]) -> dict[str, float]:
        """The six rates over all queries (DR, commonsense and hard micro/macro, final)."""
        overall = (summary.get("metrics") or {}).get("overall") or {}
        return {k: float(v) for k, v in overall.items() if k != "queries"}

    def task_text(self, task: Any) -> str:
        """The query's natural-language request."""
        return task.query

    # scores
    def score(self, answers, seed, data_dir, notes, options=None, base_url=None) -> dict[str, Any]:
        """A run directory, or a TravelPlanner submission JSONL file."""
        from travelgym.suites.travelplanner.scoring import score_run_dir, score_submission_file

        if Path(answers).is_dir():
            return score_run_dir(Path(answers), notes)
        return score_submission_file(Path(answers), options or PlannerOptions(), data_dir)

    def format_score(self, result: dict[str, Any]) -> str:
        """The metrics and per-constraint counts."""
        from travelgym.suites.travelplanner.scoring import format_score

        return format_score(result)

    # re-deriving a run's answers and scores (travelgym.runner.recheck): a stored score means
    # what the evaluation of the run's evaluation_version says
    scorer_version = Imported("travelgym.suites.travelplanner.run:EVALUATION_VERSION")  # type: ignore[assignment]
    scorer_version_key = "evaluation_version"

    answer_from_turns = staticmethod(delivered_answer)
    rescorer = Imported("travelgym.suites.travelplanner.rescore:planner_rescorer")

    # answer_ids stays the default: a plan names places by name, and its flight numbers are
    # no tool result's in sole-planning mode (the reference information is in the prompt)

    def report_body(self, runs, *, data_dir, max_result_chars, include_analysis):
        """A summary table of the runs."""
        from travelgym.suites.travelplanner.report import report_body

        return report_body(runs)

    # training
    trainable = True
    training_task_key = "task_id"
    TrainingOptions = PlannerTrainingOptions
    sft_min_score = 1.0
    sft_min_score_note = "the share of constraints a kept plan passes (1: every one)"

    def training_env(self, split: str = "train", **kwargs: Any) -> Any:
        """TravelPlanner as a text environment (B2T actions) over an ingested split."""
        from travelgym.suites.travelplanner.environment import PlannerTrainingEnv

        return PlannerTrainingEnv.from_split(split, **kwargs)

    def grpo_env(self, settings: Any) -> Any:
        """:meth:`training_env` for ``train grpo``'s settings."""
        return self.training_env(settings.split, difficulty=settings.suite_options.difficulty,
                                 max_turns=settings.max_turns, data_dir=settings.data_dir,
                                 limit=settings.limit, seed=settings.seed)  # fmt: skip

    def reward(self, episode: Any, **kwargs: Any) -> Any:
        """The reward of a scored episode (:func:`~.training.planner_reward`)."""
        from travelgym.suites.travelplanner.training import episode_reward

        return episode_reward(episode)

    def warmup_reward(self, episode: Any, breakdown: dict[str, Any] | None) -> float:
        """1 for a delivered plan, else 0."""
        from travelgym.suites.travelplanner.training import format_reward

        return format_reward(episode)

    def compact_prompt(self) -> Any:
        """The opening chat unchanged (TravelPlanner's prompt is already short)."""
        return lambda messages, env: messages

    def sft_keep(self, episode: dict[str, Any], min_score: float, **filters: Any) -> str | None:
        """Plans whose constraint pass share reaches ``min_score``."""
        from travelgym.suites.travelplanner.training import sft_keep

        return sft_keep(episode, min_score)

    def sft_chat(self, episode: dict[str, Any], source: Any) -> tuple[list, list]:
        """The episode's transcript and the tool schemas."""
        return list(episode.get("messages") or []), self.tool_registry().openai_schemas()

    def tiny_texts(self) -> list[str]:
        """Prompts and an example plan, for the tiny model's tokenizer."""
        from travelgym.suites.travelplanner import prompts

        return [prompts.SOLE_SYSTEM, prompts.TOOL_SYSTEM, prompts.EXAMPLE]
