"""The 32 checks of Table 8: a hand-made valid plan (real rows of the small database) passes all
of them, and for each check a mutation of it fails that check."""

from __future__ import annotations

import copy
import datetime as dt
import json
from collections.abc import Callable

import pytest

from travelgym.db import connect_readonly
from travelgym.suites.behavior2trip import vocab
from travelgym.suites.behavior2trip.checks import (
    C_IDS,
    CHECK_IDS,
    CHECKS,
    UPC_IDS,
    PlanDB,
    run_checks,
)
from travelgym.suites.behavior2trip.checks.format_auth import within_hours
from travelgym.suites.behavior2trip.checks.personalization import star_ok
from travelgym.suites.behavior2trip.checks.transport import resolve_leg, seat_class
from travelgym.suites.behavior2trip.context import Place
from travelgym.suites.behavior2trip.instances import Instance
from travelgym.suites.behavior2trip.instruction import Instruction
from travelgym.suites.behavior2trip.plan import IntercityLeg
from travelgym.suites.behavior2trip.plan_parse import parse_plan
from travelgym.suites.behavior2trip.preferences import (
    AttractionPreferences,
    DiningRequirements,
    HotelPreferences,
    Preferences,
    TransportationPreferences,
)
from travelgym.suites.behavior2trip.profiles import Persona, Profile
from travelgym.suites.behavior2trip.tools.mapguide import city_routes

MODERATE = "Moderate (80-150 CNY/person)"
LOW = "Low (1-3km)"
BUDGET_SLACK = 500


def _rows(conn, sql: str, *params) -> list[dict]:
    return [dict(r) for r in conn.execute(sql, params).fetchall()]


def _nearest(rows: list[dict], ref: dict) -> list[dict]:
    return sorted(rows, key=lambda r: (r["lat"] - ref["lat"]) ** 2 + (r["lon"] - ref["lon"]) ** 2)


def _visit(row: dict, id_col: str, start: str, end: str) -> dict:
    return {"id": row[id_col], "name": row["name"], "start_time": start, "end_time": end,
            "price": row["avg_price"], "description": f"{row['name']} in {row['district']}."}  # fmt: skip


def _leg(f: dict, frm: str, to: str) -> dict:
    return {"mode": "flight", "number": f["flight_number"], "from_city": frm, "to_city": to,
            "departure_time": f["dep_time"], "arrival_time": f["arr_time"],
            "price": f["adult_total"], "seat_class": "Economy Class"}  # fmt: skip


TRIP_SQL = """
SELECT a.dep_city_id AS home, a.arr_city_id AS dest, a.dep_date AS start, b.dep_date AS last,
       a.flight_id AS out_id, b.flight_id AS back_id
  FROM flights a JOIN flights b
    ON b.dep_city_id = a.arr_city_id AND b.arr_city_id = a.dep_city_id
   AND b.dep_date = date(a.dep_date, '+2 day') AND b.cabin_class = 'Economy Class'
   AND b.dep_time BETWEEN '15:30' AND '17:00' AND b.arr_time BETWEEN '15:00' AND '19:20'
 WHERE a.cabin_class = 'Economy Class' AND a.dep_time BETWEEN '08:45' AND '11:00'
   AND a.arr_time BETWEEN '10:30' AND '12:00' AND a.dep_date >= '2025-10-08'
 ORDER BY a.dep_date, a.dep_city_id, a.arr_city_id, a.flight_id, b.flight_id"""
MAIN_SQL = """SELECT * FROM restaurants WHERE city_id = ? AND price_level = ? AND dining_environment = ?
   AND open_time <= '11:00' AND (close_time >= '21:00' OR close_time < '05:00') ORDER BY restaurant_id"""


