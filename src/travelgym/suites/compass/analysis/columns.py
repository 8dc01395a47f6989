"""The columns of the COMPASS analysis (``travelgym analyze``): one definition each (JSON path
in a run's analysis, label, unit, precision, legend), read by the text tables
(:mod:`.summary`), the legend (``analyze --legend``) and the report, whose analysis tables name
each row with the words of :data:`WORDS` and keep the JSON path in its tooltip."""

from __future__ import annotations

from travelgym.core.columns import Column, N, text_column
from travelgym.suites.compass.tables import GROUP, METRIC_COLUMNS

RUN = text_column("run", legend="the run: its agent, with its directory where two runs share one")
SCORES = (RUN, GROUP, N, *METRIC_COLUMNS)


def _count(key: str, label: str, legend: str) -> Column:
    return Column(key, label, unit="", decimals=0, legend=legend)


TOOL_ERRORS = (
    RUN,
    _count("tool_errors.calls", "calls", "tool calls the agent made"),
    Column("tool_errors.rates.tool_name", "wrong tool", legend="calls naming no tool"),
    Column("tool_errors.rates.parameter", "bad param",
           legend="calls with a missing, unknown or ill-typed argument"),
    Column("tool_errors.rates.content", "bad content",
           legend="calls with well-formed arguments the database refused (unknown id, ...)"),
    Column("tool_errors.rates.total", "errors", legend="calls in error of any of the three kinds"),
    Column("search.effort.median", "E med", unit="calls", legend="median search effort E: "
           "distinct executable call signatures of an episode (Section 5.2)"),
    Column("search.yield.median", "Y med", unit="packages", legend="median search yield Y: "
           "distinct bookable package ids an episode retrieved"),
    text_column("search.yield_source", "Y from", legend="where Y was read: tool results "
                "(stored payloads) or the call arguments (payloads not stored)"),
)  # fmt: skip
CONVERSATION = (
    RUN,
    Column("efficiency.t_star.mean", "t* mean", unit="turns", legend="mean user turn t* at "
           "which every constraint is known (0: the opening message; Appendix A.2)"),
    Column("efficiency.extra_turns.mean", "extra mean", unit="turns",
           legend="mean agent turns after t*"),
    Column("efficiency.extra_turns.median", "extra med", unit="turns",
           legend="median agent turns after t*"),
    Column("efficiency.conversation_length.mean", "length", unit="turns",
           legend="mean user turns of a conversation"),
    _count("efficiency.not_revealed", "unrevealed",
           "episodes in which some constraint was never revealed (no t*)"),
    Column("scores.overall.OR5", "OR-5", legend=METRIC_COLUMNS[1].legend),
)  # fmt: skip
CONSTRAINT_COUNT = (
    RUN,
    _count("constraints.by_count", "constraints", "constraints of the tasks in the row"),
    N,
    Column("constraints.by_count.K.all_satisfied", "all satisfied", legend="episodes whose plan "
           "violates none of its task's constraints (Fig. 10)"),
    Column("constraints.by_count.K.mean_share", "share satisfied",
           legend="mean share of its task's constraints a plan satisfies"),
)  # fmt: skip
VALIDATION = (
    RUN,
    _count("validation.n", "answers", "final answers with a plan"),
    Column("validation.share_validated", "validated", legend="answers whose packages all went "
           "through a recommend_* tool (G.3)"),
    Column("validation.validated.FR", "FR val.", legend="FR of the validated answers"),
    Column("validation.validated.OR5", "OR-5 val.", legend="OR-5 of the validated answers"),
    Column("validation.unvalidated.FR", "FR unval.", legend="FR of the other answers"),
    Column("validation.unvalidated.OR5", "OR-5 unval.", legend="OR-5 of the other answers"),
)  # fmt: skip
USER_TYPES = (
    RUN,
    Column("styles.cv", "CV", legend="coefficient of variation of OR-5 across the user's "
           "communication styles (Table 6)"),
    Column("trust.questioning.OR5", "questioning", legend="OR-5 with questioning users (Table 7)"),
    Column("trust.trusting.OR5", "trusting", legend="OR-5 with trusting users"),
    Column("trust.z", "z", unit="", decimals=2,
           legend="two-proportion z of questioning against trusting"),
    Column("trust.p_value", "p", unit="", decimals=3, legend="two-sided p-value of that z"),
)  # fmt: skip
STABILITY = (
    text_column("stability", "runs", legend="a run's trials, or an agent's repeated runs, "
                "with their count (and what they mix)"),
    *(Column(f"stability.metrics.{c.key}", c.label, legend=f"mean (std) of {c.label} across them")
      for c in METRIC_COLUMNS if c.key != "optimal"),
)  # fmt: skip
ALL = (*SCORES, *TOOL_ERRORS, *CONVERSATION, *CONSTRAINT_COUNT, *VALIDATION, *USER_TYPES,
       *STABILITY)  # fmt: skip

