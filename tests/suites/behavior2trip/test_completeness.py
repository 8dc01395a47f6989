"""No credit without content: a plan lacking a subject (meals, hotels, attractions, legs, local
transport, times, days) fails every check that judges it, and only those (a missing required
slot, checks v4: every check, the plan is not delivered); a city-only skeleton earns nothing."""

from __future__ import annotations

import copy

import pytest

from tests.suites.behavior2trip.test_checks import answer_of
from travelgym.suites.behavior2trip.checks import C_IDS, CHECK_IDS, run_checks
from travelgym.suites.behavior2trip.checks.completeness import NEEDS, SUBJECTS
from travelgym.suites.behavior2trip.checks.credit import DELIVERY
from travelgym.suites.behavior2trip.plan_parse import parse_plan
from travelgym.suites.behavior2trip.scoring import score_result
from travelgym.suites.behavior2trip.training import b2t_reward

# the checks that state a subject's completeness themselves (they fail on their own reason)
OWN = {
    "days": {"format.json"},
    "meals": {"reason.complete_meals"},
    "accommodation": {"reason.daily_accommodation"},
    "attractions": {"reason.at_least_one_attraction"},
    "intercity": {"auth.major_transport"},
    "local": {"info.sufficiency"},
    "times": {"info.sufficiency"},
}


def _results(days, instance, pdb) -> dict:
    plan, problems = parse_plan(answer_of(days))
    assert plan is not None, problems
    return {r.id: r for r in run_checks(plan, instance, pdb)}


def _drop(subject: str, days: list[dict]) -> list[dict]:
    """The valid plan without one subject (in one place only: one day, one item)."""
    days = copy.deepcopy(days)
    if subject == "days":
        return days[:-1]
    day = days[1]
    if subject == "meals":
        del day["lunch"]
    elif subject == "accommodation":
        del days[0]["accommodation"]
    elif subject == "attractions":
        day["attractions"], day["entertainment"] = [], []
        day["local_transport"] = [
            x for x in day["local_transport"] if "A" not in (x["from"][0], x["to"][0])
        ]
    elif subject == "intercity":
        del days[-1]["intercity_transport"]
    elif subject == "local":
        day["local_transport"] = []
    elif subject == "times":
        del day["dinner"]["start_time"]
    return days


def test_every_check_names_known_subjects():
    assert set(NEEDS) == set(CHECK_IDS)
    assert all(set(needs) <= set(SUBJECTS) for needs in NEEDS.values())
    # every subject gates something besides the check that states it
    assert {s for needs in NEEDS.values() for s in needs} == set(SUBJECTS) - {"days"}


@pytest.mark.parametrize("subject", SUBJECTS)
def test_a_plan_missing_a_subject_fails_exactly_the_checks_that_judge_it(case, pdb, subject):
    days, instance, _ = case
    got = _results(_drop(subject, days), instance, pdb)
    if subject in DELIVERY:  # checks v4: a required slot missing is no delivery, nothing passes
        assert all(r.passed is not True for r in got.values())
        for r in got.values():
            if r.passed is False:
                assert r.reason.startswith(f"no plan delivered: incomplete plan ({subject})"), r
        return
    gated = {c for c, needs in NEEDS.items() if c != "format.json"} if subject == "days" else {
        c for c, needs in NEEDS.items() if subject in needs
    }  # fmt: skip
    for check_id in gated:
        assert got[check_id].passed is False, (check_id, got[check_id].reason)
        assert got[check_id].reason.startswith(f"incomplete plan ({subject})"), got[check_id]
    failed = {c for c, r in got.items() if r.passed is False}
    assert OWN[subject] <= failed, {c: got[c].reason for c in OWN[subject]}
    # nothing else is touched: the rest of the plan still earns its checks
    assert failed - gated - OWN[subject] == set(), {c: got[c].reason for c in failed - gated}


@pytest.mark.parametrize(
    "category, judged",
    [
        ("meals", {"pref.cuisine", "pref.price_level", "pref.dining_environment",
                   "reason.meal_times", "reason.non_duplicate_restaurants"}),
        ("accommodation", {"pref.hotel_star", "pref.hotel_amenities", "reason.accommodation_time"}),
        ("attractions", {"pref.attraction_type", "pref.walking_tolerance",
                         "reason.attraction_limit", "reason.inter_attraction_transport"}),
    ],
)  # fmt: skip
def test_a_plan_without_a_whole_category_fails_that_categorys_checks(case, pdb, category, judged):
    days, instance = copy.deepcopy(case[0]), case[1]
    for day in days:
        if category == "meals":
            for meal in ("breakfast", "lunch", "dinner"):
                day.pop(meal, None)
        elif category == "accommodation":
            day.pop("accommodation", None)
        else:
            day["attractions"], day["entertainment"] = [], []
    got = _results(days, instance, pdb)
    assert all(got[c].passed is False for c in judged), {c: got[c].reason for c in judged}
    assert got["pref.budget"].passed is False  # a plan missing a category is never "in budget"


def skeleton(days: list[dict]) -> list[dict]:
    """The day-by-day city skeleton of a plan: day number, date, city and nothing else."""
    return [{"day": d["day"], "date": d["date"], "city": d["city"]} for d in days]


def test_a_city_only_skeleton_earns_nothing(case, pdb):
    days, instance, _ = case
    result = score_result(instance, answer_of(skeleton(days)), pdb)
    # checks v4: a skeleton is no delivery (DR), so it fails every check, format.json included
    assert not result.delivered and not result.final
    c = [r for r in result.checks if r.id in C_IDS]
    assert [r.id for r in c if r.passed] == []
    assert result.c_passed == 0 and result.upc_passed == 0
    reward = b2t_reward(result)
    assert reward.r_format == 0.0 and reward.total == 0.0, reward


@pytest.mark.slow
def test_skeletons_of_60_test_instances_earn_nothing(trips_database):
    """Across difficulties: the city skeleton of each trip (what a reward hacker would send)
    is not delivered (checks v4), passes no check and earns a reward of 0."""
    from travelgym.suites.behavior2trip.checks import PlanDB
    from travelgym.suites.behavior2trip.instances import ensure_instances, load_instances

    path = ensure_instances(trips_database, trips_database.path.parent.parent, splits=("test",))
    instances = load_instances(path["test"])
    sample = [x for level in ("easy", "medium", "hard")
              for x in [y for y in instances if y.difficulty == level][::40][:20]]  # fmt: skip
    assert len(sample) == 60
    db = PlanDB.open(trips_database.path)
    try:
        for x in sample:
            ins = x.instruction
            days = [{"day": 1, "date": ins.start_date,
                     "city": f"{ins.departure_city} -> {ins.destination_city}"}]  # fmt: skip
            for n in range(2, ins.days + 1):
                last = n == ins.days
                city = (
                    f"{ins.destination_city} -> {ins.departure_city}"
                    if last
                    else ins.destination_city
                )
                days.append({"day": n, "city": city})
            result = score_result(x, answer_of(days), db)
            reward = b2t_reward(result)
            assert not result.delivered and not result.final, x.instance_id
            assert result.c_passed == result.upc_passed == 0, x.instance_id
            assert reward.total == 0.0, (x.instance_id, reward)
    finally:
        db.close()
