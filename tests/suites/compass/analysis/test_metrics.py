"""COMPASS analysis metrics on small hand-made episodes with known answers, plus plots and CLI."""

from __future__ import annotations

import asyncio
import json
import math

import pytest
from click.testing import CliRunner

from travelgym.core.records import ToolCallRecord
from travelgym.runner.store import RunStore
from travelgym.suites.compass.analysis.features import call_signature, constraint_outcome, extract
from travelgym.suites.compass.analysis.metrics import (
    analyze_episodes,
    analyze_runs,
    compare,
    features_of,
    stability,
)
from travelgym.suites.compass.analysis.stats import (
    coefficient_of_variation,
    mean_std,
    paired_bootstrap,
    quantile_edges,
    two_proportion_ztest,
)
from travelgym.suites.compass.tasks import Task
from travelgym.suites.compass.trajectory import DialogueAct, Episode, Turn

# ------------------------------------------------------------------------------ fixtures

BASE = [
    {"revelation": "initial", "kind": "park", "park_ids": ["romo"]},
    {"revelation": "initial", "kind": "travellers", "count": 2},
    {"revelation": "progressive", "kind": "rooms", "count": 1},
    {"revelation": "progressive", "kind": "budget", "max_total": 1000.0},
    {"revelation": "initial", "kind": "stay_dates", "check_in": "2025-08-08",
     "check_out": "2025-08-12"},
]  # fmt: skip
FLIGHT = [
    {"revelation": "initial", "kind": "trip_coherence"},
    {"revelation": "initial", "kind": "origin_city", "city": "Dallas", "airport": "DFW"},
    {"revelation": "progressive", "kind": "max_airport_drive", "hours": 4.0},
]
PERSONA = {"revelation_speed": "fast", "reveal_probability": 0.9, "trust": "trusting",
           "reliability": "reliable", "style": 1}  # fmt: skip


def make_task(task_id: str, level: int, constraints: list[dict]) -> Task:
    return Task.model_validate({
        "task_id": task_id, "level": level,
        "objective": {"type": "single_metric", "metric": "total_cost"},
        "constraints": constraints, "persona": PERSONA, "story": "a test trip",
    })  # fmt: skip


# t1: 6 constraints (level 1); t2 and t3: 8 constraints (level 2)
TASKS = [
    make_task(
        "t1",
        1,
        BASE + [{"revelation": "progressive", "kind": "hotel_amenity", "amenity": "has_wifi"}],
    ),  # fmt: skip
    make_task("t2", 2, BASE + FLIGHT),
    make_task("t3", 2, BASE + FLIGHT),
]


def score(task_id, level, objective, feasible, top=(False, False, False), optimal=False,
          violations=()) -> dict:  # fmt: skip
    return {"task_id": task_id, "level": level, "objective_type": objective,
            "recommendation": {"hotel": "pkg_1_5_7_1"}, "feasible": feasible,
            "violations": list(violations), "top": dict(zip(("5", "10", "20"), top, strict=True)),
            "optimal": optimal}  # fmt: skip


def call(name, arguments, ok=True, result=None, chars=None, category=None) -> ToolCallRecord:
    if chars is None:
        chars = len(json.dumps(result)) if result is not None else 0
    return ToolCallRecord(id="c", name=name, arguments=arguments, ok=ok, result=result,
                          result_chars=chars, error_category=category)  # fmt: skip


def conversation(user_turns: int, calls: list[ToolCallRecord]) -> list[Turn]:
    """user, agent, user, ... ending on a user turn; all calls in the first agent turn."""
    turns = [Turn(index=0, role="user", acts=[DialogueAct(type="open")])]
    for k in range(1, user_turns):
        turns.append(Turn(index=len(turns), role="agent", tool_calls=calls if k == 1 else []))
        turns.append(Turn(index=len(turns), role="user", acts=[DialogueAct(type="acknowledge")]))
    return turns


def persona(style: int, trust: str) -> dict:
    return {**PERSONA, "style": style, "trust": trust}


def episode(task_id, sc, turns, t_star, pers, trial=0, termination="accepted") -> Episode:
    return Episode(episode_id=f"{task_id}#{trial}", task_id=task_id, trial=trial, agent="a",
                   user="template", seed=0, persona=pers, turns=turns, revealed_all_turn=t_star,
                   termination=termination, score=sc)  # fmt: skip