#: words for the segments of an analysis path in the report (``effort.q1`` is "search effort E
#: · 1st quartile"); a segment not here is written with spaces for its underscores
WORDS = {
    "calls": "calls", "counts": "count", "rates": "rate (%)", "other_rates": "other rate (%)",
    "tool_name": "wrong tool", "parameter": "bad parameter", "content": "bad content",
    "internal": "internal error", "sandbox": "sandbox error", "total": "all errors",
    "effort": "search effort E", "yield": "search yield Y", "yield_source": "Y read from",
    "or5_by_effort_bin": "OR-5 by E bin", "or5_by_yield_bin": "OR-5 by Y bin",
    "n": "n", "mean": "mean", "std": "std", "min": "min", "q1": "1st quartile",
    "median": "median", "q3": "3rd quartile", "max": "max", "lo": "from", "hi": "to",
    "t_star": "t* (turn all constraints known)", "t_star_histogram": "episodes by t*",
    "extra_turns": "agent turns after t*", "conversation_length": "user turns",
    "or5_by_extra_turns": "OR-5 by turns after t*", "not_revealed": "never all revealed",
    "termination": "ended by", "bin": "bin", "by_count": "by constraint count",
    "all_satisfied": "all satisfied (%)", "mean_share": "share satisfied (%)",
    "by_kind": "by constraint kind", "satisfied": "satisfied (%)",
    "unresolved_plans": "unresolved plans", "share_validated": "validated (%)",
    "validated": "validated", "unvalidated": "not validated", "by_style": "by style",
    "name": "name", "cv": "CV of OR-5 (%)", "questioning": "questioning", "trusting": "trusting",
    "z": "z", "p_value": "p", "ci_low": "CI low", "ci_high": "CI high", "effect": "effect (pp)",
    "n_episodes": "episodes", "n_tasks": "tasks", "trials": "trials", "FR": "FR", "OR5": "OR-5",
    "OR10": "OR-10", "OR20": "OR-20", "optimal": "optimal", "diff": "A - B (pp)",
    "significant": "significant", "metrics": "metrics", "tasks": "tasks",
    "informative_tasks": "informative tasks", "min_tasks": "tasks needed",
    "conversations": "conversations", "chance_spread": "chance spread", "spread": "spread",
    "chance_cv": "chance CV", "verdict": "verdict", "reason": "reason", "level": "level",
    "axis": "axis", "contrast": "contrast", "outcome": "outcome",
    # the analysis groups, as the report heads them
    "tool_errors": "Tool-call errors", "search": "Search effort and yield",
    "efficiency": "Conversation", "revelation": "OR-5 by t*", "constraints": "Constraints",
    "validation": "Validation", "styles": "User styles", "trust": "Trust",
    "persona": "User persona", "persona_effects": "Persona effects within tasks",
    "stability": "Stability",
}  # fmt: skip
