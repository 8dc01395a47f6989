"""The tools' shared cache (``ToolCache``) changes no result: every page of a search, and the
details calls, are the same from a cold context and from one sharing a warm cache, and what a
call returns is its own (changing it does not change the next call's result)."""

from __future__ import annotations

import copy

import pytest

from travelgym.db import connect_readonly
from travelgym.suites.compass.context import CompassContext, ToolCache
from travelgym.suites.compass.tools import compass_registry

SEARCHES = [
    ("search_hotel", {"location": "Zion National Park", "start_date": "2025-08-05",
                      "end_date": "2025-08-08", "num_guests": 3}),
    ("search_hotel", {"location": "Yosemite", "start_date": "2025-08-10", "end_date": "2025-08-12",
                      "num_guests": 2, "max_price_nightly": 300.0, "sort_by": "review_score"}),
    ("search_flights", {"origin": "ATL", "destination": "DEN", "departure_date": "2025-08-10",
                        "return_date": "2025-08-14", "passengers": 2}),
]  # fmt: skip


@pytest.fixture(scope="module")
def conn(compass_db):
    conn = connect_readonly(compass_db)
    yield conn
    conn.close()


def call(conn, name, args, cache=None):
    ctx = CompassContext(conn, cache=cache if cache is not None else ToolCache())
    result = compass_registry().call(name, args, ctx)
    assert result.ok, result.payload()
    return result.payload()


@pytest.mark.parametrize("name, args", SEARCHES)
def test_every_page_is_the_same_with_a_shared_cache(conn, name, args):
    shared = ToolCache()
    first = call(conn, name, {**args, "page": 1})
    assert first["pages"] > 1 or first["total_results"] > 0
    for page in range(1, first["pages"] + 2):  # one past the end too
        cold = call(conn, name, {**args, "page": page})
        assert call(conn, name, {**args, "page": page}, shared) == cold
        assert call(conn, name, {**args, "page": page}, shared) == cold  # warm


def test_details_are_the_same_with_a_shared_cache(conn):
    shared = ToolCache()
    hits = call(conn, *SEARCHES[0])["results"][:5]
    for hit in hits:
        for name, args in (("get_room_details", {"package_id": hit["package_id"]}),
                           ("get_hotel_details", {"hotel_identifier": hit["hotel_id"]}),
                           ("recommend_hotel", {"package_ids": [hit["package_id"]],
                                                "reasoning": "cheapest"})):  # fmt: skip
            cold = call(conn, name, args)
            assert call(conn, name, args, shared) == cold
            assert call(conn, name, args, shared) == cold


def test_a_result_changed_by_its_caller_does_not_change_the_next(conn):
    shared = ToolCache()
    hotel = SEARCHES[0]
    flight = SEARCHES[2]
    package = call(conn, *hotel)["results"][0]["package_id"]
    room = ("get_room_details", {"package_id": package})
    for name, args in (hotel, flight, room):
        first = call(conn, name, args, shared)
        kept = copy.deepcopy(first)
        for value in first.values():  # change every list and dict, one level down too
            items = value if isinstance(value, list) else [value]
            for item in items:
                if isinstance(item, dict):
                    for inner in item.values():
                        if isinstance(inner, dict):
                            inner.clear()
                    item.clear()
            if isinstance(value, list | dict):
                value.clear()
        assert call(conn, name, args, shared) == kept


def test_the_run_cache_is_shared_per_database_content(compass_db, tmp_path):
    a = ToolCache.for_database(compass_db, "hash-1")
    assert ToolCache.for_database(compass_db, "hash-1") is a
    assert ToolCache.for_database(compass_db, "hash-2") is not a