def three_episodes() -> list[Episode]:
    search = {"results": [{"package_id": "pkg_1_5_7_1"}, {"package_id": "pkg_2_5_7_1"}],
              "total": 2}  # fmt: skip
    e1_calls = [
        call("search_hotel", {"location": "romo", "num_guests": 2}, result=search),
        call("search_hotel", {"num_guests": 2, "location": "romo"}, result=search),  # same sig.
        call("get_room_details", {"package_id": "pkg_1_5_7_1"},
             result={"package_id": "pkg_1_5_7_1", "bookable": True}),
        call("get_room_details", {"package_id": "pkg_9_5_7_1"},
             result={"package_id": "pkg_9_5_7_1", "bookable": False}),
        call("search_hotel", {"location": 5}, ok=False, category="parameter",
             result={"error": {}}),
    ]  # fmt: skip
    e2_calls = [
        call("book_everything", {}, ok=False, category="tool_name", result={"error": {}}),
        call("search_flights", {"origin": "DFW"}, chars=500),  # payload not stored
        call("get_flight_details", {"package_id": "flight_3_5_7"}, chars=100),
        call(
            "recommend_flight",
            {"package_ids": ["flight_3_5_7", "flight_4_5_7"], "reasoning": "cheap"},
            chars=80,
        ),  # fmt: skip
    ]
    e3_calls = [call("search_hotel", {"location": "nowhere"}, ok=False, category="content",
                     result={"error": {}})]  # fmt: skip
    return [
        episode("t1", score("t1", 1, "single_metric", True, (True, True, True), True),
                conversation(2, e1_calls), 0, persona(1, "trusting")),
        episode("t2", score("t2", 2, "feature_count", True, (False, True, True)),
                conversation(4, e2_calls), 1, persona(2, "questioning")),
        episode("t3", score("t3", 2, "single_metric", False,
                            violations=["budget: total 1200.00 exceeds 1000.00",
                                        "trip_coherence: the flight leaves on Aug 7"]),
                conversation(3, e3_calls), None, persona(2, "trusting"), termination="turn_limit"),
    ]  # fmt: skip


@pytest.fixture(scope="module")
def analysis():
    return analyze_episodes(three_episodes(), TASKS)


# --------------------------------------------------------------------------- the metrics


def test_scores_overall_by_level_and_objective(analysis):
    s = analysis["scores"]
    assert s["overall"] == {"n": 3, "FR": 66.67, "OR5": 33.33, "OR10": 66.67, "OR20": 66.67,
                            "optimal": 33.33}  # fmt: skip
    assert s["by_level"]["1"] == {"n": 1, "FR": 100.0, "OR5": 100.0, "OR10": 100.0,
                                  "OR20": 100.0, "optimal": 100.0}  # fmt: skip
    assert s["by_level"]["2"] == {"n": 2, "FR": 50.0, "OR5": 0.0, "OR10": 50.0, "OR20": 50.0,
                                  "optimal": 0.0}  # fmt: skip
    assert s["by_objective"]["single_metric"]["FR"] == 50.0
    assert s["by_objective"]["single_metric"]["OR5"] == 50.0
    assert s["by_objective"]["feature_count"] == {"n": 1, "FR": 100.0, "OR5": 0.0, "OR10": 100.0,
                                                  "OR20": 100.0, "optimal": 0.0}  # fmt: skip
    assert analysis["n_episodes"] == 3 and analysis["n_tasks"] == 3 and analysis["trials"] == 1


def test_tool_error_rates_are_shares_of_all_calls(analysis):
    te = analysis["tool_errors"]
    assert te["calls"] == 10
    assert te["counts"]["tool_name"] == te["counts"]["parameter"] == te["counts"]["content"] == 1
    assert te["rates"] == {"tool_name": 10.0, "parameter": 10.0, "content": 10.0, "total": 30.0}
    assert te["other_rates"] == {"internal": 0.0, "sandbox": 0.0}


