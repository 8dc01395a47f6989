"""Issue 35, must show 4: every tool result of a default run, rendered as an LLM agent receives
it (the native tool message), is a complete JSON document within the result size budget, and is
the tool's own result: pages that would be too large continue through ``page``/``next_page``,
so the agent layer's last-resort guard never has to step in."""

from __future__ import annotations

import asyncio
import collections
import json

import pytest

from travelgym.agents.tool_calling import run_tool_calls, tool_message_content
from travelgym.db import connect_readonly
from travelgym.llm.protocol import ChatMessage, ToolCall
from travelgym.runner.loop import PolicyAgent
from travelgym.suites.compass.agents.scripted import ScriptedAgent
from travelgym.suites.compass.agents.turn_policy import TurnPolicy
from travelgym.suites.compass.env import CompassToolSession
from travelgym.suites.compass.episode import play_episode
from travelgym.suites.compass.solver import solve
from travelgym.suites.compass.tasks import load_tasks
from travelgym.suites.compass.tools import compass_registry
from travelgym.suites.compass.user.template import TemplateUserBackend
from travelgym.toolkit.budget import RESULT_BUDGET_CHARS

DEFAULT_AGENTS = ("greedy", "sampled", "exhaustive")  # `travelgym run compass`'s default


@pytest.fixture(scope="module")
def sample(compass_db):
    """Three tasks of each (level, objective type) cell, with their ground truth."""
    conn = connect_readonly(compass_db)
    cells = collections.defaultdict(list)
    for task in load_tasks():
        cells[(task.level, task.objective.type)].append(task)
    tasks = [task for cell in sorted(cells) for task in cells[cell][:3]]
    yield conn, [(task, solve(conn, task)) for task in tasks]
    conn.close()


def assert_read_whole(content: str, own: object) -> None:
    """The text an agent read is complete JSON within the budget, and the call's own result."""
    assert len(content) <= RESULT_BUDGET_CHARS
    assert json.loads(content) == own


@pytest.mark.parametrize("strategy", DEFAULT_AGENTS)
def test_every_tool_result_of_the_default_agents_reads_as_complete_json(sample, strategy):
    conn, tasks = sample
    calls = 0
    for task, truth in tasks:
        agent = ScriptedAgent(strategy)
        # the scripted baselines keep no results by default: keep them to read them back
        policy = PolicyAgent(TurnPolicy(agent), agent.name, 1, {"keep_results": True})
        episode = asyncio.run(play_episode(task, policy, TemplateUserBackend(), conn, truth))
        for turn in episode.turns:
            for record in turn.tool_calls:
                own = record.result if record.ok else {"error": {
                    "category": record.error_category, "message": record.error_message}}  # fmt: skip
                assert_read_whole(tool_message_content(record), own)
                calls += 1
    assert calls > len(tasks)


def park_of(task) -> str:
    return next(c for c in task.constraints if c.kind == "park").park_ids[0]


def stay(task) -> tuple[str, str]:
    """The task's stay (its fixed dates, or its date window), as ISO dates."""
    for c in task.constraints:
        if c.kind == "stay_dates":
            return c.check_in.isoformat(), c.check_out.isoformat()
        if c.kind == "date_window":
            return str(c.earliest_check_in), str(c.latest_check_out)
    return "2025-08-04", "2025-08-08"


def test_every_tool_with_broad_arguments_reads_as_complete_json(sample):
    """A prober calls all 18 tools on each sampled task's park with the broadest arguments
    (one guest, no filters, the whole stay, every page) and reads each reply."""
    conn, tasks = sample
    called = set()
    for task, _ in tasks:
        called |= probe(CompassToolSession(conn), task)
    assert called == set(compass_registry().names)  # all 18 tools


def probe(session: CompassToolSession, task) -> set[str]:
    """Call every tool broadly on ``task``'s park; each reply is read back whole. The names of
    the tools called."""
    called, seen = set(), []

    def call(name: str, **args):
        tool_call = ToolCall(id="p", name=name, arguments=json.dumps(args))
        message = ChatMessage(role="assistant", content=None, tool_calls=[tool_call])
        (reply,) = run_tool_calls(session, message)
        record = session.take_calls()[-1]
        assert record.ok, (name, args, record.error_message)
        assert_read_whole(reply.content, record.result)
        called.add(name)
        seen.append(record.result)
        return record.result

    def every_page(name: str, **args) -> list[dict]:
        first = call(name, **args)
        return [first] + [call(name, **args, page=p) for p in range(2, first["pages"] + 1)]

    park = call("search_location_name", query=park_of(task))["matches"][0]["park"]
    start, end = stay(task)
    hotels = every_page("search_hotel", location=park, start_date=start, end_date=end,
                        num_guests=1)  # fmt: skip
    first_hotel = hotels[0]["results"][0]
    call("get_hotel_details", hotel_identifier=first_hotel["hotel_id"])
    call("get_room_details", package_id=first_hotel["package_id"])
    airports = call("search_airports", park_name=park)["airports"]
    origin = next((c.airport for c in task.constraints if c.kind == "origin_city"), "DEN")
    flight = None
    for airport in airports:
        call("get_airport_coordinates", airport_code=airport["airport_code"])
        for page in every_page("search_flights", origin=origin,
                               destination=airport["airport_code"], departure_date=start,
                               return_date=min(end, "2025-08-31")):  # fmt: skip
            flight = flight or (page["results"] or [None])[0]
    permit = None
    for template in call("list_permits", park=park)["permits"]:
        dates = call("search_permit_availability", park=park,
                     template_name=template["template_name"])["available_dates"]  # fmt: skip
        permit = permit or (dates or [None])[0]
    call("notebook", action="write", input_data=json.dumps(seen)[:20_000])
    call("notebook", action="list_all")
    call("notebook", action="read", index=0)
    call("get_weekday", date_str=start)
    call("calculate", expression=f"{first_hotel['total_price']} * 2")
    call("calculate_distance", lat1=36.1, lon1=-112.1, lat2=36.2, lon2=-113.0)
    call("recommend_hotel", package_ids=[first_hotel["package_id"]], reasoning="cheapest")
    if flight:
        call("get_flight_details", package_id=flight["package_id"])
        call("recommend_flight", flight_ids=[flight["package_id"]], reasoning="cheapest")
    if permit:
        call("get_permit_details", package_id=permit["package_id"])
        call("recommend_permit", permit_ids=[permit["package_id"]], reasoning="open")
    return called
