"""Per-episode features: one flat row per episode, from which every COMPASS metric is aggregated.

Extracting each episode once (scores, tool-call errors, search effort and yield, turn counts,
constraint satisfaction, persona) keeps the aggregations cheap and makes the per-episode table
itself part of the analysis output (plots and reports read it).
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from typing import Any

from travelgym.suites.compass.tasks import Task
from travelgym.suites.compass.trajectory import Episode

ERROR_CATEGORIES = ("tool_name", "parameter", "content", "internal", "sandbox")
HALLUCINATION_CATEGORIES = ("tool_name", "parameter", "content")  # the paper's Table 4
PACKAGE_ID = re.compile(
    r"^(?:pkg_[0-9]+_[0-9]+_[0-9]+_[0-9]+|flight_[0-9]+_[0-9]+_[0-9]+|permit_[0-9]+_[0-9]+_[0-9]+)$"
)
PLAN_COMPONENTS = ("hotel", "flight", "permit")
RECOMMEND_TOOLS = {"hotel": "recommend_hotel", "flight": "recommend_flight",
                   "permit": "recommend_permit"}  # fmt: skip
_PREFIXES = ("pkg_", "flight_", "permit_")


@dataclass(slots=True)
class EpisodeFeatures:
    """Everything the metrics need from one episode (JSON-serialisable through ``asdict``)."""

    task_id: str
    trial: int
    level: int | None
    objective_type: str | None
    feasible: bool
    top5: bool
    top10: bool
    top20: bool
    optimal: bool
    optimality_gap: float | None
    rank_percentile: float | None
    termination: str
    calls: int  # all tool calls
    errors: dict[str, int]  # error category -> number of calls with that error
    effort: int  # E: unique executable call signatures
    yield_: int  # Y: unique bookable package IDs retrieved (see yield_source)
    yield_source: str  # "results" (payloads stored), "arguments" (not stored), "none" (no ok call)
    t_star: int | None  # user turn (0 = opening) at which every constraint is known
    user_turns: int  # user messages, opening included
    agent_turns: int
    extra_turns: int | None  # agent turns after user turn t*
    n_constraints: int | None
    constraints_satisfied: int | None  # constraints the final plan satisfies
    violated_kinds: list[str] = field(default_factory=list)
    plan_resolved: bool = False  # every needed component present and resolvable
    style: int | None = None
    trust: str | None = None
    reliability: str | None = None
    revelation_speed: str | None = None
    # G.3: every component of the final recommendation passed, in an ok call, to its
    # recommend_* validation tool (None: no final recommendation)
    validated: bool | None = None

    def row(self) -> dict[str, Any]:
        out = asdict(self)
        out["yield"] = out.pop("yield_")
        return out


def call_signature(name: str, arguments: Any) -> str:
    """``name`` + canonical JSON of the arguments (sorted keys, compact separators)."""
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return f"{name}|{arguments}"
    try:
        text = json.dumps(arguments, sort_keys=True, separators=(",", ":"), default=str)
    except (TypeError, ValueError):
        text = repr(arguments)
    return f"{name}|{text}"


def bookable_ids_in(payload: Any, out: set[str]) -> None:
    """Add to ``out`` every package ID a tool result offers as bookable.

    An offer is a JSON object with a ``package_id``; it is skipped when it says
    ``"bookable": false`` or ``"valid": false`` (details and validation tools). Search tools
    only return bookable packages.
    """
    stack = [payload]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            pid = item.get("package_id")
            if (isinstance(pid, str) and PACKAGE_ID.match(pid)
                    and item.get("bookable", True) is not False
                    and item.get("valid", True) is not False):  # fmt: skip
                out.add(pid)
            stack.extend(v for v in item.values() if isinstance(v, dict | list))
        elif isinstance(item, list):
            stack.extend(v for v in item if isinstance(v, dict | list))


def package_ids_in(arguments: Any, out: set[str]) -> None:
    """Add to ``out`` every package ID string found anywhere in a call's arguments."""
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            arguments = arguments.strip()
    stack = [arguments]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if item.startswith(_PREFIXES) and PACKAGE_ID.match(item):
                out.add(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def search_effort_yield(episode: Episode) -> tuple[int, int, str]:
    """(E, Y, yield_source) of one episode (Section 5.2).

    E counts unique signatures of executable (``ok``) calls; a code agent's ``run_python``
    calls are containers, not searches: the tool calls their code made count instead. Y counts unique bookable package
    IDs in ok call results when the payloads were stored (LLM and code agents). Scripted agents'
    runs do not store payloads; their Y falls back to the package IDs named in ok calls'
    arguments (details and recommend calls): a lower bound of what was retrieved, marked
    ``yield_source = "arguments"``. Without any ok call: ``(0, 0, "none")``.
    """
    signatures: set[str] = set()
    from_results: set[str] = set()
    from_arguments: set[str] = set()
    stored, any_ok = True, False
    for turn in episode.turns:
        for call in turn.tool_calls:
            if not call.ok or call.container:
                continue
            any_ok = True
            signatures.add(call_signature(call.name, call.arguments))
            if call.result is None:
                if call.result_chars > 0:
                    stored = False
            else:
                bookable_ids_in(call.result, from_results)
            package_ids_in(call.arguments, from_arguments)
    if not any_ok:
        return 0, 0, "none"
    if stored:
        return len(signatures), len(from_results), "results"
    return len(signatures), len(from_arguments), "arguments"


def validated_final(episode: Episode) -> bool | None:
    """Whether the episode's final recommendation was validated as the paper's protocol asks
    (G.3: the recommend_* tools are mandatory): every package it names (each hotel of a Level I
    list) was passed to the component's recommend_* tool in a call that succeeded. ``None``
    without a final recommendation."""
    final = episode.final_recommendation
    if not final:
        return None
    checked: dict[str, set[str]] = defaultdict(set)
    for turn in episode.turns:
        for call in turn.tool_calls:
            if call.ok and call.name in RECOMMEND_TOOLS.values():
                package_ids_in(call.arguments, checked[call.name])
    for component, tool in RECOMMEND_TOOLS.items():
        value = final.get(component)
        for package in value if isinstance(value, list) else [value] if value else []:
            if not isinstance(package, str) or package.strip() not in checked[tool]:
                return False
    return True


def turn_counts(episode: Episode) -> tuple[int, int, int | None]:
    """(user turns, agent turns, extra turns after t*) of one episode (Appendix A.2).

    User turns are numbered from 0 (the opening request); ``revealed_all_turn`` (t*) is such a
    number. Extra turns = agent turns after user turn t*; for a conversation that ends on a
    user message this is ``user_turns - 1 - t*`` (the user's replies after t*). None when the
    user never revealed everything.
    """
    t_star = episode.revealed_all_turn
    users = agents = extra = 0
    seen_t_star = False
    for turn in episode.turns:
        if turn.role == "user":
            if t_star is not None and users == t_star:
                seen_t_star = True
            users += 1
        else:
            agents += 1
            if seen_t_star:
                extra += 1
    return users, agents, (extra if seen_t_star else None)


def constraint_outcome(
    score: dict[str, Any], task: Task | None
) -> tuple[int | None, int | None, list[str], bool]:
    """(constraint count, satisfied count, violated kinds, plan resolved) of a scored plan.

    A violation text ``"<kind>: ..."`` names its constraint (a task has at most one constraint
    per kind). A plan with a missing or unresolvable component cannot be checked: it satisfies
    no constraint. Unbookable components are plan problems, not constraint violations.
    """
    violations = [v for v in score.get("violations", []) if isinstance(v, str)]
    resolved = not any(_is_resolution_problem(v) for v in violations)
    if task is None:
        return None, None, [], resolved
    kinds = [c.kind for c in task.constraints]
    violated = [k for k in kinds if any(v.startswith(f"{k}: ") for v in violations)]
    satisfied = len(kinds) - len(violated) if resolved else 0
    return len(kinds), satisfied, violated, resolved


def _is_resolution_problem(text: str) -> bool:
    if text.startswith("no ") and text.endswith(" recommended"):
        return True
    return any(text.startswith(f"{c}: ") for c in PLAN_COMPONENTS)


def extract(episode: Episode, task: Task | None = None) -> EpisodeFeatures:
    """The feature row of one episode; ``task`` adds the constraint counts."""
    score = episode.score or {}
    top = score.get("top") or {}
    errors = dict.fromkeys(ERROR_CATEGORIES, 0)
    calls = 0
    for turn in episode.turns:
        for call in turn.tool_calls:
            calls += not call.container  # a run_python call holds the calls its code made
            if call.error_category:
                errors[call.error_category] = errors.get(call.error_category, 0) + 1
    effort, yield_, source = search_effort_yield(episode)
    users, agents, extra = turn_counts(episode)
    n_constraints, satisfied, violated, resolved = constraint_outcome(score, task)
    # the conversation's own persona; a line without one falls back to its task's
    persona = episode.persona or (task.persona.model_dump() if task else {})
    level = score.get("level", task.level if task else None)
    objective = score.get("objective_type", task.objective_type if task else None)
    return EpisodeFeatures(
        task_id=episode.task_id,
        trial=episode.trial,
        level=level,
        objective_type=objective,
        feasible=bool(score.get("feasible", False)),
        top5=bool(top.get("5", False)),
        top10=bool(top.get("10", False)),
        top20=bool(top.get("20", False)),
        optimal=bool(score.get("optimal", False)),
        optimality_gap=score.get("optimality_gap"),
        rank_percentile=score.get("rank_percentile"),
        termination=episode.termination,
        calls=calls,
        errors=errors,
        effort=effort,
        yield_=yield_,
        yield_source=source,
        t_star=episode.revealed_all_turn,
        user_turns=users,
        agent_turns=agents,
        extra_turns=extra,
        n_constraints=n_constraints,
        constraints_satisfied=satisfied,
        violated_kinds=violated,
        plan_resolved=resolved,
        style=persona.get("style"),
        trust=persona.get("trust"),
        reliability=persona.get("reliability"),
        revelation_speed=persona.get("revelation_speed"),
        validated=validated_final(episode),
    )
