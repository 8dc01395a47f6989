"""The report's tables speak the tables' vocabulary (issue 37): the analysis tables name each
row in words, never by a raw dotted JSON key (``counts.tool_name``, ``effort.q1``), and keep
the key in the row's tooltip; the metric tables head each column with the suite's label and
its JSON key in the tooltip. Read from the page as headless Chromium rendered it."""

from __future__ import annotations

import asyncio
import re

import pytest

from tests.report.test_report_browser import chromium, dump_dom  # noqa: F401 - the fixture
from travelgym.core.registry import get_suite
from travelgym.report.shell import write_report
from travelgym.report.tables import human_path, matrix, path_parts
from travelgym.runner.batch import RunConfig, run_suite
from travelgym.runner.specs import parse_agent_spec

TASK_IDS = ["compass-001", "compass-002", "compass-038"]
# a JSON key path as the analysis writes it: words joined by dots (``rates.total``, ``[0].lo``)
DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\.(?:[A-Za-z_]|\[)")


@pytest.fixture(scope="module")
def page(tmp_path_factory, compass_db):
    """The report (with its analysis) of two scripted runs on :data:`TASK_IDS`."""
    data_dir = compass_db.parent.parent
    root = tmp_path_factory.mktemp("labels")
    dirs = []
    for agent in ("scripted:greedy", "scripted:exhaustive"):
        spec = parse_agent_spec(get_suite("compass"), agent)
        dirs.append(root / spec.dirname)
        asyncio.run(run_suite(RunConfig("compass", spec.text, out=dirs[-1], task_ids=TASK_IDS,
                                        data_dir=data_dir, progress=False)))  # fmt: skip
    out = root / "report.html"
    write_report(dirs, out, data_dir=data_dir, include_analysis=True)
    return out


def test_a_path_in_words_has_no_dots_and_keeps_bracketed_names_whole():
    assert path_parts("or5_by_effort_bin.[32.5].lo") == ["or5_by_effort_bin", "[32.5]", "lo"]
    assert human_path("counts.tool_name", {"counts": "count"}) == "count \u00b7 tool name"
    html = matrix({"a": {"effort.q1": 3}}, ["a"], "t", words={"effort": "E", "q1": "Q1"})
    assert "<th scope='row' title='effort.q1'>E \u00b7 Q1</th>" in html


def test_analysis_tables_show_labels_with_the_json_key_in_the_tooltip(page, chromium, tmp_path):  # noqa: F811
    dom = dump_dom(chromium, tmp_path / "profile", page.resolve().as_uri())
    section = dom.by_id("analysis")
    tables = [t for t in section.find_all("table") if "analysis" in t.classes()]
    assert len(tables) >= 8  # runs, tool errors, search, conversation, ... comparisons
    heads = [th for t in tables for th in t.find_all("th")]
    raw = [th.text() for th in heads if DOTTED.search(th.text())]
    assert raw == [], f"raw JSON keys as labels: {raw[:10]}"
    titles = {th.attrs["title"]: th.text() for th in heads if "title" in th.attrs}
    assert titles["counts.tool_name"] == "count \u00b7 wrong tool"
    assert titles["effort.q1"] == "search effort E \u00b7 1st quartile"
    assert titles["rates.total"] == "rate (%) \u00b7 all errors"
    dotted = [k for k in titles if "." in k]
    assert len(dotted) > 50 and all(titles[k] != k for k in dotted)
    groups = [s.text() for s in section.find_all("summary")]
    assert "Tool-call errors" in groups and "tool_errors" not in groups
    metrics = dom.by_id("summary-overall")
    heads = {th.attrs.get("title"): th.text() for th in metrics.find_all("th") if th.text()}
    assert heads["OR5"] == "OR-5 (%)" and heads["FR"] == "FR (%)"
