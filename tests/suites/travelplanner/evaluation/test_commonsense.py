"""Each commonsense constraint on a passing and a failing plan, and the script's quirks."""

import pytest

from tests.suites.travelplanner.evaluation.conftest import MB, make_query, tweak
from travelgym.suites.travelplanner.evaluation import COMMONSENSE
from travelgym.suites.travelplanner.evaluation.commonsense import valid_city_sequence
from travelgym.suites.travelplanner.records import DayPlan


def verdict(cid, query, plan, sandbox):
    return COMMONSENSE[cid].check(query, plan, sandbox)


def test_the_good_plan_passes_all_eight(query, plan, sandbox):
    assert len(COMMONSENSE) == 8
    for cid in COMMONSENSE:
        assert verdict(cid, query, plan, sandbox).passed is True, cid


def test_each_constraint_has_a_sentence_and_script_key():
    for constraint in COMMONSENSE.values():
        assert constraint.description.endswith(".") and constraint.script_key


@pytest.mark.parametrize("day, fields", [
    (2, {"lunch": f"Ghost Grill, {MB}"}),
    (2, {"lunch": "Nagai, Boston"}),  # the name exists, in another city
    (1, {"transportation": f"Flight Number: F9, from Boston to {MB}"}),
    (1, {"transportation": "Flight Number: F2, from Boston to Myrtle Beach"}),  # F2 flies back
    (1, {"transportation": "Flight Number: F1"}),  # no leg in either field... current city has one
    (3, {"transportation": f"Taxi, from {MB} to Boston"}),  # the matrix has no cost for it
    (2, {"attraction": f"State Park, {MB};Ghost Tower, {MB};"}),
    (2, {"accommodation": f"Ghost Inn, {MB}"}),
    (2, {"breakfast": "no comma"}),
])  # fmt: skip
def test_within_sandbox_fails(query, plan, sandbox, day, fields):
    result = verdict("within_sandbox", query, tweak(plan, day, **fields), sandbox)
    if fields.get("transportation") == "Flight Number: F1":
        # the leg falls back on the current city's "from Boston to Myrtle Beach": found
        assert result.passed is True
    else:
        assert result.passed is False and "day" in result.reason


def test_within_sandbox_reads_names_by_substring_and_drives(query, plan, sandbox):
    plan = tweak(plan, 2, lunch=f"Pizza, {MB}")  # contained in "Pizza Hut"
    plan = tweak(plan, 1, transportation=f"Self-driving, from Boston to {MB}, cost: 50")
    plan = tweak(plan, 3, transportation=f"Self-driving, from {MB} to Boston")
    assert verdict("within_sandbox", query, plan, sandbox).passed is True
    # an attraction after the last ';' is never read
    unread = tweak(plan, 2, attraction=f"State Park, {MB};Ghost Tower, {MB}")
    assert verdict("within_sandbox", query, unread, sandbox).passed is True


@pytest.mark.parametrize("change, reason", [
    (lambda p: p[:2], "3 days"),
    (lambda p: tweak(p, 2, attraction="-"), "no attraction"),
    (lambda p: tweak(p, 1, accommodation="-"), "no accommodation"),
    (lambda p: tweak(p, 2, dinner="-"), "meal"),
    (lambda p: tweak(p, 3, transportation="-"), "without transportation"),
    (lambda p: tweak(p, 1, current_city=f"from Denver to {MB}"), "first day"),
    (lambda p: tweak(p, 2, current_city="Charleston"), "visit 1 cities"),
    (lambda p: p[:2] + [DayPlan.model_validate({"days": 3, "current_city": f"from {MB} to Boston",
                                                "transportation": "Flight Number: F2"})],
     "no breakfast field"),
])  # fmt: skip
def test_complete_information_fails(query, plan, sandbox, change, reason):
    result = verdict("complete_information", query, change(plan), sandbox)
    assert result.passed is False and reason in result.reason


def test_complete_information_counts_days_and_information(query, plan, sandbox):
    # days past the trip's end do not count, a longer plan is read up to the query's days
    extra = plan + [DayPlan(days=4, current_city="Mars")]
    assert verdict("complete_information", query, extra, sandbox).passed is True
    # a day marked with the script's "no information" text is not a day
    marked = tweak(plan, 3, current_city="You don't need to fill in the information for this "
                   "or later days.")  # fmt: skip
    assert verdict("complete_information", query, marked, sandbox).passed is False
    # travel days need no meals or attractions. Counted, every present key with something in
    # it: days 1-2 hold current city, transportation, accommodation, day 3 the first two:
    # 8 of 6 × 3 = 18 is under half (with the day numbers, 11 of 18 would pass)
    sparse = [
        DayPlan(
            days=1,
            current_city=f"from Boston to {MB}",
            transportation="Taxi",
            accommodation="Beach House, Myrtle Beach",
        ),
        DayPlan(
            days=2,
            current_city=f"from {MB} to Boston",
            transportation="Taxi",
            accommodation="Beach House, Myrtle Beach",
        ),
        DayPlan(days=3, current_city="from Boston to Boston", transportation="Taxi"),
    ]
    sparse = [d.model_copy(update={f: "-" for f in ("breakfast", "attraction", "lunch",
                                                    "dinner", "accommodation")} | {
        "accommodation": d.accommodation}) for d in sparse]  # fmt: skip
    assert verdict("complete_information", query, sparse, sandbox).passed is True
    for day in sparse:
        day.model_fields_set.discard("days")  # as a submission line without a day number
    result = verdict("complete_information", query, sparse, sandbox)
    assert result.passed is False and "half" in result.reason  # fmt: skip


