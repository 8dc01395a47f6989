"""Task and ground-truth models, and their versioned JSONL files."""

from __future__ import annotations

import hashlib
import json
from functools import cached_property
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_serializer, model_validator

from travelgym.core.selection import select
from travelgym.datafiles import manifest_path
from travelgym.suites.compass.constraints import (
    Budget,
    Constraint,
    DateConstraint,
    Park,
    PermitRequired,
    Rooms,
    Travellers,
)
from travelgym.suites.compass.objectives import Objective

TASK_FORMAT_VERSION = "3"
GROUND_TRUTH_FORMAT_VERSION = "3"
PACKAGE_TASKS = Path(__file__).resolve().parent / "data" / "tasks.jsonl"
STYLES = {
    1: "extremely polite and personal",
    2: "overly apologetic",
    3: "suspicious and paranoid about scams",
    4: "demands reasoning and justification",
    5: "verbose, full of background stories",
    6: "scattered and repetitive",
    7: "dramatic and emotional",
    8: "easily agitated and aggressive",
    9: "direct, organised and businesslike",
}


class Persona(BaseModel):
    """The user simulator's four axes (COMPASS Appendix E, Table 8)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    revelation_speed: Literal["slow", "medium", "fast"]
    reveal_probability: float = Field(ge=0, le=1)
    trust: Literal["trusting", "questioning"]
    reliability: Literal["reliable", "unreliable"]
    style: int = Field(ge=1, le=9)


class Revision(BaseModel):
    """A constraint the user first states one way and later changes mid-conversation (Section 3.1)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    constraint_index: int = Field(ge=0)  # index into Task.constraints: the FINAL, scored constraint
    initial: Constraint  # what the user states first (same kind)


class Task(BaseModel):
    """One COMPASS task: constraints (initial or progressive), objective, persona, story."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    task_id: str
    level: Literal[1, 2, 3]
    objective: Objective
    constraints: list[Constraint]
    persona: Persona
    story: str
    revisions: list[Revision] = []

    @model_validator(mode="after")
    def _check_revisions(self) -> Task:
        seen: set[int] = set()
        for revision in self.revisions:
            index = revision.constraint_index
            if index >= len(self.constraints):
                raise ValueError(
                    f"revision of constraint {index}: the task has {len(self.constraints)}"
                )
            if index in seen:
                raise ValueError(f"constraint {index} is revised more than once")
            seen.add(index)
            final = self.constraints[index]
            if revision.initial.kind != final.kind:
                raise ValueError(
                    f"revision of constraint {index}: {revision.initial.kind} is not {final.kind}"
                )
            if revision.initial.sentence() == final.sentence():
                raise ValueError(f"revision of constraint {index} states the same requirement")
        return self

    @model_serializer(mode="wrap")
    def _omit_no_revisions(self, handler):
        # tasks without revisions serialise exactly as before the field existed
        data = handler(self)
        if not self.revisions and isinstance(data, dict):
            data.pop("revisions", None)
        return data

    def _one(self, cls):
        found = [c for c in self.constraints if isinstance(c, cls)]
        return found[0] if found else None

    @cached_property
    def travellers(self) -> int:
        found = self._one(Travellers)
        return found.count if found else 1

    @cached_property
    def rooms(self) -> int:
        found = self._one(Rooms)
        return found.count if found else 1

    @cached_property
    def budget(self) -> Budget | None:
        return self._one(Budget)

    @cached_property
    def park(self) -> Park:
        return self._one(Park)

    @cached_property
    def dates(self) -> DateConstraint:
        return self._one(DateConstraint)

    @cached_property
    def permit(self) -> PermitRequired | None:
        return self._one(PermitRequired)

    @property
    def objective_type(self) -> str:
        return self.objective.type

    def initial_constraints(self) -> list[Constraint]:
        return [c for c in self.constraints if c.revelation == "initial"]

    def progressive_constraints(self) -> list[Constraint]:
        return [c for c in self.constraints if c.revelation == "progressive"]


class GroundTruth(BaseModel):
    """The exact solution of one task on its scored key: the utility f(x) alone (task files of
    version 3: no tie-break), or f then the tie-break an older task states.

    ``thresholds[A]`` is the key of the plan at rank ceil(A % x |X_feas|) (second part 0 without
    a tie-break) and ``threshold_values[A]`` its f in the objective's unit; ``credited[A]`` is
    how many feasible plans are at least as good on the whole key (what OR-A % credits, ties
    included), ``optimal_count`` how many equal the best key and ``distinct_values`` how many
    distinct values f takes over X_feas."""

    model_config = ConfigDict(extra="forbid")
    task_id: str
    feasible_count: int
    optimum: float | None  # utility (higher is better; costs are negative cents)
    optimum_value: float | None  # the objective's metric in its own unit (dollars for costs)
    optimum_key: tuple[float, float] | None = None  # (utility, tie-break utility or 0)
    thresholds: dict[str, tuple[float, float]]  # "5" / "10" / "20" -> key at that rank
    threshold_values: dict[str, float] = {}  # "5" / "10" / "20" -> f there, objective's unit
    credited: dict[str, int] = {}  # "5" / "10" / "20" -> plans the threshold credits
    optimal_count: int = 0
    distinct_values: int = 0  # distinct f(x) over X_feas
    optimal_plan: dict[str, str | None]  # {"hotel": ..., "flight": ..., "permit": ...}


def load_tasks(path: Path | None = None) -> list[Task]:
    """Load a task file (default: the one shipped with the package), checking its hash."""
    path = Path(path) if path else PACKAGE_TASKS
    text = path.read_text(encoding="utf-8")
    manifest = manifest_path(path)
    if manifest.exists():
        meta = json.loads(manifest.read_text())
        if meta.get("sha256") != hashlib.sha256(text.encode()).hexdigest():
            raise ValueError(f"{path}: content does not match the sha256 in {manifest.name}")
    tasks = []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            try:
                tasks.append(Task.model_validate_json(line))
            except ValueError as exc:
                raise ValueError(f"{path}:{number}: invalid task: {exc}") from None
    return tasks


def load_ground_truth(path: Path) -> dict[str, GroundTruth]:
    out = {}
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if line.strip():
            gt = GroundTruth.model_validate_json(line)
            out[gt.task_id] = gt
    return out


def select_tasks(tasks: list, ids: list[str] | None, level: int | None, limit: int | None) -> list:
    """Tasks by explicit ids (in the given order), else by level, then the first ``limit``."""
    return select(tasks, ids, level, limit, id_of=lambda t: t.task_id, level_of=lambda t: t.level)