def _pick(conn, trip: dict) -> dict:
    """The rows of a trip from ``trip["home"]`` to ``trip["dest"]`` (IndexError when the cities
    lack one of them)."""
    q = lambda sql, *p: _rows(conn, sql, *p)  # noqa: E731
    home, dest = trip["home"], trip["dest"]
    hotel = q("SELECT * FROM hotels WHERE city_id = ? AND secondary_category = '5-Star/Luxury' "
              "AND facilities LIKE '%Gym%' ORDER BY hotel_id", dest)[0]  # fmt: skip
    env = max(
        vocab.DINING_ENVIRONMENTS,
        key=lambda e: min(len(q(MAIN_SQL, c, MODERATE, e)) for c in (home, dest)),
    )
    mains = _nearest(q(MAIN_SQL, dest, MODERATE, env), hotel)[:5]
    used = {m["restaurant_id"] for m in mains}
    early = q("SELECT * FROM restaurants WHERE city_id = ? AND open_time <= '08:00' ORDER BY restaurant_id", dest)  # fmt: skip
    sights = q("SELECT * FROM attractions WHERE city_id = ? AND open_time <= '09:00' "
               "AND close_time >= '17:30' ORDER BY attraction_id", dest)  # fmt: skip
    shows = q("SELECT * FROM entertainment WHERE city_id = ? AND open_time <= '15:30' "
              "AND (close_time >= '17:00' OR close_time < '05:00') ORDER BY entertainment_id", dest)  # fmt: skip
    rows = {
        "hotel": hotel, "env": env, "mains": mains,
        "home_dinner": q(MAIN_SQL, home, MODERATE, env)[0],
        "breakfasts": _nearest([r for r in early if r["restaurant_id"] not in used], hotel)[:2],
        "home_breakfast": q("SELECT * FROM restaurants WHERE city_id = ? AND open_time <= '07:30' "
                            "ORDER BY restaurant_id", home)[0],
        "atts": _nearest([a for a in sights if a["walking_level"] == LOW], hotel)[:6],
        "far_walk": next(a for a in _nearest(sights, hotel) if a["walking_level"] == "High (5km+)"),
        "show": _nearest(shows, hotel)[0],
        "gymless_hotel": q("SELECT * FROM hotels WHERE city_id = ? AND facilities NOT LIKE '%Gym%' "
                           "ORDER BY hotel_id", dest)[0],
        "out": q("SELECT * FROM flights WHERE flight_id = ?", trip["out_id"])[0],
        "back": q("SELECT * FROM flights WHERE flight_id = ?", trip["back_id"])[0],
        "weather": {r["date"]: r for r in q("SELECT * FROM weather WHERE city_id = ?", dest)},
        "cities": {r["city_id"]: r for r in q("SELECT * FROM cities")},
    }  # fmt: skip
    if len(mains) < 5 or len(rows["breakfasts"]) < 2 or len(rows["atts"]) < 6:
        raise IndexError("not enough POIs")
    return rows


