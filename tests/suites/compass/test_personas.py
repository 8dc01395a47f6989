"""Personas per conversation: the assignment modes over the shipped tasks, what a real run
records and reproduces, and the within-task persona analyses (COMPASS Appendix E)."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from travelgym.runner.store import read_episodes
from travelgym.suites.compass.analysis.features import EpisodeFeatures
from travelgym.suites.compass.analysis.metrics import (
    analyze_runs,
    features_of,
    style_consistency,
    trust_test,
)
from travelgym.suites.compass.analysis.persona_effects import (
    TOO_SMALL,
    binary_effect,
    many_level_effect,
    persona_effects,
    within_task_permutations,
)
from travelgym.suites.compass.analysis.summary import format_analysis
from travelgym.suites.compass.personas import (
    PERSONA_TYPES,
    SPEEDS,
    assign_personas,
    balanced_personas,
    persona_type,
    sampled_persona,
)
from travelgym.suites.compass.tasks import load_tasks
from travelgym.suites.compass.trajectory import Episode


@pytest.fixture(scope="module")
def tasks():
    return load_tasks()


# ------------------------------------------------------------------ assignment over 281 x 2


def test_sampled_covers_most_types_and_the_two_trials_differ(tasks):
    assert len(tasks) == 281 and len(PERSONA_TYPES) == 108
    for seed in (0, 1):
        personas = assign_personas("sampled", seed, tasks, 2)
        assert len(personas) == 562
        assert len({persona_type(p) for p in personas.values()}) >= 95
        # the type, not the whole persona: every persona holds its own reveal probability
        differ = sum(persona_type(personas[(t.task_id, 0)]) != persona_type(personas[(t.task_id, 1)])
                     for t in tasks)  # fmt: skip
        assert differ >= 0.9 * len(tasks)
    # the task file's personas cover fewer types (92): the reason for per-conversation personas
    assert len({persona_type(t.persona) for t in tasks}) < 95


def test_sampled_follows_appendix_e(tasks):
    personas = list(assign_personas("sampled", 3, tasks, 4).values())  # 1124 draws
    n = len(personas)
    trusting = sum(p.trust == "trusting" for p in personas) / n
    reliable = sum(p.reliability == "reliable" for p in personas) / n
    assert 0.76 < trusting < 0.84 and 0.45 < reliable < 0.55  # 80 % and 50 %, about 3 SE
    speeds, styles = (
        Counter(p.revelation_speed for p in personas),
        Counter(p.style for p in personas),
    )
    assert set(speeds) == set(SPEEDS) and min(speeds.values()) > n / 3 - 60
    assert set(styles) == set(range(1, 10)) and min(styles.values()) > n / 9 - 40
    for p in personas:
        lo, hi = SPEEDS[p.revelation_speed]
        assert lo <= p.reveal_probability <= hi


def test_sampled_is_a_function_of_seed_task_and_trial():
    assert sampled_persona(7, "compass-001", 1) == sampled_persona(7, "compass-001", 1)
    draws = {sampled_persona(s, "compass-001", k) for s in range(4) for k in range(4)}
    assert len(draws) == 16  # every seed and trial gives another user
    with pytest.raises(ValueError, match="must be >= 0"):
        sampled_persona(-1, "compass-001", 0)


def test_balanced_spreads_all_108_types_evenly(tasks):
    personas = assign_personas("balanced", 0, tasks, 2)
    counts = Counter(persona_type(p) for p in personas.values())
    assert len(counts) == 108
    assert set(counts.values()) <= {562 // 108, 562 // 108 + 1}
    differ = sum(persona_type(personas[(t.task_id, 0)]) != persona_type(personas[(t.task_id, 1)])
                 for t in tasks)  # fmt: skip
    assert differ >= 0.9 * len(tasks)
    for p in personas.values():
        lo, hi = SPEEDS[p.revelation_speed]
        assert lo <= p.reveal_probability <= hi
    keys = list(personas)
    assert balanced_personas(0, keys[::-1]) == personas  # order of the pairs is irrelevant
    assert balanced_personas(1, keys) != personas
    small = balanced_personas(5, keys[:50])
    assert len({persona_type(p) for p in small.values()}) == 50  # fewer than 108: all distinct


def test_task_mode_is_the_task_file_and_bad_modes_are_refused(tasks):
    personas = assign_personas("task", 9, tasks[:5], 3)
    assert all(personas[(t.task_id, k)] == t.persona for t in tasks[:5] for k in range(3))
    with pytest.raises(ValueError, match="unknown persona mode 'random'"):
        assign_personas("random", 0, tasks, 1)


# ------------------------------------------------------------------ a real 281 x 2 run


@pytest.fixture(scope="module")
def full_runs(compass_db, tmp_path_factory):
    """scripted:greedy with the template user on all 281 tasks x 2 trials, through the CLI:
    the default personas and ``--personas balanced``."""
    from travelgym.cli import main

    parent, runs = tmp_path_factory.mktemp("full-runs"), {}
    for mode in ("sampled", "balanced"):
        extra = [] if mode == "sampled" else ["--personas", "balanced"]
        result = CliRunner().invoke(main, ["run", "compass", "--agent", "scripted:greedy",
                                           "--trials", "2", "--no-progress", "--out",
                                           str(parent / mode), "--data-dir",
                                           str(compass_db.parent.parent), *extra])  # fmt: skip
        assert result.exit_code == 0, result.output
        runs[mode] = _episodes(parent / mode / "scripted-greedy")
    return runs


@pytest.mark.slow
def test_a_default_281x2_run_covers_95_types_and_its_trials_differ(full_runs, tasks):
    episodes = full_runs["sampled"]
    assert len(episodes) == 2 * len(tasks) == 562
    types = {(e["task_id"], e["trial"]): persona_type(e["persona"]) for e in episodes}
    assert len(set(types.values())) >= 95
    differ = sum(types[(t.task_id, 0)] != types[(t.task_id, 1)] for t in tasks)
    assert differ >= 0.9 * len(tasks), differ
    # the task file's personas are not what ran
    assert sum(persona_type(t.persona) == types[(t.task_id, 0)] for t in tasks) < 0.5 * len(tasks)


def test_a_balanced_281x2_run_covers_all_108_types_evenly(full_runs):
    counts = Counter(persona_type(e["persona"]) for e in full_runs["balanced"])
    assert len(counts) == len(PERSONA_TYPES) == 108
    assert max(counts.values()) - min(counts.values()) <= 1  # 562 = 5 x 108 + 22


def test_no_user_message_more_than_twice_in_a_default_281x2_run(full_runs):
    """The template user's wording under the personas a default run draws (every style and
    questioning users included), not only the task files' personas."""
    from travelgym.suites.compass.user.template import MAX_SAME_MESSAGE

    worst = max(max(Counter(t["text"] for t in e["turns"] if t["role"] == "user").values())
                for e in full_runs["sampled"] + full_runs["balanced"])  # fmt: skip
    assert worst <= MAX_SAME_MESSAGE == 2


