"""Run names are shown as written in every figure: ``$`` is no mathtext, a leading underscore
does not hide a run from the legend, and no name can make the report lose its figures."""

from __future__ import annotations

import pytest
from matplotlib import rc_context

from tests.suites.compass.analysis.test_metrics import TASKS, three_episodes
from travelgym.runner.store import RunStore
from travelgym.suites.compass.analysis.metrics import analyze_runs
from travelgym.suites.compass.analysis.plots import write_plots

NAMES = ["price $10-$20 $$", "x $^$ y", "_baseline", "50% off & <b>bold</b> \\alpha"]


def _write_run(directory, agent):
    store = RunStore(directory)
    store.open({"suite": "compass", "agent": agent, "trials": 1}, resume=False)
    for e in three_episodes():
        store.append(e)
    return directory


@pytest.fixture(scope="module")
def analysis(tmp_path_factory):
    root = tmp_path_factory.mktemp("labels")
    dirs = [_write_run(root / f"run{i}", name) for i, name in enumerate(NAMES)]
    return analyze_runs(dirs, TASKS, resamples=100)


def test_every_figure_is_drawn_with_every_name_verbatim(analysis, tmp_path):
    with rc_context({"svg.fonttype": "none"}):  # text as <text> elements, so it can be read back
        paths = write_plots(analysis, tmp_path, formats=("svg",))
    assert len(paths) == 8
    legend = (tmp_path / "fig02_fr_or.svg").read_text(encoding="utf-8")
    for name in NAMES:
        escaped = name.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        assert escaped in legend, name


def test_report_keeps_its_figures_whatever_the_names(analysis, compass_db, tmp_path):
    from travelgym.suites.compass.report import write_report

    dirs = [run["run_dir"] for run in analysis["runs"].values()][:2]  # "$$" among them
    result = write_report(dirs, tmp_path / "report.html", data_dir=compass_db.parent.parent)
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert not [n for n in result.notes if "write_plots failed" in n], result.notes
    assert html.count('<figure class="plot"') == 8
