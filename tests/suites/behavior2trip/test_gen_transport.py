"""Train seats and fares of the generated database: seats follow the train type, fares differ
by train, seat and distance, and a plan's seat (real name or Table 9 class) resolves to one."""

from __future__ import annotations

import json
from collections import defaultdict

import numpy as np
import pytest

from travelgym.db import connect_readonly
from travelgym.geo import haversine_km
from travelgym.suites.behavior2trip import vocab
from travelgym.suites.behavior2trip.behaviour_pool import PoiCatalog
from travelgym.suites.behavior2trip.checks.data import PlanDB
from travelgym.suites.behavior2trip.checks.transport import resolve_leg, seat_class
from travelgym.suites.behavior2trip.plan import IntercityLeg
from travelgym.suites.behavior2trip.preferences import MODE_SEATS


@pytest.fixture(scope="module")
def trains(trips_db) -> list[dict]:
    conn = connect_readonly(trips_db)
    conn.row_factory = lambda cur, row: {d[0]: v for d, v in zip(cur.description, row, strict=True)}
    rows = conn.execute(
        "SELECT t.*, a.lat AS lat_a, a.lon AS lon_a, b.lat AS lat_b, b.lon AS lon_b FROM trains t"
        " JOIN cities a ON a.city_id = t.dep_city_id JOIN cities b ON b.city_id = t.arr_city_id"
    ).fetchall()
    conn.close()
    for r in rows:
        r["seats"] = json.loads(r["seats"])
        r["km"] = haversine_km(r["lat_a"], r["lon_a"], r["lat_b"], r["lon_b"])
    return rows


@pytest.fixture(scope="module")
def pdb(trips_db):
    db = PlanDB.open(trips_db)
    yield db
    db.conn.close()


def _spearman(x: list[float], y: list[float]) -> float:
    rx, ry = np.argsort(np.argsort(x)), np.argsort(np.argsort(y))
    return float(np.corrcoef(rx, ry)[0, 1])


def test_seats_follow_the_train_type(trains):
    for t in trains:
        types = [s["seat_type"] for s in t["seats"]]
        allowed = (vocab.HIGH_SPEED_SEAT_TYPES if t["train_number"][0] in "GDC"
                   else vocab.REGULAR_SEAT_TYPES)  # fmt: skip
        assert set(types) <= set(allowed), t["train_number"]
        assert t["train_type"] == ("High-speed Rail" if allowed[0] == "Second Class Seat"
                                   else "Regular Train")  # fmt: skip
        assert all(s["seat_class"] == vocab.TRAIN_SEAT_TYPES[s["seat_type"]] for s in t["seats"])
        assert len(set(types)) == len(types) and "Second Class Seat" in {
            s["seat_class"] for s in t["seats"]
        }
    sold = {s["seat_type"] for t in trains for s in t["seats"]}
    assert sold == set(vocab.TRAIN_SEAT_TYPES)  # every seat type is sold somewhere


def test_fare_columns_summarise_the_seats(trains):
    for t in trains:
        fares = [s["fare"] for s in t["seats"]]
        assert fares == sorted(fares) and t["fare"] == fares[0]
        by = defaultdict(list)
        for s in t["seats"]:
            by[s["seat_class"]].append(s["fare"])
        assert t["fare_second_class"] == min(by["Second Class Seat"])
        assert t["fare_first_class"] == (min(by["First Class Seat"]) if by["First Class Seat"]
                                         else None)  # fmt: skip
        # first class is dearer than second class on the same train, sleepers than seats
        assert not by["First Class Seat"] or min(by["First Class Seat"]) > max(
            by["Second Class Seat"]
        )
        assert all(f * 2 == round(f * 2) for f in fares)  # whole or half yuan


def test_no_two_trains_of_a_route_share_a_fare_on_a_seat(trains):
    fares = defaultdict(list)
    for t in trains:
        for s in t["seats"]:
            fares[(t["dep_city_id"], t["arr_city_id"], s["seat_type"])].append(s["fare"])
    shared = [k for k, v in fares.items() if len(v) != len(set(v))]
    assert shared == []
    assert sum(len(v) > 1 for v in fares.values()) > 100  # many routes have several trains


def test_fares_grow_with_distance_per_train_type_and_seat(trains):
    series = defaultdict(lambda: ([], []))
    for t in trains:
        for s in t["seats"]:
            km, fare = series[(t["train_number"][0], s["seat_type"])]
            km.append(t["km"])
            fare.append(s["fare"])
    checked = 0
    for key, (km, fare) in series.items():
        if len(km) >= 30:
            assert _spearman(km, fare) > 0.95, key
            checked += 1
    assert checked >= 10


