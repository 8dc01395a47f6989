"""A suite from another installed package appears through the ``travelgym.suites`` entry-point
group and runs end to end (``suites``, ``run``, ``score``, ``report``, ``serve-mcp``) with no
change to travelgym: the shared layers know suites only through the protocol."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

import travelgym
from tests.core.toy_suite import SOURCE

TIMEOUT_S = 120


def install(site: Path, package: str, entry: str, source: str | None) -> None:
    """A package ``package`` under ``site`` (its ``__init__`` the ``source``; none: only the
    metadata) whose distribution registers ``entry`` in the ``travelgym.suites`` group."""
    if source is not None:
        (site / package).mkdir(parents=True)
        (site / package / "__init__.py").write_text(source)
    info = site / f"{package}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {package}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[travelgym.suites]\n{entry}\n")


@pytest.fixture(scope="module")
def toy_env(tmp_path_factory):
    """An environment whose Python path holds a package ``toysuite`` with its distribution
    metadata registering ``toy = toysuite:ToySuite`` in the ``travelgym.suites`` group."""
    site = tmp_path_factory.mktemp("site")
    install(site, "toysuite", "toy = toysuite:ToySuite", SOURCE)
    source = Path(travelgym.__file__).resolve().parents[1]
    repo = Path(__file__).resolve().parents[2]
    data = tmp_path_factory.mktemp("data")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(source), str(repo)]),
           "TRAVELGYM_DATA_DIR": str(data)}  # fmt: skip
    return env


def cli(env, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "travelgym.cli", *args], env=env,
                          capture_output=True, text=True, timeout=TIMEOUT_S)  # fmt: skip


def test_the_installed_suite_is_listed_with_the_projects_own(toy_env):
    done = cli(toy_env, "suites", "--json")
    assert done.returncode == 0, done.stderr
    names = [row["name"] for row in json.loads(done.stdout)]
    assert names[-1] == "toy" and {"compass", "behavior2trip"} <= set(names)
    toy = json.loads(done.stdout)[-1]
    assert toy["options"] == ["offset", "level"] and toy["capabilities"] == []
    # a capability the toy lacks is refused by the command's suite choice
    refused = cli(toy_env, "solve", "toy")
    assert (
        refused.returncode == 2
        and "toy does not support solve (suites that do: compass)" in refused.stderr
    )


@pytest.mark.slow
def test_run_score_and_report_end_to_end(toy_env, tmp_path):
    out = tmp_path / "runs"
    done = cli(toy_env, "run", "toy", "--agent", "scripted:right", "--agent", "scripted:wrong",
               "--limit", "4", "--out", str(out), "--no-progress")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "scripted:right: 4 episodes in" in done.stdout
    # the shared table writer prints the suite's headline figures (it wrote no text itself)
    assert re.search(r"^scripted:right\s+100\.0$", done.stdout, re.M), done.stdout
    assert re.search(r"^scripted:wrong\s+0\.0$", done.stdout, re.M), done.stdout
    run_dir = out / "scripted-right"
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["suite"] == "toy" and manifest["task_ids"] == [f"toy-{i}" for i in range(4)]
    lines = [json.loads(x) for x in (run_dir / "episodes.jsonl").read_text().splitlines()]
    assert [x["task_id"] for x in sorted(lines, key=lambda x: x["task_id"])] == manifest["task_ids"]

    scored = cli(toy_env, "score", str(run_dir), "--json")
    assert scored.returncode == 0, scored.stderr
    result = json.loads(scored.stdout)
    assert {k: result[k] for k in ("n", "accuracy", "tampered")} == {"n": 4, "accuracy": 100.0,
                                                                    "tampered": None}  # fmt: skip
    # the shell's own accounting, which the suite never wrote: every episode completed
    assert result["outcomes"]["n"] == 4 and result["outcomes"]["completed"] == 4
    # a suite that gives no re-derivation hooks: its run is vouched for by the chain, and
    # score says so (never that its episodes are old)
    assert result["recheck"]["answers_rederived"] == result["recheck"]["scores_rederived"] == 0
    assert result["recheck"]["disagreements"] == []
    assert "toy does not re-derive answers" in scored.stderr
    assert "toy cannot re-derive this run's scores" in scored.stderr
    answers = tmp_path / "answers.jsonl"
    answers.write_text('{"task_id": "toy-1", "sum": 11}\n{"task_id": "toy-2", "sum": 3}\n')
    scored = cli(toy_env, "score", str(answers))
    assert scored.returncode == 0 and scored.stdout.strip() == "accuracy: 50.0"

    resumed = cli(toy_env, "run", "toy", "--agent", "scripted:right", "--limit", "4", "--out",
                  str(out), "--resume", "--no-progress")  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr
    assert len((run_dir / "episodes.jsonl").read_text().splitlines()) == 4  # nothing twice

    report = tmp_path / "report.html"
    done = cli(toy_env, "report", str(run_dir), str(out / "scripted-wrong"), "--out", str(report))
    assert done.returncode == 0, done.stderr
    html = report.read_text()
    # the default page: each run's headline figures (the suite wrote no HTML)
    assert "Toy report" in html and "<th>accuracy</th>" in html
    assert re.search(r"<td>[^<]*wrong[^<]*</td><td>0\.0</td>", html), html[:3000]

    foreign = cli(toy_env, "run", "toy", "--max-turns", "3", "--out", str(tmp_path / "x"))
    assert foreign.returncode == 2 and "--max-turns applies to compass only" in foreign.stderr


def test_a_flag_the_suite_declares_reaches_its_commands_and_only_them(toy_env, tmp_path):
    """``offset`` is declared by the toy's Options (``suite_flag``), not by any shared module:
    ``run`` and ``tasks`` take it, it lands in the manifest and changes the tasks; other
    suites refuse it; a bad value is a usage error."""
    listed = cli(toy_env, "tasks", "toy", "--offset", "5", "--json")
    assert listed.returncode == 0, listed.stderr
    assert [t["b"] for t in json.loads(listed.stdout)] == [5, 15, 25, 35, 45]
    assert "toy options" in cli(toy_env, "run", "--help").stdout
    out = tmp_path / "runs"
    done = cli(toy_env, "run", "toy", "--offset", "5", "--limit", "2", "--out", str(out),
               "--no-progress", "--json")  # fmt: skip
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)["scripted:right"]
    assert (summary["n"], summary["accuracy"]) == (2, 100.0)
    run_dir = out / "scripted-right"
    assert json.loads((run_dir / "manifest.json").read_text())["offset"] == 5
    lines = [json.loads(x) for x in (run_dir / "episodes.jsonl").read_text().splitlines()]
    assert sorted(x["score"]["sum"] for x in lines) == [5, 16]  # 0 + (0 + 5), 1 + (10 + 5)
    for bad, message in (
        (["run", "compass", "--offset", "1"], "--offset applies to toy only"),
        (["run", "toy", "--offset", "x"], "'x' is not a valid integer"),
        (["run", "toy", "--offset", "-1"], "-1 is not in the range x>=0"),
        (["build", "toy", "--offset", "1"], "No such option '--offset'"),
    ):
        refused = cli(toy_env, *bad, "--out", str(tmp_path / "x")) if bad[0] == "run" else cli(
            toy_env, *bad)  # fmt: skip
        assert refused.returncode == 2 and message in refused.stderr, refused.stderr


@pytest.mark.slow
def test_one_flag_name_keeps_each_suites_own_meaning(toy_env, tmp_path, compass_db):
    """COMPASS's ``--level`` is a number from 1 to 3, the toy's a word: each suite reads the
    value as its own model does, from the same command line, and neither refuses the other's
    (issue 33: "'2' is not one of 'kids', 'grownups'")."""
    data = ["--data-dir", str(compass_db.parent.parent)]
    kids = cli(toy_env, "tasks", "toy", "--level", "kids", "--json")
    assert kids.returncode == 0, kids.stderr
    assert [t["task_id"] for t in json.loads(kids.stdout)] == ["toy-0", "toy-1", "toy-2"]
    listed = cli(toy_env, "tasks", "compass", "--level", "2", "--json", *data)
    assert listed.returncode == 0, listed.stderr
    assert {t["level"] for t in json.loads(listed.stdout)} == {2}
    done = cli(toy_env, "run", "compass", "--level", "2", "--limit", "1", "--agent",
               "scripted:greedy", "--out", str(tmp_path / "c"), "--no-progress", "--json", *data)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["scripted:greedy"]["overall"]["n"] == 1
    lines = (tmp_path / "c" / "scripted-greedy" / "episodes.jsonl").read_text().splitlines()
    assert [json.loads(x)["task_id"] for x in lines] == [json.loads(listed.stdout)[0]["task_id"]]
    done = cli(toy_env, "run", "toy", "--level", "grownups", "--out", str(tmp_path / "t"),
               "--no-progress", "--json")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["scripted:right"]["n"] == 2  # toy-3 and toy-4
    # -T names any option of the chosen suite, read the same way
    done = cli(toy_env, "run", "toy", "-T", "level=kids", "--out", str(tmp_path / "k"),
               "--no-progress", "--json")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["scripted:right"]["n"] == 3
    for bad, message in (
        (["tasks", "toy", "--level", "2"], "--level: Input should be 'kids' or 'grownups'"),
        (["tasks", "compass", "--level", "kids", *data], "--level: Input should be a valid integer"),
        (["tasks", "compass", "--level", "4", *data], "--level: Input should be less than or equal to 3"),
        (["run", "toy", "-T", "level=kids", "--level", "kids"], "--set level: given twice"),
        (["run", "toy", "-T", "colour=red"], "toy has no option 'colour'"),
    ):  # fmt: skip
        extra = ["--out", str(tmp_path / "x")] if bad[0] == "run" else []
        refused = cli(toy_env, *bad, *extra)
        assert refused.returncode == 2 and message in refused.stderr, (bad, refused.stderr)


CLASHING = """
from typing import Literal