# ------------------------------------------------------------------------- a real small run


def _episodes(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "episodes.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def small_runs(compass_db, tmp_path_factory, tasks):
    """scripted:greedy on 4 tasks x 2 trials, default personas (run_suite) and --personas task
    (the CLI)."""
    from travelgym.cli import main
    from travelgym.runner.batch import RunConfig, run_suite

    data_dir = compass_db.parent.parent
    ids = [t.task_id for t in tasks[:4]]
    sampled = tmp_path_factory.mktemp("runs") / "sampled"
    asyncio.run(run_suite(RunConfig("compass", "scripted:greedy", sampled, options={"trials": 2},
                                    task_ids=ids, seed=11, data_dir=data_dir, progress=False)))  # fmt: skip
    parent = tmp_path_factory.mktemp("runs")
    result = CliRunner().invoke(main, ["run", "compass", "--agent", "scripted:greedy", "--tasks",
                                       ",".join(ids), "--trials", "2", "--personas", "task",
                                       "--seed", "11", "--no-progress", "--out", str(parent),
                                       "--data-dir", str(data_dir)])  # fmt: skip
    assert result.exit_code == 0, result.output
    return sampled, parent / "scripted-greedy", ids, data_dir


def test_a_run_records_the_assigned_personas(small_runs, tasks):
    sampled, task_mode, ids, _ = small_runs
    chosen = [t for t in tasks if t.task_id in ids]
    expected = assign_personas("sampled", 11, chosen, 2)
    episodes = _episodes(sampled)
    assert len(episodes) == 8
    for e in episodes:
        assert e["persona"] == expected[(e["task_id"], e["trial"])].model_dump()
        # the simulator played that persona: only questioning users question a recommendation
        questioned = any(a["type"] == "question" for t in e["turns"] for a in t["acts"])
        accepted = e["termination"] == "accepted"
        assert questioned == (e["persona"]["trust"] == "questioning" and accepted)
    assert json.loads((sampled / "manifest.json").read_text())["personas"] == "sampled"
    by_id = {t.task_id: t for t in tasks}
    task_episodes = _episodes(task_mode)
    assert len(task_episodes) == 8
    assert all(e["persona"] == by_id[e["task_id"]].persona.model_dump() for e in task_episodes)
    assert json.loads((task_mode / "manifest.json").read_text())["personas"] == "task"


def test_resuming_with_another_persona_mode_is_refused(small_runs):
    from travelgym.runner.batch import RunConfig, run_suite
    from travelgym.runner.errors import RunDirError

    sampled, _, ids, data_dir = small_runs
    cfg = RunConfig("compass", "scripted:greedy", sampled, options={"trials": 2,
                    "personas": "balanced"}, task_ids=ids, seed=11, data_dir=data_dir,
                    resume=True, progress=False)  # fmt: skip
    with pytest.raises(RunDirError, match=r"differs in: personas"):
        asyncio.run(run_suite(cfg))


def test_a_run_from_before_personas_resumes_as_task_mode(compass_db, tmp_path):
    """A run written before --personas used the task file's personas: resuming it with
    ``--personas task`` is the same run, with the default it is refused."""
    from travelgym.runner.batch import RunConfig, run_suite
    from travelgym.runner.errors import RunDirError

    run_dir = tmp_path / "old"

    def resume(**options):
        return asyncio.run(run_suite(RunConfig("compass", "scripted:greedy", run_dir, limit=3,
                                               options=options, concurrency=1, resume=True,
                                               data_dir=compass_db.parent.parent,
                                               progress=False)))  # fmt: skip

    resume(personas="task")
    manifest = json.loads((run_dir / "manifest.json").read_text())
    del manifest["personas"]  # what a manifest from before --personas looks like
    (run_dir / "manifest.json").write_text(json.dumps(manifest))

    with pytest.raises(RunDirError, match=r"differs in: personas"):
        resume()
    assert resume(personas="task")["overall"]["n"] == 3
    assert json.loads((run_dir / "manifest.json").read_text())["personas"] == "task"


def test_a_tiny_run_is_too_small_to_say(small_runs):
    sampled, _, _, _ = small_runs
    result = analyze_runs([sampled], resamples=200)
    effects = result["runs"]["scripted:greedy"]["persona_effects"]
    for axis in ("trust", "reliability", "style", "revelation_speed"):
        assert effects[axis]["verdict"] == TOO_SMALL and effects[axis]["effect"] is None
    text = format_analysis(result)
    assert "trust: too small to say: " in text and "need 10" in text


# ---------------------------------------- an agent that ignores the persona, over 5 run seeds


def test_greedy_agent_shows_no_persona_effect_within_tasks(compass_db, tmp_path_factory, tasks):
    """scripted:greedy ignores style and questioning: over 5 run seeds (20 tasks x 2 trials
    each) the within-task trust and style intervals hold zero."""
    from travelgym.runner.batch import RunConfig, run_suite

    ids = [t.task_id for t in tasks[:20]]
    parent = tmp_path_factory.mktemp("greedy-seeds")
    dirs = []
    for seed in range(5):
        out = parent / f"seed{seed}"
        asyncio.run(run_suite(RunConfig("compass", "scripted:greedy", out, options={"trials": 2},
                                        task_ids=ids, seed=seed, concurrency=2,
                                        data_dir=compass_db.parent.parent, progress=False)))  # fmt: skip
        dirs.append(out)
    result = analyze_runs(dirs, resamples=1000, seed=0, include_episodes=False)
    pooled = result["stability"]["scripted:greedy"]["persona_effects"]
    assert pooled["conversations"] == 200 and pooled["tasks"] == 20
    for axis in ("trust", "style"):
        effect = pooled[axis]
        assert effect["informative_tasks"] >= 10, effect
        assert effect["ci_low"] <= 0 <= effect["ci_high"], effect
        assert effect["verdict"] == "no effect detected"
    # the same conversations pooled over tasks (Table 6) show a style "effect": task difficulty
    rows = [
        r
        for d in dirs
        for r in features_of(read_episodes(d, Episode), {t.task_id: t for t in tasks})
    ]
    assert style_consistency(rows)["cv"] > 10 and pooled["style"]["spread"] < 1e-9
    personas = {persona_type(e) for d in dirs for e in (x["persona"] for x in _episodes(d))}
    assert len(personas) > 60  # the seeds vary the users


# ------------------------------------------------------------------ synthetic planted effects


def _row(task_id: str, trial: int, top5: bool, *, trust="trusting", style=1,
         reliability="reliable", speed="medium") -> EpisodeFeatures:  # fmt: skip
    return EpisodeFeatures(task_id=task_id, trial=trial, level=1, objective_type="single_metric",
                           feasible=top5, top5=top5, top10=top5, top20=top5, optimal=False,
                           optimality_gap=None, rank_percentile=None, termination="accepted",
                           calls=0, errors={}, effort=0, yield_=0, yield_source="none",
                           t_star=0, user_turns=1, agent_turns=1, extra_turns=0,
                           n_constraints=None, constraints_satisfied=None, style=style,
                           trust=trust, reliability=reliability,
                           revelation_speed=speed)  # fmt: skip


def _synthetic(
    n_tasks: int,
    per_task: int,
    seed: int,
    questioning_penalty: float = 0.0,
    hard_for_questioning: bool = False,
    bad_style: int | None = None,
) -> list:
    """Tasks of varied difficulty; each conversation's user drawn at random (questioning
    users sent to the hardest tasks when ``hard_for_questioning``)."""
    rng = np.random.default_rng(seed)
    rows = []
    for t in range(n_tasks):
        base = 0.15 + 0.7 * t / max(1, n_tasks - 1)  # success probability of the task
        for k in range(per_task):
            share_q = (0.6 if base < 0.5 else 0.05) if hard_for_questioning else 0.3
            trust = "questioning" if rng.random() < share_q else "trusting"
            style = int(rng.integers(1, 10))
            p = base - (questioning_penalty if trust == "questioning" else 0.0)
            p = 0.0 if style == bad_style else p
            rows.append(_row(f"t{t:03d}", k, bool(rng.random() < p), trust=trust, style=style,
                             reliability=("reliable", "unreliable")[k % 2]))  # fmt: skip
    return rows


def test_a_planted_trust_effect_is_detected_within_tasks():
    rows = _synthetic(40, 10, seed=1, questioning_penalty=0.4)
    trust = binary_effect(rows, "trust", ("questioning", "trusting"), resamples=1000, seed=0)
    assert trust["informative_tasks"] >= 30
    assert trust["ci_high"] < 0 and -60 < trust["effect"] < -20, trust
    assert trust["verdict"] == "questioning lower than trusting"
    again = binary_effect(rows, "trust", ("questioning", "trusting"), resamples=1000, seed=0)
    assert again == trust  # seeded


def test_a_task_effect_is_not_taken_for_a_trust_effect():
    """Questioning users got the hard tasks, the users themselves do not matter: the pooled
    z-test (Table 7) calls it significant, the within-task interval holds zero."""
    rows = _synthetic(60, 10, seed=2, hard_for_questioning=True)
    assert trust_test(rows)["p_value"] < 0.001
    trust = binary_effect(rows, "trust", ("questioning", "trusting"), resamples=1000, seed=0)
    assert trust["ci_low"] <= 0 <= trust["ci_high"], trust


def test_a_planted_style_effect_is_detected_and_no_style_effect_is_not():
    planted = many_level_effect(_synthetic(40, 12, seed=3, bad_style=3), "style",
                                resamples=500, seed=0)  # fmt: skip
    assert planted["ci_low"] > 0 and planted["p_value"] < 0.01, planted
    assert planted["by_level"]["3"]["vs_task_mean"] < -20
    assert planted["verdict"] == "style matters beyond chance"
    null = many_level_effect(_synthetic(40, 12, seed=3), "style", resamples=500, seed=0)
    assert null["ci_low"] <= 0 <= null["ci_high"] and null["spread"] > 0, null
    assert null["cv"] > 0 and null["chance_cv"] > 0  # a raw CV is never 0; chance says how much


def test_too_few_informative_tasks_say_too_small():
    rows = _synthetic(40, 1, seed=4, questioning_penalty=0.5)  # one conversation per task
    rows += _synthetic(3, 10, seed=5, questioning_penalty=0.5)  # 3 tasks with both groups
    effects = persona_effects(rows, resamples=200)
    assert effects["trust"]["informative_tasks"] == 3
    assert effects["trust"]["verdict"] == TOO_SMALL and effects["trust"]["effect"] is None
    assert "need 10" in effects["trust"]["reason"]
    assert effects["style"]["verdict"] == TOO_SMALL and effects["style"]["cv"] is None


def test_within_task_permutations_keep_each_tasks_labels():
    rng = np.random.default_rng(0)
    groups = np.array([2, 0, 1, 0, 2, 1, 0, 2])
    codes = np.array([0, 1, 2, 3, 4, 5, 6, 7])
    perms = within_task_permutations(groups, codes, 300, rng)
    for row in perms:
        for g in range(3):
            assert sorted(row[groups == g]) == sorted(codes[groups == g])
    assert len({tuple(r) for r in perms}) > 20  # really shuffled (3! x 2! x 3! = 72 possible)
