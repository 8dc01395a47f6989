"""The witness search's shortcuts change nothing: the oracle plans the same through the cached
tool session as through the recording one, with its per-process memos cold or warm; the day
solver on the network's shape times every day as Bellman-Ford does; a remembered check verdict
serves only the instance and plan it was made for; the parsing caches answer as the parsers."""

from __future__ import annotations

import copy
import json
import random
import re

import pytest

from travelgym.db import connect_readonly
from travelgym.suites.behavior2trip import witness
from travelgym.suites.behavior2trip.agents import (
    day_timing,
    oracle,
    oracle_distances,
    schedule,
    tool_cache,
)
from travelgym.suites.behavior2trip.agents.base import TripToolSession
from travelgym.suites.behavior2trip.agents.schedule import Stop
from travelgym.suites.behavior2trip.agents.scripted import (
    ARRIVAL_TEMPLATES,
    DEPARTURE_TEMPLATES,
    FULL_DAY,
)
from travelgym.suites.behavior2trip.behaviour_pool import catalog_for
from travelgym.suites.behavior2trip.checks import run_checks
from travelgym.suites.behavior2trip.context import TripsContext, normalize
from travelgym.suites.behavior2trip.instances import generate_instance
from travelgym.suites.behavior2trip.plan import _parse_clock, clock_minutes
from travelgym.suites.behavior2trip.plan_parse import _clock_text, _first_clock, parse_plan
from travelgym.suites.behavior2trip.plan_values import _NON_KEY, _key, _local_mode, local_mode
from travelgym.suites.behavior2trip.tools import trips_registry
from travelgym.toolkit import ContentError


@pytest.fixture(scope="module")
def fresh(trips_db):
    """Two instances of each level, generated here (their witnesses' verdicts remembered)."""
    catalog = catalog_for(str(trips_db))
    return [generate_instance(catalog, 7, "test", level, i)
            for level in ("easy", "medium", "hard") for i in range(2)]  # fmt: skip


def _random_day(rng: random.Random) -> list[Stop]:
    if rng.random() < 0.5:
        kinds = [rng.choice(("breakfast", "lunch", "dinner", "attraction", "hotel", "leg"))
                 for _ in range(rng.randint(0, 9))]  # fmt: skip
    else:
        template = rng.choice((*ARRIVAL_TEMPLATES, *DEPARTURE_TEMPLATES, FULL_DAY))
        kinds = [slot[0] for slot in template]
    stops = []
    for kind in kinds:
        stop = Stop(kind)
        if kind == "leg":
            dep = rng.randint(0, 1439)
            stop.fixed = (dep, dep + rng.randint(30, 900))
        elif kind != "hotel" and rng.random() < 0.7:
            opening = rng.choice((0, 360, 480, 600, rng.randint(0, 1439)))
            closing = rng.choice((1080, 1260, 1440, 120, rng.randint(0, 1439)))
            stop.hours = (opening, closing if closing > opening else closing + 1440)
        if kind == "attraction" and rng.random() < 0.8:
            stop.longest = rng.randint(60, 300)
        stop.travel = rng.choice((0, 5, 12, 30, 45, 90, rng.randint(0, 200)))
        stops.append(stop)
    return stops


def test_the_day_solver_times_every_day_as_bellman_ford():
    rng = random.Random(31)
    feasible = 0
    for _ in range(6000):
        stops, relaxed = _random_day(rng), rng.random() < 0.5
        a, b = copy.deepcopy(stops), copy.deepcopy(stops)
        timed = day_timing.solve_day(a, relaxed)
        assert timed == schedule.solve_day(b, relaxed)
        assert [(x.start, x.end) for x in a] == [(x.start, x.end) for x in b]
        feasible += timed
    assert 300 < feasible < 5700  # both kinds of day are exercised


def test_the_cached_session_plans_as_the_recording_session(fresh, trips_db):
    conn = connect_readonly(trips_db)
    try:
        for give_up in (True, False):
            for x in fresh[::2]:
                oracle_distances.SPREADS.clear()
                oracle_distances.ESTIMATES.clear()
                day_timing._shapes.cache_clear()
                day_timing._fits.cache_clear()
                recorded = oracle.oracle_plan(x, conn, give_up=give_up,
                                              context=TripsContext(conn))  # fmt: skip
                cached = tool_cache.CachedToolSession(TripsContext(conn))
                cold = oracle.oracle_plan(x, conn, give_up=give_up, session=cached)
                warm = oracle.oracle_plan(x, conn, give_up=give_up, session=cached)
                assert recorded == cold == warm, x.instance_id
    finally:
        conn.close()


