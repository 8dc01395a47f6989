"""Rewards on hand-made scores: the Behavior2Trip breakdown (invalid-action penalty, format gate,
C and UPC fractions, the vacuous UPC case, ablations) and the COMPASS shaping (infeasible,
feasible, tiers, exact rank, optimum)."""

from __future__ import annotations

import pytest

from travelgym.suites.behavior2trip.checks.base import CheckResult
from travelgym.suites.behavior2trip.scoring import InstanceResult
from travelgym.suites.behavior2trip.training import b2t_episode_reward, b2t_reward
from travelgym.suites.compass.scoring import PlanScore
from travelgym.suites.compass.training import compass_episode_reward, compass_reward
from travelgym.training.rewards import episode_reward


def result(c_pass: int, c_total: int, upc_pass: int, upc_total: int, *, delivered: bool = True,
           format_ok: bool = True, upc_not_applicable: int = 0) -> InstanceResult:  # fmt: skip
    """A scored answer: the Format check, then c_total - 1 other commonsense checks (c_pass
    passed in all, counting Format), then the personalisation checks."""
    checks = [CheckResult(id="format.json", group="C", category="format", passed=format_ok,
                          reason="")]  # fmt: skip
    others = c_pass - int(format_ok)
    for i in range(c_total - 1):
        checks.append(CheckResult(id=f"reason.{i}", group="C", category="reasonableness",
                                  passed=i < others, reason=""))  # fmt: skip
    for i in range(upc_total):
        checks.append(CheckResult(id=f"pref.{i}", group="UPC", category="personalization",
                                  passed=i < upc_pass, reason=""))  # fmt: skip
    for i in range(upc_not_applicable):
        checks.append(CheckResult(id=f"pref.na{i}", group="UPC", category="personalization",
                                  passed=None, reason="not stated"))  # fmt: skip
    return InstanceResult(instance_id="x", difficulty="easy", delivered=delivered, checks=checks)


def test_perfect_plan_and_the_invalid_action_penalty():
    perfect = result(22, 22, 3, 3)
    r = b2t_reward(perfect, 0)
    parts = (r.total, r.p_action, r.r_format, r.r_c, r.r_upc, r.r_plan)
    assert parts == (2.0, 0.0, 1.0, 1.0, 1.0, 2.0)
    penalised = b2t_reward(perfect, 2)
    assert penalised.total == 1.0 and penalised.p_action == -1.0 and penalised.invalid_actions == 2
    assert penalised.r_plan == 2.0
    ablated = b2t_reward(perfect, 2, penalty=False)
    assert ablated.total == 2.0 and ablated.p_action == 0.0 and ablated.penalty is False


def test_commonsense_and_preference_fractions():
    r = b2t_reward(result(11, 22, 1, 4), 0)
    assert r.r_c == 0.5 and r.r_upc == 0.25 and r.total == 0.75
    assert (r.c_passed, r.c_applicable, r.upc_passed, r.upc_applicable) == (11, 22, 1, 4)
    # a check that does not apply counts in neither numerator nor denominator
    r = b2t_reward(result(22, 22, 2, 4, upc_not_applicable=6), 1)
    assert r.r_upc == 0.5 and r.upc_applicable == 4 and r.total == -1.0 + 1.0 + 0.5


def test_the_format_gate():
    broken = result(15, 22, 3, 3, format_ok=False)  # delivered, but the Format check fails
    r = b2t_reward(broken, 0)
    assert r.r_format == 0.0 and r.r_plan == 0.0 and r.total == 0.0
    assert r.r_c == 15 / 22 and r.r_upc == 1.0  # reported, but gated off
    assert b2t_reward(broken, 1).total == -1.0  # an undeliverable plan gets P_action only
    assert b2t_reward(broken, 0, gate="delivered").total == 15 / 22 + 1.0
    undelivered = result(0, 22, 0, 3, delivered=False, format_ok=False)
    assert b2t_reward(undelivered, 0).total == 0.0 and b2t_reward(undelivered, 3).total == -1.0
    nothing = b2t_reward(None, 1)
    assert nothing.total == -1.0 and nothing.delivered is False and nothing.r_c == 0.0
    with pytest.raises(ValueError, match="gate"):
        b2t_reward(broken, 0, gate="json")