def test_search_effort_and_yield_per_episode(analysis):
    rows = {r["task_id"]: r for r in analysis["episodes"]}
    # t1: search (twice, one signature) + two details = 3; bookable: pkg_1, pkg_2 (pkg_9 is not)
    assert (rows["t1"]["effort"], rows["t1"]["yield"], rows["t1"]["yield_source"]) == (
        3, 2, "results")  # fmt: skip
    # t2: payloads not stored: Y from the package IDs in the ok calls' arguments
    assert (rows["t2"]["effort"], rows["t2"]["yield"], rows["t2"]["yield_source"]) == (
        3, 2, "arguments")  # fmt: skip
    assert (rows["t3"]["effort"], rows["t3"]["yield"], rows["t3"]["yield_source"]) == (0, 0, "none")
    se = analysis["search"]
    assert se["effort"]["mean"] == 2.0 and se["yield"]["max"] == 2.0
    assert se["yield_source"] == {"arguments": 1, "none": 1, "results": 1}
    # quantile edges of [3, 3, 0]: 0, 1.5, 3 -> bins [0, 1.5) and [1.5, 3]
    assert se["or5_by_effort_bin"] == [
        {"lo": 0.0, "hi": 1.5, "n": 1, "OR5": 0.0, "FR": 0.0},
        {"lo": 1.5, "hi": 3.0, "n": 2, "OR5": 50.0, "FR": 100.0},
    ]


def test_call_signature_is_canonical():
    assert call_signature("f", {"a": 1, "b": [2, 3]}) == call_signature(
        "f", '{"b": [2, 3], "a": 1}'
    )
    assert call_signature("f", {"a": 1}) != call_signature("g", {"a": 1})
    assert call_signature("f", "not json") == "f|not json"


def test_conversation_efficiency(analysis):
    rows = {r["task_id"]: r for r in analysis["episodes"]}
    assert [rows[t]["user_turns"] for t in ("t1", "t2", "t3")] == [2, 4, 3]
    assert [rows[t]["extra_turns"] for t in ("t1", "t2", "t3")] == [1, 2, None]
    ef = analysis["efficiency"]
    assert ef["t_star"]["mean"] == 0.5
    assert ef["extra_turns"]["mean"] == 1.5
    assert ef["conversation_length"]["mean"] == 3.0
    assert ef["not_revealed"] == 1
    assert ef["or5_by_extra_turns"] == {"1": {"n": 1, "OR5": 100.0}, "2": {"n": 1, "OR5": 0.0}}
    assert ef["t_star_histogram"] == {"0": 1, "1": 1}
    assert ef["termination"] == {"accepted": 2, "turn_limit": 1}


def test_revelation_bins(analysis):
    bins = {b["bin"]: b for b in analysis["revelation"]}
    assert list(bins) == ["0-1", "2-3", "4-5", "6-7", "8+", "never"]
    assert bins["0-1"]["n"] == 2 and bins["0-1"]["OR5"] == 50.0
    assert bins["2-3"]["n"] == 0 and bins["never"] == {"bin": "never", "lo": None, "hi": None,
                                                       "n": 1, "OR5": 0.0}  # fmt: skip


def test_constraint_satisfaction_by_count_and_kind(analysis):
    c = analysis["constraints"]
    assert c["by_count"]["6"] == {"n": 1, "all_satisfied": 100.0, "mean_share": 100.0, "FR": 100.0}
    # t2 satisfies 8/8, t3 violates 2 of 8 -> 6/8
    assert c["by_count"]["8"] == {"n": 2, "all_satisfied": 50.0, "mean_share": 87.5, "FR": 50.0}
    assert c["by_kind"]["budget"] == {"n": 3, "satisfied": 66.67}
    assert c["by_kind"]["trip_coherence"] == {"n": 2, "satisfied": 50.0}
    assert c["by_kind"]["hotel_amenity"] == {"n": 1, "satisfied": 100.0}
    assert c["unresolved_plans"] == 0


def test_unresolvable_plan_satisfies_no_constraint():
    sc = {"violations": ["no hotel recommended"]}
    assert constraint_outcome(sc, TASKS[0]) == (6, 0, [], False)
    sc = {"violations": ["hotel pkg_1_5_7_1 is not bookable (sold out or not offered)"]}
    assert constraint_outcome(sc, TASKS[0]) == (6, 6, [], True)
    assert constraint_outcome({"violations": []}, None) == (None, None, [], True)


