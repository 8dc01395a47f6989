"""What ``travelgym run`` writes and prints: the run directory's files, ``manifest.json``,
one ``episodes.jsonl`` line, ``integrity.jsonl``, the ``run --json`` summary; and
``build --json``."""

from __future__ import annotations

import json

import pytest

from tests.golden.golden import (
    AGENT_DIRS,
    CHECKED_IN,
    canonical,
    check_json,
    invoke_json,
    key_paths,
    mask,
    read_jsonl,
    skeleton,
)

SUITES = ["compass", "behavior2trip"]

# values that differ from run to run or machine to machine; their keys and types stay frozen
MANIFEST_VOLATILE = ("created", "travelgym_version")
# manifest keys newer than the checked-in runs, with their values in those runs' fresh twins
# (scripted agents: no generation options; COMPASS's default system prompt variant)
MANIFEST_ADDED = {"generation": {"compass": {}, "behavior2trip": {}},
                  "prompt": {"compass": "paper"},
                  "db_scale": {"behavior2trip": "small"}, "judge": {"behavior2trip": None},
                  # RQ1's settings (docs/behavior2trip/rq1.md): off in an ordinary run
                  "no_trajectory": {"behavior2trip": False}, "clarify": {"behavior2trip": None},
                  "clarify_turns": {"behavior2trip": None},
                  # issue 32: how infra errors are counted, the prices of the run's models
                  "count_errors_as_failures": {"compass": False, "behavior2trip": False},
                  "pricing": {"compass": {}, "behavior2trip": {}},
                  # issue 34: the run writes a digest chain (integrity.jsonl)
                  "tamper_evidence": {s: {"chain": "sha256-episodes-lines", "version": 1}
                                      for s in ("compass", "behavior2trip")},
                  # issue 34: the version of the scorer (Behavior2Trip's checks_version already)
                  "scorer_version": {"compass": "1"},
                  # issue 37: the commit, Python and package versions (checked by _provenance)
                  "provenance": {s: "<machine-dependent: git commit, dirty, python, packages>"
                                 for s in ("compass", "behavior2trip")}}  # fmt: skip

# manifest keys added since the checked-in runs were written, with the value an older manifest
# without them stands for (resuming an old run treats it so)
ADDED_SINCE_CHECKED_IN: dict[str, dict] = {"compass": {}, "behavior2trip": {}}

# free-form maps inside an episode line: the arguments of a tool call
EPISODE_MAPS = ("turns[].tool_calls[].arguments", "steps[].tool_calls[].arguments")


def _sandbox_entry(entry: dict) -> str:
    """The manifest's / integrity line's ``sandbox``: its keys follow the machine (bubblewrap
    found or not), so only the frozen part is checked; a scripted agent runs no code."""
    assert {"boundary", "used"} <= set(entry) <= {"boundary", "python", "reason", "used"}, entry
    assert isinstance(entry["boundary"], str)
    assert entry["used"] == "no"
    return "<machine-dependent: boundary, used=no, python or reason>"


def _provenance(entry: dict) -> str:
    """The manifest's ``provenance``: its keys and value types are frozen, its values follow
    the machine (tests/runner/test_provenance.py checks them)."""
    assert set(entry) == {"git_commit", "git_dirty", "python", "packages"}, entry
    assert entry["git_commit"] is None or len(entry["git_commit"]) in (40, 64)
    assert entry["git_dirty"] in (True, False, None)
    assert isinstance(entry["python"], str) and entry["python"]
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in entry["packages"].items())
    return "<machine-dependent: git commit, dirty, python, packages>"


@pytest.mark.parametrize("suite", SUITES)
def test_run_directory_layout(golden, suite):
    """One directory per agent inside --out, named after the agent, holding exactly these files."""
    run = golden.fresh(suite)
    assert sorted(p.name for p in run.out.iterdir()) == [AGENT_DIRS[suite]]
    check_json(f"run_dir_files_{suite}.json", sorted(p.name for p in run.run_dir.iterdir()))


@pytest.mark.parametrize("suite", SUITES)
def test_manifest(golden, suite):
    """Keys, types and the deterministic values (suite, agent, task ids, seeds, hashes)."""
    manifest = json.loads((golden.fresh(suite).run_dir / "manifest.json").read_text())
    manifest["sandbox"] = _sandbox_entry(manifest["sandbox"])
    manifest["provenance"] = _provenance(manifest["provenance"])
    check_json(f"manifest_{suite}.json", mask(manifest, MANIFEST_VOLATILE))