from toysuite import ToyOptions, ToySuite
from travelgym.core import suite_flag


class {name}Options(ToyOptions):
    {field}


class {name}Suite(ToySuite):
    name = "{entry}"
    Options = {name}Options
"""


@pytest.mark.parametrize(("field", "why"), [
    ('level: bool = suite_flag(False, help="x", commands=("run",))',
     "its flag --level of `run` is a switch, but compass's --level takes a value"),
    ('limit: int = suite_flag(0, help="x", commands=("run",))',
     "its flag --limit clashes with travelgym's own --limit of `run`"),
])  # fmt: skip
def test_a_flag_that_cannot_share_a_command_sets_its_suite_aside_by_name(toy_env, tmp_path,
                                                                         field, why):  # fmt: skip
    """A flag no command line can read for both suites (a switch here, a value there), or one
    named like travelgym's own option, is never silently shadowed: the later suite is set
    aside with the clash named, and the others keep working."""
    site = tmp_path / "site"
    install(
        site,
        "clashsuite",
        "clash = clashsuite:ClashSuite",
        CLASHING.format(name="Clash", entry="clash", field=field),
    )
    env = {**toy_env, "PYTHONPATH": os.pathsep.join([str(site), toy_env["PYTHONPATH"]])}
    listed = cli(env, "suites", "--json")
    assert listed.returncode == 0, listed.stderr
    assert why in listed.stdout, listed.stdout
    refused = cli(env, "run", "clash", "--out", str(tmp_path / "x"))
    assert refused.returncode == 2 and "'clash' is installed but did not load" in refused.stderr
    assert why in refused.stderr
    kids = cli(env, "tasks", "toy", "--level", "kids", "--json")
    assert kids.returncode == 0, kids.stderr


def test_serve_mcp_serves_the_suites_tool(toy_env, tmp_path):
    async def session() -> tuple[list[str], dict, str | None]:
        params = StdioServerParameters(command=sys.executable,
                                       args=["-m", "travelgym.cli", "serve-mcp", "toy"],
                                       env=toy_env)  # fmt: skip
        with (tmp_path / "stderr.txt").open("w") as errlog, anyio.fail_after(TIMEOUT_S):
            async with Client(stdio_client(params, errlog=errlog),
                              read_timeout_seconds=TIMEOUT_S) as client:  # fmt: skip
                names = [t.name for t in (await client.list_tools()).tools]
                result = await client.call_tool("add", {"a": 2, "b": 40})
                return names, json.loads(result.content[0].text), client.instructions

    names, payload, instructions = anyio.run(session)
    assert names == ["add"] and payload == {"sum": 42}
    assert instructions == "Toy tools."


def test_a_suite_that_fails_to_load_is_set_aside(toy_env, tmp_path):
    """A broken package in the group (its module missing) neither breaks the command line nor
    hides the other suites; naming it says why it did not load."""
    install(tmp_path, "badsuite", "bad = no_such_module:Nope", None)
    env = {**toy_env, "PYTHONPATH": os.pathsep.join([str(tmp_path), toy_env["PYTHONPATH"]])}
    listed = cli(env, "suites", "--json")
    assert listed.returncode == 0, listed.stderr
    rows = {row["name"]: row for row in json.loads(listed.stdout)}
    assert {"compass", "behavior2trip", "toy"} <= set(rows)
    assert "ModuleNotFoundError" in rows["bad"]["error"]
    refused = cli(env, "run", "bad", "--out", str(tmp_path / "runs"))
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert "'bad' is installed but did not load" in refused.stderr
    assert cli(env, "run", "toy", "--limit", "1", "--out", str(tmp_path / "runs"),
               "--no-progress").returncode == 0  # fmt: skip