def test_style_cv_and_trust_z_test(analysis):
    st = analysis["styles"]
    assert {k: v["OR5"] for k, v in st["by_style"].items()} == {"1": 100.0, "2": 0.0}
    assert st["by_style"]["1"]["name"] == "extremely polite and personal"
    assert (st["mean"], st["std"], st["cv"]) == (50.0, 50.0, 100.0)  # population std
    tr = analysis["trust"]
    assert tr["questioning"] == {"n": 1, "OR5": 0.0}
    assert tr["trusting"] == {"n": 2, "OR5": 50.0}
    # pooled p = 1/3, se = sqrt(1/3 * 2/3 * (1 + 1/2)), z = (0 - 1/2) / se
    z = -0.5 / math.sqrt(1 / 3 * 2 / 3 * 1.5)
    assert tr["z"] == pytest.approx(z, abs=1e-6)
    assert tr["p_value"] == pytest.approx(math.erfc(abs(z) / math.sqrt(2)), abs=1e-6)
    assert analysis["persona"]["trust"]["questioning"]["FR"] == 100.0


def test_two_proportion_z_test_hand_computed():
    # p1 = 0.6, p2 = 0.4, pooled 0.5, se = sqrt(0.25 * 0.04) = 0.1, z = 2, p = 0.0455
    res = two_proportion_ztest(30, 50, 20, 50)
    assert res["z"] == pytest.approx(2.0)
    assert res["p_value"] == pytest.approx(0.0455003, abs=1e-6)
    assert two_proportion_ztest(0, 10, 0, 20) == {"z": 0.0, "p_value": 1.0}
    assert two_proportion_ztest(1, 0, 1, 2) == {"z": None, "p_value": None}


def test_cv_mean_std_and_quantile_edges():
    assert coefficient_of_variation([10, 20, 30]) == pytest.approx(40.82, abs=0.01)
    assert coefficient_of_variation([0, 0]) is None
    # the paper's Table 5, Optimal Top-5 row: 33.74 (1.04) with the population std
    row = mean_std([33.97, 34.96, 33.44, 31.92, 34.43])
    assert round(row["mean"], 2) == 33.74 and round(row["std"], 2) == 1.04
    assert quantile_edges([1, 1, 1], 4) == [1.0, 1.0]
    assert quantile_edges(list(range(9)), 4) == [0.0, 2.0, 4.0, 6.0, 8.0]


def test_stability_across_trials():
    eps = []
    for trial, tops in ((0, (True, False)), (1, (True, True))):
        for k, top in enumerate(tops):
            tid = f"t{k + 1}"
            eps.append(episode(tid, score(tid, 1, "single_metric", True, (top, top, True)),
                               conversation(2, []), 0, PERSONA, trial=trial))  # fmt: skip
    result = analyze_episodes(eps, TASKS)
    assert result["trials"] == 2
    st = result["stability"]
    assert st["unit"] == "trial" and st["n"] == 2
    assert st["metrics"]["OR5"] == {"values": [50.0, 100.0], "mean": 75.0, "std": 25.0}
    assert st["metrics"]["FR"] == {"values": [100.0, 100.0], "mean": 100.0, "std": 0.0}
    assert analyze_episodes(three_episodes(), TASKS)["stability"] is None
    assert stability({"a": features_of(eps[:2]), "b": features_of(eps[2:])})["n"] == 2


def _paired_runs(n=50, top_a=30, top_b=10):
    def rows(tops):
        return features_of([
            episode(f"t{i}", score(f"t{i}", 1, "single_metric", True, (i < tops, True, True)),
                    conversation(2, []), 0, PERSONA)
            for i in range(n)
        ])  # fmt: skip

    return rows(top_a), rows(top_b)


def test_bootstrap_comparison_is_seeded_and_covers_the_true_difference():
    a, b = _paired_runs()
    first, again = compare(a, b, resamples=2000, seed=7), compare(a, b, resamples=2000, seed=7)
    assert first == again
    or5 = first["metrics"]["OR5"]
    assert first["tasks"] == 50
    assert or5["diff"] == 40.0 and or5["a"] == 60.0 and or5["b"] == 20.0
    assert or5["ci_low"] < 40.0 < or5["ci_high"]
    assert or5["ci_low"] > 0 and or5["significant"]
    assert first["metrics"]["FR"]["diff"] == 0.0 and not first["metrics"]["FR"]["significant"]
    other = paired_bootstrap([1.0, 0.0, 1.0, 1.0], [0.0, 0.0, 1.0, 0.0], resamples=500, seed=1)
    assert other["diff"] == 0.5 and other["ci_low"] <= 0.5 <= other["ci_high"]
    with pytest.raises(ValueError):
        paired_bootstrap([1.0], [1.0, 2.0])


