"""Plans in the published submission format, scored on the tiny database of ``suite_data``,
against what TravelPlanner's published ``evaluation/eval.py`` (with ``commonsense_constraint.py``
and ``hard_constraint.py``) outputs for them, worked out by hand from that script.

Each plan exercises a reading the script makes in a particular way: ``'-'`` entries and ``'-'``
transportation on a day in one city, a repeated restaurant, self-driving next to a taxi or a
flight, a ``"City(State)"`` suffix, an attraction after the last ``';'`` (never read), a plan
missing a day, an empty plan. The script's rates divide by the number of queries; here five."""

from __future__ import annotations

import json

import pytest

from travelgym.suites.travelplanner.dataset import read_dataset
from travelgym.suites.travelplanner.evaluation import (
    COMMONSENSE,
    HARD,
    evaluate_plan,
    read_submission,
    score_submission,
    total_cost,
)
from travelgym.suites.travelplanner.ingest import ingest
from travelgym.suites.travelplanner.records import LocalConstraint
from travelgym.suites.travelplanner.sandbox_db import DatabaseSandbox

STP, ROCK, CHI = "St. Petersburg", "Rockford", "Chicago"
NO_INFO = "You don't need to fill in the information for this or later days."


def day(n, city, transportation="-", breakfast="-", attraction="-", lunch="-", dinner="-",
        accommodation="-", key="days"):  # fmt: skip
    return {key: n, "current_city": city, "transportation": transportation,
            "breakfast": breakfast, "attraction": attraction, "lunch": lunch, "dinner": dinner,
            "accommodation": accommodation}  # fmt: skip


PRIVATE = f"Private Room in a two bedroom apt., {ROCK}"
SPACIOUS = f"Spacious 3BDR Prime Location!, {ROCK}"

# easy (St. Petersburg -> Rockford, 3 days, 1 person, $1,700): everything passes.
# Cost: flights 474 + 346, meals 72 + 20 + 15 + 12, two nights 210 (sleeps 2) = 1359.
EASY = [
    day(1, f"from {STP} to {ROCK}",
        f"Flight Number: F3573659, from {STP} to {ROCK}, Departure Time: 15:40, "
        "Arrival Time: 17:04", dinner=f"Coco Bambu, {ROCK}", accommodation=PRIVATE),
    day(2, ROCK, "-", f"Flying Mango, {ROCK}",
        f"Burpee Museum of Natural History, {ROCK};Anderson Japanese Gardens, {ROCK};",
        f"Lucky Wok, {ROCK}", f"Maple Diner, {ROCK}", PRIVATE),
    day(3, f"from {ROCK} to {STP}",
        f"Flight Number: F3573120, from {ROCK} to {STP}, Departure Time: 19:00, "
        "Arrival Time: 22:43"),
]  # fmt: skip

# medium (Rockford -> Chicago, 3 days, 2 people, pets, $1,500): Golden Dragon twice and
# self-driving out, a taxi back: Diverse Restaurants and Non-conf. Transportation fail; the
# gate passes, so the hard constraints are checked and pass. Cost: self-driving 7 (one car),
# taxi 145 (one car for 2), meals (35 + 18 + 22 + 30 + 35) x 2 = 280, the shared room (sleeps
# 1, "No parties") 2 rooms x 60 x 2 nights = 240: 672.
MEDIUM = [
    day(1, f"from {ROCK} to {CHI}",
        f"Self-driving, from {ROCK} to {CHI}, duration: 1 hour 32 mins, distance: 143 km, "
        "cost: 7", lunch=f"Golden Dragon, {CHI}", dinner=f"Pizza Corner, {CHI}",
        accommodation=f"Cozy shared room, {CHI}", key="day"),
    day(2, CHI, "-", f"Deep Dish House, {CHI}", f"Millennium Park, {CHI};",
        f"Lakeview Bistro, {CHI}", f"Golden Dragon, {CHI}", f"Cozy shared room, {CHI}",
        key="day"),
    day(3, f"from {CHI} to {ROCK}",
        f"Taxi, from {CHI} to {ROCK}, duration: 1 hour 35 mins, distance: 145 km, cost: 145",
        key="day"),
]  # fmt: skip

