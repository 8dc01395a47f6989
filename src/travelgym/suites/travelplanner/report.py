"""TravelPlanner's part of ``travelgym report``: a table of each run's metrics overall and per
level, and each constraint's pass counts (no episode viewer)."""

from __future__ import annotations

import html
from typing import Any

from travelgym.suites.travelplanner.scoring import COLUMNS, summarize_episodes


def _episode_dicts(run: Any) -> list[dict[str, Any]]:
    return [e if isinstance(e, dict) else e.model_dump(mode="json") for e in run.episodes]


def report_body(runs: list[Any]) -> Any:
    """The report's sections for ``runs`` (each a ``ReportRun``)."""
    from travelgym.report.body import ReportBody, Section

    head = "".join(f"<th>{name}</th>" for name, _ in COLUMNS)
    rows, constraint_rows, data = [], [], []
    for run in runs:
        summary = summarize_episodes(_episode_dicts(run))
        label = html.escape(run.label or run.directory.name)
        for level, m in summary["metrics"].items():
            cells = "".join(f"<td>{100 * m[key]:.1f}</td>" for _, key in COLUMNS)
            rows.append(f"<tr><td>{label}</td><td>{level}</td><td>{m['queries']}</td>{cells}</tr>")
        for cid, c in summary["constraints"].items():
            constraint_rows.append(f"<tr><td>{label}</td><td>{cid}</td><td>{c['passed']}</td>"
                                   f"<td>{c['total']}</td></tr>")  # fmt: skip
        data.append({"label": run.label, "mode": run.manifest.get("mode"), **summary})
    metrics = (f"<table><tr><th>run</th><th>level</th><th>n</th>{head}</tr>"
               f"{''.join(rows)}</table>")  # fmt: skip
    constraints = ("<table><tr><th>run</th><th>constraint</th><th>passed</th><th>total</th></tr>"
                   f"{''.join(constraint_rows)}</table>")  # fmt: skip
    return ReportBody(sections=[Section("metrics", "TravelPlanner metrics (%)", metrics),
                                Section("constraints", "Constraints", constraints)],
                      data={"runs": data})  # fmt: skip