@pytest.mark.parametrize("suite", SUITES)
def test_checked_in_manifest_matches_a_fresh_one(golden, suite):
    """The checked-in run directory is of the same format as a fresh run's."""
    fresh = json.loads((golden.fresh(suite).run_dir / "manifest.json").read_text())
    old = json.loads((CHECKED_IN[suite] / "manifest.json").read_text())
    for entry in (fresh, old):
        entry["sandbox"] = _sandbox_entry(entry["sandbox"])
    for entry in (fresh, old):
        if "provenance" in entry:  # a run recorded before issue 37 has none
            entry["provenance"] = _provenance(entry["provenance"])
    added = ADDED_SINCE_CHECKED_IN[suite]
    assert not set(added) & set(old), "a key listed as added is in the checked-in manifest"
    assert set(added) <= set(fresh)
    fresh = {k: v for k, v in fresh.items() if k not in added}
    for key, value in MANIFEST_ADDED.items():  # recorded since the checked-in runs were made
        if key in fresh and key not in old:
            assert fresh.pop(key) == value[suite], key
    assert mask(fresh, MANIFEST_VOLATILE) == mask(old, MANIFEST_VOLATILE)


@pytest.mark.parametrize("suite", SUITES)
def test_integrity_line(golden, suite):
    entries = read_jsonl(golden.fresh(suite).run_dir / "integrity.jsonl")
    lines = [x for x in entries if "chain" not in x]  # the digest chain's entries aside
    assert len(lines) == 1  # one line per session
    kinds = [x["chain"] for x in entries if "chain" in x]
    assert kinds == ["open", "line", "line", "line", "close"]
    line = lines[0]
    assert line["sha256_start"] == line["sha256_end"]
    line["sandbox"] = _sandbox_entry(line["sandbox"])
    masked = mask(line, ("started", "ended", "sha256_start", "sha256_end"))
    check_json(f"integrity_line_{suite}.json", masked)


@pytest.mark.parametrize("suite", SUITES)
def test_episode_line(golden, suite):
    """The first episode line: format_version, identity fields, and every key path (the turn /
    step records, their tool-call records, the score record) with its type."""
    episodes = read_jsonl(golden.fresh(suite).run_dir / "episodes.jsonl")
    assert len(episodes) == 3
    first = episodes[0]
    identity = {k: first[k] for k in ("format_version", "suite", "episode_id", "task_id",
                                      "trial", "agent", "seed", "termination")}  # fmt: skip
    check_json(f"episode_line_{suite}.json", {
        "identity": identity,
        "key_paths": key_paths(first, EPISODE_MAPS),
        "top_level_types": skeleton({k: v for k, v in first.items() if not isinstance(v, dict | list)}),
    })  # fmt: skip
    # every line of the run has the same top-level keys
    assert all(set(e) == set(first) for e in episodes)
    assert [e["format_version"] for e in episodes] == [first["format_version"]] * 3


@pytest.mark.parametrize("suite", SUITES)
def test_run_json_shape(golden, suite):
    """``run --json``: {agent spec: summary}; keys and types of the summary frozen."""
    printed = golden.fresh(suite).json
    check_json(f"run_json_shape_{suite}.json", skeleton(printed))


@pytest.mark.parametrize("suite", SUITES)
def test_run_json_figures_are_the_score_figures(golden, suite):
    """The aggregates ``run --json`` prints are those ``score --json`` gives for the run."""
    (summary,) = golden.fresh(suite).json.values()
    scored = golden.score(suite, golden.fresh(suite).run_dir)
    shared = {"overall", "by_level", "by_objective", "by_difficulty"} & set(summary)
    assert shared and shared <= set(scored)
    assert canonical({k: summary[k] for k in shared}) == canonical({k: scored[k] for k in shared})


@pytest.mark.parametrize("suite", SUITES)
def test_build_json(golden, suite):
    """``build --json`` of the (already built) default database: metadata incl. content hash."""
    printed = invoke_json("build", suite, "--json", data_dir=golden.data_dir(suite))
    assert printed["built"] is False
    check_json(f"build_json_{suite}.json", mask(printed, ("path",)))