def test_planners_sharing_a_session_plan_as_alone(fresh, trips_db):
    """The tables and distances one planner keeps in its session serve the next planners
    (other preferences, other trips) without changing their plans: each instance is planned
    by a fresh session and again after every other one warmed a shared session."""
    conn = connect_readonly(trips_db)
    try:
        alone = [oracle.oracle_plan(x, conn, give_up=True,
                                    session=tool_cache.CachedToolSession(TripsContext(conn)))
                 for x in fresh]  # fmt: skip
        shared = tool_cache.CachedToolSession(TripsContext(conn))
        for x in fresh:
            oracle.oracle_plan(x, conn, give_up=True, session=shared)
        assert shared.memo.get(oracle.SHARED)  # the planners kept something to share
        again = [oracle.oracle_plan(x, conn, give_up=True, session=shared) for x in fresh[::-1]]
        assert again[::-1] == alone
    finally:
        conn.close()


def test_a_day_finds_the_first_item_of_a_name_as_items_are_added(pdb, fresh):
    """:meth:`DayView.find` answers as a scan of the day's items in order: the first item
    whose id or name is the text (normalised), items added later included."""
    from travelgym.suites.behavior2trip.checks.context import Context, Item

    x = next(i for i in fresh if i.witness)
    ctx = Context(parse_plan(x.witness)[0], x, pdb)
    view = next(d for d in ctx.days if len(d.items) >= 2)
    first, second = view.items[0], view.items[1]

    def scan(text):
        key = normalize(text or "")
        return next((i for i in view.items if key and key in i._names), None)

    texts = [first.data.name, (first.data.name or "").upper() + " ", first.data.id, second.data.id,
             "", None, "no such place"]  # fmt: skip
    assert [view.find(t) for t in texts] == [scan(t) for t in texts]
    assert view.find(first.data.name) is first
    twin = Item(view.index, second.kind, second.data.model_copy(update={"id": "X99999"}))
    view.items.append(twin)  # a later item of the same name does not win over the first
    assert view.find(second.data.name) is scan(second.data.name) is second
    assert view.find("X99999") is twin


def test_a_plan_is_judged_as_the_answer_tag_holding_it(fresh, pdb):
    """The checks judge a witness read whole (no "<" in it) as they judge it inside its
    ``<answer>`` tag; a plan with a "<" in a value is read from inside the tag."""
    for x in fresh:
        assert parse_plan(x.witness)[0] == parse_plan(f"<answer>{x.witness}</answer>")[0]
    x = fresh[0]
    days = json.loads(x.witness)
    days[0]["weather"] = "sunny <answer> all day"
    tricky = json.dumps(days)
    tagged = parse_plan(f"<answer>{tricky}</answer>")[0]
    assert tagged is not None and tagged != parse_plan(tricky)[0]  # not what the whole says
    expected = [f"{r.id}: {r.reason}" for r in run_checks(tagged, x, pdb) if r.passed is False]
    assert witness.witness_failures(x, tricky, pdb) == expected


def test_a_local_leg_without_an_origin_leaves_from_the_stop_before_its_target(pdb, fresh):
    """A local leg that names only where it goes starts at the item visited before that one
    (none when the target is the day's first or unknown); one naming its origin keeps it."""
    from travelgym.suites.behavior2trip.checks.context import Context

    x = next(i for i in fresh if i.witness)
    days = json.loads(x.witness)
    for day in days:
        for leg in day.get("local_transport", []):
            del leg["from"]
    ctx = Context(parse_plan(json.dumps(days))[0], x, pdb)
    checked = 0
    for view in ctx.days:
        order = view.ordered()
        for local in view.locals:
            target = local.target_item
            before = order[order.index(target) - 1] if target in order[1:] else None
            assert local.origin_item is before
            checked += before is not None
    assert checked  # some legs took their origin from the stop before


def test_an_evicted_tool_answer_is_asked_again(trips_db):
    conn = connect_readonly(trips_db)
    try:
        session = tool_cache.CachedToolSession(TripsContext(conn), limit=1)
        args = {"city": "Beijing", "n": 3}
        first = session.call("AttractionSearch", args)
        assert session.call("AttractionSearch", dict(args)) is first
        session.call("HotelSearch", args)  # unknown tool: an error, cached like any answer
        again = session.call("AttractionSearch", args)
        assert again is not first and again == first
    finally:
        conn.close()


