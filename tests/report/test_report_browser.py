"""The HTML report in a real browser: headless Chromium loads it from a file (no network),
``--dump-dom`` gives the DOM after the scripts ran and ``--screenshot`` a picture.

The page records script errors and console.error into ``#console-errors`` and the
``data-errors`` attribute of ``<html>``; the viewer opens the conversation named in the URL
hash (``#run=N&task=ID``). The browser tests skip when Chromium is missing, except in CI
(``CI`` set), where a missing browser is a failure: install the Debian package ``chromium``.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests.runner.chain_helpers import reseal
from travelgym.core.registry import get_suite
from travelgym.report.lazy import unpacked
from travelgym.report.markup import embed_json
from travelgym.report.page import error_hook_js
from travelgym.report.shell import write_report
from travelgym.runner.batch import RunConfig, run_suite
from travelgym.runner.specs import parse_agent_spec
from travelgym.runner.store import EPISODES, read_episodes
from travelgym.suites.compass.ground_truth import ensure_ground_truth
from travelgym.suites.compass.scoring import PlanScore, summarize

AGENTS = ("scripted:greedy", "scripted:exhaustive")
# the first tasks, and one where the greedy baseline recommends an infeasible plan (task file v3)
TASK_IDS = [f"compass-{i:03d}" for i in range(1, 8)] + ["compass-038"]
TASKS = len(TASK_IDS)
MAX_RESULT = 500
NASTY = '</script><script>document.title="owned"</script><!-- & "quoted" <b>not bold</b>'
CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-dev-shm-usage", "--no-first-run", "--hide-scrollbars")  # fmt: skip


def find_chromium() -> str | None:
    explicit = os.environ.get("TRAVELGYM_CHROMIUM")
    if explicit:
        return explicit
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    return None


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


@pytest.fixture(scope="module")
def chromium() -> str:
    path = find_chromium()
    if path is None:
        if in_ci():
            pytest.fail("Chromium is required in CI for the report browser tests: "
                        "apt-get install -y chromium")  # fmt: skip
        pytest.skip("Chromium is not installed (apt-get install -y chromium)")
    return path


class Node:
    def __init__(self, tag: str, attrs: dict[str, str], parent: Node | None) -> None:
        self.tag, self.attrs, self.parent = tag, attrs, parent
        self.children: list[Node | str] = []

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def classes(self) -> set[str]:
        return set(self.attrs.get("class", "").split())

    def iter(self):
        yield self
        for child in self.children:
            if isinstance(child, Node):
                yield from child.iter()

    def find_all(self, tag: str | None = None, cls: str | None = None, **attrs) -> list[Node]:
        return [n for n in self.iter() if (tag is None or n.tag == tag)
                and (cls is None or cls in n.classes())
                and all(n.attrs.get(k.replace("_", "-")) == v for k, v in attrs.items())]  # fmt: skip

    def by_id(self, ident: str) -> Node:
        found = [n for n in self.iter() if n.attrs.get("id") == ident]
        assert found, f"no element #{ident}"
        return found[0]


VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
        "track", "wbr"}  # fmt: skip


class TreeBuilder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#document", {}, None)
        self.current = self.root

    def handle_starttag(self, tag, attrs):
        node = Node(tag, {k: v or "" for k, v in attrs}, self.current)
        self.current.children.append(node)
        if tag not in VOID:
            self.current = node

    def handle_startendtag(self, tag, attrs):
        self.current.children.append(Node(tag, {k: v or "" for k, v in attrs}, self.current))

    def handle_endtag(self, tag):
        node = self.current
        while node is not None and node.tag != tag:
            node = node.parent
        if node is not None and node.parent is not None:
            self.current = node.parent

    def handle_data(self, data):
        self.current.children.append(data)


def parse(html_text: str) -> Node:
    builder = TreeBuilder()
    builder.feed(html_text)
    builder.close()
    return builder.root


def _browser(chromium: str, profile: Path, *args: str) -> subprocess.CompletedProcess:
    command = [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=180, check=False)


def dump_dom(chromium: str, profile: Path, url: str) -> Node:
    # virtual time lets the page finish its asynchronous work (unpacking episodes) before the dump
    done = _browser(chromium, profile, "--virtual-time-budget=10000", "--dump-dom", url)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "<html" in done.stdout, done.stderr[-2000:]
    return parse(done.stdout)


def screenshot(chromium: str, profile: Path, url: str, out: Path, size="1400,2000") -> Path:
    done = _browser(chromium, profile, f"--screenshot={out}", f"--window-size={size}", url)
    assert done.returncode == 0 and out.exists(), done.stderr[-2000:]
    return out


def assert_no_console_errors(dom: Node) -> None:
    html_node = dom.find_all("html")[0]
    box = dom.by_id("console-errors")
    assert html_node.attrs.get("data-errors") == "0", box.text()
    assert box.text() == ""
    assert html_node.attrs.get("data-ready") == "1", "the viewer script did not finish"


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def report(tmp_path_factory, compass_db):
    """Two scripted runs on :data:`TASK_IDS` (one agent message made hostile) and their report."""
    data_dir = compass_db.parent.parent
    root = tmp_path_factory.mktemp("report")
    dirs = []
    for agent in AGENTS:
        spec = parse_agent_spec(get_suite("compass"), agent)
        out = root / spec.dirname
        asyncio.run(run_suite(RunConfig("compass", spec.text, out=out, task_ids=TASK_IDS, data_dir=data_dir,
                                          progress=False)))  # fmt: skip
        dirs.append(out)
    lines = (dirs[0] / EPISODES).read_text().splitlines()
    first = json.loads(lines[0])
    first["turns"][1]["text"] = NASTY + "\n" + first["turns"][1]["text"]
    calls = first["turns"][1]["tool_calls"]  # as an LLM agent's run stores them: with results
    calls[0].update(result={"results": ["y" * 3000]}, result_chars=3016)
    calls[1].update(result={"hotel": "short <i>result</i>"}, result_chars=40)
    calls[2].update(ok=False, result=None, error_category="parameter",
                    error_message="start_date: not a date")  # fmt: skip
    lines[0] = json.dumps(first)
    (dirs[0] / EPISODES).write_text("\n".join(lines) + "\n")
    reseal(dirs[0])  # the edit stands for an LLM agent's run, not for tampering
    out = root / "report.html"
    result = write_report(dirs, out, data_dir=data_dir, max_result_chars=MAX_RESULT)
    return {"path": out, "dirs": dirs, "result": result, "data_dir": data_dir,
            "url": out.resolve().as_uri(), "hostile_task": first["task_id"]}  # fmt: skip


# --------------------------------------------------------------------------- without a browser


def test_embedded_json_cannot_end_its_script_element():
    data = {"text": NASTY, "line": "a\u2028b", "amp": "&amp;"}
    text = embed_json(data)
    assert "</" not in text and "<!--" not in text and "<script" not in text.lower()
    assert json.loads(text) == data


def test_report_is_one_self_contained_file(report):
    text = report["path"].read_text(encoding="utf-8")
    lowered = text.lower()
    for needle in ("<script src", "<link", 'src="http', "src='http", "url(http", "@import"):
        assert needle not in lowered
    assert text.count('<script type="application/json" id="report-data">') == 1
    data_text = text.split('id="report-data">', 1)[1].split("</script>", 1)[0]
    packed = json.loads(data_text)
    assert all("turns" not in e for r in packed["runs"] for e in r["episodes"])  # unpacked lazily
    data = unpacked(packed)
    assert [r["label"] for r in data["runs"]] == list(AGENTS)
    assert sum(len(r["episodes"]) for r in data["runs"]) == report["result"].episodes == 2 * TASKS
    texts = [t.get("x", "") for e in data["runs"][0]["episodes"] for t in e["turns"]]
    assert sum(t.startswith(NASTY + "\n") for t in texts) == 1  # survives escaping unchanged
    results = [c[4] for e in data["runs"][0]["episodes"] for t in e["turns"]
               for c in t.get("calls", []) if len(c) > 4 and c[4] is not None]  # fmt: skip
    assert len(results) == 2
    long = next(r for r in results if r.startswith('{"results"'))
    assert long.startswith('{"results":["' + "y" * 100) and len(long) < MAX_RESULT + 60
    assert long.endswith("[cut: 3,016 characters in all]")
    assert report["result"].notes == [
        f"1 tool result(s) longer than {MAX_RESULT:,} characters were cut in the embedded data"
    ]


def test_report_command(report, tmp_path):
    from click.testing import CliRunner

    from travelgym.cli import main

    out = tmp_path / "lean.html"
    args = ["report", *map(str, report["dirs"]), "--out", str(out), "--no-analysis",
            "--data-dir", str(report["data_dir"]), "--title", "Lean <report>"]  # fmt: skip
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert f"wrote {out}" in result.output and f"{2 * TASKS} episode(s)" in result.output
    text = out.read_text()
    assert "<title>Lean &lt;report&gt;</title>" in text
    assert 'id="analysis"' not in text and 'id="plots"' not in text
    assert out.stat().st_size < report["path"].stat().st_size
    empty = tmp_path / "not-a-run"
    empty.mkdir()
    result = CliRunner().invoke(main, ["report", str(empty), "--out", str(tmp_path / "x.html")])
    assert result.exit_code == 1 and "not a run directory" in result.output


# --------------------------------------------------------------------------- in Chromium


def test_page_loads_without_errors_and_tables_show_the_runs_values(report, chromium, tmp_path):
    dom = dump_dom(chromium, tmp_path / "profile", report["url"])
    assert_no_console_errors(dom)
    cells = {(c.attrs["data-run"], c.attrs["data-group"], c.attrs["data-metric"]): c.text()
             for c in dom.find_all("td") if "data-metric" in c.attrs}  # fmt: skip
    for agent, directory in zip(AGENTS, report["dirs"], strict=True):
        scores = [PlanScore.model_validate(e.score) for e in read_episodes(directory)]
        summary = summarize(scores)
        groups = {"overall": summary["overall"]}
        groups.update({f"level-{k}": v for k, v in summary["by_level"].items()})
        groups.update({f"objective-{k}": v for k, v in summary["by_objective"].items()})
        for group, agg in groups.items():
            for metric in ("FR", "OR5", "OR10", "OR20", "optimal"):
                assert cells[(agent, group, metric)] == f"{agg[metric]:.1f}", (agent, group, metric)
    # the exhaustive agent is optimal everywhere, the greedy one is not
    assert cells[("scripted:exhaustive", "overall", "OR5")] == "100.0"
    assert cells[("scripted:greedy", "overall", "optimal")] != "100.0"
    # the viewer lists the first run's episodes before anything is picked
    items = dom.by_id("episode-list").find_all("li")
    assert len(items) == TASKS
    assert dom.by_id("list-count").text() == f"{TASKS} of {TASKS} episodes"


def test_selecting_a_task_shows_its_conversation_and_verdicts(report, chromium, tmp_path):
    data_dir = report["data_dir"]
    _, truths = ensure_ground_truth(seed=0, data_dir=data_dir)
    for run_index, directory in enumerate(report["dirs"]):
        episodes = sorted(read_episodes(directory), key=lambda e: e.task_id)
        if run_index == 0:
            episode = next(e for e in episodes if e.task_id == report["hostile_task"])
        else:
            episode = episodes[-1]
        url = f"{report['url']}#run={run_index}&task={episode.task_id}&view=trajectory"
        dom = dump_dom(chromium, tmp_path / f"profile{run_index}", url)
        assert_no_console_errors(dom)
        assert dom.find_all("html")[0].attrs["data-selected"] == episode.episode_id
        assert "only-viewer" in dom.find_all("body")[0].classes()
        title = dom.by_id("episode-title").text()
        assert episode.task_id in title and AGENTS[run_index] in title
        selected = dom.by_id("episode-list").find_all("li", cls="selected")
        assert [li.attrs["data-id"] for li in selected] == [episode.episode_id]
        turns = dom.by_id("turns").find_all("li", cls="turn")
        assert [int(t.attrs["data-turn"]) for t in turns] == [t.index for t in episode.turns]
        for node, turn in zip(turns, episode.turns, strict=True):
            assert ("user" if turn.role == "user" else "agent") in node.classes()
            text = node.find_all("div", cls="turn-text")[0].text()
            assert text == (turn.text or ("" if turn.role == "user" else "(no text)"))
            chips = [c.text() for c in node.find_all("span", cls="act")]
            assert len(chips) == len(turn.acts)
            if turn.prompt:
                assert node.find_all("div", cls="instruction")[0].text().endswith(turn.prompt)
            if turn.tool_calls:
                summary = node.find_all("details", cls="calls")[0].text()
                assert summary.startswith(f"{len(turn.tool_calls)} tool call")
            assert len(node.find_all("div", cls="rec")) == (1 if turn.recommendation else 0)
        first_user = turns[0]
        assert first_user.find_all("span", cls="act")[0].text().startswith("open: ")
        card = dom.by_id("scorecard").text()
        truth = truths[episode.task_id]
        if episode.score["feasible"]:
            assert f"of {truth.feasible_count:,} feasible plans" in card
        if run_index == 1:  # exhaustive: the optimum, ranked first
            assert episode.score["optimal"]
            assert f"1 of {truth.feasible_count:,} feasible plans" in card
        if run_index == 0:  # the hostile text is shown as text, and nothing ran
            assert NASTY in turns[1].text()
            assert dom.find_all("title")[0].text() != "owned"
            assert not dom.find_all("b") and not dom.find_all("i")


def test_tool_calls_expand_with_arguments_results_and_errors(report, chromium, tmp_path):
    task = report["hostile_task"]
    episode = next(e for e in read_episodes(report["dirs"][0]) if e.task_id == task)
    calls = episode.turns[1].tool_calls
    url = f"{report['url']}#run=0&task={task}&view=trajectory&expand=calls"
    dom = dump_dom(chromium, tmp_path / "profile", url)
    assert_no_console_errors(dom)
    turn = dom.by_id("turns").find_all("li", cls="turn")[1]
    nodes = turn.find_all("details", cls="call")
    assert len(nodes) == len(calls) and all("open" in n.attrs for n in nodes)
    for node, call in zip(nodes, calls, strict=True):
        assert node.find_all("summary")[0].text().split("(", 1)[0].endswith(call.name)
        pre = node.find_all("pre")
        assert json.loads(pre[0].text()) == call.arguments
    first, second, third = nodes[:3]
    assert "[cut: 3,016 characters in all]" in first.find_all("pre")[1].text()
    assert json.loads(second.find_all("pre")[1].text()) == {"hotel": "short <i>result</i>"}
    assert "\u2717 parameter" in third.find_all("summary")[0].text()
    assert "start_date: not a date" in third.text()
    assert "result not stored in the run" in nodes[3].text()


def test_infeasible_recommendations_list_their_violated_constraints(report, chromium, tmp_path):
    episodes = read_episodes(report["dirs"][0])
    bad = next((e for e in episodes if not e.score["feasible"] and e.final_recommendation), None)
    assert bad is not None, "the deterministic greedy sample must contain an infeasible plan"
    url = f"{report['url']}#run=scripted:greedy&task={bad.task_id}&view=trajectory"
    dom = dump_dom(chromium, tmp_path / "profile", url)
    assert_no_console_errors(dom)
    assert dom.find_all("html")[0].attrs["data-selected"] == bad.episode_id
    boxes = dom.by_id("turns").find_all("div", cls="rec")
    assert boxes and "bad" in boxes[-1].classes()
    violations = [li.text() for li in boxes[-1].find_all("li")]
    assert violations and all(v for v in violations)
    card = dom.by_id("scorecard").text()
    for text in bad.score["violations"]:
        assert text in card


def test_screenshots_show_the_tables_and_the_conversation(report, chromium, tmp_path):
    from matplotlib import image

    task = sorted(e.task_id for e in read_episodes(report["dirs"][0]))[1]
    shots = {
        "summary": screenshot(chromium, tmp_path / "p1", report["url"], tmp_path / "summary.png"),
        "viewer": screenshot(
            chromium,
            tmp_path / "p2",
            f"{report['url']}#run=0&task={task}&view=trajectory",
            tmp_path / "viewer.png",
        ),  # fmt: skip
    }
    for name, path in shots.items():
        pixels = image.imread(path)
        assert pixels.shape[0] >= 1000 and pixels.shape[1] >= 1000, name
        assert pixels[..., :3].std() > 0.05, f"{name} screenshot is blank"


def test_error_hook_reports_script_errors(chromium, tmp_path):
    """The check the other tests rely on: errors do show up in the dumped DOM."""
    page = tmp_path / "broken.html"
    page.write_text(f"<!DOCTYPE html><html><head><script>{error_hook_js()}</script></head><body>"
                    "<script>console.error('bad thing');</script>"
                    "<script>undefinedFunction();</script>"
                    '<pre id="console-errors" hidden></pre></body></html>')  # fmt: skip
    dom = dump_dom(chromium, tmp_path / "profile", page.resolve().as_uri())
    assert dom.find_all("html")[0].attrs["data-errors"] == "2"
    text = dom.by_id("console-errors").text()
    assert "console.error: bad thing" in text and "undefinedFunction" in text
