"""A plain-text summary of an :func:`travelgym.suites.compass.analysis.metrics.analyze_runs` result."""

from __future__ import annotations

from typing import Any

from travelgym.suites.compass.analysis.persona_effects import (
    BINARY_AXES,
    MANY_LEVEL_AXES,
    describe,
)

PERSONA_AXES = (*BINARY_AXES, *MANY_LEVEL_AXES)


def _f(value: Any, digits: int = 1) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _table(header: list[str], rows: list[list[Any]]) -> list[str]:
    """Left-aligned first column, right-aligned others, widths from the content."""
    cells = [header] + [[_f(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    return [
        "  ".join(
            c.ljust(w) if i == 0 else c.rjust(w)
            for i, (c, w) in enumerate(zip(r, widths, strict=True))
        )
        for r in cells
    ]


def format_analysis(result: dict[str, Any]) -> str:
    """Scores, tool errors, search, efficiency, constraints, user types, stability, comparisons."""
    runs: dict[str, Any] = result["runs"]
    lines: list[str] = []

    def section(title: str) -> None:
        lines.extend(["", title, "-" * len(title)])

    section("Scores (FR / OR-A% / exact optimum, % of episodes; Figs 2, 3, 8)")
    rows = []
    for name, run in runs.items():
        scores = run["scores"]
        groups = [("all", scores["overall"])]
        groups += [(f"L{k}", v) for k, v in scores["by_level"].items()]
        groups += [(k, v) for k, v in scores["by_objective"].items()]
        for label, agg in groups:
            rows.append([f"{name} {label}", agg["n"], agg["FR"], agg["OR5"], agg["OR10"],
                         agg["OR20"], agg["optimal"]])  # fmt: skip
    lines += _table(["run", "n", "FR", "OR-5", "OR-10", "OR-20", "optimal"], rows)

    section("Tool-call errors (% of calls; Table 4) and search (Section 5.2, Fig. 4)")
    rows = []
    for name, run in runs.items():
        te, se = run["tool_errors"], run["search"]
        source = ",".join(k for k, v in se["yield_source"].items() if v)
        rows.append([name, te["calls"], te["rates"]["tool_name"], te["rates"]["parameter"],
                     te["rates"]["content"], te["rates"]["total"], se["effort"]["median"],
                     se["yield"]["median"], source])  # fmt: skip
    header = ["run", "calls", "name", "param", "content", "total", "E med", "Y med", "Y from"]
    lines += _table(header, rows)
    for name, run in runs.items():
        bins = run["search"]["or5_by_effort_bin"]
        text = ", ".join(f"[{b['lo']:g},{b['hi']:g}] n={b['n']} {b['OR5']:.0f}%" for b in bins)
        lines.append(f"  OR-5 by E bin, {name}: {text}")

    section("Conversation (Appendix A.2: t*, extra turns after t*, length; Figs 7, 9, 11)")
    rows = []
    for name, run in runs.items():
        ef = run["efficiency"]
        rows.append([name, ef["t_star"]["mean"], ef["extra_turns"]["mean"],
                     ef["extra_turns"]["median"], ef["conversation_length"]["mean"],
                     ef["not_revealed"], run["scores"]["overall"]["OR5"]])  # fmt: skip
    lines += _table(["run", "t* mean", "extra mean", "extra med", "length", "unrevealed", "OR-5"],
                    rows)  # fmt: skip
    for name, run in runs.items():
        text = ", ".join(f"{b['bin']}: {b['OR5']:.0f}% (n={b['n']})" for b in run["revelation"])
        lines.append(f"  OR-5 by t*, {name}: {text}")

    section("Constraint satisfaction by constraint count (% all satisfied; Fig. 10)")
    counts = sorted({int(k) for run in runs.values() for k in run["constraints"]["by_count"]})
    rows = [
        [name]
        + [run["constraints"]["by_count"].get(str(c), {}).get("all_satisfied") for c in counts]
        for name, run in runs.items()
    ]
    lines += _table(["run"] + [f"{c} cons." for c in counts], rows)

    section("Validation (G.3: final answers whose packages all went through recommend_*)")
    rows = []
    for name, run in runs.items():
        va = run.get("validation")
        if va is None:  # an analysis written before the key
            continue
        rows.append([name, va["n"], va["share_validated"], va["validated"]["FR"],
                     va["validated"]["OR5"], va["unvalidated"]["FR"], va["unvalidated"]["OR5"]])  # fmt: skip
    lines += _table(["run", "answers", "validated %", "FR val.", "OR-5 val.", "FR unval.",
                     "OR-5 unval."], rows)  # fmt: skip

    section("User types, pooled over tasks (Table 6: CV of OR-5 across styles; Table 7: trust)")
    rows = []
    for name, run in runs.items():
        st, tr = run["styles"], run["trust"]
        rows.append([name, st["cv"], tr["questioning"]["OR5"], tr["trusting"]["OR5"],
                     _f(tr["z"], 2), _f(tr["p_value"], 3)])  # fmt: skip
    lines += _table(["run", "CV %", "question.", "trusting", "z", "p"], rows)
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
        section("Stability (mean (std) across trials or repeated runs; Table 5)")
        rows = []
        for name, s in stab:
            m = s["metrics"]
            mixed = f" (mixed {', '.join(s['mixed'])})" if s.get("mixed") else ""
            rows.append([f"{name} n={s['n']}{mixed}"] + [f"{m[k]['mean']:.2f} ({m[k]['std']:.2f})"
                                                  for k in ("OR5", "OR10", "OR20", "FR")])  # fmt: skip
        lines += _table(["run", "OR-5", "OR-10", "OR-20", "FR"], rows)

    if result.get("comparisons"):
        section("Comparisons (A - B in points, 95% paired bootstrap CI over tasks)")
        for comp in result["comparisons"]:
            parts = []
            for key in ("FR", "OR5"):
                m = comp["metrics"][key]
                if m["diff"] is None:
                    continue
                star = " *" if m["significant"] else ""
                parts.append(
                    f"{key} {m['diff']:+.1f} [{m['ci_low']:+.1f}, {m['ci_high']:+.1f}]{star}"
                )
            lines.append(f"{comp['a']} vs {comp['b']} ({comp['tasks']} tasks): " + "; ".join(parts))
    for name, run in runs.items():
        for w in run.get("warnings", []):
            lines.append(f"warning ({name}): {w}")
    return "\n".join(lines).lstrip("\n")
