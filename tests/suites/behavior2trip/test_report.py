"""``travelgym report`` on Behavior2Trip run directories: the summary and check tables carry the
stored scores' values, the page is self-contained and escapes the data, and in headless Chromium
(skipped without it, see ``test_report_browser``) an instance picked by the URL hash shows its
instruction, steps, plan day by day and every check's verdict."""

from __future__ import annotations

import asyncio
import json
import re

import pytest
from click.testing import CliRunner

from tests.report.test_report_browser import (  # noqa: F401 - chromium is a fixture
    NASTY,
    assert_no_console_errors,
    chromium,
    dump_dom,
    parse,
)
from tests.runner.chain_helpers import reseal
from travelgym.cli import main
from travelgym.report.lazy import unpacked
from travelgym.report.shell import write_report
from travelgym.runner.store import EPISODES, RunDirError
from travelgym.suites.behavior2trip.checks import CHECK_IDS
from travelgym.suites.behavior2trip.plan_parse import parse_plan
from travelgym.suites.behavior2trip.scoring import summarize

LIMIT = 6


@pytest.fixture(scope="module")
def trips_run(tmp_path_factory, trips_database):
    """A scripted Behavior2Trip run on 6 test instances (one instruction made hostile, one step
    given an invalid action) and its report."""
    from travelgym.runner.batch import RunConfig, run_suite
    from travelgym.suites.behavior2trip.instances import ensure_instances

    data_dir = trips_database.path.parent.parent
    ensure_instances(trips_database, data_dir, splits=("test",))
    root = tmp_path_factory.mktemp("trips-report")
    run_dir = root / "scripted"
    asyncio.run(run_suite(RunConfig("behavior2trip", "scripted", out=run_dir,
                                                limit=LIMIT, data_dir=data_dir, progress=False)))  # fmt: skip
    lines = (run_dir / EPISODES).read_text().splitlines()
    first = json.loads(lines[0])
    first["instruction"] = NASTY + " " + first["instruction"]
    first["invalid_actions"], first["p_action"] = 1, -1
    first["steps"][1]["invalid_actions"] = [{"step": 1, "source": "tool", "kind": "parameter",
                                             "message": "city: unknown <city>", "raw": ""}]  # fmt: skip
    first["steps"][1]["tool_calls"][0].update(result={"items": ["<b>hotel</b>"]}, result_chars=30)
    lines[0] = json.dumps(first)
    (run_dir / EPISODES).write_text("\n".join(lines) + "\n")
    reseal(run_dir)  # the edit stands for an LLM agent's run, not for tampering
    out = root / "report.html"
    result = write_report([run_dir], out, data_dir=data_dir)
    episodes = [json.loads(x) for x in lines]
    return {"path": out, "dir": run_dir, "result": result, "episodes": episodes,
            "data_dir": data_dir, "url": out.resolve().as_uri()}  # fmt: skip


def _cell(dom, **attrs) -> str:
    found = dom.find_all("td", **attrs)
    assert len(found) == 1, attrs
    return found[0].text().strip()


def test_summary_and_check_tables_show_the_stored_scores(trips_run):
    text = trips_run["path"].read_text(encoding="utf-8")
    assert trips_run["result"].episodes == LIMIT and trips_run["result"].notes == []
    dom = parse(text)
    summary = summarize([e["score"] for e in trips_run["episodes"]])
    groups = {"overall": summary["overall"], **summary["by_difficulty"]}
    assert set(groups) == {"overall", "easy", "medium", "hard"}
    for group, agg in groups.items():
        assert _cell(dom, data_run="scripted", data_group=group, data_metric="n") == str(agg["n"])
        for metric in ("DR", "C_micro", "C_macro", "UPC_micro", "UPC_macro", "final"):
            got = _cell(dom, data_run="scripted", data_group=group, data_metric=metric)
            assert got == f"{agg[metric]:.1f}", (group, metric)
    rows = dom.by_id("check-rates").find_all("tr")[1:]
    assert len(rows) == len(CHECK_IDS) == 32
    for cid in CHECK_IDS:
        results = [c for e in trips_run["episodes"] for c in e["score"]["checks"] if c["id"] == cid]
        applicable = [c for c in results if c["passed"] is not None]
        passed = sum(bool(c["passed"]) for c in applicable)
        want = f"{100 * passed / len(applicable):.1f}" if applicable else "\u2013"
        assert _cell(dom, data_run="scripted", data_check=cid).startswith(
            f"{want} ({passed}/{len(applicable)})"
        )


def test_report_is_self_contained_and_escapes_the_data(trips_run):
    text = trips_run["path"].read_text(encoding="utf-8")
    lowered = text.lower()
    for needle in ("<script src", "<link", 'src="http', "src='http", "url(http", "@import"):
        assert needle not in lowered
    assert NASTY not in text and "<b>hotel</b>" not in text
    data = re.search(r'<script type="application/json" id="report-data">(.*?)</script>', text, re.S)
    embedded = unpacked(json.loads(data.group(1)))
    first = embedded["runs"][0]["episodes"]
    hostile = next(e for e in first if e["instr"].startswith(NASTY))
    assert hostile["steps"][1]["inv"][0]["m"] == "city: unknown <city>"
    assert [c["id"] for c in embedded["checks"]] == list(CHECK_IDS)
    assert all(e["task"] in embedded["trajectories"] for e in first)


