"""A plain-text summary of an :func:`travelgym.suites.compass.analysis.metrics.analyze_runs` result."""

from __future__ import annotations

from typing import Any

from travelgym.core.columns import Column, table
from travelgym.suites.compass.analysis.columns import (
    CONSTRAINT_COUNT,
    CONVERSATION,
    SCORES,
    STABILITY,
    TOOL_ERRORS,
    USER_TYPES,
    VALIDATION,
)
from travelgym.suites.compass.analysis.persona_effects import (
    BINARY_AXES,
    MANY_LEVEL_AXES,
    describe,
)
from travelgym.suites.compass.tables import METRIC_COLUMNS, score_groups

PERSONA_AXES = (*BINARY_AXES, *MANY_LEVEL_AXES)
LABELS = {c.key: c.label for c in METRIC_COLUMNS}


def _rows(columns: tuple[Column, ...], runs: dict[str, Any]) -> list[list[Any]]:
    """One row per run: its label, then each column's value at its path in the run."""
    return [[name, *(c.value(run) for c in columns[1:])] for name, run in runs.items()]


def format_analysis(result: dict[str, Any]) -> str:
    """Scores, tool errors, search, efficiency, constraints, user types, stability, comparisons."""
    runs: dict[str, Any] = result["runs"]
    lines: list[str] = []

    def section(title: str, columns: tuple[Column, ...], rows: list[Any]) -> None:
        lines.extend(["", table(columns, rows, title=title)])

    rows = [[name, label, agg["n"], *(agg[c.key] for c in METRIC_COLUMNS)]
            for name, run in runs.items() for label, agg in score_groups(run["scores"])]  # fmt: skip
    section("Scores (% of episodes; Figs 2, 3, 8)", SCORES, rows)

    rows = []
    for name, run in runs.items():
        sources = run["search"]["yield_source"]
        row = [name, *(c.value(run) for c in TOOL_ERRORS[1:-1])]
        rows.append([*row, ",".join(k for k, v in sources.items() if v)])
    section("Tool-call errors (% of calls; Table 4) and search (Section 5.2, Fig. 4)",
            TOOL_ERRORS, rows)  # fmt: skip
    for name, run in runs.items():
        bins = run["search"]["or5_by_effort_bin"]
        text = ", ".join(f"[{b['lo']:g},{b['hi']:g}] n={b['n']} {b['OR5']:.0f}%" for b in bins)
        lines.append(f"  OR-5 by E bin, {name}: {text}")

    section("Conversation (Appendix A.2: t*, extra turns after t*, length; Figs 7, 9, 11)",
            CONVERSATION, _rows(CONVERSATION, runs))  # fmt: skip
    for name, run in runs.items():
        text = ", ".join(f"{b['bin']}: {b['OR5']:.0f}% (n={b['n']})" for b in run["revelation"])
        lines.append(f"  OR-5 by t*, {name}: {text}")

    rows = [[name, int(count), agg.get("n"), agg.get("all_satisfied"), agg.get("mean_share")]
            for name, run in runs.items()
            for count, agg in sorted(run["constraints"]["by_count"].items(),
                                     key=lambda kv: int(kv[0]))]  # fmt: skip
    section("Constraint satisfaction by constraint count (% of episodes; Fig. 10)",
            CONSTRAINT_COUNT, rows)  # fmt: skip

    validated = {name: run for name, run in runs.items() if run.get("validation") is not None}
    section("Validation (G.3: final answers whose packages all went through recommend_*)",
            VALIDATION, _rows(VALIDATION, validated))  # fmt: skip

    section("User types, pooled over tasks (Table 6: CV of OR-5 across styles; Table 7: trust)",
            USER_TYPES, _rows(USER_TYPES, runs))  # fmt: skip
    lines.append(
        "  pooled figures mix the user with the tasks it got; within tasks (OR-5, pp, 95%):"
    )
    effects = [(name, run.get("persona_effects")) for name, run in runs.items()]
    effects += [(f"{agent} (runs pooled)", s.get("persona_effects"))
                for agent, s in result.get("stability", {}).items()]  # fmt: skip
    for name, pe in effects:
        if pe:
            lines.append(f"  {name}:")
            lines += [f"    {describe(pe[axis])}" for axis in PERSONA_AXES]

    stab = [(name, run["stability"]) for name, run in runs.items() if run.get("stability")]
    stab += [(f"{agent} (runs)", s) for agent, s in result.get("stability", {}).items()]
    if stab:
        rows = []
        for name, st in stab:
            mixed = f" (mixed {', '.join(st['mixed'])})" if st.get("mixed") else ""
            m = st["metrics"]
            rows.append([f"{name} n={st['n']}{mixed}"]
                        + [f"{c.text(m[c.key.rsplit('.', 1)[1]]['mean'])} "
                           f"({c.text(m[c.key.rsplit('.', 1)[1]]['std'])})" for c in STABILITY[1:]])  # fmt: skip
        section("Stability (mean (std) across trials or repeated runs; Table 5)", STABILITY, rows)

    if result.get("comparisons"):
        lines += [
            "",
            title := "Comparisons (A - B in points, 95% paired bootstrap CI over tasks)",
            "-" * len(title),
        ]
        for comp in result["comparisons"]:
            parts = []
            for key in ("FR", "OR5"):
                m = comp["metrics"][key]
                if m["diff"] is None:
                    continue
                star = " *" if m["significant"] else ""
                parts.append(
                    f"{LABELS[key]} {m['diff']:+.1f} [{m['ci_low']:+.1f}, {m['ci_high']:+.1f}]"
                    f"{star}"
                )
            lines.append(f"{comp['a']} vs {comp['b']} ({comp['tasks']} tasks): " + "; ".join(parts))
    for name, run in runs.items():
        for w in run.get("warnings", []):
            lines.append(f"warning ({name}): {w}")
    return "\n".join(lines).lstrip("\n")
