"""Prompt pieces shared by the LLM agents: the behaviour trajectory as the model reads it
(Figure 6's JSON records), the tool listing of Figure 11 and the plan format."""

from __future__ import annotations

import json
from typing import Any

from travelgym.suites.behavior2trip.actions import Action
from travelgym.suites.behavior2trip.tools import trips_registry


def render_action(a: Action) -> str:
    """One logged action as a compact JSON record (Figure 6)."""
    details: dict[str, Any] = {"poi_type": a.poi_type, "id": a.poi_id, "name": a.poi_name,
                               "city": a.city, "categories": a.categories}  # fmt: skip
    if a.price is not None:
        details["price"] = a.price
    if a.origin is not None:
        details["origin"] = a.origin
    record = {"action_type": a.action_type, "timestamp": a.timestamp, "poi_details": details}
    return json.dumps(record, ensure_ascii=False)


def render_trajectory(actions: list[Action]) -> str:
    """The whole trajectory: a JSON array with one action a line."""
    return "[\n" + ",\n".join(render_action(a) for a in actions) + "\n]"


def tool_listing(ask_user: bool = False) -> str:
    """Figure 11's ``# Tools`` section: name, description and parameters of each tool (and
    RQ1's ``AskUser`` when ``ask_user``: clarification mode only)."""
    lines = []
    for schema in trips_registry().openai_schemas():
        fn = schema["function"]
        entry = {"name": fn["name"], "description": fn["description"].split("\n\n")[0],
                 "parameters": fn["parameters"]}  # fmt: skip
        lines.append(json.dumps(entry, ensure_ascii=False))
    if ask_user:
        from travelgym.suites.behavior2trip.clarify import ask_user_listing

        lines.append(ask_user_listing())
    return "\n".join(lines)


PLAN_FORMAT = """The plan is a JSON array with one object per day of the trip, in order:
{"day": 1, "date": "YYYY-MM-DD", "city": "<city>" (on a travel day "<from> -> <to>"),
 "weather": "<the day's weather>", "city_info": "<background of the destination, at least once>",
 "intercity_transport": [{"mode": "flight" | "train" | "bus", "number": "<flight/train/bus number>",
   "from_city": "...", "to_city": "...", "departure_time": "HH:MM", "arrival_time": "HH:MM",
   "price": <CNY per person>, "seat_class": "<Economy Class | Business Class | Second Class Seat | First Class Seat>"}],
 "breakfast": <visit>, "lunch": <visit>, "dinner": <visit>,
 "attractions": [<visit>, ...], "entertainment": [<visit>, ...],
 "local_transport": [{"from": "<place>", "to": "<place>", "mode": "Taxi | Subway | Bus | Ride-sharing | Walking",
   "minutes": <from MapGuide>, "cost": <CNY for the party>}],
 "accommodation": {"id": "H...", "name": "...", "check_in_time": "HH:MM", "price": <CNY per room and night>,
   "description": "..."}}
where <visit> is {"id": "R... / A... / E...", "name": "...", "start_time": "HH:MM", "end_time": "HH:MM",
"price": <CNY per person>, "description": "..."}.
Use only POIs, services, prices and times the tools returned. Travel out on day 1 and back on the
last day; plan breakfast, lunch and dinner every day at usual times without repeating a
restaurant, a hotel every night but the last (check-in after 18:00), one to four attractions a
day between 09:00 and 21:00 with at least 30 minutes between activities, and stay within the
budget when the request states one."""


def plan_format() -> str:
    """How the final plan is written (docs/behavior2trip/plan_format.md in brief)."""
    return PLAN_FORMAT


NO_TRAJECTORY = ("Behavior trajectory: none is available for this user; their preferences "
                 "are unknown.")  # fmt: skip
ASK_NOTE = ("You may ask the user about their preferences with the AskUser tool, one question "
            "per call, at most {n} questions; each answer covers only what you ask.")  # fmt: skip


def user_message(request) -> str:
    """The task as Figure 11 ends: the behaviour trajectory, then the instruction (RQ1: a
    note that no trajectory is available, and how many questions AskUser answers)."""
    if getattr(request, "trajectory_withheld", False):
        ask = f"\n{ASK_NOTE.format(n=request.ask_limit)}" if request.ask_limit > 0 else ""
        return f"{NO_TRAJECTORY}{ask}\n\nInstruction: {request.instruction.text}"
    return (f"Behavior trajectory:\n{render_trajectory(request.trajectory)}\n\n"
            f"Instruction: {request.instruction.text}")  # fmt: skip