def _later(hhmm: str, minutes: int, floor: str = "00:00") -> str:
    """``hhmm`` plus ``minutes``, rounded up to 5 minutes, at least ``floor``."""
    h, m = map(int, hhmm.split(":"))
    t = -(-(h * 60 + m + minutes) // 5) * 5
    fh, fm = map(int, floor.split(":"))
    t = max(t, fh * 60 + fm)
    return f"{t // 60:02d}:{t % 60:02d}"


def build_case(db_path) -> tuple[list[dict], Instance, dict]:
    """A 3-day trip for two that passes all 32 checks (the first round trip of the database
    with a morning flight out and an afternoon flight back two days later whose cities have the
    POIs it needs), the hidden instance it answers and the rows it was made of."""
    conn = connect_readonly(db_path)
    try:
        for trip in _rows(conn, TRIP_SQL):
            try:
                rows = _pick(conn, trip)
                break
            except (IndexError, StopIteration):
                continue
        else:
            raise AssertionError("no suitable round trip in the database")
    finally:
        conn.close()
    hotel, mains, atts, weather = rows["hotel"], rows["mains"], rows["atts"], rows["weather"]
    out, back = rows["out"], rows["back"]
    home, dest = rows["cities"][trip["home"]]["name"], rows["cities"][trip["dest"]]["name"]
    info = rows["cities"][trip["dest"]]["description"]
    dates = [
        trip["start"],
        (dt.date.fromisoformat(trip["start"]) + dt.timedelta(days=1)).isoformat(),
        trip["last"],
    ]
    dinner = _later(back["arr_time"], 35, "17:00")

    def wx(date: str) -> str:
        w = weather[date]
        return f"{w['weather']}, {w['min_temp']}-{w['max_temp']} C, air quality {w['air_quality']}"

    R = lambda row, s, e: _visit(row, "restaurant_id", s, e)  # noqa: E731
    A = lambda row, s, e: _visit(row, "attraction_id", s, e)  # noqa: E731
    stay = {"id": hotel["hotel_id"], "name": hotel["name"], "check_in_time": "19:30",
            "price": hotel["avg_price"], "tips": "Ask for a quiet room on a high floor."}  # fmt: skip
    days = [
        {"day": 1, "date": dates[0], "city": f"{home} -> {dest}", "weather": wx(dates[0]),
         "city_info": info, "intercity_transport": [_leg(out, home, dest)],
         "breakfast": R(rows["home_breakfast"], "07:30", "08:15"), "lunch": R(mains[0], "12:30", "13:30"),
         "attractions": [A(atts[0], "14:00", "15:30"), A(atts[1], "16:00", "17:30")],
         "dinner": R(mains[1], "18:00", "19:00"), "accommodation": dict(stay)},
        {"day": 2, "date": dates[1], "city": dest, "weather": wx(dates[1]),
         "breakfast": R(rows["breakfasts"][0], "08:00", "08:45"),
         "attractions": [A(atts[2], "09:30", "11:00"), A(atts[3], "13:00", "15:00")],
         "lunch": R(mains[2], "11:30", "12:30"),
         "entertainment": [_visit(rows["show"], "entertainment_id", "15:30", "17:00")],
         "dinner": R(mains[3], "17:30", "18:30"), "accommodation": dict(stay)},
        {"day": 3, "date": dates[2], "city": f"{dest} -> {home}", "weather": wx(dates[2]),
         "breakfast": R(rows["breakfasts"][1], "08:00", "08:45"),
         "attractions": [A(atts[4], "09:30", "11:00"), A(atts[5], "13:30", "15:00")],
         "lunch": R(mains[4], "11:30", "12:30"),
         "intercity_transport": [_leg(back, dest, home)],
         "dinner": R(rows["home_dinner"], dinner, _later(dinner, 60))},
    ]  # fmt: skip
    places = {r[k]: Place(r["name"], "", None, r["city"], r["lat"], r["lon"])
              for r in [hotel, *mains, rows["home_dinner"], *rows["breakfasts"], rows["home_breakfast"],
                        *atts, rows["show"]]
              for k in r if k.endswith("_id") and k != "city_id"}  # fmt: skip
    for day in days:  # taxi legs between consecutive places of the same city (MapGuide minutes)
        order = sorted([day[m] for m in ("breakfast", "lunch", "dinner")] + day["attractions"]
                       + day.get("entertainment", []), key=lambda v: v["start_time"])  # fmt: skip
        order += [day["accommodation"]] if "accommodation" in day else []
        day["local_transport"] = []
        for a, b in zip(order, order[1:], strict=False):
            pa, pb = places[a["id"]], places[b["id"]]
            if pa.city == pb.city:
                taxi = next(r for r in city_routes(pa, pb)[1] if r["mode"] == "Taxi")
                day["local_transport"].append({"from": a["id"], "to": b["id"], "mode": "Taxi",
                                               "minutes": taxi["minutes"], "cost": taxi["cost"]})  # fmt: skip
    prefs = Preferences(
        hotel_preferences=HotelPreferences(star_requirement=["4-Star/Upscale"],
                                           essential_facilities=["Free WiFi", "Gym"]),
        attraction_preferences=AttractionPreferences(
            preferred_attraction_types=sorted({a["attraction_type"] for a in atts}), walking_tolerance=LOW),
        dining_requirements=DiningRequirements(
            cuisine_preferences=sorted({m["secondary_category"] for m in [*mains, rows["home_dinner"]]}),
            price_level=MODERATE, dining_environment=rows["env"]),
        transportation_preferences=TransportationPreferences(
            intercity_transport="Airplane", intracity_transport="Taxi", seat_class="Economy Class"),
    )  # fmt: skip
    persona = Persona(age=35, education="Bachelor's Degree", occupation="Software Engineer",
                      home_city=home, family_status="Married, no children")  # fmt: skip
    instruction = Instruction(
        text=f"I'm planning a 3-day trip from {home} to {dest}, leaving on {dates[0]}, with my "
             "spouse (2 people in total). Our total budget is 20,000 CNY.",
        departure_city=home, destination_city=dest, start_date=dates[0], end_date=dates[2],
        days=3, companions=1, travellers=2, rooms=1, budget_cny=20000)  # fmt: skip
    profile = Profile(profile_id="p-test", difficulty="hard", persona=persona, preferences=prefs)
    instance = Instance(instance_id="b2t-test-hard-9999", split="test", difficulty="hard",
                        instruction=instruction, trajectory=[], profile=profile)  # fmt: skip
    return days, instance, rows


def answer_of(days: list[dict]) -> str:
    return (
        "I have planned your trip.\n<answer>\n"
        + json.dumps(days, ensure_ascii=False)
        + "\n</answer>"
    )


def _instruction(instance: Instance, **update) -> Instance:
    return instance.model_copy(
        update={"instruction": instance.instruction.model_copy(update=update)}
    )


def _prefs(instance: Instance, section: str, **update) -> Instance:
    prefs = instance.profile.preferences
    value = None if update.get("_drop") else getattr(prefs, section).model_copy(update=update)
    profile = instance.profile.model_copy(
        update={"preferences": prefs.model_copy(update={section: value})}
    )
    return instance.model_copy(update={"profile": profile})


def results(days: list[dict], instance: Instance, pdb: PlanDB) -> dict:
    plan, problems = parse_plan(answer_of(days))
    assert plan is not None, problems
    return {r.id: r for r in run_checks(plan, instance, pdb)}


# --- the valid plan -----------------------------------------------------------------------------


def test_registry_has_table8_checks():
    assert len(CHECKS) == 32 and len(set(CHECK_IDS)) == 32
    assert len(C_IDS) == 22 and len(UPC_IDS) == 10
    counts = {}
    for c in CHECKS:
        counts[c.category] = counts.get(c.category, 0) + 1
        assert c.title and c.rule
    assert counts == {"format": 1, "authenticity": 4, "reasonableness": 15, "personalization": 10,
                      "information": 2}  # fmt: skip


def test_valid_plan_passes_every_check(case, pdb):
    days, instance, _ = case
    got = results(days, instance, pdb)
    assert list(got) == list(CHECK_IDS)
    failed = {k: r.reason for k, r in got.items() if r.passed is not True}
    assert not failed


# --- one failing mutation per check -------------------------------------------------------------

Mutation = Callable[[list[dict], Instance, dict], tuple[list[dict], Instance]]


def _day(n: int):
    def wrap(fn):
        def mutate(days, instance, rows):
            fn(days[n - 1], rows)
            return days, instance

        return mutate

    return wrap


def _set(n: int, path: str, value):
    """Set ``days[n-1][a][b]...`` (list indices as digits) to ``value``."""

    def mutate(days, instance, rows):
        node = days[n - 1]
        *parents, last = path.split(".")
        for p in parents:
            node = node[int(p)] if p.isdigit() else node[p]
        node[int(last) if last.isdigit() else last] = value
        return days, instance

    return mutate


def _both(first: Mutation, second: Mutation) -> Mutation:
    def mutate(days, instance, rows):
        return second(*first(days, instance, rows), rows)

    return mutate


def _profile(section: str, **update) -> Mutation:
    return lambda days, instance, rows: (days, _prefs(instance, section, **update))


def _unused(values: tuple[str, ...], used: set[str]) -> str:
    return next(v for v in values if v not in used)


@_day(2)
def _same_lunch(day, rows):
    day["lunch"] = dict(
        day["lunch"], id=rows["mains"][0]["restaurant_id"], name=rows["mains"][0]["name"]
    )


@_day(2)
def _five_attractions(day, rows):
    day["attractions"] = [dict(a, start_time="09:30", end_time="10:00") for a in rows["atts"][:5]]
    for a, row in zip(day["attractions"], rows["atts"], strict=False):
        a.update(id=row["attraction_id"], name=row["name"])


@_day(2)
def _far_walk(day, rows):
    row = rows["far_walk"]
    day["attractions"][0].update(id=row["attraction_id"], name=row["name"])


def _strip_descriptions(days, instance, rows):
    for day in days:
        for value in day.values():
            for item in value if isinstance(value, list) else [value]:
                if isinstance(item, dict):
                    item.pop("description", None)
                    item.pop("tips", None)
    return days, instance


def _budget(days, instance, rows):
    return days, _instruction(
        instance, budget_cny=instance.instruction.budget_cny - BUDGET_SLACK - 1
    )


def _drop(n: int, key: str) -> Mutation:
    def mutate(days, instance, rows):
        days[n - 1].pop(key)
        return days, instance

    return mutate


FAILING: dict[str, Mutation] = {
    "format.json": lambda days, instance, rows: (days[:2], instance),
    "auth.poi": _set(2, "lunch.id", "R99999"),
    "auth.major_transport": _set(1, "intercity_transport.0.number", "ZZ9999"),
    "auth.local_transport": _set(2, "local_transport.0.minutes", 95),
    "auth.business_hours": _set(1, "breakfast.start_time", "05:30"),
    "reason.complete_meals": _drop(2, "dinner"),
    "reason.non_duplicate_restaurants": _same_lunch,
    "reason.meal_times": _set(2, "lunch.start_time", "15:00"),
    "reason.daily_accommodation": _drop(2, "accommodation"),
    "reason.accommodation_time": _set(1, "accommodation.check_in_time", "15:00"),
    "reason.no_midnight_travel": _set(3, "intercity_transport.0.arrival_time", "23:40"),
    "reason.no_attractions_after_late_arrival": _both(
        _set(3, "intercity_transport.0.arrival_time", "18:30"),
        _set(3, "attractions.1", {"id": "x", "name": "x", "start_time": "19:00"}),
    ),  # fmt: skip
    "reason.local_transport_limit": lambda days, instance, rows: (
        [
            dict(d, local_transport=[dict(x, minutes=45) for x in d["local_transport"]])
            for d in days
        ],
        instance,
    ),  # fmt: skip
    "reason.weather_city_info": _drop(2, "weather"),
    "reason.at_least_one_attraction": _set(2, "attractions", []),
    "reason.attraction_limit": _five_attractions,
    "reason.no_time_conflicts": _set(2, "lunch.start_time", "10:45"),
    "reason.time_range": _set(2, "attractions.0.start_time", "08:30"),
    "reason.inter_attraction_transport": _set(1, "local_transport.1.minutes", 75),
    "reason.no_long_gaps": lambda days, instance, rows: (
        [days[0], dict(days[1], attractions=days[1]["attractions"][:1], entertainment=[]), days[2]],
        instance,
    ),  # fmt: skip
    "pref.hotel_star": _profile("hotel_preferences", star_requirement=["City Homestay"]),
    "pref.hotel_amenities": lambda days, instance, rows: _set(
        1, "accommodation", {"id": rows["gymless_hotel"]["hotel_id"], "check_in_time": "19:30"}
    )(days, instance, rows),  # fmt: skip
    "pref.attraction_type": lambda days, instance, rows: (
        days,
        _prefs(
            instance,
            "attraction_preferences",
            preferred_attraction_types=[
                _unused(vocab.ATTRACTION_TYPES, {a["attraction_type"] for a in rows["atts"]})
            ],
        ),
    ),  # fmt: skip
    "pref.walking_tolerance": _far_walk,
    "pref.cuisine": lambda days, instance, rows: (
        days,
        _prefs(
            instance,
            "dining_requirements",
            cuisine_preferences=[
                _unused(
                    ("Seafood", "Buffet", "Barbecue", "Western Food"),
                    instance.profile.preferences.dining_requirements.cuisine_preferences,
                )
            ],
        ),
    ),  # fmt: skip
    "pref.price_level": _profile("dining_requirements", price_level="Luxury (300-500 CNY/person)"),
    "pref.dining_environment": _profile("dining_requirements", dining_environment="Quiet"),
    "pref.transport_mode": _profile(
        "transportation_preferences",
        intercity_transport="High-speed Rail",
        seat_class="Second Class Seat",
    ),  # fmt: skip
    "pref.seat_class": _set(1, "intercity_transport.0.seat_class", "Business Class"),
    "pref.budget": _budget,
    "info.sufficiency": _set(2, "lunch.price", None),
    "info.richness": _strip_descriptions,
}


def test_every_check_has_a_failing_mutation():
    assert set(FAILING) == set(CHECK_IDS)


@pytest.mark.parametrize("check_id", CHECK_IDS)
def test_check_passes_then_fails(case, pdb, check_id):
    days, instance, rows = case
    assert results(copy.deepcopy(days), instance, pdb)[check_id].passed is True
    bad_days, bad_instance = FAILING[check_id](copy.deepcopy(days), instance, rows)
    result = results(bad_days, bad_instance, pdb)[check_id]
    assert result.passed is False, result.reason
    assert result.reason and "check error" not in result.reason


# --- applicability, undelivered plans, variants ---------------------------------------------


def test_preferences_absent_make_upc_checks_not_applicable(case, pdb):
    days, instance, _ = case
    bare = _prefs(
        _prefs(instance, "hotel_preferences", _drop=True), "dining_requirements", _drop=True
    )
    got = results(copy.deepcopy(days), bare, pdb)
    for cid in ("pref.hotel_star", "pref.hotel_amenities", "pref.cuisine", "pref.price_level",
                "pref.dining_environment"):  # fmt: skip
        assert got[cid].passed is None and got[cid].reason.startswith("no ")
    assert got["pref.attraction_type"].passed is True
    no_facilities = _prefs(instance, "hotel_preferences", essential_facilities=[])
    assert results(copy.deepcopy(days), no_facilities, pdb)["pref.hotel_amenities"].passed is None
    odd_seat = _prefs(instance, "transportation_preferences", seat_class="Second Class Seat")
    got = results(copy.deepcopy(days), odd_seat, pdb)
    assert (
        got["pref.seat_class"].passed is None and "does not exist" in got["pref.seat_class"].reason
    )
    one_day = _instruction(instance, days=1)
    assert results(copy.deepcopy(days), one_day, pdb)["pref.hotel_star"].passed is None
    assert all(r.passed is not None for r in results(copy.deepcopy(days), instance, pdb).values())


def test_undelivered_plan_fails_every_applicable_check(case, pdb):
    _, instance, _ = case
    bare = _prefs(instance, "hotel_preferences", _drop=True)
    got = {r.id: r for r in run_checks(None, bare, pdb)}
    assert list(got) == list(CHECK_IDS)
    for cid, r in got.items():
        if cid in ("pref.hotel_star", "pref.hotel_amenities"):
            assert r.passed is None
        else:
            assert r.passed is False and r.reason == "no plan delivered"


def test_run_checks_accepts_path_connection_and_plandb(case, trips_db):
    days, instance, _ = case
    plan, _ = parse_plan(answer_of(days))
    by_path = run_checks(plan, instance, trips_db)
    conn = connect_readonly(trips_db)
    try:
        by_conn = run_checks(plan, instance, conn)
    finally:
        conn.close()
    assert by_path == by_conn and all(r.passed for r in by_path)


def test_names_without_ids_resolve(case, pdb):
    days, instance, _ = case
    days = copy.deepcopy(days)
    for day in days:
        for leg in day["local_transport"]:  # legs name their places
            leg["from"], leg["to"] = _name_of(day, leg["from"]), _name_of(day, leg["to"])
        for value in day.values():
            for item in value if isinstance(value, list) else [value]:
                if isinstance(item, dict) and "name" in item:
                    item.pop("id", None)
    got = results(days, instance, pdb)
    assert all(r.passed for r in got.values()), {
        k: r.reason for k, r in got.items() if not r.passed
    }


def _name_of(day: dict, poi_id: str) -> str:
    for value in day.values():
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, dict) and item.get("id") == poi_id:
                return item["name"]
    raise KeyError(poi_id)


