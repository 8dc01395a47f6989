"""Utility tools: get_weekday, calculate, calculate_distance, notebook."""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Literal

from pydantic import Field

from travelgym.geo import KM_PER_MILE, driving_hours, driving_km, format_hours
from travelgym.suites.compass.context import CompassContext
from travelgym.toolkit import ContentError, tool
from travelgym.toolkit.budget import json_chars, page_starts
from travelgym.toolkit.calculator import CalculatorError, evaluate

NOTEBOOK_MAX_ENTRIES = 200
NOTEBOOK_MAX_CHARS = 10_000  # of a note as JSON text (escapes counted): any note fits a page
NotebookPage = Annotated[int, Field(ge=1, le=NOTEBOOK_MAX_ENTRIES)]
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
    page: NotebookPage = 1,
) -> dict:
    """The agent's scratch pad for notes that persist across the conversation.

    Args:
        action: 'write' (needs input_data), 'read' or 'delete' (need index), 'list_all'.
        input_data: The note to write.
        index: 0-based index of the note to read or delete.
        page: 1-based page of list_all, when the notes do not fit in one tool result.

    Returns:
        A confirmation with the index written or deleted, the note read, or all notes (with
        page, pages and next_page when they take more than one page).
    """
    notes = ctx.notebook
    if action == "write":
        if not input_data:
            raise ContentError("write needs input_data")
        if len(notes) >= NOTEBOOK_MAX_ENTRIES:
            raise ContentError(f"notebook is full ({NOTEBOOK_MAX_ENTRIES} notes); delete some")
        kept = _note_prefix(input_data)
        notes.append(kept)
        written = {"status": "written", "index": len(notes) - 1}
        if len(kept) < len(input_data):
            written["kept_chars"] = len(kept)
        return written
    if action == "list_all":
        return _notes_page([{"index": i, "note": n} for i, n in enumerate(notes)], page)
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


def _note_prefix(text: str) -> str:
    """The longest prefix of ``text`` that is at most :data:`NOTEBOOK_MAX_CHARS` characters as
    JSON text with its escapes (a plain ASCII note: its first NOTEBOOK_MAX_CHARS characters)."""
    limit = NOTEBOOK_MAX_CHARS + 2  # the quotes
    if json_chars(text[:NOTEBOOK_MAX_CHARS]) <= limit:
        return text[:NOTEBOOK_MAX_CHARS]
    low, high = 0, NOTEBOOK_MAX_CHARS  # escapes only lengthen: bisect on the prefix length
    while low < high:
        middle = (low + high + 1) // 2
        if json_chars(text[:middle]) <= limit:
            low = middle
        else:
            high = middle - 1
    return text[:low]


def _notes_page(entries: list[dict], page: int) -> dict:
    """Page ``page`` of list_all: every note when they all fit in one tool result (the document
    is then ``{"notes": [...]}`` alone), else as many whole notes as fit per page, with page,
    pages and next_page."""
    widest = len(entries) + 1
    envelope = {"notes": [], "page": widest, "pages": widest, "next_page": widest}
    starts = page_starts(json_chars(envelope), [json_chars(e) for e in entries])
    if len(starts) == 1 and page == 1:
        return {"notes": entries}
    pages = len(starts)
    start = starts[page - 1] if page <= pages else len(entries)
    end = starts[page] if page < pages else len(entries)
    out = {"notes": entries[start:end], "page": page, "pages": pages}
    if page < pages:
        out["next_page"] = page + 1
    return out
