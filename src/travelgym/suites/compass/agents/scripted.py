"""Scripted baselines that need no LLM: oracle language understanding, different search.

They read the user simulator's dialogue acts (never the hidden constraints), gather facts only
through the tools, and differ only in how much of the space they search (COMPASS Section 5):

- ``greedy``: the first option found that satisfies everything known (cheapest-first pages);
- ``sampled``: a few sampled stays and the nearest airport, optimised exactly (the weak agent);
- ``exhaustive``: every stay, airport and page, optimised exactly: it reaches the optimum.
"""

from __future__ import annotations

import itertools
import zlib
from typing import Any

import numpy as np

from travelgym.suites.compass.agents.base import AgentReply
from travelgym.suites.compass.agents.search import (
    FLIGHT_FACT_NAMES,
    HOTEL_FACT_NAMES,
    PERMIT_FACT_NAMES,
    ToolSearcher,
)
from travelgym.suites.compass.constraints import CONSTRAINT_ADAPTER, MaxNightlyPrice
from travelgym.suites.compass.env import CompassToolSession
from travelgym.suites.compass.facts import PlanFacts
from travelgym.suites.compass.solver import Ranking, facts_to_columns, group_components
from travelgym.suites.compass.tasks import Persona, Task
from travelgym.suites.compass.trajectory import DialogueAct

STRATEGIES = ("greedy", "sampled", "exhaustive")
SAMPLED_STAYS = 2
GREEDY_MAX_COMBINATIONS = 5000
_PERSONA = Persona(revelation_speed="fast", reveal_probability=1.0, trust="trusting",
                   reliability="reliable", style=9)  # fmt: skip


