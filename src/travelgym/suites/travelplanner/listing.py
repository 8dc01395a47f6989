"""The public view of TravelPlanner queries for ``travelgym tasks`` (never the annotated plan or
the reference information), the ingested data's statistics and the tools' reference."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from travelgym.suites.travelplanner.records import LocalConstraint, Query


class TaskRecord(BaseModel):
    """A query as ``tasks`` lists it."""

    task_id: str
    split: str
    idx: int
    level: str
    org: str
    dest: str
    days: int
    visiting_city_number: int
    people_number: int
    budget: float
    local_constraint: LocalConstraint
    query: str

    @classmethod
    def of(cls, query: Query) -> TaskRecord:
        """The public fields of ``query``."""
        return cls(**query.model_dump(include=set(cls.model_fields)))


def _constraints(local: LocalConstraint) -> str:
    parts = [f"rule:{local.house_rule}" if local.house_rule else "",
             f"room:{local.room_type}" if local.room_type else "",
             f"cuisine:{'/'.join(local.cuisine)}" if local.cuisine else "",
             local.transportation or ""]  # fmt: skip
    return ", ".join(p for p in parts if p) or "-"


def format_tasks(tasks: list[TaskRecord]) -> str:
    """The queries as a table."""
    lines = [f"{'task':<16} {'level':<6} {'route':<36} {'days':>4} {'ppl':>3} {'budget':>8}  "
             "constraints"]  # fmt: skip
    for t in tasks:
        route = f"{t.org} -> {t.dest}" + (f" ({t.visiting_city_number} cities)"
                                          if t.visiting_city_number > 1 else "")  # fmt: skip
        lines.append(f"{t.task_id:<16} {t.level:<6} {route[:36]:<36} {t.days:>4} "
                     f"{t.people_number:>3} {t.budget:>8,.0f}  {_constraints(t.local_constraint)}")  # fmt: skip
    lines.append(f"{len(tasks)} queries")
    return "\n".join(lines)


def format_stats(result: dict[str, Any]) -> str:
    """The ingested data's metadata as text."""
    lines = [f"TravelPlanner data: {result['path']}", f"content hash: {result['content_hash']}"]
    lines += [f"  {split:<22} {n:>9,} queries" for split, n in result.get("splits", {}).items()]
    if result.get("has_database"):
        lines += [f"  {table:<22} {n:>9,}" for table, n in result.get("records", {}).items()]
    else:
        lines.append("  no database: plans are checked against each query's reference information")
    return "\n".join(lines)
