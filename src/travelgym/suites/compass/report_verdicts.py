"""Verdicts of the COMPASS report: every recommendation of the runs judged on the run's
database (violated constraints, utility, objective value, exact rank among the feasible plans),
computed once per distinct plan and shared by all runs."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from travelgym.suites.compass.tasks import GroundTruth, Task


class Verdicts:
    """Per-recommendation verdicts on the run's database, computed once per distinct plan.

    A verdict lists every violated constraint (by index into ``task.constraints``; ``None`` for
    an ID that does not resolve), the plan's utility and objective value, and for feasible plans
    its exact rank among all feasible plans of the task.
    """

    def __init__(self, tasks: dict[str, Task], data_dir: Path | None,
                 wanted: dict[int, set[str]] | None = None) -> None:  # fmt: skip
        self.tasks = tasks
        self.data_dir = data_dir
        # the task ids judged, by database seed: only theirs are drawn and solved where the
        # full files are not built (None: every task)
        self.wanted = wanted
        self._tasks_of: dict[int, dict[str, Task]] = {}
        self._sets: dict[int, Any] = {}
        self.items: list[dict[str, Any]] = []
        self._index: dict[tuple, int] = {}
        self._dbs: dict[int, tuple[sqlite3.Connection, dict[str, GroundTruth]]] = {}
        self._rankings: dict[tuple[int, str], Any] = {}
        self.truths: dict[int, dict[str, GroundTruth]] = {}

    def database(self, seed: int) -> tuple[sqlite3.Connection, dict[str, GroundTruth]]:
        if seed not in self._dbs:
            from travelgym.db import connect_readonly
            from travelgym.suites.compass.build import ensure_database
            from travelgym.suites.compass.ground_truth import ensure_ground_truth

            db = ensure_database(seed=seed, data_dir=self.data_dir)
            _, truths = ensure_ground_truth(seed=seed, data_dir=self.data_dir,
                                            tasks=self.task_set(seed), task_ids=self._ids(seed))  # fmt: skip
            self._dbs[seed] = (connect_readonly(db.path), truths)
            self.truths[seed] = truths
        return self._dbs[seed]

    def tasks_of(self, seed: int) -> dict[str, Task]:
        """The tasks of database seed ``seed`` (seed 0: the tasks given; others: their own
        generated task file)."""
        if seed == 0:
            return self.tasks
        if seed not in self._tasks_of:
            self._tasks_of[seed] = {t.task_id: t for t in self.task_set(seed).load(self._ids(seed))}
        return self._tasks_of[seed]

    def task_set(self, seed: int) -> Any:
        """The :class:`~travelgym.suites.compass.task_sets.TaskSet` of seed ``seed``."""
        from travelgym.suites.compass.task_sets import task_set

        if seed not in self._sets:
            self._sets[seed] = task_set(seed, self.data_dir)
        return self._sets[seed]

    def _ids(self, seed: int) -> list[str] | None:
        """The known task ids of seed ``seed`` judged (None: every task)."""
        if self.wanted is None:
            return None
        known = {task_id for task_id, _ in self.task_set(seed).slots()}
        return sorted(self.wanted.get(seed, set()) & known)

    def ranking(self, seed: int, task: Task):
        key = (seed, task.task_id)
        if key not in self._rankings:
            from travelgym.suites.compass.solver import Ranking, build_components

            conn, _ = self.database(seed)
            self._rankings[key] = Ranking(task, build_components(conn, task))
        return self._rankings[key]

    def close(self) -> None:
        for conn, _ in self._dbs.values():
            conn.close()
        self._dbs.clear()

    def verdict(self, seed: int, task_id: str, recommendation: Any) -> int | None:
        """The index of this recommendation's verdict in ``items`` (None: unknown task)."""
        task = self.tasks_of(seed).get(task_id)
        if task is None or not isinstance(recommendation, dict):
            return None
        key = (seed, task_id, json.dumps(recommendation, sort_keys=True, default=str))
        if key not in self._index:
            try:
                item = self._compute(seed, task, recommendation)
            except Exception as exc:  # noqa: BLE001 - one odd plan must not stop the report
                item = {"error": f"{type(exc).__name__}: {exc}"}
            self._index[key] = len(self.items)
            self.items.append(item)
        return self._index[key]

    def _compute(self, seed: int, task: Task, recommendation: dict) -> dict[str, Any]:
        from travelgym.suites.compass.scoring import (
            best_of,
            plan_options,
            revealed_violations,
            score_plan,
        )

        conn, truths = self.database(seed)
        truth = truths.get(task.task_id)
        if truth is None:
            return {"error": f"no ground truth for {task.task_id}"}
        options = plan_options(task, recommendation)
        scored = [
            score_plan(conn, task, truth, plan)
            for plan in options
            if all(v is None or isinstance(v, str) for v in plan.values())
        ]
        if not scored:
            return {"ok": False, "v": [[None, "the recommendation's IDs are not strings"]]}
        best = best_of(scored)
        everything = list(range(len(task.constraints)))
        violations = revealed_violations(conn, task, best.recommendation, everything)
        if not violations and best.violations:  # keep the scorer's word on feasibility
            violations = [(None, v) for v in best.violations]
        item: dict[str, Any] = {"ok": best.feasible, "v": [[i, t] for i, t in violations]}
        if len(options) > 1:
            item["hotel"] = best.recommendation.get("hotel")
        if best.feasible:
            rank = self.ranking(seed, task).count_better(best.key) + 1
            item.update(u=best.utility, val=best.objective_value, gap=best.optimality_gap,
                        rank=rank, pct=round(100 * rank / truth.feasible_count, 4),
                        top=[best.top.get(a, False) for a in ("5", "10", "20")],
                        opt=best.optimal)  # fmt: skip
        return item