def test_within_current_city(query, plan, sandbox):
    wrong_stay = tweak(plan, 1, accommodation="Boston Diner Inn, Boston")
    assert verdict("within_current_city", query, wrong_stay, sandbox).passed is False
    wrong_leg = tweak(plan, 1, transportation="Flight Number: F3, from Boston to Charleston")
    assert verdict("within_current_city", query, wrong_leg, sandbox).passed is False
    wrong_meal = tweak(plan, 1, lunch="Lucky Star, Charleston")
    assert verdict("within_current_city", query, wrong_meal, sandbox).passed is False


def test_within_current_city_reads_a_plain_day_character_by_character(query, plan, sandbox):
    # "Boston Diner, Boston" shares a letter with "Myrtle Beach": the script passes it
    elsewhere = tweak(plan, 2, lunch="Boston Diner, Boston")
    assert verdict("within_current_city", query, elsewhere, sandbox).passed is True
    # the stay is tested for the city's last character only ("h")
    no_h = tweak(plan, 2, accommodation="Loft, Dallas")
    assert verdict("within_current_city", query, no_h, sandbox).passed is False


def test_reasonable_city_route(query, plan, sandbox):
    open_trip = tweak(plan, 3, current_city=f"from {MB} to Charleston")
    assert "closed circle" in verdict("reasonable_city_route", query, open_trip, sandbox).reason
    wrong_start = tweak(plan, 1, current_city=f"from Columbia to {MB}")
    assert verdict("reasonable_city_route", query, wrong_start, sandbox).passed is False
    unknown = [
        d.model_copy(update={"current_city": d.current_city.replace(MB, "Atlantis")}) for d in plan
    ]
    assert "not a valid city" in verdict("reasonable_city_route", query, unknown, sandbox).reason
    # a one-entry visit in the middle ("from A to B" then "from B to C" leaves B once)
    hop = tweak(plan, 2, current_city=f"from {MB} to Charleston")
    hop = tweak(hop, 3, current_city="from Charleston to Boston")
    assert verdict("reasonable_city_route", query, hop, sandbox).passed is True  # runs of 2
    hop = tweak(hop, 2, current_city="Charleston")
    assert verdict("reasonable_city_route", query, hop, sandbox).passed is False


def test_reasonable_city_route_keeps_long_trips_in_the_state(plan, sandbox):
    five = make_query(level="medium").model_copy(update={"days": 5, "dest": "South Carolina"})
    days = [
        plan[0],
        plan[1],
        plan[1].model_copy(update={"days": 3}),
        DayPlan(days=4, current_city=f"from {MB} to Columbia"),
        DayPlan(days=5, current_city="from Columbia to Boston"),
    ]
    assert verdict("reasonable_city_route", five, days, sandbox).passed is True
    other = five.model_copy(update={"dest": "Georgia"})
    assert "not in Georgia" in verdict("reasonable_city_route", other, days, sandbox).reason


def test_valid_city_sequence():
    assert valid_city_sequence(["A", "B", "B", "A"])
    assert valid_city_sequence(["A", "B", "B", "C", "C", "A"])
    assert not valid_city_sequence(["A", "A"])
    assert not valid_city_sequence(["A", "B", "A"])
    assert not valid_city_sequence(["A", "B", "B", "C", "C", "B", "B", "A"])


def test_diverse_restaurants_and_attractions(query, plan, sandbox):
    again = tweak(plan, 2, dinner=f"Nagai, {MB}")
    assert verdict("diverse_restaurants", query, again, sandbox).passed is False
    again = tweak(plan, 2, attraction=f"SkyWheel Myrtle Beach, {MB};State Park, {MB};")
    assert verdict("diverse_attractions", query, again, sandbox).passed is False
    # compared as written: a leading space makes a different attraction
    spaced = tweak(plan, 2, attraction=f"State Park, {MB}; SkyWheel Myrtle Beach, {MB};")
    assert verdict("diverse_attractions", query, spaced, sandbox).passed is True


def test_non_conflicting_transportation(query, plan, sandbox):
    mixed = tweak(plan, 3, transportation=f"Self-driving, from {MB} to Boston")
    assert verdict("non_conflicting_transportation", query, mixed, sandbox).passed is False
    taxi_drive = tweak(mixed, 1, transportation=f"Taxi, from Boston to {MB}")
    assert verdict("non_conflicting_transportation", query, taxi_drive, sandbox).passed is False
    flight_taxi = tweak(plan, 3, transportation=f"Taxi, from {MB} to Boston")
    assert verdict("non_conflicting_transportation", query, flight_taxi, sandbox).passed is True
    no_start = tweak(plan, 1, transportation="-")
    assert "day 1" in verdict("non_conflicting_transportation", query, no_start, sandbox).reason


def test_valid_accommodation_minimum_nights(query, plan, sandbox):
    one_night = tweak(plan, 2, accommodation=f"Beach House, {MB}")  # Cozy Room: 1 of 2 nights
    assert verdict("valid_accommodation", query, one_night, sandbox).passed is False
    loft = tweak(tweak(plan, 1, accommodation=f"Long Stay Loft Annex, {MB}"), 2,
                 accommodation=f"Long Stay Loft Annex, {MB}")  # fmt: skip
    assert "30 nights" in verdict("valid_accommodation", query, loft, sandbox).reason
    # "Long Stay Loft" is contained in two records' names: the script checks no such stay
    loft = tweak(tweak(plan, 1, accommodation=f"Long Stay Loft, {MB}"), 2,
                 accommodation=f"Long Stay Loft, {MB}")  # fmt: skip
    assert verdict("valid_accommodation", query, loft, sandbox).passed is True
    missing = plan[:2] + [DayPlan.model_validate({"days": 3, "current_city": "Boston"})]
    assert verdict("valid_accommodation", query, missing, sandbox).passed is False
