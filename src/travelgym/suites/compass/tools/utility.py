"""Utility tools: get_weekday, calculate, calculate_distance, notebook."""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Literal

from pydantic import Field

from travelgym.geo import KM_PER_MILE, driving_hours, driving_km, format_hours
from travelgym.suites.compass.context import CompassContext
from travelgym.toolkit import ContentError, tool
from travelgym.toolkit.calculator import CalculatorError, evaluate

NOTEBOOK_MAX_ENTRIES = 200
NOTEBOOK_MAX_CHARS = 10_000
Latitude = Annotated[float, Field(ge=-90, le=90, allow_inf_nan=False)]
Longitude = Annotated[float, Field(ge=-180, le=180, allow_inf_nan=False)]


@tool
def get_weekday(date_str: str) -> dict:
    """Return the weekday name of a date.

    Args:
        date_str: Date in YYYY-MM-DD format.

    Returns:
        The date and its weekday name (e.g. 'Friday').
    """
    try:
        date = dt.date.fromisoformat(date_str.strip())
    except ValueError:
        raise ContentError(f"{date_str!r} is not a date in YYYY-MM-DD format") from None
    return {"date": date.isoformat(), "weekday": date.strftime("%A")}


@tool
def calculate(expression: str) -> dict:
    """Evaluate an arithmetic expression (+ - * / // % ** parentheses, abs/round/min/max/sqrt).

    Args:
        expression: Arithmetic expression, e.g. '100 + 200 * 3'.

    Returns:
        The expression and its numerical result.
    """
    try:
        result = evaluate(expression)
    except CalculatorError as exc:
        raise ContentError(f"cannot calculate {expression[:80]!r}: {exc}") from None
    return {"expression": expression, "result": result}


@tool
def calculate_distance(lat1: Latitude, lon1: Longitude, lat2: Latitude, lon2: Longitude) -> dict:
    """Estimate driving distance and time between two coordinates.

    Args:
        lat1: Latitude of the starting point.
        lon1: Longitude of the starting point.
        lat2: Latitude of the destination.
        lon2: Longitude of the destination.

    Returns:
        Estimated driving time (e.g. '2h 15m'), hours, kilometres and miles.
    """
    hours = driving_hours(lat1, lon1, lat2, lon2)
    km = driving_km(lat1, lon1, lat2, lon2)
    return {
        "driving_time": format_hours(hours),
        "driving_hours": round(hours, 2),
        "distance_km": round(km, 1),
        "distance_miles": round(km / KM_PER_MILE, 1),
    }


@tool
def notebook(
    ctx: CompassContext,
    action: Literal["write", "read", "delete", "list_all"],
    input_data: str | None = None,
    index: Annotated[int, Field(ge=0)] | None = None,
) -> dict:
    """The agent's scratch pad for notes that persist across the conversation.

    Args:
        action: 'write' (needs input_data), 'read' or 'delete' (need index), 'list_all'.
        input_data: The note to write.
        index: 0-based index of the note to read or delete.

    Returns:
        A confirmation with the index written or deleted, the note read, or all notes.
    """
    notes = ctx.notebook
    if action == "write":
        if not input_data:
            raise ContentError("write needs input_data")
        if len(notes) >= NOTEBOOK_MAX_ENTRIES:
            raise ContentError(f"notebook is full ({NOTEBOOK_MAX_ENTRIES} notes); delete some")
        notes.append(input_data[:NOTEBOOK_MAX_CHARS])
        return {"status": "written", "index": len(notes) - 1}
    if action == "list_all":
        return {"notes": [{"index": i, "note": n} for i, n in enumerate(notes)]}
    if index is None or index >= len(notes):
        raise ContentError(
            f"{action} needs an index between 0 and {len(notes) - 1}"
            if notes
            else "the notebook is empty"
        )
    if action == "read":
        return {"index": index, "note": notes[index]}
    removed = notes.pop(index)
    return {"status": "deleted", "index": index, "note": removed}