def test_no_applicable_preference_is_vacuously_met():
    r = b2t_reward(result(22, 22, 0, 0, upc_not_applicable=10), 0)
    assert r.upc_vacuous is True and r.r_upc == 1.0 and r.total == 2.0
    gone = b2t_reward(result(0, 22, 0, 0, delivered=False), 0)
    assert gone.upc_vacuous is True and gone.r_upc == 0.0 and gone.total == 0.0


def test_episode_inputs_and_json_scores():
    score = result(20, 22, 2, 4).model_dump(mode="json")  # as an episode stores it
    assert b2t_reward(score, 0).total == pytest.approx(20 / 22 + 0.5)
    episode = {"episode_id": "e#0", "score": score, "invalid_actions": 1}
    assert b2t_episode_reward(episode).total == pytest.approx(-1 + 20 / 22 + 0.5)
    assert b2t_episode_reward(episode, penalty=False).total == pytest.approx(20 / 22 + 0.5)
    with pytest.raises(ValueError, match="no score"):
        b2t_episode_reward({"episode_id": "e#1", "score": None, "invalid_actions": 0})


def plan_score(feasible: bool = True, *, top: tuple[bool, bool, bool] = (False, False, False),
               optimal: bool = False, rank: int | None = None,
               rank_percentile: float | None = None) -> PlanScore:  # fmt: skip
    return PlanScore(task_id="t", level=1, objective_type="single_metric", recommendation={},
                     feasible=feasible, violations=[] if feasible else ["budget: over"],
                     top=dict(zip(("5", "10", "20"), top, strict=True)), optimal=optimal,
                     rank=rank, rank_percentile=rank_percentile)  # fmt: skip


def test_compass_infeasible_feasible_and_tiers():
    assert compass_reward(None).total == 0.0 and compass_reward(None).basis == "infeasible"
    infeasible = compass_reward(plan_score(False, top=(True, True, True), optimal=True))
    assert infeasible.total == 0.0 and infeasible.feasible is False and infeasible.quality == 0.0
    tiers = [
        plan_score(),
        plan_score(top=(False, False, True)),
        plan_score(top=(False, True, True)),
        plan_score(top=(True, True, True)),
        plan_score(top=(True, True, True), optimal=True),
    ]
    rewards = [compass_reward(s) for s in tiers]
    assert [r.total for r in rewards] == [0.5, 0.625, 0.75, 0.875, 1.0]
    assert {r.basis for r in rewards} == {"tiers"}


def test_compass_exact_rank():
    # |X_feas| = 200: rank r has percentile r / 2
    best = compass_reward(plan_score(top=(True,) * 3, optimal=True, rank=1, rank_percentile=0.5))
    assert best.total == 1.0 and best.basis == "rank" and best.rank == 1
    middle = compass_reward(plan_score(rank=100, rank_percentile=50.0))
    assert middle.total == 0.75 and middle.quality == 0.5
    worst = compass_reward(plan_score(rank=200, rank_percentile=100.0))
    assert worst.total == 0.5 and worst.feasible is True
    ranks = [2, 10, 40, 120, 199]
    totals = [compass_reward(plan_score(rank=r, rank_percentile=r / 2)).total for r in ranks]
    assert totals == sorted(totals, reverse=True) and len(set(totals)) == len(ranks)
    assert totals[0] == pytest.approx(0.995) and totals[-1] == pytest.approx(0.5025)


def test_compass_episode_reward_reads_the_stored_score():
    stored = plan_score(top=(False, True, True)).model_dump()
    assert compass_episode_reward({"episode_id": "t#0", "score": stored}).total == 0.75
    with pytest.raises(ValueError, match="no score"):
        compass_episode_reward({"episode_id": "t#0", "score": None})


def test_episode_reward_finds_the_suites_reward():
    stored = plan_score(top=(False, True, True)).model_dump()
    assert episode_reward({"suite": "compass", "episode_id": "t#0", "score": stored}).total == 0.75
    score = result(20, 22, 2, 4).model_dump(mode="json")
    episode = {"suite": "behavior2trip", "episode_id": "e#0", "score": score, "invalid_actions": 1}
    assert episode_reward(episode).total == pytest.approx(-1 + 20 / 22 + 0.5)
    assert episode_reward(episode, penalty=False).total == pytest.approx(20 / 22 + 0.5)
    assert episode_reward({**episode, "suite": "x"}, "behavior2trip").r_format == 1.0
