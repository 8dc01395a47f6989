"""Satisfiable by construction: every instance carries a witness plan that passes all of its
applicable checks.

While an instance is generated, the oracle planner (:mod:`~travelgym.suites.behavior2trip.agents.oracle`)
plans the drawn request from the hidden profile over the same database and tools an agent
gets, and the 32 checks judge the plan. A request no such plan satisfies (the preferred mode
runs only at night on the travel dates, the destination lacks restaurants at the preferred
price level and environment for every lunch and dinner, ...) is drawn again, up to
:data:`WITNESS_ATTEMPTS` times, before the profile itself is redrawn; the paper's quality
control (Figure 10, criterion 3: "the plan meets constraints") removes such instances too. The
witness is stored with the instance, hidden like the profile: no agent reads it, the oracle
agent included.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from typing import Any

WITNESS_ATTEMPTS = 12  # requests drawn for one profile and trajectory before a new profile

_CONNECTIONS: dict[tuple[int, str], tuple[sqlite3.Connection, Any]] = {}


def _open(path: str) -> tuple[sqlite3.Connection, Any]:
    """A read-only connection and a check database per process and path (forked generator
    workers open their own: a connection must not cross a fork)."""
    from travelgym.db import connect_readonly
    from travelgym.suites.behavior2trip.checks import PlanDB

    key = (os.getpid(), path)
    if key not in _CONNECTIONS:
        conn = connect_readonly(path)
        _CONNECTIONS[key] = (conn, PlanDB(conn))
    return _CONNECTIONS[key]


def witness_failures(instance: Any, plan: str, pdb: Any) -> list[str]:
    """The applicable checks ``plan`` (JSON text) fails on ``instance``, as ``id: reason``."""
    from travelgym.suites.behavior2trip.checks import run_checks
    from travelgym.suites.behavior2trip.plan_parse import parse_plan

    parsed, problems = parse_plan(f"<answer>{plan}</answer>")
    if parsed is None:
        return [f"format.json: {'; '.join(problems) or 'no plan'}"]
    return [f"{r.id}: {r.reason}" for r in run_checks(parsed, instance, pdb) if r.passed is False]


def find_witness(instance: Any, db_path: str) -> str | None:
    """The oracle's plan for ``instance`` when it passes every applicable check, else None."""
    from travelgym.suites.behavior2trip.agents.oracle import oracle_plan

    conn, pdb = _open(db_path)
    plan = oracle_plan(instance, conn)
    return None if witness_failures(instance, plan, pdb) else plan


def witnessed(draw_request: Callable[[], Any], build: Callable[[Any], Any], db_path: str,
              rejections: dict[str, int]) -> Any | None:  # fmt: skip
    """The first instance ``build(draw_request())`` that has a witness, with it stored; None
    after :data:`WITNESS_ATTEMPTS` requests without one (each counted in
    ``rejections["witness"]``)."""
    for _ in range(WITNESS_ATTEMPTS):
        instance = build(draw_request())
        plan = find_witness(instance, db_path)
        if plan is not None:
            return instance.model_copy(update={"witness": plan})
        rejections["witness"] = rejections.get("witness", 0) + 1
    return None
