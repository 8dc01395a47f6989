"""What a suite gets without writing it (:class:`~travelgym.core.suite.Suite`'s defaults):
statistics of its database, MCP contexts derived from its tools, and a report page of its
headline figures. A suite overrides any of
them where it has more to say."""

from __future__ import annotations

import html
import typing
from contextlib import closing
from pathlib import Path
from typing import Any


def database_stats(path: Path) -> dict[str, Any]:
    """The database at ``path``: where it is, its metadata (when it has a ``metadata`` table)
    and the rows of every table."""
    from travelgym.core.database_stats import metadata, table_counts
    from travelgym.db import connect_readonly

    with closing(connect_readonly(path)) as conn:
        tables = [name for (name,) in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
            "ORDER BY name")]  # fmt: skip
        meta = metadata(conn) if "metadata" in tables else {}
        counts = table_counts(conn, [(f'"{t}"', "") for t in tables if t != "metadata"])
    return {"path": str(path), "metadata": meta,
            "counts": {name.strip('"'): n for name, n in counts.items()}}  # fmt: skip


def context_class(registry: Any) -> type | None:
    """The per-episode context class the registry's tools take (``None`` when they take none);
    a ``TypeError`` when they take different ones."""
    found = set()
    for name in registry.names:
        tool = registry[name]
        if tool.context_param is not None:
            found.add(typing.get_type_hints(tool.func)[tool.context_param])
    if len(found) > 1:
        raise TypeError(f"the tools take different contexts: {sorted(c.__name__ for c in found)}")
    return found.pop() if found else None


def tool_server(suite: Any, path: Path) -> tuple[Any, str]:
    """``(context factory, instructions)`` serving ``suite``'s tools over the database at
    ``path``: a context class with ``from_path`` opens the database, any other is made
    without arguments."""
    cls = context_class(suite.tool_registry())
    if cls is None:
        factory: Any = dict
    elif hasattr(cls, "from_path"):
        factory = lambda: cls.from_path(path)  # noqa: E731 - one context per connection
    else:
        factory = cls
    return factory, suite.toolset().intro or f"{suite.title} tools."


def report_body(suite: Any, runs: list[Any]) -> Any:
    """A report page of the runs' headline figures, one row a run."""
    from travelgym.core.text_table import cell
    from travelgym.report.body import ReportBody, Section

    figures = {}
    for run in runs:
        episodes = [e.model_dump(mode="json") if hasattr(e, "model_dump") else e
                    for e in run.episodes]  # fmt: skip
        summary = suite.summarize_episodes(episodes, run.manifest)
        figures[run.label] = suite.headline_metrics(summary)
    names = list(dict.fromkeys(k for f in figures.values() for k in f))
    head = "".join(f"<th>{html.escape(n)}</th>" for n in ["run", *names])
    rows = "".join("<tr>" + "".join(f"<td>{html.escape(cell(v))}</td>"
                                    for v in [label, *(f.get(n) for n in names)]) + "</tr>"
                   for label, f in figures.items())  # fmt: skip
    table = f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"
    return ReportBody(sections=[Section("summary", "Summary", table)],
                      data={"runs": [{"label": r.label, "figures": figures[r.label]} for r in runs]})  # fmt: skip
