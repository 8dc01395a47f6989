"""COMPASS behind the Suite protocol: multi-turn conversations with a simulated user over the
national-parks booking database, scored exactly against the exhaustive ground truth. Its
options are in :mod:`.options`, a run in :mod:`.run`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from travelgym.core.capabilities import (
    Annotation,
    ExactGroundTruth,
    RawIngest,
    RunAnalysis,
    TaskGeneration,
)
from travelgym.core.suite import AgentKind, BuiltData, Imported, ProgressTally, Suite
from travelgym.suites.compass.options import CompassOptions, CompassTrainingOptions
from travelgym.suites.compass.run import CompassRun
from travelgym.suites.compass.tables import METRIC_COLUMNS
from travelgym.suites.compass.trajectory import Episode

SCRIPTED = ("greedy", "sampled", "exhaustive")


class CompassSuite(Suite, ExactGroundTruth, RawIngest, TaskGeneration, RunAnalysis, Annotation):
    """COMPASS (constrained optimisation through multi-turn planning)."""

    name = "compass"
    title = "COMPASS"
    headline_metric = "OR-5"
    description = ("an agent talks with a simulated user, searches 20 US national parks' "
                   "bookings with 18 tools and recommends the optimal feasible package")  # fmt: skip
    order = 0
    Options = CompassOptions
    episode_model = Episode
    agent_kinds = (
        AgentKind("scripted", "NAME", SCRIPTED, calls_llm=False),
        AgentKind("llm"),
        AgentKind("code", runs_code=True),
        AgentKind("local", "GGUF"),
        AgentKind("hf", "CKPT"),
    )
    agent_usage = ("scripted:greedy, scripted:sampled, scripted:exhaustive, llm:MODEL, "
                   "code:MODEL, local:smollm2, hf:CKPT or package.module:factory")  # fmt: skip
    default_agents = tuple(f"scripted:{s}" for s in SCRIPTED)
    model_agent = "llm"
    user_option = "user"
    training_tool_calls = True
    answer_markers = ("recommendation", "final_recommendation")
    summary_details = ("tasks",)
    metric_columns = METRIC_COLUMNS

    def options_call_llm(self, options: CompassOptions) -> bool:
        from travelgym.suites.compass.specs import parse_user_spec

        return parse_user_spec(options.user)[0] != "template"

    def build(self, options, seed, data_dir, force=False) -> BuiltData:
        from travelgym.suites.compass.build import ensure_database

        return ensure_database(seed=seed, data_dir=data_dir, force=force)

    def stats(self, options, seed, db, data_dir, plots) -> dict[str, Any]:
        from travelgym.suites.compass.stats import compute_stats

        path = db if db is not None else self.build(options, seed, data_dir).path
        result = compute_stats(path)
        result["path"] = str(path)
        if plots is not None:
            from travelgym.suites.compass.plots import write_plots

            result["plots"] = [str(p) for p in write_plots(path, plots)]
        return result

    def format_stats(self, result: dict[str, Any]) -> str:
        cal = result["calibration"]
        lines = [f"database: {result['path']}", f"content hash: {result['content_hash']}"]
        lines += [f"  {table:<22} {count:>9,}" for table, count in result["counts"].items()]
        lines.append(f"weekend/weekday price ratio: {cal['weekend_weekday_price_ratio']}")
        lines.append(f"most expensive parks: {', '.join(cal['parks_by_mean_price'][:3])}")
        lines.append(f"direct flight share: {cal['direct_share']}")
        lines += [f"plot: {p}" for p in result.get("plots", [])]
        return "\n".join(lines)

    def toolset(self):
        from travelgym.suites.compass.tools import COMPASS_TOOLSET

        return COMPASS_TOOLSET

    def list_tasks(self, options: CompassOptions, data_dir: Path | None = None) -> list[Any]:
        from travelgym.suites.compass.tasks import load_tasks

        try:
            tasks = load_tasks(options.tasks_file)
        except (OSError, ValueError, RecursionError) as exc:
            from travelgym.core.errors import UserError

            path = options.tasks_file
            where = "" if path is None or str(path) in str(exc) else f"{path}: "
            raise UserError(f"{where}{exc}") from exc
        return [t for t in tasks if options.level is None or t.level == options.level]

    def format_tasks(self, tasks: list[Any]) -> str:
        lines = [f"{'task':<13} {'level':>5}  {'objective':<32} {'constraints':>11}  park"]
        for t in tasks:
            objective = (
                getattr(t.objective, "metric", None) or f"{len(t.objective.features)} features"
            )
            lines.append(f"{t.task_id:<13} {t.level:>5}  {t.objective.type + ': ' + objective:<32}"
                         f" {len(t.constraints):>11}  {', '.join(t.park.park_ids)}")  # fmt: skip
        lines.append(f"{len(tasks)} tasks")
        return "\n".join(lines)

    def open_run(self, options, task_ids, limit, db_seed, data_dir) -> CompassRun:
        return CompassRun(options, task_ids, limit, db_seed, data_dir)

    def tally(self) -> ProgressTally:
        return ProgressTally([("FR", lambda s: s.get("feasible"), 0),
                              ("OR5", lambda s: s.get("top", {}).get("5"), 0)],
                             show_tokens=True)  # fmt: skip

    def format_results(self, results: dict[str, dict[str, Any]]) -> str:
        from travelgym.suites.compass.tables import format_agents_table

        return format_agents_table(results)

    def summarize_episodes(self, episodes: list[dict[str, Any]],
                           manifest: dict[str, Any] | None = None) -> dict[str, Any]:  # fmt: skip
        from travelgym.suites.compass.scoring import PlanScore, summarize

        return summarize([PlanScore.model_validate(e["score"]) for e in episodes if e.get("score")])

    def succeeded(self, episode: dict[str, Any]) -> bool:
        """OR-5: the recommendation is feasible and within the top 5 % of feasible plans."""
        return bool(((episode.get("score") or {}).get("top") or {}).get("5"))

    def task_text(self, task: Any) -> str:
        return task.story

    def score(self, answers: Path, seed: int, data_dir: Path | None, notes: list[str],
              options: Any = None, base_url: str | None = None) -> dict[str, Any]:  # fmt: skip
        from travelgym.core.answers import refuse_nothing_known
        from travelgym.db import connect_readonly
        from travelgym.suites.compass.answers import read_answers, refuse_other_task_version
        from travelgym.suites.compass.ground_truth import ensure_ground_truth
        from travelgym.suites.compass.scoring import score_answers
        from travelgym.suites.compass.task_sets import task_set

        entries = read_answers(answers, notes)
        every = task_set(seed, data_dir)
        refuse_other_task_version(answers, every)
        known = {task_id for task_id, _ in every.slots()}
        refuse_nothing_known(answers, entries, known, "task_id")
        # only the answered tasks are drawn (of a generated set) and their ground truth
        # computed where the full files are not built
        answered = sorted({e["task_id"] for e in entries if e["task_id"] in known})
        tasks = {t.task_id: t for t in every.load(answered)}
        _, truths = ensure_ground_truth(seed=seed, data_dir=data_dir, tasks=every,
                                        task_ids=answered)  # fmt: skip
        conn = connect_readonly(self.build(self.options(), seed, data_dir).path)
        try:
            return score_answers(conn, tasks, truths, entries)
        finally:
            conn.close()

    def format_score(self, result: dict[str, Any]) -> str:
        from travelgym.suites.compass.tables import format_score_table

        return format_score_table(result)

    # re-deriving a run's answers and scores (travelgym.runner.recheck). Version 2: OR-A % on
    # the utility f alone (task files of version 3); a run of version 1 (scored on the
    # objective, then a stated tie-break) keeps its stored scores
    scorer_version = "2"
    answer_field = "final_recommendation"

    answer_from_turns = Imported("travelgym.suites.compass.rescore:last_recommendation")
    rescorer = Imported("travelgym.suites.compass.rescore:compass_rescorer")
    answer_ids = Imported("travelgym.suites.compass.rescore:package_ids")

    # datasets (export dataset)
    dataset_column_help = {
        "level": "1: hotel only; 2: hotel + flight; 3: hotel + flight + permit",
        "objective": "what the optimal package optimises (objective type: metric)",
        "constraints": "number of hard constraints (initial and progressive)",
        "parks": "the national park(s) of the trip (comma-separated park ids)",
        "story": "the simulated user's opening story",
    }

    # hidden from the agent: the constraints the user reveals later (progressive ones, and
    # the final version of a revised one) and the revisions themselves
    answer_key_fields = ("constraints", "revisions")

    def public_task(self, task: Any) -> dict[str, Any]:
        """The task as the agent may know it at the start: its constraints the user states
        from the start, revised ones in the version stated first; no progressive constraint
        and no revision."""
        from travelgym.suites.compass.revisions import stated_constraints

        dump = super().public_task(task)
        stated = zip(stated_constraints(task), task.constraints, strict=True)
        dump["constraints"] = [first.model_dump(mode="json") for first, final in stated
                               if final.revelation == "initial"]  # fmt: skip
        return dump

    def hidden_task(self, task: Any) -> dict[str, Any]:
        """The task's scored constraints (progressive and final versions included) and its
        revisions."""
        dump = task.model_dump(mode="json")
        return {"constraints": dump["constraints"], "revisions": dump.get("revisions", [])}

    def dataset_columns(self, task: Any) -> dict[str, Any]:
        objective = getattr(task.objective, "metric", None) or "weighted features"
        return {"level": task.level, "objective": f"{task.objective.type}: {objective}",
                "constraints": len(task.constraints), "parks": ",".join(task.park.park_ids),
                "story": task.story}  # fmt: skip

    def dataset_ground_truth(self, run: Any) -> dict[str, dict[str, Any]]:
        return {t.task_id: {"ground_truth": run.truths[t.task_id].model_dump(mode="json")}
                for t in run.tasks}  # fmt: skip

    # capabilities
    def solve(self, task_ids, seed, data_dir):
        from travelgym.core.errors import UserError
        from travelgym.suites.compass.ground_truth import ensure_ground_truth
        from travelgym.suites.compass.task_sets import task_set

        every = task_set(seed, data_dir)
        if task_ids:  # only these are drawn and solved (when the full files are not built yet)
            known = {task_id for task_id, _ in every.slots()}
            unknown = [t for t in task_ids if t not in known]
            if unknown:
                raise UserError(f"unknown task id(s): {', '.join(unknown)}")
        path, truths = ensure_ground_truth(seed=seed, data_dir=data_dir, tasks=every,
                                           task_ids=task_ids or None)  # fmt: skip
        return path, [truths[t] for t in task_ids] if task_ids else list(truths.values())

    def format_solution(self, path, truths) -> str:
        lines = [f"ground truth: {path}"]
        for t in truths:
            line = f"{t.task_id}: |X_feas| = {t.feasible_count:,}, optimum = {t.optimum_value}"
            if t.threshold_values:
                line += ", top 5/10/20 % at " + " / ".join(
                    f"{t.threshold_values[a]} ({t.credited[a]:,} credited)"
                    for a in ("5", "10", "20")
                )
            lines.append(line)
        return "\n".join(lines)

    def ingest(self, raw_dir, out, options, data_dir) -> dict[str, Any]:
        from travelgym.core.errors import UserError
        from travelgym.suites.compass.ingest import ingest_raw

        if raw_dir is None or out is None:
            raise UserError("compass ingest needs RAW_DIR (the raw Booking.com-API-shaped JSON "
                            "responses) and --out (the SQLite file to write)")  # fmt: skip
        return {"path": str(out), **ingest_raw(raw_dir, out)}

    def generate_tasks(self, out: Path, task_seed: int | None, data_dir: Path | None,
                       db_seed: int = 0) -> str:  # fmt: skip
        from travelgym.suites.compass.taskgen import write_task_file

        meta = write_task_file(out, task_seed=task_seed, data_dir=data_dir, db_seed=db_seed)
        return f"wrote {meta['count']} tasks to {out} (sha256 {meta['sha256'][:12]})"

    def report_body(self, runs, *, data_dir, max_result_chars, include_analysis):
        from travelgym.suites.compass.report import report_body

        return report_body(runs, data_dir=data_dir, max_result_chars=max_result_chars,
                           include_analysis=include_analysis)  # fmt: skip

    analysis_functions = {
        "analyze_runs": "travelgym.suites.compass.analysis.metrics:analyze_runs",
        "write_plots": "travelgym.suites.compass.analysis.plots:write_plots",
        "format_analysis": "travelgym.suites.compass.analysis.summary:format_analysis",
        "columns": "travelgym.suites.compass.analysis.columns:ALL",
    }

    def export_sheet(self, run_dir, out, *, conversations, seed, fmt, responses):
        from travelgym.suites.compass.analysis.annotate import export_sheet

        result = export_sheet(run_dir, out, conversations=conversations, seed=seed, fmt=fmt,
                              responses=responses)  # fmt: skip
        return (f"wrote {result.rows} response(s) from {result.conversations} conversation(s) "
                f"(of {result.eligible} eligible) to {result.path}")  # fmt: skip

    def summarize_sheet(self, sheet):
        from travelgym.suites.compass.analysis.annotate import summarize_sheet

        return summarize_sheet(sheet)

    def format_sheet_summary(self, result):
        from travelgym.suites.compass.analysis.annotate import format_summary

        return format_summary(result)

    # training (travelgym.training reaches COMPASS's training side only through these)
    trainable = True
    training_task_key = "task_id"
    TrainingOptions = CompassTrainingOptions
    sft_min_score = 0.5
    sft_min_score_note = "any feasible plan"

    def training_env(self, **kwargs: Any) -> Any:
        from travelgym.suites.compass.environment import CompassTrainingEnv

        return CompassTrainingEnv.from_data(**kwargs)

    def grpo_env(self, settings: Any) -> Any:
        own = settings.suite_options
        return self.training_env(level=own.level, user=own.user,
                                 max_turns=own.user_turns, seed=settings.seed,
                                 db_seed=settings.db_seed, data_dir=settings.data_dir,
                                 limit=settings.limit)  # fmt: skip

    def reward(self, episode: Any, **kwargs: Any) -> Any:
        from travelgym.suites.compass.training import compass_episode_reward

        return compass_episode_reward(episode, **kwargs)

    def sft_keep(self, episode: dict[str, Any], min_score: float) -> str | None:
        from travelgym.suites.compass.training import sft_keep

        return sft_keep(episode, min_score)

    def sft_chat(self, episode: dict[str, Any], source: Any) -> tuple[list, list]:
        from travelgym.suites.compass.training import sft_chat

        return sft_chat(episode, source)

    def tiny_texts(self) -> list[str]:
        from travelgym.suites.compass.training import tiny_texts

        return tiny_texts()
