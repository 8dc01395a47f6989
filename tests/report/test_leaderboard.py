"""The report's leaderboard: the numbers (ranks, bootstrap CIs, the paired gap to the top run as
``analyze`` computes it, pass^k, the shared tasks) and, in Chromium, a report of three runs that
opens on the leaderboard and stays shorter than three screens with no episode selected, its
episodes' conversations unpacked only when a filter needs them."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest

from tests.report.test_report_browser import (  # noqa: F401 - chromium is a fixture
    _browser,
    chromium,
    screenshot,
)
from travelgym.core.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED, paired_bootstrap
from travelgym.core.passk import pass_at_k_table
from travelgym.core.registry import get_suite
from travelgym.report import leaderboard
from travelgym.report.body import ReportRun
from travelgym.report.shell import load_runs, write_report
from travelgym.runner.batch import RunConfig, run_suite
from travelgym.runner.specs import parse_agent_spec

AGENTS = ("scripted:greedy", "scripted:sampled", "scripted:exhaustive")
TASK_IDS = [f"compass-{i:03d}" for i in range(1, 7)]
WINDOW = (1400, 900)


def _episode(task: str, trial: int, ok: bool) -> dict:
    return {"task_id": task, "trial": trial, "score": {"top": {"5": ok}}}


def _run(label: str, outcomes: dict[str, list[int]], trials: int = 1, **manifest) -> ReportRun:
    episodes = [_episode(t, i, bool(v)) for t, vs in outcomes.items() for i, v in enumerate(vs)]
    return ReportRun(Path(label), {"trials": trials, "scorer_version": "2", **manifest},
                     episodes, label=label,
                     accounting={"outcomes": {"n": len(episodes), "infra_errors": 1},
                                 "usage": {"agent": {"input_tokens": 10, "output_tokens": 2},
                                           "user": {"input_tokens": 5, "output_tokens": 1},
                                           "cost_usd": {"total": 0.5}}})  # fmt: skip


@pytest.fixture
def synthetic() -> list[ReportRun]:
    """Three runs of two trials: ``b`` best, ``a`` with an extra task no other run has."""
    tasks = [f"t{i}" for i in range(12)]
    a = {t: [i % 2, i % 3 == 0] for i, t in enumerate(tasks)} | {"extra": [1, 1]}
    b = {t: [1, i % 4 != 0] for i, t in enumerate(tasks)}
    c = {t: [0, i % 5 == 0] for i, t in enumerate(tasks)}
    return [_run("a", a, 2), _run("b", b, 2), _run("c", c, 3)]


def test_ranks_cis_and_gaps_follow_the_headline_metric(synthetic):
    suite = get_suite("compass")
    board = leaderboard.build(suite, synthetic)
    assert board.metric == suite.headline_metric and board.refused is None
    assert board.tasks == 12  # "extra" is in one run only
    assert any("compared on the 12 task(s)" in n and "a: 13" in n for n in board.notes)
    values = {r.label: [100 * sum(v) / len(v) for t, v in sorted(leaderboard.outcomes_by_task(
        suite, r).items()) if t != "extra"] for r in synthetic}  # fmt: skip
    means = {k: sum(v) / len(v) for k, v in values.items()}
    assert [row.label for row in board.rows] == sorted(means, key=lambda k: -means[k])
    assert [row.rank for row in board.rows] == [1, 2, 3]
    top = board.rows[0]
    assert top.label == "b" and top.gap is None
    for row in board.rows:
        assert row.value == round(means[row.label], 2)
        assert row.ci[0] <= row.value <= row.ci[1] and row.ci[0] < row.ci[1]
        if row.gap is not None:
            want = paired_bootstrap(values[row.label], values[top.label], DEFAULT_RESAMPLES,
                                    DEFAULT_SEED)  # fmt: skip
            assert row.gap == want
            assert (
                row.gap["ci_low"] <= row.gap["diff"] <= row.gap["ci_high"] and row.gap["diff"] < 0
            )
        assert (row.episodes, row.infra_errors) == (26 if row.label == "a" else 24, 1)
        assert (row.input_tokens, row.output_tokens, row.cost_usd) == (15, 3, 0.5)
    # pass^k at the fewest trials of any run (2), on the shared tasks only
    assert board.k == 2
    runs = {r.label: r for r in synthetic}
    for row in board.rows:
        shared = [e for e in runs[row.label].episodes if e["task_id"] != "extra"]
        want = pass_at_k_table(shared, suite.succeeded, 2)["2"]["pass^k"]
        assert row.pass_k == want
    assert leaderboard.build(suite, synthetic).as_json() == board.as_json()  # seeded


def test_refuses_or_notes_what_cannot_be_compared_as_is(synthetic):
    suite = get_suite("compass")
    synthetic[1].manifest["scorer_version"] = "1"
    board = leaderboard.build(suite, synthetic)
    assert board.rows == [] and "different scorer versions" in board.refused
    assert "No ranking" in leaderboard.section(board).html
    synthetic[1].manifest["scorer_version"] = "2"
    synthetic[2].manifest["tasks_sha256"] = "other"
    board = leaderboard.build(suite, synthetic)
    assert board.rows and any("differ in tasks_sha256" in n for n in board.notes)
    alone = [_run("x", {"t1": [1]}), _run("y", {"t2": [0]})]
    assert "share no task" in leaderboard.build(suite, alone).refused


# --------------------------------------------------------------------------- three real runs


@pytest.fixture(scope="module")
def three_runs(tmp_path_factory, compass_db):
    """Three scripted COMPASS runs on :data:`TASK_IDS` and their report."""
    data_dir = compass_db.parent.parent
    root = tmp_path_factory.mktemp("leaderboard")
    dirs = []
    for agent in AGENTS:
        spec = parse_agent_spec(get_suite("compass"), agent)
        out = root / spec.dirname
        asyncio.run(run_suite(RunConfig("compass", spec.text, out=out, task_ids=TASK_IDS,
                                        data_dir=data_dir, progress=False)))  # fmt: skip
        dirs.append(out)
    out = root / "report.html"
    write_report(dirs, out, data_dir=data_dir)
    return {"dirs": dirs, "path": out, "data_dir": data_dir}


def test_gaps_equal_analyze_paired_bootstrap(three_runs):
    """The gap of each run to the top is ``analyze``'s comparison of the two runs (OR-5)."""
    from travelgym.suites.compass.analysis.metrics import compare, features_of

    suite = get_suite("compass")
    runs = load_runs(suite, three_runs["dirs"])
    board = leaderboard.build(suite, runs)
    assert board.tasks == len(TASK_IDS) and board.notes == []
    by_label = {r.label: r for r in runs}
    top = by_label[board.rows[0].label]
    assert board.rows[0].label == "scripted:exhaustive" and board.rows[0].value == 100.0
    for row in board.rows[1:]:
        analyzed = compare(features_of(by_label[row.label].episodes), features_of(top.episodes))
        want = analyzed["metrics"]["OR5"]
        assert analyzed["tasks"] == board.tasks
        assert want["a"] == row.value
        assert {k: row.gap[k] for k in ("diff", "ci_low", "ci_high", "p_value")} == {
            k: want[k] for k in ("diff", "ci_low", "ci_high", "p_value")}  # fmt: skip
    text = three_runs["path"].read_text(encoding="utf-8")
    data = json.loads(re.search(r'id="report-data">(.*?)</script>', text, re.S).group(1))
    assert data["leaderboard"] == board.as_json()


