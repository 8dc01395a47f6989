"""COMPASS tool results page by the result size budget (issue 35): every page an agent reads is a
complete JSON document within the budget, a page cut short by it names the page that continues
it, and following the pages visits every item of the unbounded search exactly once, in order."""

from __future__ import annotations

import json

import pytest

from travelgym.agents.tool_calling import run_tool_calls
from travelgym.llm.protocol import ChatMessage, ToolCall
from travelgym.suites.compass.env import CompassToolSession
from travelgym.suites.compass.tools.common import PAGE_SIZE
from travelgym.suites.compass.tools.flights import _flight_results
from travelgym.suites.compass.tools.hotels import SORT_KEYS, _hotel_results
from travelgym.suites.compass.tools.utility import NOTEBOOK_MAX_CHARS
from travelgym.toolkit.budget import RESULT_BUDGET_CHARS

OLD_PAGE_KEYS = {"total_results", "page", "pages", "page_size", "results"}


@pytest.fixture()
def session(compass_db):
    from travelgym.db import connect_readonly

    conn = connect_readonly(compass_db)
    yield CompassToolSession(conn)
    conn.close()


def read(session: CompassToolSession, name: str, **args) -> tuple[str, dict]:
    """What the LLM tool-calling agent reads for one native call, and the call's own result."""
    call = ToolCall(id="c", name=name, arguments=json.dumps(args))
    (message,) = run_tool_calls(session, ChatMessage(role="assistant", content=None,
                                                     tool_calls=[call]))  # fmt: skip
    record = session.take_calls()[-1]
    assert record.ok, record.error_message
    return message.content, record.result


def follow(session: CompassToolSession, name: str, **args) -> list[dict]:
    """Every page of a search, in order, each checked as the agent reads it."""
    pages, page = [], 1
    while True:
        text, result = read(session, name, **args, page=page)
        assert len(text) <= RESULT_BUDGET_CHARS
        assert json.loads(text) == result  # complete, and the tool's own result (not the guard's)
        pages.append(result)
        if page >= result["pages"]:
            assert "next_page" not in result
            return pages
        if len(result["results"]) < PAGE_SIZE:  # cut short by the budget: it says so
            assert result["next_page"] == page + 1
            # as many whole items as fit (page numbers measured as wide as any can be)
            following, _ = read(session, name, **args, page=page + 1)
            first = json.dumps(json.loads(following)["results"][0])
            slack = 3 * len(str(result["total_results"] + 1))
            assert len(text) + len(", ") + len(first) > RESULT_BUDGET_CHARS - slack
        else:
            assert "next_page" not in result
        page += 1


def busiest_routes(session: CompassToolSession, count: int) -> list[tuple[str, str]]:
    return [tuple(r) for r in session.context.conn.execute(
        "SELECT o.origin, o.destination FROM flight_templates t"
        " JOIN flights o ON o.flight_id = t.outbound_flight_id"
        " GROUP BY 1, 2 ORDER BY COUNT(*) DESC, 1, 2 LIMIT ?", (count,))]  # fmt: skip


@pytest.mark.parametrize("dates", [("2025-08-02", "2025-08-30"), ("2025-08-10", "2025-08-12")])
def test_flight_pages_fit_and_visit_every_package_once_in_order(session, dates):
    cut_pages = 0
    for origin, destination in busiest_routes(session, 4):
        args = dict(origin=origin, destination=destination, departure_date=dates[0],
                    return_date=dates[1])  # fmt: skip
        pages = follow(session, "search_flights", **args)
        seen = [r["package_id"] for p in pages for r in p["results"]]
        ctx = session.context
        dep, ret = (int(d[-2:]) for d in dates)
        unbounded = _flight_results(ctx, origin, destination, dep, ret, 1, None, None, None,
                                    False)  # fmt: skip
        assert len(unbounded) > PAGE_SIZE  # more than one page's worth
        assert seen == [r["package_id"] for r in unbounded]
        assert [r for p in pages for r in p["results"]] == unbounded
        assert all(p["total_results"] == len(unbounded) == len(seen) for p in pages)
        assert all(p["pages"] == len(pages) for p in pages)
        cut_pages += sum("next_page" in p for p in pages)
        # past the last page: nothing, and no cursor
        _, after = read(session, "search_flights", **args, page=len(pages) + 1)
        assert after["results"] == [] and "next_page" not in after
    assert cut_pages  # 20 flight packages never fit: the budget does cut these pages