def test_report_command_and_mixed_suites(trips_run, tmp_path):
    out = tmp_path / "r.html"
    done = CliRunner().invoke(main, ["report", str(trips_run["dir"]), "--out", str(out),
                                     "--data-dir", str(trips_run["data_dir"])])  # fmt: skip
    assert done.exit_code == 0, done.output
    assert "1 run(s), 6 episode(s)" in done.output and out.exists()
    compass = tmp_path / "compass"
    compass.mkdir()
    (compass / "manifest.json").write_text(json.dumps({"suite": "compass", "agent": "x"}))
    with pytest.raises(RunDirError, match="cannot mix Behavior2Trip and COMPASS"):
        write_report([trips_run["dir"], compass], tmp_path / "mixed.html")
    mixed = CliRunner().invoke(main, ["report", str(trips_run["dir"]), str(compass), "--out",
                                      str(tmp_path / "m.html")])  # fmt: skip
    assert mixed.exit_code == 1 and "cannot mix" in mixed.output


def test_page_loads_without_errors(trips_run, chromium, tmp_path):  # noqa: F811
    dom = dump_dom(chromium, tmp_path / "profile", trips_run["url"])
    assert_no_console_errors(dom)
    assert dom.find_all("title")[0].text().startswith("Behavior2Trip report")
    assert len(dom.by_id("episode-list").find_all("li")) == LIMIT


@pytest.mark.parametrize("which", [0, 2])
def test_selecting_an_instance_shows_its_plan_and_verdicts(
    trips_run,
    chromium,  # noqa: F811
    tmp_path,
    which,
):
    episode = trips_run["episodes"][which]
    url = f"{trips_run['url']}#run=0&task={episode['instance_id']}"
    dom = dump_dom(chromium, tmp_path / "profile", url)
    assert_no_console_errors(dom)
    view = dom.by_id("episode-view")
    assert view.attrs.get("data-episode") == episode["episode_id"]
    assert dom.by_id("instruction").text() == episode["instruction"]
    assert "Behaviour trajectory (" in dom.by_id("behaviour").text()
    steps = dom.by_id("steps").find_all("li", cls="step")
    assert len(steps) == len(episode["steps"])
    plan, _ = parse_plan(episode["final_answer"])
    days = dom.by_id("plan").find_all("div", cls="day")
    assert len(days) == len(plan.days) > 0
    assert (plan.days[0].city or "") in days[0].text()
    rows = dom.by_id("check-verdicts").find_all("tr")[1:]
    checks = episode["score"]["checks"]
    assert [r.attrs["data-check"] for r in rows] == [c["id"] for c in checks]
    for row, check in zip(rows, checks, strict=True):
        want = {False: "fail", True: "pass", None: "na"}[check["passed"]]
        assert want in row.classes() and check["reason"] in row.text()
    failed = [r for r in rows if "fail" in r.classes()]
    assert len(failed) == sum(c["passed"] is False for c in checks)
    if which == 0:  # the hostile instruction is text, the invalid action is highlighted
        assert NASTY in dom.by_id("instruction").text()
        assert dom.find_all("title")[0].text() != "owned"
        invalid = view.find_all("div", cls="invalid")
        assert len(invalid) == 1 and "city: unknown <city>" in invalid[0].text()
        assert "has-invalid" in steps[1].classes()


def _embedded(path) -> dict:
    text = path.read_text(encoding="utf-8")
    data = re.search(r'<script type="application/json" id="report-data">(.*?)</script>', text, re.S)
    return unpacked(json.loads(data.group(1)))


def test_a_run_of_another_instance_set_shows_its_own_trajectories(trips_run, tmp_path):
    """The report read the default test file whatever set a run played: a ``--noise 0.3``
    run showed the default instances' trajectories (17 actions where it played 19), an
    ``--instances unfiltered`` one the filtered set's. Each run's own instances are shown."""
    from travelgym.runner.batch import RunConfig, run_suite
    from travelgym.suites.behavior2trip.instance_sets import load_split

    data_dir = trips_run["data_dir"]
    noisy = tmp_path / "noisy"
    asyncio.run(run_suite(RunConfig("behavior2trip", "scripted", out=noisy, limit=3,
                                    data_dir=data_dir, progress=False,
                                    options={"noise": 0.3})))  # fmt: skip
    out = tmp_path / "r.html"
    write_report([trips_run["dir"], noisy], out, data_dir=data_dir)
    embedded = _embedded(out)
    _, played, _ = load_split("test", data_dir=data_dir, limit=3, noise=0.3)
    _, default, _ = load_split("test", data_dir=data_dir, limit=3)
    assert [x.instance_id for x in played] == [x.instance_id for x in default]
    assert [len(x.trajectory) for x in played] != [len(x.trajectory) for x in default]
    episodes = {e["task"]: e for e in embedded["runs"][1]["episodes"]}
    for x in played:
        shown = embedded["trajectories"][episodes[x.instance_id]["traj"]]
        assert shown["n"] == len(x.trajectory)
    for x in default:  # the default run's, under the bare ids
        assert embedded["trajectories"][x.instance_id]["n"] == len(x.trajectory)