PROBE = """<script>window.addEventListener('load', function () { setTimeout(function () {
  var t = document.getElementById('leaderboard-table').getBoundingClientRect();
  document.documentElement.setAttribute('data-probe', JSON.stringify({top: t.top,
    bottom: t.bottom, height: document.documentElement.scrollHeight, screen: innerHeight,
    selected: document.documentElement.getAttribute('data-selected'),
    tab: document.documentElement.getAttribute('data-tab')}));
}, 200); });</script>"""


def _measure(browser: str, page: Path, profile: Path, hash_: str = "") -> dict:
    """The leaderboard's box, the page's height and the window's, as Chromium lays them out."""
    probed = page.with_name(f"probed-{profile.name}.html")
    probed.write_text(page.read_text(encoding="utf-8").replace("</body>", PROBE + "</body>"),
                      encoding="utf-8")  # fmt: skip
    done = _browser(browser, profile, f"--window-size={WINDOW[0]},{WINDOW[1]}",
                    "--virtual-time-budget=5000", "--dump-dom", probed.resolve().as_uri() + hash_)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    found = re.search(r'data-probe="([^"]*)"', done.stdout)
    assert found, done.stderr[-2000:]
    return json.loads(found.group(1).replace("&quot;", '"'))


def test_three_runs_open_on_the_leaderboard_in_a_short_page(three_runs, chromium, tmp_path):  # noqa: F811
    page = three_runs["path"]
    shot = screenshot(chromium, tmp_path / "shot", page.resolve().as_uri(),
                      tmp_path / "leaderboard.png", size=f"{WINDOW[0]},{WINDOW[1]}")  # fmt: skip
    from matplotlib import image

    assert image.imread(shot)[..., :3].std() > 0.05  # not blank
    first = _measure(chromium, page, tmp_path / "first")
    assert not first["selected"], first  # no episode selected
    assert 0 <= first["top"] < first["bottom"] <= first["screen"], first  # on the first screen
    assert first["height"] < 3 * first["screen"], first
    # the trajectory tab, no episode picked: the list is a fixed-height pane
    viewer = _measure(chromium, page, tmp_path / "viewer", "#viewer")
    assert viewer["tab"] == "viewer" and not viewer["selected"], viewer
    assert viewer["height"] < 3 * viewer["screen"], viewer