# hard (St. Petersburg -> 2 cities of Illinois, 5 days, 3 people, Chinese, entire room, no
# self-driving, $5,200): cities written "City(Illinois)"; a flight, then self-driving, then a
# flight (Non-conf. Transportation fails, the hard transportation constraint too); day 4's
# attractions lack the final ';', so "Nowhere Tower" (in no table) is never read.
# Cost: flights (210 + 346) x 3 = 1668, self-driving 7 (one car), meals (35 + 18 + 22 + 30 +
# 20 + 12 + 72 + 15) x 3 = 672, the loft (sleeps 4) 2 x 320, the 3BDR (sleeps 9) 2 x 1030:
# 5047.
HARD_PLAN = [
    day(1, f"from {STP} to {CHI}(Illinois)",
        f"Flight Number: F1000001, from {STP} to {CHI}(Illinois), Departure Time: 07:05, "
        "Arrival Time: 09:15", dinner=f"Golden Dragon, {CHI}(Illinois)",
        accommodation=f"Loft by the Lake, {CHI}"),
    day(2, f"{CHI}(Illinois)", "-", f"Pizza Corner, {CHI}", f"Millennium Park, {CHI};",
        f"Deep Dish House, {CHI}", f"Lakeview Bistro, {CHI}", f"Loft by the Lake, {CHI}"),
    day(3, f"from {CHI}(Illinois) to {ROCK}(Illinois)",
        f"Self-driving, from {CHI} to {ROCK}, duration: 1 hour 35 mins, distance: 145 km, "
        "cost: 7", dinner=f"Flying Mango, {ROCK}", accommodation=SPACIOUS),
    day(4, f"{ROCK}(Illinois)", "-", f"Maple Diner, {ROCK}",
        f"Burpee Museum of Natural History, {ROCK};Nowhere Tower, {ROCK}",
        f"Coco Bambu, {ROCK}", f"Lucky Wok, {ROCK}", SPACIOUS),
    day(5, f"from {ROCK}(Illinois) to {STP}",
        f"Flight Number: F3573120, from {ROCK} to {STP}, Departure Time: 19:00, "
        "Arrival Time: 22:43"),
]  # fmt: skip

# the easy query again (idx 4) with its last day missing: Complete Information fails (2 days
# of 3) and so does Reasonable City Route (St. Petersburg, Rockford, Rockford is no circle);
# the other six pass; the hard constraints are not checked. idx 5: an empty plan.
SHORT = EASY[:2]


@pytest.fixture
def scored(tp_suite_data, tmp_path):
    dataset, database = tp_suite_data
    meta = ingest(dataset, database, tmp_path / "data")
    db = DatabaseSandbox.from_path(meta["path"])
    easy, medium, hard = read_dataset(dataset, "validation")["validation"]
    queries = [easy, medium, hard, easy.model_copy(update={"idx": 4, "task_id": "validation-4"}),
               easy.model_copy(update={"idx": 5, "task_id": "validation-5"})]  # fmt: skip
    lines = [json.dumps({"idx": i, "query": q.query, "plan": p}) for i, (q, p) in
             enumerate(zip(queries, [EASY, MEDIUM, HARD_PLAN, SHORT, []], strict=True), 1)]  # fmt: skip
    report = score_submission(queries, read_submission(lines), lambda _q: db)
    yield queries, db, report
    db.close()


def failures(result, kind):
    verdicts = result[kind]
    return None if verdicts is None else sorted(k for k, v in verdicts.items()
                                                if v["passed"] is False)  # fmt: skip


def test_per_plan_verdicts_match_the_script(scored):
    _, _, report = scored
    results = report["results"]
    assert [r["delivered"] for r in results] == [True, True, True, True, False]
    assert [failures(r, "commonsense") for r in results] == [
        [],
        ["diverse_restaurants", "non_conflicting_transportation"],
        ["non_conflicting_transportation"],
        ["complete_information", "reasonable_city_route"],
        None,
    ]
    assert [failures(r, "hard") for r in results] == [[], [], ["transportation"], None, None]
    # the local constraints a query leaves unset are None, the budget always a verdict
    assert {k: v["passed"] for k, v in results[0]["hard"].items()} == {
        "budget": True, "room_rule": None, "room_type": None, "cuisine": None,
        "transportation": None}  # fmt: skip
    assert {k: v["passed"] for k, v in results[1]["hard"].items()} == {
        "budget": True, "room_rule": True, "room_type": None, "cuisine": None,
        "transportation": None}  # fmt: skip
    assert {k: v["passed"] for k, v in results[2]["hard"].items()} == {
        "budget": True, "room_rule": None, "room_type": True, "cuisine": True,
        "transportation": False}  # fmt: skip


def test_costs_match_the_script(scored):
    queries, db, _ = scored
    read = read_submission([json.dumps({"idx": i, "query": "q", "plan": p})
                            for i, p in enumerate((EASY, MEDIUM, HARD_PLAN), 1)])  # fmt: skip
    plans = [s.plan for s in read.submissions]
    assert [total_cost(q, p, db) for q, p in zip(queries[:3], plans, strict=True)] == [
        1359, 672, 5047]  # fmt: skip


def test_metrics_match_the_script(scored):
    _, _, report = scored
    assert report["metrics"]["overall"] == {
        "queries": 5,
        "delivery_rate": 4 / 5,
        # True verdicts over 8 per query: 8 + 6 + 7 + 6 + 0
        "commonsense_micro": 27 / 40,
        # eval.py skips a plan whose hard constraints were not checked (idx 4) before counting
        "commonsense_macro": 1 / 5,
        # True hard verdicts (1 + 2 + 3) over budgets (5) + the medium house rule + the hard
        # query's cuisine, room type and transportation
        "hard_micro": 6 / 9,
        "hard_macro": 2 / 5,
        "final_pass_rate": 1 / 5,
    }