def test_extract_without_task_or_score():
    bare = Episode(episode_id="x#0", task_id="x", agent="a", user="u", seed=0)
    row = extract(bare)
    assert not row.feasible and not row.top5 and row.level is None
    assert row.n_constraints is None and row.extra_turns is None and row.yield_source == "none"
    assert analyze_episodes([bare])["scores"]["overall"]["FR"] == 0.0


# ------------------------------------------------------------------ run directories and CLI


def _write_run(directory, agent, episodes):
    store = RunStore(directory)
    store.open({"suite": "compass", "agent": agent, "trials": 1}, resume=False)
    for e in episodes:
        store.append(e)


def test_analyze_runs_names_compares_and_groups_repeats(tmp_path):
    eps = three_episodes()
    _write_run(tmp_path / "a", "scripted:x", eps)
    _write_run(tmp_path / "b", "scripted:y", eps[:2])
    _write_run(tmp_path / "c", "scripted:x", eps)
    result = analyze_runs([tmp_path / "a", tmp_path / "b", tmp_path / "c"], TASKS, resamples=200)
    assert list(result["runs"]) == ["scripted:x", "scripted:y", "scripted:x#2"]
    assert result["runs"]["scripted:y"]["scores"]["overall"]["n"] == 2
    assert [(c["a"], c["b"]) for c in result["comparisons"]] == [
        ("scripted:x", "scripted:y"), ("scripted:x", "scripted:x#2"), ("scripted:y", "scripted:x#2")
    ]  # fmt: skip
    assert result["comparisons"][0]["tasks"] == 2
    assert result["comparisons"][1]["metrics"]["OR5"]["diff"] == 0.0
    assert list(result["stability"]) == ["scripted:x"]
    assert result["stability"]["scripted:x"]["unit"] == "run"
    json.dumps(result, allow_nan=False)  # strict JSON


def test_an_empty_run_is_analysed_and_plotted(tmp_path):
    from travelgym.suites.compass.analysis.plots import write_plots

    _write_run(tmp_path / "empty", "scripted:z", [])
    (tmp_path / "empty" / "episodes.jsonl").touch()  # started, nothing finished yet
    result = analyze_runs([tmp_path / "empty"], TASKS)
    run = result["runs"]["scripted:z"]
    assert run["n_episodes"] == 0 and run["scores"]["overall"]["FR"] == 0.0
    assert run["styles"]["cv"] is None and run["trust"]["p_value"] is None
    json.dumps(result, allow_nan=False)
    assert len(write_plots(result, tmp_path / "plots", formats=("png",))) == 8


@pytest.fixture(scope="module")
def greedy_run(compass_db, tmp_path_factory):
    from travelgym.runner.batch import RunConfig, run_suite

    out = tmp_path_factory.mktemp("runs") / "scripted-greedy"
    summary = asyncio.run(run_suite(RunConfig("compass", "scripted:greedy", out=out,
                                                limit=6, data_dir=compass_db.parent.parent,
                                                progress=False)))  # fmt: skip
    return out, summary


def test_analysis_of_a_real_run_matches_the_runner_summary(greedy_run):
    out, summary = greedy_run
    result = analyze_runs([out])
    run = result["runs"]["scripted:greedy"]
    assert run["scores"]["overall"] == summary["overall"]
    assert run["n_episodes"] == 6 and result["comparisons"] == [] and result["stability"] == {}
    assert run["tool_errors"]["calls"] > 0 and run["search"]["effort"]["min"] > 0
    assert all(r["n_constraints"] for r in run["episodes"])


@pytest.mark.slow
def test_write_plots_png_and_svg(greedy_run, tmp_path):
    from travelgym.suites.compass.analysis.plots import write_plots

    out, _ = greedy_run
    paths = write_plots([out, out], tmp_path / "plots")
    stems = ["fig02_fr_or", "fig03_or_by_level", "fig04_search", "fig07_revelation",
             "fig08_level_breakdown", "fig09_efficiency", "fig10_constraints", "fig11_turns"]  # fmt: skip
    assert [p.name for p in paths] == [f"{s}.{f}" for s in stems for f in ("png", "svg")]
    for p in paths:
        data = p.read_bytes()
        assert len(data) > 1000
        if p.suffix == ".png":
            assert data.startswith(b"\x89PNG")
        else:
            assert b"<svg" in data[:2000]
    single = write_plots(analyze_runs([out]), tmp_path / "single", formats=("png",))
    assert len(single) == len(stems)