FIND = """<script>window.addEventListener('load', function () {
  var box = document.getElementById('task-filter');
  box.value = WORDS;
  box.dispatchEvent(new Event('input'));
  setTimeout(function () {
    var ids = Array.prototype.map.call(document.querySelectorAll('#episode-list li'),
      function (li) { return li.getAttribute('data-id'); });
    document.documentElement.setAttribute('data-found', JSON.stringify(ids));
  }, 2000);
});</script>"""


def test_find_unpacks_the_conversations_it_searches(three_runs, chromium, tmp_path):  # noqa: F811
    """The conversations are packed out of the list's index; typing words of one in the Find box
    unpacks them and lists exactly the episodes whose conversation (or task) has the words."""
    from travelgym.report.lazy import unpacked

    text = three_runs["path"].read_text(encoding="utf-8")
    packed = json.loads(re.search(r'id="report-data">(.*?)</script>', text, re.S).group(1))
    assert all("turns" not in e and "detail" in r for r in packed["runs"] for e in r["episodes"])
    data = unpacked(packed)
    episodes = data["runs"][0]["episodes"]
    turn = next(
        t["x"] for t in episodes[-1]["turns"][1:] if t["r"] == "u" and len(t.get("x", "")) > 40
    )
    words = " ".join(turn.split()[:6]).lower()

    def haystack(ep: dict) -> str:
        task = data["tasks"].get(ep["task"], {})
        parts = [ep["id"], task.get("park"), task.get("metric"), task.get("objective"),
                 task.get("objective_text"), task.get("story")]  # fmt: skip
        return "\n".join(str(p) for p in parts + [t.get("x", "") for t in ep["turns"]]).lower()

    want = [ep["id"] for ep in episodes if words in haystack(ep)]
    assert 1 <= len(want) < len(episodes), words
    page = tmp_path / "find.html"
    page.write_text(text.replace("</body>", FIND.replace("WORDS", json.dumps(words)) + "</body>"),
                    encoding="utf-8")  # fmt: skip
    done = _browser(chromium, tmp_path / "profile", "--virtual-time-budget=10000", "--dump-dom",
                    page.resolve().as_uri())  # fmt: skip
    found = re.search(r'data-found="([^"]*)"', done.stdout)
    assert found, done.stderr[-2000:]
    assert json.loads(found.group(1).replace("&quot;", '"')) == want
    assert 'data-errors="0"' in done.stdout
