"""Argument helpers shared by the COMPASS tools: dates, paging, row conversion, park listings."""

from __future__ import annotations

import datetime as dt
import sqlite3
from typing import Annotated, Any

from pydantic import Field

from travelgym.suites.compass.context import CompassContext
from travelgym.suites.compass.packages import LAST_NIGHT, date_to_day, day_to_date
from travelgym.toolkit import ContentError
from travelgym.toolkit.budget import json_chars, pack_pages

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


def paged(ctx: CompassContext, key: tuple, head: dict[str, Any], items: list[dict[str, Any]],
          page: int, field: str = "results") -> dict[str, Any]:  # fmt: skip
    """Page ``page`` of a search's sorted ``items`` as the tool's document: ``head``, then the
    counts (total_results, page, pages, page_size), then the page's items under ``field``.

    A page holds up to :data:`PAGE_SIZE` items and only as many whole items as keep the
    document within :data:`~travelgym.toolkit.budget.RESULT_BUDGET_CHARS` (as JSON with
    non-ASCII escaped, the way a tool message carries it); a page cut short by that budget says
    ``next_page`` (the page that continues it). Pages follow one another in order, every item
    on exactly one of them; the partition depends only on the search, so it is computed once
    per ``key`` (the search's arguments) and kept in the tool cache."""
    starts = ctx.cache.pages(key, lambda: _page_starts(head, items, field))
    total, pages = len(items), len(starts)
    start = starts[page - 1] if page <= pages else total
    end = starts[page] if page < pages else total
    info: dict[str, Any] = {"total_results": total, "page": page, "pages": pages,
                            "page_size": PAGE_SIZE}  # fmt: skip
    if page < pages and end - start < PAGE_SIZE:
        info["next_page"] = page + 1
    return {**head, **info, field: items[start:end]}


def _page_starts(head: dict[str, Any], items: list[dict[str, Any]], field: str) -> list[int]:
    """Where each page of ``items`` begins (see :func:`paged`): the envelope is measured with
    page numbers as wide as any can be, so every page fits whatever its number."""
    widest = len(items) + 1  # a page holds at least one item: no page number is larger
    envelope = {**head, "total_results": len(items), "page": widest, "pages": widest,
                "page_size": PAGE_SIZE, "next_page": widest, field: []}  # fmt: skip
    return pack_pages(json_chars(envelope), items, PAGE_SIZE)


def flags(row: dict[str, Any], names: tuple[str, ...]) -> dict[str, bool]:
    return {n: bool(row[n]) for n in names}
