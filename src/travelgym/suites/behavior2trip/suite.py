"""Behavior2Trip behind the Suite protocol: one planning episode per instance, in which the agent
infers preferences from a behaviour trajectory, uses 9 tools and delivers a multi-day plan
scored by the 32 rule checks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from travelgym.core.agent_kinds import model_kinds, rule_kinds
from travelgym.core.answers import delivered_answer
from travelgym.core.capabilities import ChainAnnotation, QualityControl, RunAnalysis
from travelgym.core.suite import (
    BuiltData,
    Imported,
    ProgressTally,
    SftFilter,
    Suite,
)
from travelgym.suites.behavior2trip.columns import METRIC_COLUMNS, OPTIONAL
from travelgym.suites.behavior2trip.instance_sets import load_split
from travelgym.suites.behavior2trip.integration_hooks import TripIntegrationHooks
from travelgym.suites.behavior2trip.options import (
    ChainOptions,
    QualityOptions,
    SftExportOptions,
    TripOptions,
    TripTrainingOptions,
)
from travelgym.suites.behavior2trip.run import Behavior2TripRun
from travelgym.suites.behavior2trip.trip_episode import TripEpisode


class Behavior2TripSuite(
    TripIntegrationHooks,
    Suite,
    ChainAnnotation,
    QualityControl,
    RunAnalysis,
):
    """Behavior2Trip (behaviour-aware personalised trip planning)."""

    name = "behavior2trip"
    title = "Behavior2Trip"
    headline_metric = "Final"
    description = ("an agent infers preferences from click/favourite/book behaviour and plans a "
                   "multi-day trip in one of 24 Chinese cities with 9 tools; 32 rule checks")  # fmt: skip
    order = 1
    Options = TripOptions
    command_options = (ChainOptions, QualityOptions, SftExportOptions)
    episode_model = TripEpisode
    agent_kinds = (*rule_kinds("scripted", "oracle"),
                   *model_kinds("llm", "react", "b2t", runs_code=True))  # fmt: skip
    agent_usage = ("scripted, oracle, llm:MODEL, react:MODEL, b2t:MODEL, local:smollm2, hf:CKPT "
                   "or package.module:factory")  # fmt: skip
    default_agents = ("scripted",)
    model_agent = "b2t"
    answer_markers = ("instance_id", "answer", "final_answer")
    summary_details = ("instances",)
    metric_columns = METRIC_COLUMNS
    optional_metrics = OPTIONAL
    tools_run_code = True  # the Python tool

    # a plan passing every check, and the hidden profile the agent infers from the behaviour
    answer_key_fields = ("witness", "profile")

    def options_of_run(self, manifest: dict[str, Any]) -> TripOptions:
        return TripOptions(scale=manifest.get("db_scale") or "small",
                           instances=manifest.get("instances") or "filtered",
                           noise=manifest.get("noise") or 0.0)  # fmt: skip

    def options_call_llm(self, options: TripOptions) -> bool:
        return options.judge is not None or options.clarify not in (None, "template")

    def build(self, options, seed, data_dir, force=False) -> BuiltData:
        from travelgym.suites.behavior2trip.build import ensure_database

        return ensure_database(scale=options.scale, seed=seed, data_dir=data_dir, force=force)

    def stats(self, options, seed, db, data_dir, plots) -> dict[str, Any]:
        from travelgym.suites.behavior2trip.instances import instance_stats
        from travelgym.suites.behavior2trip.stats import database_stats

        if db is not None:  # the instances are drawn over the generated database, not FILE
            return {"path": str(db), **database_stats(db), "instances": None}
        built = self.build(options, seed, data_dir)
        result = {"path": str(built.path), **database_stats(built.path),
                  "instances": instance_stats(data_dir=data_dir, db=built,
                                              noise=options.noise)}  # fmt: skip
        if plots is not None:
            from travelgym.suites.behavior2trip.plots import write_instance_plots

            result["plots"] = [str(p) for p in write_instance_plots(result["instances"], plots)]
        return result

    def format_stats(self, result: dict[str, Any]) -> str:
        from travelgym.suites.behavior2trip.listing import format_table2

        lines = [f"database: {result['path']}", f"content hash: {result['content_hash']}"]
        lines += [f"  {table:<22} {count:>9,}" for table, count in result["counts"].items()]
        lines.append(f"  {'total':<22} {result['total_records']:>9,}")
        lines.append("every preference value covered in every city: "
                     f"{result['coverage']['complete']}")  # fmt: skip
        if result.get("instances") is None:
            lines.append("instances: none described (they are drawn over the generated "
                         "database: drop --db)")  # fmt: skip
        else:
            lines += format_table2(result["instances"])
        lines += [f"plot: {p}" for p in result.get("plots", [])]
        return "\n".join(lines)

    def toolset(self):
        from travelgym.suites.behavior2trip.tools import TRIPS_TOOLSET

        return TRIPS_TOOLSET

    def list_tasks(self, options: TripOptions, data_dir: Path | None = None) -> list[Any]:
        _, instances, _ = load_split(options.split, data_dir=data_dir, scale=options.scale,
                                     instances=options.instances, difficulty=options.difficulty,
                                     noise=options.noise)  # fmt: skip
        return instances

    def listed_task(self, task: Any) -> dict[str, Any]:
        """The request and the length of the behaviour history (the hidden profile and the
        witness are the answer key of the checks; ``--ground-truth`` lists them too)."""
        from travelgym.suites.behavior2trip.listing import public_record

        return public_record(task).model_dump(mode="json")

    def format_tasks(self, tasks: list[Any]) -> str:
        from travelgym.suites.behavior2trip.listing import format_instances, public_record

        return format_instances([public_record(x) for x in tasks])

    def open_run(self, options, task_ids, limit, db_seed, data_dir) -> Behavior2TripRun:
        return Behavior2TripRun(options, task_ids, limit, db_seed, data_dir)

    def tally(self) -> ProgressTally:
        return ProgressTally([("DR", lambda s: s.get("delivered"), 0),
                              ("Final", lambda s: s.get("final"), 1)])  # fmt: skip

    def format_results(self, results: dict[str, dict[str, Any]]) -> str:
        from travelgym.suites.behavior2trip.columns import format_trips_table

        return format_trips_table(results)

    def score(self, answers, seed, data_dir, notes, options=None, base_url=None) -> dict[str, Any]:
        from travelgym.suites.behavior2trip.score_files import score_trips

        return score_trips(answers, seed, data_dir, notes, options or TripOptions(), base_url)

    def format_score(self, result: dict[str, Any]) -> str:
        from travelgym.suites.behavior2trip.columns import format_score_table

        return format_score_table(result)

    # re-deriving a run's answers and scores (travelgym.runner.recheck): a stored score means
    # what the 32 checks of its checks_version say (runs before the key existed: version 1)
    scorer_version = Imported("travelgym.suites.behavior2trip.checks:CHECKS_VERSION")  # type: ignore[assignment]
    scorer_version_key = "checks_version"

    answer_from_turns = staticmethod(delivered_answer)  # the plan, tags and all
    rescorer = Imported("travelgym.suites.behavior2trip.rescore:trip_rescorer")
    answer_ids = Imported("travelgym.suites.behavior2trip.rescore:plan_ids")

    analysis_functions = {
        "analyze_runs": "travelgym.suites.behavior2trip.analysis:analyze_runs",
        "write_plots": "travelgym.suites.behavior2trip.analysis_plots:write_length_plots",
        "format_analysis": "travelgym.suites.behavior2trip.analysis_text:format_analysis",
        "columns": "travelgym.suites.behavior2trip.analysis_text:LEGEND",
    }

    def report_body(self, runs, *, data_dir, max_result_chars, include_analysis):
        from travelgym.suites.behavior2trip.report import report_body

        return report_body(runs, data_dir=data_dir, max_result_chars=max_result_chars,
                           include_analysis=include_analysis)  # fmt: skip

    # training (travelgym.training reaches Behavior2Trip's training side only through these)
    trainable = True
    training_task_key = "instance_id"
    training_default = True
    training_settings = ("reward", "prompt", "no_memory", "no_penalty")
    TrainingOptions = TripTrainingOptions
    sft_min_score = 1.0
    sft_min_score_note = "and only plans passing Final unless --keep-failing"
    sft_filters = (  # read by training.sft_keep
        SftFilter("keep-failing", "Also keep plans that fail Final (some applicable check "
                  "failed); the other thresholds still apply", is_flag=True),
        SftFilter("min-c-micro", "Minimum share (0-1) of the applicable commonsense checks "
                  "a kept plan passes, its C micro"),
        SftFilter("min-upc-micro", "Minimum share (0-1) of the applicable "
                  "personalisation checks a kept plan passes, its UPC micro"),
    )  # fmt: skip

    def training_env(self, split: str = "train", **kwargs: Any) -> Any:
        from travelgym.suites.behavior2trip.environment import TripTrainingEnv

        return TripTrainingEnv.from_split(split, **kwargs)

    def grpo_env(self, settings: Any) -> Any:
        own = settings.suite_options
        return self.training_env(settings.split, difficulty=own.difficulty,
                                 max_turns=settings.max_turns, memory=not settings.no_memory,
                                 penalty=not settings.no_penalty, seed=settings.seed,
                                 db_seed=settings.db_seed, data_dir=settings.data_dir,
                                 scale=own.scale, limit=settings.limit)  # fmt: skip

    def reward(self, episode: Any, **kwargs: Any) -> Any:
        from travelgym.suites.behavior2trip.training import b2t_episode_reward

        return b2t_episode_reward(episode, **kwargs)

    def warmup_reward(self, episode: Any, breakdown: dict[str, Any] | None) -> float:
        from travelgym.suites.behavior2trip.training import format_reward

        return format_reward(episode, breakdown)["total"]

    def compact_prompt(self) -> Any:
        from travelgym.suites.behavior2trip.training import compact_messages

        return compact_messages

    def sft_keep(self, episode: dict[str, Any], min_score: float, **filters: Any) -> str | None:
        from travelgym.suites.behavior2trip.training import sft_keep

        return sft_keep(episode, min_score, **filters)

    def sft_chat(self, episode: dict[str, Any], source: Any) -> tuple[list, list]:
        from travelgym.suites.behavior2trip.training import sft_chat

        return sft_chat(episode, source)

    def tiny_texts(self) -> list[str]:
        from travelgym.suites.behavior2trip.training import tiny_texts

        return tiny_texts()

    # Chain-of-Action annotation (suites/behavior2trip/chains.py, chain_annotators.py)
    def annotate_chains(self, annotator, out, options, *, task_ids, limit, base_url,
                        client_options, concurrency, db_seed, data_dir) -> dict[str, Any]:  # fmt: skip
        from travelgym.suites.behavior2trip.chain_annotators import annotate_chains

        return annotate_chains(annotator, out, options, task_ids=task_ids, limit=limit,
                               base_url=base_url, client_options=client_options,
                               concurrency=concurrency, db_seed=db_seed, data_dir=data_dir)  # fmt: skip

    def format_chains(self, result: dict[str, Any]) -> str:
        from travelgym.suites.behavior2trip.chains import summary_text

        return summary_text(result)

    def chain_examples(self, path, min_score, data_dir, **filters) -> Any:
        from travelgym.suites.behavior2trip.chains import chain_examples

        return chain_examples(path, min_score, data_dir, **filters)

    # quality control (docs/behavior2trip/quality.md)
    def quality_assess(self, out, *, backend, split, limit, chains, data_dir, scale, db_seed,
                       base_url, concurrency) -> dict[str, Any]:  # fmt: skip
        from travelgym.suites.behavior2trip.quality_run import assess

        return assess(out, backend=backend, split=split, limit=limit, chains=chains,
                      data_dir=data_dir, scale=scale, db_seed=db_seed, base_url=base_url,
                      concurrency=concurrency)  # fmt: skip

    def quality_apply(self, qc, out_dir, *, data_dir) -> dict[str, Any]:
        from travelgym.suites.behavior2trip.quality_run import apply

        return apply(qc, out_dir, data_dir=data_dir)

    def quality_sheet(self, qc, out, *, sample, seed, data_dir) -> str:
        from travelgym.suites.behavior2trip.quality_run import sheet

        return sheet(qc, out, sample=sample, seed=seed, data_dir=data_dir)

    def quality_summary(self, sheet: Path) -> dict[str, Any]:
        from travelgym.suites.behavior2trip.quality_sheet import read_sheet, summarize_rows

        return summarize_rows(read_sheet(sheet))

    def format_quality(self, kind: str, result: dict[str, Any]) -> str:
        from travelgym.suites.behavior2trip.quality_run import format_result

        return format_result(kind, result)