def test_poi_mismatches_fail_authenticity(case, pdb):
    days, instance, rows = case
    wrong_name = _set(2, "lunch.name", "Completely Different Bistro")(
        copy.deepcopy(days), instance, rows
    )
    assert "is " in results(*wrong_name, pdb)["auth.poi"].reason
    home_hotel = copy.deepcopy(days)
    home_hotel[1]["breakfast"] = dict(home_hotel[0]["breakfast"])  # a home-city restaurant on day 2
    reason = results(home_hotel, instance, pdb)["auth.poi"].reason
    assert "not in the day's city" in reason
    wrong_kind = _set(2, "lunch.id", rows["atts"][0]["attraction_id"])(
        copy.deepcopy(days), instance, rows
    )
    assert "is not a restaurant" in results(*wrong_kind, pdb)["auth.poi"].reason


def test_round_trip_and_timetable_details(case, pdb):
    days, instance, rows = case
    no_return = _set(3, "intercity_transport", [])(copy.deepcopy(days), instance, rows)
    # checks v4: a trip that does not travel back is not delivered (every check fails)
    reason = results(*no_return, pdb)["auth.major_transport"].reason
    assert reason.startswith("no plan delivered") and "does not travel back" in reason
    late = _set(1, "intercity_transport.0.departure_time", "23:10")(
        copy.deepcopy(days), instance, rows
    )
    assert "timetable" in results(*late, pdb)["auth.major_transport"].reason
    wrong_date = copy.deepcopy(days)
    wrong_date[1]["intercity_transport"] = wrong_date[0].pop("intercity_transport")
    reason = results(wrong_date, instance, pdb)["auth.major_transport"].reason
    assert reason.startswith("no plan delivered") and "day 1 does not travel out" in reason