def test_fares_per_km_are_plausible_for_china(trains):
    per_km = defaultdict(list)
    for t in trains:
        for s in t["seats"]:
            per_km[(t["train_number"][0], s["seat_type"])].append(s["fare"] / t["km"])
    med = {k: float(np.median(v)) for k, v in per_km.items()}
    assert 0.45 <= med[("G", "Second Class Seat")] <= 0.55  # CNY per great-circle km
    assert 1.5 <= med[("G", "First Class Seat")] / med[("G", "Second Class Seat")] <= 1.7
    for letter in "KTZ":
        assert 0.15 <= med[(letter, "Hard Seat")] <= 0.2
        assert (
            med[(letter, "Hard Seat")]
            < med[(letter, "Hard Sleeper")]
            < med[(letter, "Soft Sleeper")]
        )
    # faster is dearer per km
    assert med[("G", "Second Class Seat")] > med[("D", "Second Class Seat")]
    assert med[("D", "Second Class Seat")] > med[("Z", "Hard Seat")] > med[("K", "Hard Seat")]


def test_every_seat_class_a_profile_can_prefer_is_purchasable_on_its_mode(trains, trips_db):
    conn = connect_readonly(trips_db)
    cabins = {c for (c,) in conn.execute("SELECT DISTINCT cabin_class FROM flights")}
    conn.close()
    for mode, seats in MODE_SEATS.items():
        for seat in seats:
            if mode == "Airplane":
                assert seat in cabins
                continue
            routes = {(t["dep_city_id"], t["arr_city_id"]) for t in trains
                      if t["train_type"] == mode}  # fmt: skip
            selling = {(t["dep_city_id"], t["arr_city_id"]) for t in trains
                       if t["train_type"] == mode
                       and seat in {s["seat_class"] for s in t["seats"]}}  # fmt: skip
            # a regular train's "First Class Seat" is its soft sleeper, on most of its routes
            assert len(selling) >= 0.5 * len(routes), (mode, seat)


def test_trajectory_train_pois_are_the_cheapest_seat_of_each_class(trains, trips_db):
    """``<train_number>-2`` / ``-1``: a regular train's hard seat (or hard sleeper) and soft
    sleeper."""
    pois = PoiCatalog.from_database(trips_db).pois
    t = next(t for t in trains if t["train_number"][0] == "K" and t["fare_first_class"])
    second, first = pois[f"{t['train_number']}-2"], pois[f"{t['train_number']}-1"]
    assert (second.level, second.price) == ("Second Class Seat", t["fare_second_class"])
    assert (first.level, first.price) == ("First Class Seat", t["fare_first_class"])


def test_a_plan_names_a_regular_trains_seat_by_its_real_name_or_its_class(trains, pdb):
    t = next(t for t in trains if t["train_number"][0] in "KT"
             and len(t["seats"]) == 3)  # fmt: skip
    fare = {s["seat_type"]: s["fare"] for s in t["seats"]}

    def leg(seat: str | None, price: float | None = None):
        return resolve_leg(pdb, 1, "2025-10-10", IntercityLeg(
            mode="train", number=t["train_number"], from_city=t["dep_city"],
            to_city=t["arr_city"], seat_class=seat, price=price))  # fmt: skip

    for seat in ("Hard Seat", "hard sleeper", "Soft Sleeper"):
        got = leg(seat)
        assert got.problem is None and got.fare == fare[seat.title()]
    assert seat_class("Hard Sleeper", "train") == "Second Class Seat"
    assert seat_class("soft sleeper", "train") == "First Class Seat"
    # a Table 9 class: the seat of that class nearest the stated price, else the cheapest
    assert leg("Second Class Seat").fare == fare["Hard Seat"]
    assert leg("Second Class Seat", fare["Hard Sleeper"] - 3).fare == fare["Hard Sleeper"]
    assert leg("First Class Seat").fare == fare["Soft Sleeper"]
    g = next(t for t in trains if t["train_number"][0] == "G")
    wrong = resolve_leg(pdb, 1, "2025-10-10", IntercityLeg(
        mode="train", number=g["train_number"], seat_class="Hard Sleeper"))  # fmt: skip
    assert f"no Hard Sleeper on {g['train_number']}" in wrong.problem
    right = resolve_leg(pdb, 1, "2025-10-10", IntercityLeg(
        mode="train", number=g["train_number"], seat_class="2nd class"))  # fmt: skip
    assert right.problem is None and right.fare == g["fare_second_class"]