def test_per_constraint_counts_match_the_script(scored):
    _, _, report = scored
    counts = report["constraints"]
    assert counts["non_conflicting_transportation"] == {"passed": 2, "total": 5}
    assert counts["complete_information"] == {"passed": 3, "total": 5}
    assert counts["reasonable_city_route"] == {"passed": 3, "total": 5}
    assert counts["within_sandbox"] == {"passed": 4, "total": 5}
    assert counts["budget"] == {"passed": 3, "total": 5}
    assert counts["room_rule"] == {"passed": 1, "total": 1}
    assert counts["transportation"] == {"passed": 0, "total": 1}


def _verdicts(query, days, db):
    read = read_submission([json.dumps({"idx": query.idx, "query": "q", "plan": days})])
    result = evaluate_plan(query, read.submissions[0].plan, db)
    return {k: v.passed for k, v in result.commonsense.items()}, result


def test_no_info_days_and_transportation_on_day_one(scored):
    queries, db, _ = scored
    easy = queries[0]
    # a day marked "You don't need to fill in ..." is not a day of the plan
    verdicts, result = _verdicts(easy, [*EASY[:2], day(3, NO_INFO)], db)
    assert verdicts["complete_information"] is False and result.hard is None
    # days past query.days are never read
    verdicts, result = _verdicts(easy, [*EASY, day(4, ROCK, breakfast="Ghost, Nowhere")], db)
    assert all(verdicts.values()) and result.final_pass
    # '-' transportation on day 1 fails Non-conf. Transportation (and Complete Information,
    # the first day being a leg)
    no_leg = [dict(EASY[0], transportation="-"), *EASY[1:]]
    verdicts, _ = _verdicts(easy, no_leg, db)
    assert verdicts["non_conflicting_transportation"] is False
    assert verdicts["complete_information"] is False
    assert verdicts["within_sandbox"] is True


def test_sandbox_readings_on_the_database(scored):
    queries, db, _ = scored
    easy, medium = queries[0], queries[1]
    # a name is matched by containment within the exact city
    verdicts, _ = _verdicts(easy, [EASY[0], dict(EASY[1], breakfast=f"Flying, {ROCK}"),
                                   EASY[2]], db)  # fmt: skip
    assert verdicts["within_sandbox"] is True
    verdicts, _ = _verdicts(easy, [EASY[0], dict(EASY[1], breakfast=f"Flying Mango, {CHI}"),
                                   EASY[2]], db)  # fmt: skip
    assert verdicts["within_sandbox"] is False
    # a flight number off its route is not in the sandbox
    wrong = dict(EASY[2], transportation=f"Flight Number: F3573659, from {ROCK} to {STP}")
    verdicts, _ = _verdicts(easy, [*EASY[:2], wrong], db)
    assert verdicts["within_sandbox"] is False
    # a drive taking a day or more has no cost: Chicago -> St. Petersburg by taxi fails
    back = day(3, f"from {CHI} to {ROCK}", f"Taxi, from {CHI} to {STP}")
    verdicts, _ = _verdicts(medium, [*MEDIUM[:2], back], db)
    assert verdicts["within_sandbox"] is False
    # the 3BDR (minimum 2 nights) for one night: Minimum Nights Stay fails
    one_night = [dict(EASY[0], accommodation=SPACIOUS), EASY[1], EASY[2]]
    verdicts, _ = _verdicts(easy, one_night, db)
    assert verdicts["valid_accommodation"] is False


def test_cuisine_and_room_type_on_the_database(scored):
    queries, db, _ = scored
    hard = queries[2]
    read = read_submission([json.dumps({"idx": 3, "query": "q", "plan": HARD_PLAN})])
    plan = read.submissions[0].plan

    def local(**kw):
        base = {"house rule": None, "cuisine": None, "room type": None, "transportation": None}
        return hard.model_copy(update={"local_constraint": LocalConstraint(**{**base, **kw})})

    # "Italian" is served (Pizza Corner), "Mexican" nowhere
    assert HARD["cuisine"].check(local(cuisine=["Italian", "Chinese"]), plan, db).passed is True
    assert HARD["cuisine"].check(local(cuisine=["Mexican"]), plan, db).passed is False
    # the lofts and the 3BDR are entire homes: "not shared room" passes, "private room" fails
    assert HARD["room_type"].check(local(**{"room type": "not shared room"}), plan,
                                   db).passed is True  # fmt: skip
    assert HARD["room_type"].check(local(**{"room type": "private room"}), plan,
                                   db).passed is False  # fmt: skip
    # the 3BDR says "No smoking", the loft "No pets"
    assert HARD["room_rule"].check(local(**{"house rule": "smoking"}), plan, db).passed is False
    assert HARD["room_rule"].check(local(**{"house rule": "pets"}), plan, db).passed is False
    assert HARD["room_rule"].check(local(**{"house rule": "visitors"}), plan, db).passed is True
    # "no flight" fails on the flights
    assert HARD["transportation"].check(local(transportation="no flight"), plan,
                                        db).passed is False  # fmt: skip
    assert len(COMMONSENSE) == 8
