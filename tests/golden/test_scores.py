"""The key contract: run directories written by the release before the Suite refactor (checked
in under ``runs/``), and answers files, give the same ``score --json`` figures, exactly."""

from __future__ import annotations

import json
import shutil

import pytest

from tests.golden.golden import (
    ANSWERS,
    RUNS,
    SNAPSHOTS,
    canonical,
    check_json,
    check_text,
    invoke,
)
from travelgym.suites.behavior2trip.instances import INSTANCE_GENERATOR_VERSION

SUITES = ["compass", "behavior2trip"]


@pytest.mark.parametrize("suite", SUITES)
def test_score_of_the_checked_in_run(golden, suite):
    """Every figure (aggregates, per-task / per-instance verdicts and checks), exactly."""
    assert golden.checked_in_score(suite)["tampered"] is None
    check_json(f"score_run_{suite}.json", golden.checked_in_score(suite))


@pytest.mark.parametrize("suite", SUITES)
def test_score_detects_the_suite_of_a_run(golden, suite):
    """``--suite`` is optional for a run directory; giving it changes nothing."""
    given = golden.score(suite, golden.checked_in(suite), "--suite", suite)
    assert canonical(given) == canonical(golden.checked_in_score(suite))


@pytest.mark.parametrize("suite", SUITES)
def test_score_of_an_answers_file(golden, suite):
    """``answers/SUITE_answers.jsonl``: answers of the checked-in run plus a wrong, an empty
    (or unreadable) and an unknown one; the figures and the ``errors`` list, exactly."""
    path = ANSWERS / f"{suite}_answers.jsonl"
    check_json(f"score_answers_{suite}.json", golden.score(suite, path))


@pytest.mark.parametrize("suite", SUITES)
def test_score_table_of_the_checked_in_run(golden, suite):
    """The plain-text table ``score`` prints without ``--json``."""
    text = invoke("score", golden.checked_in(suite), data_dir=golden.data_dir(suite)).stdout
    check_text(SNAPSHOTS / f"score_table_{suite}.txt", text)


@pytest.mark.parametrize("suite", SUITES)
def test_a_fresh_run_reproduces_the_checked_in_figures(golden, suite):
    """The same agent, tasks and seeds run by the code under test score exactly as the
    checked-in run of the old release: the runners' behaviour did not change."""
    fresh = dict(golden.score(suite, golden.fresh(suite).run_dir))
    old = dict(golden.checked_in_score(suite))
    # how each was re-derived differs: a fresh run's steps record their answers (issue 34)
    rechecked, _ = fresh.pop("recheck"), old.pop("recheck")
    assert canonical(fresh) == canonical(old)
    assert rechecked["answers_rederived"] == rechecked["scores_rederived"] == fresh["outcomes"]["n"]
    assert rechecked["disagreements"] == []


@pytest.mark.parametrize("name", ["compass_small_tasks_v1", "compass_small_tasks_v2"])
def test_a_run_of_an_older_task_version_keeps_its_stored_scores(golden, name):
    """``runs/compass_small_tasks_v1`` was written with COMPASS task file v1 (before the scored
    key, tie-breaks and revisions), ``runs/compass_small_tasks_v2`` with task file v2 (OR on a
    stated tie-break, user simulator 1): both are scorer version 1. ``score`` does not re-score
    them against the installed tasks (which would silently change what their figures mean): it
    shows the scores each run stored, naming the version and saying what vouches for them."""
    old = RUNS / name
    result = invoke("score", old, "--json", data_dir=golden.data_dir("compass"))
    scored = json.loads(result.stdout)
    assert scored["recheck"]["version_gone"] is True and scored["recheck"]["scores_rederived"] == 0
    assert "scorer version 1" in result.stderr and "not re-derived" in result.stderr
    stored = [json.loads(x)["score"] for x in (old / "episodes.jsonl").read_text().splitlines()]
    assert scored["overall"]["n"] == len(stored)
    assert scored["overall"]["FR"] == round(
        100 * sum(s["feasible"] for s in stored) / len(stored), 2
    )