def test_mapguide_answers_as_through_the_registry(trips_db):
    conn = connect_readonly(trips_db)
    try:
        context = TripsContext(conn)
        session = tool_cache.CachedToolSession(context)
        hotel = context.rows("SELECT hotel_id FROM hotels h JOIN cities c USING (city_id) "
                             "WHERE c.name = 'Beijing' ORDER BY hotel_id LIMIT 1")  # fmt: skip
        for origin, destination, city_b in (
            ("Beijing", "Beijing", "Beijing"),
            (hotel[0]["hotel_id"] if hotel else "Beijing", "Beijing", "Beijing"),
            ("Beijing", "Shanghai", "Shanghai"),
            ("Nowhere Plaza", "Beijing", "Beijing"),  # a content error
            ("Beijing", "Beijing", "Atlantis"),
        ):
            args = {"origin_cityName": "Beijing", "origin": origin,
                    "destination_cityName": city_b, "destination": destination}  # fmt: skip
            expected = trips_registry().call("MapGuide", args, TripsContext(conn))
            got = session.call("MapGuide", args)
            assert (got.ok, session.payload(got)) == (expected.ok, expected.payload())
    finally:
        conn.close()


def test_a_remembered_verdict_serves_only_its_instance_and_plan(fresh, pdb):
    for x in fresh:
        remembered = witness.witness_failures(x, x.witness, pdb)
        plan = parse_plan(f"<answer>{x.witness}</answer>")[0]
        checked = [f"{r.id}: {r.reason}" for r in run_checks(plan, x, pdb) if r.passed is False]
        assert remembered == checked == []
    x = fresh[0]
    days = json.loads(x.witness)
    del days[-1]["dinner"]
    broken = json.dumps(days)
    assert any(
        f.startswith("reason.complete_meals") for f in witness.witness_failures(x, broken, pdb)
    )
    twin = x.model_copy(update={"witness": broken})
    assert witness.witness_failures(twin, broken, pdb)  # another object: checked afresh
    assert witness.witness_failures(x, None, pdb)


def test_the_parsing_caches_answer_as_the_parsers():
    texts = ["09:30", " 9:30 pm ", "24:00", "24:01", "12:00 AM", "7", "", "21:00:00", "x" * 50,
             "25:00", "noon", "08:05"]  # fmt: skip
    for _ in range(2):
        assert [clock_minutes(t) for t in texts] == [_parse_clock(t) for t in texts]
    assert clock_minutes(None) is None and clock_minutes(930) is None
    names = ["Xi'an ", "XI AN", "Beijing South", "H00012", "a" * 300, "Ürümqi"]
    for _ in range(2):
        assert [normalize(t) for t in names] == [re.sub(r"[\W_]+", "", t.casefold()) for t in names]
    times = ["09:30", "from 9:30 am to 11:00", "noon", "12:5", "x" * 150 + " 10:15", "7:45 P.M."]
    for _ in range(2):
        assert [_clock_text(t) for t in times] == [_first_clock(t) for t in times]
    modes = ["Taxi", "by metro line 2", "walk", "x" * 150 + " taxi", "Hovercraft", "Didi"]
    for _ in range(2):
        assert [local_mode(t) for t in modes] == [_local_mode(t) for t in modes]
    keys = ["Start Time", "check-in", "Day 1", 3, "x" * 200, None]
    for _ in range(2):
        assert [_key(k) for k in keys] == [
            _NON_KEY.sub("_", str(k).lower()).strip("_") for k in keys
        ]


def test_recording_session_is_still_what_episodes_get(trips_db):
    conn = connect_readonly(trips_db)
    try:
        env = TripToolSession(conn, keep_results=False)
        record = env.call("WeatherSearch", {"city": "Beijing", "n": 2})
        assert record.ok and env.calls == [record]  # recorded, unlike the cached session's
    finally:
        conn.close()


def test_a_leg_fits_a_day_when_it_has_a_shape():
    rng = random.Random(5)
    for _ in range(400):
        dep = rng.randint(6 * 60, 22 * 60)
        leg = {"dep": dep, "arr": min(dep + rng.randint(30, 900), 23 * 60)}
        for arrival in (True, False):
            assert day_timing.fits_a_day(leg, arrival) == bool(
                day_timing.travel_shapes(leg, arrival)
            )


def test_find_place_finds_what_resolve_place_resolves(trips_db):
    conn = connect_readonly(trips_db)
    try:
        context, other = TripsContext(conn), TripsContext(conn)
        rng = random.Random(9)
        cities = list(context.cities.values())
        names = [p.name for c in cities for p in context.places(c["city_id"])]
        for _ in range(300):
            city, name = rng.choice(cities), list(rng.choice(names))
            for _ in range(rng.randint(0, 2)):  # a misspelling or two
                name[rng.randrange(len(name))] = rng.choice("aeiou ")
            query = "".join(name)
            try:
                expected = context.resolve_place(city, query)
            except ContentError:
                expected = None
            assert other.find_place(city, query) == expected, (city["name"], query)
        assert other.find_place(cities[0], "  ") is None
    finally:
        conn.close()
