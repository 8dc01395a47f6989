"""Behavior2Trip observations within the result size budget (issue 35): a search for 50 POIs
can run to 60,000 characters; the agent reads the leading whole results that fit and a note
saying how many it was shown, a complete JSON document, never a prefix of the text."""

from __future__ import annotations

import json

import pytest

from travelgym.db import connect_readonly
from travelgym.suites.behavior2trip.agents.base import CUT_NOTE, TripToolSession
from travelgym.toolkit.budget import RESULT_BUDGET_CHARS

SEARCHES = ("AccommodationSearch", "AttractionSearch", "RestaurantSearch", "EntertainmentSearch")


@pytest.fixture(scope="module")
def session(trips_db):
    conn = connect_readonly(trips_db)
    yield TripToolSession(conn)
    conn.close()


def test_large_searches_read_as_their_leading_whole_results(session):
    cities = [r[0] for r in session.context.conn.execute("SELECT name FROM cities LIMIT 4")]
    shortened = 0
    for city in cities:
        for name in SEARCHES:
            record = session.call(name, {"city": city, "n": 50})
            assert record.ok, record.error_message
            payload = session.payload(record)
            text = session.observation_text(record)
            assert len(text) <= RESULT_BUDGET_CHARS
            doc = json.loads(text)  # complete: not a prefix
            if len(json.dumps(payload, ensure_ascii=False)) <= RESULT_BUDGET_CHARS:
                assert doc == payload
                continue
            note = doc.pop("truncated")
            shown = note["shown"]
            assert 0 < shown < len(payload["results"]) == note["total"]
            assert doc == {**payload, "results": payload["results"][:shown]}
            assert CUT_NOTE in note["message"]
            shortened += 1
    assert shortened  # 50 results do not fit: the guard does shorten these