class ScriptedAgent:
    """A search-strategy baseline with oracle NLU (reads dialogue acts)."""

    reads_dialogue_acts = True

    def __init__(self, strategy: str, seed: int = 0) -> None:
        if strategy not in STRATEGIES:
            raise ValueError(
                f"unknown scripted strategy {strategy!r}; choose from {', '.join(STRATEGIES)}"
            )
        self.strategy = strategy
        self.name = f"scripted:{strategy}"
        self.seed = seed

    def start(self, env: CompassToolSession) -> None:
        self.env = env
        self.searcher = ToolSearcher(env)
        # (facts list, constraint, party) -> the constraint and its verdict on each fact
        self._verdicts: dict[tuple[int, int, int], tuple[Any, list[bool]]] = {}
        self.known: dict[int, Any] = {}
        self.objective: dict | None = None
        self.needs = 1
        self._plan: dict | None = None
        self._planned_for: tuple | None = None
        self.rng = np.random.default_rng([self.seed, zlib.crc32(self.strategy.encode())])

    def transcript(self) -> list[dict[str, Any]]:
        return []

    async def reply(self, user_text: str, acts: list[DialogueAct]) -> AgentReply:
        for act in acts:
            if act.type == "open":
                self.objective = act.objective
                self.needs = len((act.detail or "hotel").split(","))
            # the constraint as stated now: a revision replaces the version stated before
            if act.type in ("reveal", "restate", "answer", "revise") and act.constraint is not None:
                self.known[act.constraint_index] = CONSTRAINT_ADAPTER.validate_python(
                    [act.constraint]
                )[0]
        # what is known, by content: a revision re-plans though no new index appears
        state = tuple((i, self.known[i].model_dump_json()) for i in sorted(self.known))
        if state != self._planned_for:
            self._planned_for = state
            self._plan = self.plan(self.known_task())
        if self._plan is None:
            return AgentReply("I could not find any option that meets all of your requirements so far. "
                              "Could you tell me more, or relax something?")  # fmt: skip
        rec = self._plan
        parts = [f"hotel {rec['hotel']}"] + [
            f"{k} {rec[k]}" for k in ("flight", "permit") if rec.get(k)
        ]
        return AgentReply("My recommendation: " + ", ".join(parts) + ".", recommendation=dict(rec))

    def known_task(self) -> Task:
        return Task(task_id="known", level=self.needs, objective=self.objective,
                    constraints=[self.known[i] for i in sorted(self.known)], persona=_PERSONA,
                    story="")  # fmt: skip

    # --------------------------------------------------------------------------- search

    def plan(self, task: Task) -> dict | None:
        if task.park is None or task.dates is None:
            return None
        pairs = task.dates.date_pairs()
        if self.strategy == "sampled" and len(pairs) > SAMPLED_STAYS:
            pairs = [
                pairs[i] for i in sorted(self.rng.choice(len(pairs), SAMPLED_STAYS, replace=False))
            ]
        if self.strategy == "greedy":
            return self._greedy(task, pairs)
        return self._optimise(task, pairs)

    def _components(self, task: Task, park: dict, start: int, end: int, first_only: bool):
        cap = next((c.amount for c in task.constraints if isinstance(c, MaxNightlyPrice)), None)
        hotels = self._passing(task, self.searcher.hotels(park, start, end, task.travellers,
                                                          task.rooms, cap,
                                                          limit_pages=1 if first_only else None),
                               "hotel")  # fmt: skip
        flights: list[dict] = []
        if task.level >= 2:
            origin = next((c.airport for c in task.constraints if c.kind == "origin_city"), None)
            if origin is None:
                return hotels, []
            airports = self.searcher.airports(park)
            if self.strategy != "exhaustive":
                airports = airports[:1]
            flights = self._passing(task, self.searcher.flights(park, origin, start, end,
                                                                task.travellers, airports,
                                                                first_page_only=first_only),
                                    "flight")  # fmt: skip
        return hotels, flights

    def _permits(self, task: Task, park: dict, pairs: list[tuple[int, int]]) -> list[dict]:
        need = task.permit
        if need is None:
            return []
        first, last = min(s for s, _ in pairs), max(e for _, e in pairs)
        found = []
        for name in need.names:
            found += self.searcher.permits(
                park, name, first, min(last, 31), need.days, task.travellers
            )
        return [p for p in found if p["permit_id"] in need.permit_ids]

    def _optimise(self, task: Task, pairs: list[tuple[int, int]]) -> dict | None:
        hotels, flights, permits = [], [], []
        for park in self._parks(task):
            for start, end in pairs:
                h, f = self._components(task, park, start, end, first_only=False)
                hotels += h
                flights += f
            if task.level == 3:
                permits += self._permits(task, park, pairs)
        if not hotels:
            return None
        components = group_components(
            task,
            facts_to_columns(hotels, HOTEL_FACT_NAMES),
            facts_to_columns(flights, FLIGHT_FACT_NAMES) if task.level >= 2 else None,
            facts_to_columns(permits, PERMIT_FACT_NAMES) if task.level == 3 else None,
        )
        ranking = Ranking(task, components)
        if ranking.size == 0:
            return None
        return ranking.find_plan(ranking.kth_best(1))

    def _greedy(self, task: Task, pairs: list[tuple[int, int]]) -> dict | None:
        for park in self._parks(task):
            for start, end in pairs:
                hotels, flights = self._components(task, park, start, end, first_only=True)
                permits = (
                    [
                        p
                        for p in self._permits(task, park, [(start, end)])
                        if task.permit.fits_stay(p["start"], start, end)
                    ]
                    if task.level == 3
                    else [None]
                )
                legs = flights if task.level >= 2 else [None]
                combos = itertools.islice(
                    itertools.product(hotels, legs, permits), GREEDY_MAX_COMBINATIONS
                )
                for h, f, p in combos:
                    plan = PlanFacts(h, f, p, task.travellers)
                    if all(c.check(plan) is None for c in task.constraints):
                        return {"hotel": h["package_id"], "flight": f and f["package_id"],
                                "permit": p and p["package_id"]}  # fmt: skip
        return None

    def _passing(self, task: Task, facts: list[dict], component: str) -> list[dict]:
        """The facts (hotel or flight) that satisfy every known constraint on that component.

        A re-plan checks the same (memoised) fact lists against the constraints known before
        plus one, so each constraint's verdicts on a list are kept; the entry holds the
        constraint itself, so that its ``id`` is not reused while the entry exists."""
        n = task.travellers
        keep: list[bool] | None = None
        for c in task.constraints:
            if c.component != component:
                continue
            key = (id(facts), id(c), n)
            if key not in self._verdicts:
                plans = [PlanFacts(f, None, None, n) if component == "hotel"
                         else PlanFacts(None, f, None, n) for f in facts]  # fmt: skip
                self._verdicts[key] = (c, [c.check(plan) is None for plan in plans])
            verdicts = self._verdicts[key][1]
            keep = (
                verdicts if keep is None else [a and b for a, b in zip(keep, verdicts, strict=True)]
            )
        return list(facts) if keep is None else [f for f, ok in zip(facts, keep, strict=True) if ok]

    def _parks(self, task: Task) -> list[dict]:
        return [
            self.env.context.parks[p] for p in task.park.park_ids if p in self.env.context.parks
        ]