def test_analyze_cli_json_and_text(greedy_run, tmp_path):
    from travelgym.cli import main

    out, _ = greedy_run
    runner = CliRunner()
    res = runner.invoke(main, ["analyze", str(out), str(out), "--json", "--resamples", "200",
                               "--plots", str(tmp_path / "p")])  # fmt: skip
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert set(data) == {"format_version", "runs", "comparisons", "stability", "plots", "outcomes",
                         "tampered"}  # fmt: skip
    assert set(data["tampered"].values()) == {None}
    assert list(data["runs"]) == ["scripted:greedy", "scripted:greedy#2"]
    run = data["runs"]["scripted:greedy"]
    assert {"run_dir", "agent", "manifest", "warnings", "n_episodes", "n_tasks", "trials",
            "scores", "tool_errors", "search", "efficiency", "revelation", "constraints",
            "styles", "trust", "persona", "stability", "episodes"} <= set(run)  # fmt: skip
    assert data["comparisons"][0]["metrics"]["OR5"]["resamples"] == 200
    assert len(data["plots"]) == 16
    res = runner.invoke(main, ["analyze", str(out), "--json", "--no-episodes"])
    assert "episodes" not in json.loads(res.output)["runs"]["scripted:greedy"]
    res = runner.invoke(main, ["analyze", str(out)])
    assert res.exit_code == 0 and "Scores" in res.output
    assert any(line.split()[:2] == ["scripted:greedy", "all"] for line in res.output.splitlines())
    res = runner.invoke(main, ["analyze", str(tmp_path)])
    assert res.exit_code != 0 and "not a run directory" in res.output


def test_validation_of_the_final_recommendation():
    """G.3: a final answer counts as validated only when every package it names went through
    its own recommend_* tool in a call that succeeded (each hotel of a Level I list too)."""
    from travelgym.suites.compass.analysis.features import validated_final
    from travelgym.suites.compass.analysis.metrics import validation_metrics

    final = {"hotel": "pkg_1_5_7_1", "flight": "flight_2_5_7", "permit": None}
    both = [call("recommend_hotel", {"package_ids": ["pkg_1_5_7_1"], "reasoning": "r"}),
            call("recommend_flight", {"flight_ids": ["flight_2_5_7"], "reasoning": "r"})]  # fmt: skip

    def graded(calls, rec=final, feasible=True):
        sc = score("t", 2, "single_metric", feasible, top=(feasible,) * 3)
        made = episode("t", sc, conversation(2, calls), 1, persona(1, "trusting"))
        made.final_recommendation = rec
        return made

    assert validated_final(graded(both)) is True
    assert validated_final(graded(both[:1])) is False  # the flight never validated
    failed = [both[0], call("recommend_flight", {"flight_ids": ["flight_2_5_7"]}, ok=False)]
    assert validated_final(graded(failed)) is False  # a call that failed validates nothing
    wrong_tool = [both[0], call("recommend_hotel", {"package_ids": ["flight_2_5_7"]})]
    assert validated_final(graded(wrong_tool)) is False  # a flight checked as a hotel
    hotels = {"hotel": ["pkg_1_5_7_1", "pkg_3_5_7_1"]}
    assert validated_final(graded(both, rec=hotels)) is False  # one of the Level I options not
    assert validated_final(graded(both, rec=None)) is None
    rows = [extract(graded(both)), extract(graded(both[:1], feasible=False)),
            extract(graded([], rec=None, feasible=False))]  # fmt: skip
    metrics = validation_metrics(rows)
    assert metrics["n"] == 2 and metrics["share_validated"] == 50.0
    assert metrics["validated"]["FR"] == 100.0 and metrics["unvalidated"]["FR"] == 0.0
    assert validation_metrics(rows[:1])["unvalidated"] == {"n": 0, **dict.fromkeys(
        ("FR", "OR5", "OR10", "OR20", "optimal"))}  # fmt: skip
