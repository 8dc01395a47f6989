"""The prompts of TravelPlanner's LLM agents (our wording of the paper's planner and two-stage
prompts): the plan format, the sole-planning prompt with the reference information and the
tool-use prompt, in the native tool-calling, ReAct and B2T action formats."""

from __future__ import annotations

import json

from travelgym.suites.travelplanner.session import PlannerRequest

PLAN_FORMAT = """Write the plan as a JSON list with one object per day, each with the keys
"days" (1, 2, ...), "current_city" ("from A to B" on a travel day, else the city),
"transportation", "breakfast", "attraction", "lunch", "dinner" and "accommodation". Use "-" for
nothing. A restaurant, attraction or accommodation is written "Name, City" exactly as the
information names it; several attractions are "A, City;B, City;". A flight is "Flight Number:
F123, from A to B, Departure Time: 08:00, Arrival Time: 10:00"; a drive is "Self-driving, from A
to B, duration: ..., distance: ... km, cost: ..." (or "Taxi, ..."). Never mix self-driving with
flights or taxis. The last day has no accommodation."""

EXAMPLE = json.dumps([
    {"days": 1, "current_city": "from Ithaca to Charlotte",
     "transportation": "Flight Number: F3633413, from Ithaca to Charlotte, Departure Time: "
                       "05:38, Arrival Time: 07:46",
     "breakfast": "-", "attraction": "-", "lunch": "-", "dinner": "Bombay Vada Pav, Charlotte",
     "accommodation": "Affordable Spacious Refurbished Room in Bushwick!, Charlotte"},
    {"days": 2, "current_city": "Charlotte", "transportation": "-",
     "breakfast": "Olive Tree Cafe, Charlotte",
     "attraction": "The Charlotte Museum of History, Charlotte;", "lunch": "Birbal Ji Dhaba, "
     "Charlotte", "dinner": "Pind Balluchi, Charlotte",
     "accommodation": "Affordable Spacious Refurbished Room in Bushwick!, Charlotte"},
])  # fmt: skip

SOLE_SYSTEM = f"""You are a travel planner. From the reference information given, plan a trip
that meets every requirement of the query (days, cities, people, budget, house rules, room
type, cuisines, transportation). Use only places and transport the information names.

{PLAN_FORMAT}

For example (the first two days of a trip):
{EXAMPLE}"""

TOOL_SYSTEM = f"""You are a travel planner with tools. First collect what the plan needs:
CitySearch for the cities of a state, FlightSearch and GoogleDistanceMatrix for each leg,
AccommodationSearch, RestaurantSearch and AttractionSearch for each city; write each useful
result to the notebook with NotebookWrite. Then plan a trip that meets every requirement of the
query, using only what the tools returned.

{PLAN_FORMAT}"""

ANSWER_FORMS = {
    "tool": "When done, reply with the plan's JSON list and no tool call.",
    "react": "Each step write 'Thought: ...' then 'Action: ' and one JSON tool call "
             '{"name": ..., "arguments": {...}}; finish with Action: Finish[<the JSON plan>].',
    "b2t": "Each message may hold <think>...</think> and <tool_call>{\"name\": ..., "
           "\"arguments\": {...}}</tool_call> blocks; answer with <answer><the JSON "
           "plan></answer>.",
}  # fmt: skip


def system_prompt(request: PlannerRequest, form: str) -> str:
    """The system prompt for the request's mode, in action format ``form`` (``tool``,
    ``react`` or ``b2t``)."""
    if request.mode == "sole-planning":
        tail = "Answer with <answer><the JSON plan></answer>." if form == "b2t" else (
            "Answer with the plan's JSON list only.")  # fmt: skip
        return f"{SOLE_SYSTEM}\n\n{tail}"
    return f"{TOOL_SYSTEM}\n\n{ANSWER_FORMS[form]}"


def user_prompt(request: PlannerRequest) -> str:
    """The first user message: the reference information (sole planning) and the query."""
    if request.mode == "sole-planning":
        info = json.dumps(request.reference_information or [], ensure_ascii=False)
        return f"Given information: {info}\nQuery: {request.query}\nTravel Plan:"
    return f"Query: {request.query}"