def parks_with_most_configs(session: CompassToolSession, count: int) -> list[tuple[str, str]]:
    return [tuple(r) for r in session.context.conn.execute(
        "SELECT p.park_id, p.name FROM parks p JOIN hotels h ON h.park_id = p.park_id"
        " JOIN rooms r ON r.hotel_id = h.hotel_id JOIN room_configs c ON c.room_id = r.room_id"
        " GROUP BY 1, 2 ORDER BY COUNT(*) DESC, 1 LIMIT ?", (count,))]  # fmt: skip


@pytest.mark.parametrize("sort_by", sorted(SORT_KEYS))
def test_hotel_pages_fit_visit_every_package_once_and_keep_todays_shape(session, sort_by):
    for park_id, name in parks_with_most_configs(session, 2):
        args = dict(location=name, start_date="2025-08-04", end_date="2025-08-06", num_guests=1,
                    sort_by=sort_by)  # fmt: skip
        pages = follow(session, "search_hotel", **args)
        unbounded = _hotel_results(session.context, park_id, 4, 6, 1, None, None, None, None,
                                   None, None, None, None, None, None, None, sort_by)  # fmt: skip
        assert len(unbounded) > 2 * PAGE_SIZE
        assert [r for p in pages for r in p["results"]] == unbounded
        if not any("next_page" in p for p in pages):
            # pages the budget did not cut are today's 20-item pages, with today's fields
            assert [p["results"] for p in pages] == [
                unbounded[i : i + PAGE_SIZE] for i in range(0, len(unbounded), PAGE_SIZE)]  # fmt: skip
            assert all(set(p) >= OLD_PAGE_KEYS and "next_page" not in p for p in pages)


def test_notebook_pages_and_notes_fit_the_budget(session):
    notes = [f"note {i} " + ('é"\n' if i % 3 else "abc") * (200 * (i % 25)) for i in range(60)]
    notes[7] = "x" * 12_000  # a plain note longer than a note may be: its first 10,000 chars
    notes[8] = '"' * 9_000  # escapes double it: cut to what fits as JSON
    kept = []
    for note in notes:
        text, result = read(session, "notebook", action="write", input_data=note)
        assert json.loads(text) == result
        kept.append(note[: result.get("kept_chars", len(note))])
    assert kept[7] == "x" * NOTEBOOK_MAX_CHARS and len(kept[8]) == NOTEBOOK_MAX_CHARS // 2
    assert all(len(json.dumps(k)) <= NOTEBOOK_MAX_CHARS + 2 for k in kept)
    for index in (7, 8, 20):
        text, result = read(session, "notebook", action="read", index=index)
        assert len(text) <= RESULT_BUDGET_CHARS and json.loads(text)["note"] == kept[index]
    seen, page = [], 1
    while True:
        text, result = read(session, "notebook", action="list_all", page=page)
        assert len(text) <= RESULT_BUDGET_CHARS and json.loads(text) == result
        seen += result["notes"]
        if page == result["pages"]:
            break
        assert result["next_page"] == page + 1
        page += 1
    assert seen == [{"index": i, "note": n} for i, n in enumerate(kept)] and page > 1


def test_a_notebook_that_fits_lists_as_it_always_did(session):
    read(session, "notebook", action="write", input_data="hotel pkg_1_2_3_1")
    text, _ = read(session, "notebook", action="list_all")
    assert text == '{"notes": [{"index": 0, "note": "hotel pkg_1_2_3_1"}]}'


def test_the_bounded_listings_fit_for_every_park_permit_and_hotel(session):
    """The lists without a page (a park's airports and permits, a permit's dates in August, a
    hotel's rooms, 5 place matches) are bounded by the database: each fits, in full."""
    conn = session.context.conn
    calls = []
    for (name,) in conn.execute("SELECT name FROM parks ORDER BY park_id"):
        calls += [("search_airports", {"park_name": name}), ("list_permits", {"park": name})]
    for park, template, days in conn.execute(
            "SELECT p.name, m.template_name, m.max_duration_days FROM permits m"
            " JOIN parks p ON p.park_id = m.park_id ORDER BY m.permit_id"):  # fmt: skip
        calls.append(("search_permit_availability",
                      {"park": park, "template_name": template, "duration_days": days}))  # fmt: skip
    calls += [("get_hotel_details", {"hotel_identifier": hotel_id})
              for (hotel_id,) in conn.execute("SELECT hotel_id FROM hotels")]  # fmt: skip
    calls += [("search_location_name", {"query": q}) for q in ("national park", "a", "lake")]
    for name, args in calls:
        text, result = read(session, name, **args)
        assert len(text) <= RESULT_BUDGET_CHARS and json.loads(text) == result, (name, args)
