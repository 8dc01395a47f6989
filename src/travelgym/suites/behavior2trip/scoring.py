"""Behavior2Trip metrics (paper Section 5.1): Delivery Rate, Micro / Macro pass rates of the
commonsense (C) and user-preference (UPC) constraints, Final pass rate and the LLM-judge rate.

One answer is scored by :func:`score_plan` into an :class:`InstanceResult` (the 32 check results).
:func:`summarize` aggregates results, overall and by difficulty; :func:`score_answers` scores an
answers file or a run directory (read by :func:`read_answers`). Conventions (TravelPlanner's):
micro = passed checks / applicable checks over all answers; macro = share of answers passing all
their applicable checks of the group; an undelivered answer fails every applicable check (its
checks count in the micro denominators) and counts as failing in macro and final. An answer is
delivered when its plan has every day of the trip with the required slots (checks version 4,
:mod:`~travelgym.suites.behavior2trip.checks.credit`), not merely when a plan parses. See
``docs/behavior2trip/metrics.md``.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, computed_field

from travelgym.core.answers import is_trial_number
from travelgym.core.errors import UserError
from travelgym.jsonl import JsonLinesError, iter_json_lines
from travelgym.suites.behavior2trip.checks import CheckResult, PlanDB, check_plan
from travelgym.suites.behavior2trip.clarify_metrics import (
    TURNS,
    add_turns,
    episode_turns,
)
from travelgym.suites.behavior2trip.instances import Instance
from travelgym.suites.behavior2trip.judge import JudgeVerdict
from travelgym.suites.behavior2trip.plan_parse import parse_plan
from travelgym.suites.behavior2trip.profiles import DIFFICULTIES

RUN_FILE = "episodes.jsonl"
ANSWER_FIELD = "answer"  # answers JSONL: {"instance_id": ..., "answer": "<final text>"}
RUN_ANSWER_FIELD = "final_answer"  # run directory: episodes.jsonl lines
METRICS = ("DR", "C_micro", "C_macro", "UPC_micro", "UPC_macro", "final")


class InstanceResult(BaseModel):
    """The verdict on one answer: delivery, parse problems and the 32 check results."""

    instance_id: str
    trial: int = 0
    difficulty: str
    delivered: bool
    problems: list[str] = Field(default_factory=list)
    checks: list[CheckResult] = Field(default_factory=list)
    judge: JudgeVerdict | None = None

    def _count(self, group: str, passed: bool) -> int:
        return sum(
            c.group == group and c.applicable and (c.passed or not passed) for c in self.checks
        )

    @computed_field
    @property
    def c_passed(self) -> int:
        return self._count("C", True)

    @computed_field
    @property
    def c_applicable(self) -> int:
        return self._count("C", False)

    @computed_field
    @property
    def upc_passed(self) -> int:
        return self._count("UPC", True)

    @computed_field
    @property
    def upc_applicable(self) -> int:
        return self._count("UPC", False)

    @computed_field
    @property
    def c_pass(self) -> bool:
        return self.delivered and self.c_passed == self.c_applicable

    @computed_field
    @property
    def upc_pass(self) -> bool:
        return self.delivered and self.upc_passed == self.upc_applicable

    @computed_field
    @property
    def final(self) -> bool:
        return self.c_pass and self.upc_pass

    def failed(self) -> list[str]:
        """Ids of the applicable checks that failed."""
        return [c.id for c in self.checks if c.passed is False]


def _db(db: PlanDB | sqlite3.Connection | str | os.PathLike[str]) -> tuple[PlanDB, bool]:
    if isinstance(db, PlanDB):
        return db, False
    if isinstance(db, sqlite3.Connection):
        return PlanDB(db), False
    return PlanDB.open(db), True


def score_result(instance: Instance, answer: str | None,
                 db: PlanDB | sqlite3.Connection | str | os.PathLike[str],
                 trial: int = 0) -> InstanceResult:  # fmt: skip
    """Parse and check one answer text (``None``: nothing delivered)."""
    plan, problems = parse_plan(answer) if answer is not None else (None, ["no answer"])
    pdb, owned = _db(db)
    try:
        delivered, checks = check_plan(plan, instance, pdb)
    finally:
        if owned:
            pdb.close()
    return InstanceResult(instance_id=instance.instance_id, trial=trial,
                          difficulty=instance.difficulty, delivered=delivered,
                          problems=problems, checks=checks)  # fmt: skip


def score_plan(instance: Instance, answer: str | None,
               db: PlanDB | sqlite3.Connection | str | os.PathLike[str]) -> dict[str, Any]:  # fmt: skip
    """:func:`score_result` as JSON (what an episode stores as its ``score``)."""
    return score_result(instance, answer, db).model_dump(mode="json")


def _pct(num: float, den: float) -> float | None:
    return round(100.0 * num / den, 2) if den else None


def aggregate(results: list[InstanceResult]) -> dict[str, Any]:
    """DR, C_micro, C_macro, UPC_micro, UPC_macro, final (percent), n, and the LLM-judge rate
    (``LLM``: passes among the judged answers, ``None`` without a judge; ``LLM_errors``)."""
    n = len(results)
    judged = [r.judge for r in results if r.judge is not None]
    scored = [j for j in judged if j.passed is not None]
    return {
        "n": n,
        "DR": _pct(sum(r.delivered for r in results), n),
        "C_micro": _pct(sum(r.c_passed for r in results), sum(r.c_applicable for r in results)),
        "C_macro": _pct(sum(r.c_pass for r in results), n),
        "UPC_micro": _pct(
            sum(r.upc_passed for r in results), sum(r.upc_applicable for r in results)
        ),
        "UPC_macro": _pct(sum(r.upc_pass for r in results), n),
        "final": _pct(sum(r.final for r in results), n),
        "LLM": _pct(sum(bool(j.passed) for j in scored), len(scored)) if judged else None,
        "LLM_errors": len(judged) - len(scored),
    }


def summarize(results: Iterable[InstanceResult | dict[str, Any]]) -> dict[str, Any]:
    """The stable score JSON: ``overall`` and ``by_difficulty`` (each :func:`aggregate`) and
    ``instances`` (every result with its checks)."""
    rows = [
        r if isinstance(r, InstanceResult) else InstanceResult.model_validate(r) for r in results
    ]
    levels = [d for d in DIFFICULTIES if any(r.difficulty == d for r in rows)]
    return {
        "overall": aggregate(rows),
        "by_difficulty": {d: aggregate([r for r in rows if r.difficulty == d]) for d in levels},
        "instances": [r.model_dump(mode="json") for r in rows],
    }


class AnswerFileError(UserError, ValueError):
    """An answers file that cannot be read; the message names the file and line."""


def read_answers(
    path: str | os.PathLike[str], notes: list[str] | None = None
) -> list[dict[str, Any]]:
    """Entries ``{"instance_id", "trial", "answer"}`` from an answers JSONL file (lines
    ``{"instance_id", "answer"}``) or a run directory (its episodes, read strictly; a killed
    run's episodes are all scored, and ``notes`` gets how many are missing)."""
    path = Path(path)
    if path.is_dir():
        return _run_answers(path, notes)
    try:
        lines = list(iter_json_lines(path))
    except JsonLinesError as exc:
        raise AnswerFileError(str(exc)) from None
    entries = []
    for number, entry in lines:
        iid = entry.get("instance_id", entry.get("task_id")) if isinstance(entry, dict) else None
        if not isinstance(iid, str):
            raise AnswerFileError(f"{path}:{number}: expected an object with 'instance_id' and "
                                  f"'{ANSWER_FIELD}' (or '{RUN_ANSWER_FIELD}')")  # fmt: skip
        trial = entry.get("trial", 0)
        if not is_trial_number(trial):
            raise AnswerFileError(f"{path}:{number}: 'trial' must be a whole number >= 0")
        if RUN_ANSWER_FIELD not in entry and ANSWER_FIELD not in entry:
            # a misspelt key would otherwise score as an instance left unanswered
            raise AnswerFileError(f"{path}:{number}: no '{ANSWER_FIELD}' (write null for an "
                                  "instance left unanswered)")  # fmt: skip
        answer = entry.get(RUN_ANSWER_FIELD, entry.get(ANSWER_FIELD))
        entries.append({"instance_id": iid, "trial": trial, "answer": answer})
        if isinstance(entry.get(TURNS), int):  # RQ1: the clarification turns it took
            entries[-1][TURNS] = entry[TURNS]
    return entries


def _run_answers(directory: Path, notes: list[str] | None) -> list[dict[str, Any]]:
    from travelgym.runner.counted import counted_run_episodes
    from travelgym.runner.store import RunDirError

    try:
        counted = counted_run_episodes(directory, "behavior2trip", notes)  # infra errors left out
    except RunDirError as exc:
        raise AnswerFileError(str(exc)) from None
    entries = []
    for e in counted:
        entries.append({"instance_id": e["instance_id"], "trial": e.get("trial", 0),
                        "answer": _own_answer(e),
                        "judge": (e.get("score") or {}).get("judge")})  # fmt: skip
        if episode_turns(e) is not None:  # RQ1 runs only: other entries keep their shape
            entries[-1][TURNS] = episode_turns(e)
    return entries


def _own_answer(episode: dict[str, Any]) -> Any:
    """The answer an episode's own steps delivered (``score`` checks the stored one against
    it); the stored one for steps written before they recorded it."""
    from travelgym.core.answers import NOT_RECORDED, delivered_answer

    answer = delivered_answer(episode)
    return episode.get(RUN_ANSWER_FIELD) if answer is NOT_RECORDED else answer


def score_answers(answers: Iterable[dict[str, Any]],
                  instances: Mapping[str, Instance] | Iterable[Instance],
                  db: PlanDB | sqlite3.Connection | str | os.PathLike[str],
                  judge: Any = None, judge_concurrency: int = 4,
                  close_judge: bool = False) -> dict[str, Any]:  # fmt: skip
    """Score answer entries (``{"instance_id", "answer"}`` or run-directory lines with
    ``final_answer``; an optional ``trial``) against their instances: :func:`summarize` plus
    ``errors`` (unknown ids, repeated answers: the last one counts). With ``judge`` (a
    :class:`~travelgym.llm.ChatClient`; closed at the end when ``close_judge``) every delivered
    plan is also judged (``LLM``); without one, a verdict an entry carries (``judge``: what a
    run judged during its episodes) is kept."""
    by_id = (
        dict(instances) if isinstance(instances, Mapping) else {x.instance_id: x for x in instances}
    )
    errors: list[str] = []
    latest: dict[tuple[str, int], Any] = {}
    stored: dict[tuple[str, int], Any] = {}
    turns: dict[tuple[str, int], int | None] = {}  # RQ1's clarification turns
    for number, entry in enumerate(answers, start=1):
        iid = entry.get("instance_id", entry.get("task_id")) if isinstance(entry, dict) else None
        if not isinstance(iid, str) or iid not in by_id:
            errors.append(f"answer {number}: unknown instance_id {iid!r}")
            continue
        key = (iid, int(entry.get("trial", 0) or 0))
        if key in latest:
            errors.append(f"answer {number}: {iid} answered again; the last answer counts")
        answer = entry.get(RUN_ANSWER_FIELD, entry.get(ANSWER_FIELD))
        latest[key] = answer if isinstance(answer, str) else None
        stored[key] = entry.get("judge")
        turns[key] = entry.get(TURNS)
    pdb, owned = _db(db)
    try:
        results = [score_result(by_id[iid], answer, pdb, trial)
                   for (iid, trial), answer in latest.items()]  # fmt: skip
    finally:
        if owned:
            pdb.close()
    if judge is not None:
        import asyncio

        from travelgym.suites.behavior2trip.judge import judge_results

        asyncio.run(judge_results(judge, results, by_id, dict(latest), judge_concurrency,
                                  close=close_judge))  # fmt: skip
    else:
        for r in results:
            verdict = stored.get((r.instance_id, r.trial))
            if isinstance(verdict, dict):
                r.judge = JudgeVerdict.model_validate(verdict)
    out = add_turns(summarize(results), [turns[key] for key in latest])
    out["errors"] = errors
    return out


def summarize_run(outcomes: list[dict[str, Any]]) -> dict[str, Any]:
    """The score summary of a run (overall and by difficulty) plus run-level counts, from each
    episode's ``score``, ``termination`` and ``p_action``."""
    scored = [o for o in outcomes if o["score"] is not None]
    summary = add_turns(summarize([o["score"] for o in scored]), [episode_turns(o) for o in scored])
    summary["episodes"] = len(outcomes)
    summary["errors"] = sum(o["termination"] == "error" for o in outcomes)
    invalid = sum((o["p_action"] or 0) < 0 for o in outcomes)
    summary["invalid_action_rate"] = round(invalid / len(outcomes), 4) if outcomes else 0.0
    return summary