@pytest.mark.parametrize(("name", "version"), [("behavior2trip_small_checks_v1", 1),
                                             ("behavior2trip_small_checks_v3", 3)])  # fmt: skip
def test_a_run_of_older_checks_keeps_its_stored_scores(golden, name, version):
    """``runs/behavior2trip_small_checks_v1`` was written with Behavior2Trip checks version 1
    (before the completeness gates) on the 1.0.0 database, ``runs/behavior2trip_small_checks_v3``
    with checks version 3 (before delivery needed every day's slots and authenticity gated
    credit): ``score`` does not re-score them (which would silently change what their figures
    mean): it shows the scores each run stored, naming the version and saying that nothing but
    the digest chain vouches for them."""
    old = RUNS / name
    result = invoke("score", old, "--json", data_dir=golden.data_dir("behavior2trip"))
    scored = json.loads(result.stdout)
    assert scored["recheck"]["version_gone"] is True and scored["recheck"]["scores_rederived"] == 0
    assert f"scorer version {version};" in result.stderr and "digest chain only" in result.stderr
    stored = [json.loads(x)["score"] for x in (old / "episodes.jsonl").read_text().splitlines()]
    assert scored["overall"]["n"] == len(stored)
    delivered = sum(s["delivered"] for s in stored)
    assert scored["overall"]["DR"] == round(100 * delivered / len(stored), 2)


def test_a_run_of_older_instances_is_refused_not_rescored(golden, tmp_path):
    """``runs/behavior2trip_small_instances_2_1_0`` was written on the instance generator 2.1.0,
    before instances were built per slot (3.0.0 gave ``b2t-test-medium-0000``, which quality
    control removes, its own next candidate instead of taking ``b2t-test-medium-0001``), under
    checks version 3: ``score`` keeps its stored scores, named as version 3. Were its checks the
    installed ones (its manifest says so in a copy), ``score`` would refuse to re-score it
    against the installed instances, naming both versions, instead of silently changing what
    its figures mean."""
    from travelgym.suites.behavior2trip.checks import CHECKS_VERSION

    old = RUNS / "behavior2trip_small_instances_2_1_0"
    kept = invoke("score", old, "--json", data_dir=golden.data_dir("behavior2trip"))
    assert json.loads(kept.stdout)["recheck"]["scores_rederived"] == 0
    assert "scorer version 3;" in kept.stderr
    copy = shutil.copytree(old, tmp_path / "run")
    manifest = json.loads((copy / "manifest.json").read_text())
    manifest["checks_version"] = CHECKS_VERSION
    (copy / "manifest.json").write_text(json.dumps(manifest, indent=2))
    result = invoke("score", copy, "--json", data_dir=golden.data_dir("behavior2trip"), ok=False)
    assert result.exit_code != 0
    assert "2/2.1.0" in result.output and f"2/{INSTANCE_GENERATOR_VERSION}" in result.output
    assert "refused" in result.output


def test_a_run_on_instances_3_0_0_is_refused_naming_both_versions(golden):
    """``runs/behavior2trip_small_instances_3_0_0`` was written under the installed checks
    (version 4) on the 3.0.0 instances, whose Easy requests stated a budget and whose Easy
    profiles carried 2-4 preference checks (4.0.0: one): ``score`` refuses to re-score it
    against the installed instances, naming both generator versions, and writes nothing."""
    old = RUNS / "behavior2trip_small_instances_3_0_0"
    assert json.loads((old / "manifest.json").read_text())["checks_version"] == "4"
    before = {p.name: p.read_bytes() for p in old.iterdir()}
    result = invoke("score", old, "--json", data_dir=golden.data_dir("behavior2trip"), ok=False)
    assert result.exit_code != 0 and "refused" in result.output
    assert "2/3.0.0" in result.output and f"2/{INSTANCE_GENERATOR_VERSION}" in result.output
    assert {p.name: p.read_bytes() for p in old.iterdir()} == before
