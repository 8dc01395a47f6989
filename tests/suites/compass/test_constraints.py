"""Constraint kinds: JSON round-trip, sentences, and SQL filter == checker on real packages."""

from __future__ import annotations

import datetime as dt

import pytest

from travelgym.db import connect_readonly
from travelgym.suites.compass import constraints as C
from travelgym.suites.compass.facts import PlanFacts
from travelgym.suites.compass.objectives import FeatureCount, SingleMetric
from travelgym.suites.compass.solver import query_flights, query_hotels
from travelgym.suites.compass.tasks import Persona, Task

D = dt.date
PERSONA = Persona(revelation_speed="fast", reveal_probability=0.9, trust="trusting",
                  reliability="reliable", style=9)  # fmt: skip
EXAMPLES = [
    C.Park(park_ids=["zion", "brca"]),
    C.StayDates(check_in=D(2025, 8, 8), check_out=D(2025, 8, 10)),
    C.WeekendStay(),
    C.DateWindow(earliest_check_in=D(2025, 8, 4), latest_check_out=D(2025, 8, 12), min_nights=2, max_nights=3),
    C.Travellers(count=4), C.Rooms(count=2), C.Budget(max_total=2400.0),
    C.MaxNightlyPrice(amount=250.0), C.MinStarRating(value=3.0), C.MinReviewScore(value=7.5),
    C.MaxDistance(value=20.0), C.HotelAmenity(amenity="is_pet_friendly"),
    C.RoomFeature(feature="has_kitchenette"), C.BedType(bed_type="king"),
    C.RatePolicy(policy="free_cancellation"), C.TripCoherence(),
    C.OriginCity(city="Chicago", airport="ORD"), C.DirectFlights(),
    C.Airline(code="UA", name="United Airlines"), C.BookingClass(booking_class="economy"),
    C.FlightTimeWindow(leg="outbound", event="departure", earliest="06:00", latest="12:00"),
    C.FlightTimeWindow(leg="return", event="arrival", earliest="15:00", latest="23:59"),
    C.MaxFlightDuration(minutes=300), C.MaxAirportDrive(hours=3.0),
    C.PermitRequired(permit_ids=[4], names=["Angels Landing Day Hike"], days=1),
]  # fmt: skip


def test_every_kind_has_an_example():
    union_kinds = {m.model_fields["kind"].default for m in C.Constraint.__origin__.__args__}
    assert {c.kind for c in EXAMPLES} == union_kinds


def test_json_round_trip_is_exact():
    dumped = C.CONSTRAINT_ADAPTER.dump_json(EXAMPLES)
    again = C.CONSTRAINT_ADAPTER.validate_json(dumped)
    assert again == EXAMPLES
    assert C.CONSTRAINT_ADAPTER.dump_json(again) == dumped
    with pytest.raises(ValueError):
        C.CONSTRAINT_ADAPTER.validate_python([{"kind": "teleport"}])
    with pytest.raises(ValueError):
        C.CONSTRAINT_ADAPTER.validate_python([{"kind": "rooms", "count": 0}])


def test_sentences_are_distinct_plain_language():
    sentences = [c.sentence() for c in EXAMPLES]
    assert len(set(sentences)) == len(sentences)
    for s in sentences:
        assert s.endswith(".") and "_" not in s.replace("has_", ""), s
    assert "Friday" in C.StayDates(check_in=D(2025, 8, 8), check_out=D(2025, 8, 10)).sentence()


def test_date_patterns():
    assert C.WeekendStay().date_pairs() == [(1, 3), (8, 10), (15, 17), (22, 24), (29, 31)]
    window = C.DateWindow(earliest_check_in=D(2025, 8, 4), latest_check_out=D(2025, 8, 8),
                          min_nights=2, max_nights=3)  # fmt: skip
    assert window.date_pairs() == [(4, 6), (4, 7), (5, 7), (5, 8), (6, 8)]


def _task(constraints, level=1):
    base = [C.Park(park_ids=["zion"]),
            C.DateWindow(earliest_check_in=D(2025, 8, 6), latest_check_out=D(2025, 8, 12),
                         min_nights=2, max_nights=3),
            C.Travellers(count=3), C.Rooms(count=2)]  # fmt: skip
    if level >= 2:
        base += [C.TripCoherence(), C.OriginCity(city="Dallas", airport="DFW")]
    return Task(task_id="t", level=level, objective=SingleMetric(metric="total_cost"),
                constraints=base + constraints, persona=PERSONA, story="s")  # fmt: skip


HOTEL_KINDS = [c for c in EXAMPLES if c.component == "hotel" and c.kind not in
               ("park", "stay_dates", "weekend_stay", "date_window", "travellers", "rooms")]  # fmt: skip
FLIGHT_KINDS = [c for c in EXAMPLES if c.component == "flight" and c.kind != "origin_city"]


@pytest.mark.parametrize("constraint", HOTEL_KINDS, ids=lambda c: c.kind)
def test_hotel_sql_filter_agrees_with_checker(compass_db, constraint):
    """Packages the SQL keeps are exactly the unfiltered packages the checker accepts."""
    conn = connect_readonly(compass_db)
    unfiltered, filtered = _task([]), _task([constraint])
    spec = C.TaskSpec(3, 2)
    every = query_hotels(conn, unfiltered, spec)
    ids_all = _hotel_ids(every)
    ids_kept = set(_hotel_ids(query_hotels(conn, filtered, spec)))
    rows = _rows(every)
    accepted = {i for i, facts in zip(ids_all, rows, strict=True)
                if constraint.check(PlanFacts(facts, None, None, 3)) is None}  # fmt: skip
    assert ids_kept == accepted
    assert 0 < len(ids_kept) < len(ids_all)


@pytest.mark.parametrize("constraint", FLIGHT_KINDS, ids=lambda c: c.kind + getattr(c, "leg", ""))
def test_flight_sql_filter_agrees_with_checker(compass_db, constraint):
    conn = connect_readonly(compass_db)
    spec = C.TaskSpec(3, 2)
    every = query_flights(conn, _task([], level=2), spec)
    kept = set(_flight_ids(query_flights(conn, _task([constraint], level=2), spec)))
    accepted = {i for i, facts in zip(_flight_ids(every), _rows(every), strict=True)
                if constraint.check(PlanFacts(None, facts, None, 3)) is None}  # fmt: skip
    assert kept == accepted
    assert 0 < len(kept) < len(_flight_ids(every))


def _rows(cols):
    n = len(next(iter(cols.values())))
    return [
        {k: (v[i].item() if hasattr(v[i], "item") else v[i]) for k, v in cols.items()}
        for i in range(n)
    ]


def _hotel_ids(cols):
    return [
        f"{c}_{s}_{e}"
        for c, s, e in zip(cols["config_id"], cols["start"], cols["end"], strict=True)
    ]


def _flight_ids(cols):
    return [
        f"{t}_{s}_{e}"
        for t, s, e in zip(cols["template_id"], cols["start"], cols["end"], strict=True)
    ]


def test_feature_count_counts_satisfied_features():
    objective = FeatureCount(features=["pool", "king_bed", "direct_flights"])
    hotel = {"has_pool": True, "bed_type": "queen"}
    flight = {"direct": True}
    assert objective.hotel_utility(hotel, 2) == 1
    assert objective.flight_utility(flight, 2) == 1
    assert objective.satisfied(PlanFacts(hotel, flight, None, 2)) == ["pool", "direct_flights"]
