"""Argument helpers shared by the COMPASS tools: dates, paging, row conversion, park listings."""

from __future__ import annotations

import datetime as dt
import sqlite3
from typing import Annotated, Any

from pydantic import Field

from travelgym.suites.compass.context import CompassContext
from travelgym.suites.compass.packages import LAST_NIGHT, date_to_day, day_to_date
from travelgym.toolkit import ContentError

PAGE_SIZE = 20
Page = Annotated[int, Field(ge=1, le=1000, description="1-based page of results (20 per page).")]
PositiveCount = Annotated[int, Field(ge=1, le=50)]


def parse_date(value: str, name: str, last_day: int = LAST_NIGHT) -> int:
    """Parse a YYYY-MM-DD date of the booking window and return its day number (1 = Aug 1)."""
    try:
        date = dt.date.fromisoformat(value.strip())
    except (ValueError, AttributeError):
        raise ContentError(f"{name} {value!r} is not a date in YYYY-MM-DD format") from None
    day = date_to_day(date)
    if not 1 <= day <= last_day:
        raise ContentError(
            f"{name} {value} is outside the booking window: data covers "
            f"{day_to_date(1)} to {day_to_date(last_day)}"
        )
    return day


def rows(cur: sqlite3.Cursor) -> list[dict[str, Any]]:
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, r, strict=True)) for r in cur.fetchall()]


def park_listing(ctx: CompassContext, park_name: str, key: str, sql: str) -> dict[str, Any]:
    """The named park and, under ``key``, the rows of ``sql`` (one ``?``: the park's id)."""
    park = ctx.resolve_park(park_name)
    return {"park": park["name"], key: rows(ctx.conn.execute(sql, (park["park_id"],)))}


def page_of(items: list[Any], page: int) -> tuple[list[Any], dict[str, Any]]:
    """Slice one page and describe it (total, page, pages, page size)."""
    total = len(items)
    pages = max(1, -(-total // PAGE_SIZE))
    start = (page - 1) * PAGE_SIZE
    return items[start : start + PAGE_SIZE], {
        "total_results": total,
        "page": page,
        "pages": pages,
        "page_size": PAGE_SIZE,
    }


def flags(row: dict[str, Any], names: tuple[str, ...]) -> dict[str, bool]:
    return {n: bool(row[n]) for n in names}