def test_attached_transport_routes_from_the_previous_item(case, pdb):
    days, instance, _ = case
    days = copy.deepcopy(days)
    day = days[1]
    legs = day.pop("local_transport")
    by_target = {leg["to"]: leg for leg in legs}
    for value in day.values():
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, dict) and item.get("id") in by_target:
                leg = by_target[item["id"]]
                item["transport"] = {"mode": "Taxi", "minutes": leg["minutes"]}
    got = results(days, instance, pdb)
    assert got["auth.local_transport"].passed and got["info.sufficiency"].passed
    day["lunch"]["transport"] = {"taxi": "95 minutes"}
    assert "MapGuide says" in results(days, instance, pdb)["auth.local_transport"].reason


def test_helpers():
    assert star_ok("5-Star/Luxury", ["4-Star/Upscale"]) and star_ok(
        "City Homestay", ["City Homestay"]
    )
    assert not star_ok("3-Star/Comfort", ["4-Star/Upscale", "City Homestay"])
    assert not star_ok("City Homestay", ["2-Star & Below/Economy"])
    assert within_hours(23 * 60, 24 * 60 + 30, "17:00", "02:00")  # a late supper past midnight
    assert within_hours(30, 90, "17:00", "02:00")  # 00:30-01:30
    assert within_hours(0, 24 * 60, "00:00", "24:00")
    assert not within_hours(16 * 60, 17 * 60, "17:00", "02:00")


