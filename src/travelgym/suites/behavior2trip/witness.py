"""Satisfiable by construction: every instance carries a witness plan that passes all of its
applicable checks.

While an instance is generated, the oracle planner
(:mod:`~travelgym.suites.behavior2trip.agents.oracle`) plans the drawn request from the hidden
profile over the same database and tools an agent gets, and the 32 checks judge the plan. A
request no such plan satisfies (the preferred mode runs only at night on the travel dates, every
train of the preferred class spans a mealtime, the destination lacks restaurants at the
preferred price level and environment, ...) is drawn again with the same trip length and party
(destination, dates and budget change), up to :data:`WITNESS_ATTEMPTS` times, before the profile
itself is redrawn; the paper's quality control (Figure 10, criterion 3: "the plan meets
constraints") removes such instances too. The witness is stored with the instance, hidden like
the profile: no agent reads it, the oracle agent included (it plans through the tools).
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

WITNESS_ATTEMPTS = 12  # requests drawn for one profile and trajectory before a new profile
VERIFIED_KEPT = 16  # instances whose witness verdict is remembered (the QC of a fresh instance)

_CONNECTIONS: dict[tuple[int, str], tuple[sqlite3.Connection, Any, Any]] = {}
_TOOLS: dict[tuple[int, str], Any] = {}
# id(instance) -> (instance, plan, failures): the instance is held, so its id is not reused
_VERIFIED: OrderedDict[int, tuple[Any, str, list[str]]] = OrderedDict()


def _open(path: str) -> tuple[sqlite3.Connection, Any, Any]:
    """A read-only connection, a tools context and a check database per process and path
    (forked generator workers open their own: a connection must not cross a fork)."""
    from travelgym.db import connect_readonly
    from travelgym.suites.behavior2trip.checks import PlanDB
    from travelgym.suites.behavior2trip.context import TripsContext

    key = (os.getpid(), path)
    if key not in _CONNECTIONS:
        conn = connect_readonly(path)
        context = TripsContext(conn)  # the oracle's tools and the checks share its caches
        _CONNECTIONS[key] = (conn, context, PlanDB(conn, context))
    return _CONNECTIONS[key]


def _tools(path: str) -> Any:
    """The oracle's tool session over :func:`_open`'s context, per process and path: each
    distinct call runs once (the database is read-only), no step is recorded."""
    from travelgym.suites.behavior2trip.agents.tool_cache import CachedToolSession

    key = (os.getpid(), path)
    if key not in _TOOLS:
        _TOOLS[key] = CachedToolSession(_open(path)[1])
    return _TOOLS[key]


def witness_failures(instance: Any, plan: str | None, pdb: Any) -> list[str]:
    """The applicable checks ``plan`` (plan JSON text) fails on ``instance``, as ``id: reason``
    (every check when there is no plan)."""
    from travelgym.suites.behavior2trip.checks import run_checks
    from travelgym.suites.behavior2trip.plan_parse import parse_plan

    known = _VERIFIED.get(id(instance))
    if known is not None and known[0] is instance and known[1] == plan:
        return list(known[2])
    parsed = None
    if plan is not None:
        # text without a "<" is read whole, as the tag around it would give it (the scan for
        # the closing tag costs more than the rest of the reading)
        parsed = parse_plan(plan if "<" not in plan else f"<answer>{plan}</answer>")[0]
    return [f"{r.id}: {r.reason}" for r in run_checks(parsed, instance, pdb) if r.passed is False]


def _remember(instance: Any, plan: str, failures: list[str]) -> None:
    """Keep the verdict of ``plan`` on ``instance`` (the quality control of an instance just
    generated checks its witness again; the checks are pure in the instance and the plan)."""
    _VERIFIED[id(instance)] = (instance, plan, list(failures))
    while len(_VERIFIED) > VERIFIED_KEPT:
        _VERIFIED.popitem(last=False)


def _unsatisfiable(instance: Any, db_path: str) -> str | None:
    """A check no plan of the oracle can pass on ``instance``, from the database alone (most
    failed checks are such: the planning is skipped)."""
    from travelgym.suites.behavior2trip.checks.personalization import unsatisfiable

    return unsatisfiable(instance, _open(db_path)[2])


def _witness_plan(instance: Any, db_path: str) -> tuple[str, list[str]] | None:
    """The oracle's plan for ``instance`` (plan JSON text) and the checks it fails; None when
    the oracle gives up."""
    from travelgym.suites.behavior2trip.agents.oracle import oracle_plan

    conn, context, pdb = _open(db_path)
    plan = oracle_plan(instance, conn, give_up=True, context=context, session=_tools(db_path))
    if plan is None:
        return None
    return plan, witness_failures(instance, plan, pdb)


def find_witness(instance: Any, db_path: str) -> str | None:
    """The oracle's plan for ``instance`` (compact JSON) when it passes every applicable check,
    else None (the oracle gives up at the first day it cannot plan by every rule)."""
    if _unsatisfiable(instance, db_path) is not None:
        return None
    found = _witness_plan(instance, db_path)
    if found is None or found[1]:
        return None
    return _compact(found[0])


def _compact(plan: str) -> str:
    return json.dumps(json.loads(plan), ensure_ascii=False, separators=(",", ":"))


def witnessed(draw_request: Callable[[Any], Any], build: Callable[[Any], Any], db_path: str,
              rejections: dict[str, int]) -> Any | None:  # fmt: skip
    """The first instance ``build(request)`` that has a witness, with it stored. The first
    request is ``draw_request(None)``, each later one ``draw_request(first)`` (same trip length
    and party). None after :data:`WITNESS_ATTEMPTS` requests without one (each counted in
    ``rejections["witness"]``)."""
    first = None
    for _ in range(WITNESS_ATTEMPTS):
        request = draw_request(first)
        first = first or request
        instance = build(request)
        plan = find_witness(instance, db_path)
        if plan is not None:
            found = instance.model_copy(update={"witness": plan})
            _remember(found, plan, [])  # no check reads the witness field itself
            return found
        rejections["witness"] = rejections.get("witness", 0) + 1
    return None