@pytest.mark.parametrize("weird", [
    [{"day": 1, "city": "Nowhere", "attractions": ["Some Place", {"name": None}],
      "local_transport": [{"mode": "teleport", "minutes": -5}, "walk 10 min"]}],
    [{"day": "one", "intercity_transport": [{"mode": "train", "number": "G1"}, "flight XX1"],
      "lunch": {"id": "H00001", "start_time": "11:00", "end_time": "10:00"}}],
    [{"city": "Beijing", "accommodation": {"id": "R00001"}, "dinner": "Roast duck",
      "entertainment": [{"id": "A00001", "start_time": "23:30", "end_time": "01:00"}]}] * 5,
])  # fmt: skip
def test_odd_plans_never_break_a_check(case, pdb, weird):
    _, instance, _ = case
    plan, _ = parse_plan(json.dumps(weird))
    assert plan is not None
    got = run_checks(plan, instance, pdb)
    assert len(got) == 32
    assert not [
        r.reason for r in got if "check error" in r.reason or "could not be resolved" in r.reason
    ]
    assert not got[0].passed  # format.json


def test_resolve_leg_codeshares_and_seats(pdb):
    flight = pdb.rows("SELECT * FROM flights WHERE codeshare IS NOT NULL AND cabin_class = 'Economy Class' "
                      "ORDER BY flight_id LIMIT 1")[0]  # fmt: skip
    leg = resolve_leg(pdb, 1, flight["dep_date"], IntercityLeg(
        number=flight["codeshare"], from_city=flight["dep_city"], to_city=flight["arr_city"],
        seat_class="economy", departure_time=flight["dep_time"]))  # fmt: skip
    assert leg.mode == "flight" and leg.problem is None and leg.vocab_mode == "Airplane"
    assert leg.row["flight_number"] == flight["flight_number"] and leg.fare == flight["adult_total"]
    train = pdb.rows(
        "SELECT * FROM trains WHERE fare_first_class IS NULL ORDER BY train_id LIMIT 1"
    )[0]
    leg = resolve_leg(pdb, 1, "2025-10-10", IntercityLeg(
        mode="train", number=train["train_number"], from_city=train["dep_city"],
        to_city=train["arr_city"], seat_class="1st class"))  # fmt: skip
    assert "no First Class Seat" in leg.problem and leg.vocab_mode == train["train_type"]
    leg = resolve_leg(pdb, 1, "2025-10-10", IntercityLeg(mode="train", number=train["train_number"],
                                                         seat_class="Second Class Seat"))  # fmt: skip
    assert leg.problem is None and leg.fare == train["fare_second_class"]
    leg = resolve_leg(pdb, 1, "2025-10-10", IntercityLeg(mode="bus", number="B9999"))
    assert "no bus B9999" in leg.problem and leg.vocab_mode == "Long-distance Bus"
    assert (
        seat_class("Business", "flight") == "Business Class"
        and seat_class("sleeper", "train") == "sleeper"
    )


def test_invented_places_at_price_0_meet_no_budget(case, pdb):
    """A plan that swaps a lunch and the hotel for places the database does not hold, priced
    at 0, is cheaper, yet fails the budget check: what cannot be priced is not in budget."""
    days, instance, rows = case
    bad = copy.deepcopy(days)
    bad[1]["lunch"].update(id="R99999", name="Nowhere Noodles", price=0)
    bad[1]["accommodation"].update(id="H99999", name="Hotel Nowhere", price=0)
    verdict = results(bad, instance, pdb)["pref.budget"]
    assert verdict.passed is False
    assert "Nowhere Noodles" in verdict.reason and "Hotel Nowhere" in verdict.reason
    assert "price cannot be checked" in verdict.reason
    leg = copy.deepcopy(days)
    leg[0]["intercity_transport"][0].update(number="ZZ9999", price=0)
    assert results(leg, instance, pdb)["pref.budget"].passed is False
