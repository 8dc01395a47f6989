"""Permit tools: list_permits, search_permit_availability, get_permit_details."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import Field

from travelgym.suites.compass.context import CompassContext
from travelgym.suites.compass.packages import LAST_NIGHT, PackageIdError, PermitPackage, day_to_date
from travelgym.suites.compass.resolver import PackageNotFound, resolve
from travelgym.suites.compass.tools.common import park_listing, parse_date, rows
from travelgym.toolkit import ContentError, tool

_PERMIT_FIELDS = (
    "permit_id, template_name, permit_type, description, price_per_person, max_party_size,"
    " min_duration_days, max_duration_days, start_time"
)


@tool
def list_permits(ctx: CompassContext, park: str) -> dict:
    """List the permits and guided tours of a national park.

    Args:
        park: National park name (e.g. 'Yosemite National Park').

    Returns:
        The park and its permit templates with template_name, permit_type (day_hike,
        guided_tour, backpacking), price per person, party size limit and durations.
    """
    return park_listing(
        ctx,
        park,
        "permits",
        f"SELECT {_PERMIT_FIELDS} FROM permits WHERE park_id = ? ORDER BY permit_id",
    )


@tool
def search_permit_availability(
    ctx: CompassContext,
    park: str,
    template_name: str,
    date_range: str | None = None,
    duration_days: Annotated[int, Field(ge=1, le=14)] | None = None,
    party_size: Annotated[int, Field(ge=1, le=50)] | None = None,
) -> dict:
    """Search the dates on which a park permit can be booked.

    Args:
        park: National park name.
        template_name: Exact template_name from list_permits.
        date_range: 'YYYY-MM-DD to YYYY-MM-DD' (inclusive) or one date; default all August.
        duration_days: Trip length in days (backpacking); default the permit's minimum.
        party_size: Only dates with at least this many places left.

    Returns:
        The permit and its available dates in order, each with package_id (format
        permit_<permitid>_<day>_<days>), slots_remaining and total price for the party.
    """
    found = ctx.resolve_park(park)
    matches = rows(
        ctx.conn.execute(
            f"SELECT {_PERMIT_FIELDS} FROM permits WHERE park_id = ? AND lower(template_name) = ?",
            (found["park_id"], template_name.strip().lower()),
        )
    )
    if not matches:
        names = [
            r[0]
            for r in ctx.conn.execute(
                "SELECT template_name FROM permits WHERE park_id = ? ORDER BY permit_id",
                (found["park_id"],),
            )
        ]
        raise ContentError(
            f"no permit {template_name!r} at {found['name']}; templates: {', '.join(names) or 'none'}"
        )
    permit = matches[0]
    first, last = _date_range(date_range)
    days = duration_days or permit["min_duration_days"]
    if not permit["min_duration_days"] <= days <= permit["max_duration_days"]:
        raise ContentError(
            f"duration_days must be {permit['min_duration_days']}-{permit['max_duration_days']}"
            f" for {permit['template_name']}"
        )
    if party_size is not None and party_size > permit["max_party_size"]:
        raise ContentError(f"party_size exceeds this permit's limit of {permit['max_party_size']}")
    need = party_size or 1
    available = []
    for date, slots in ctx.conn.execute(
        "SELECT date, slots_remaining FROM permit_availability WHERE permit_id = ? AND date >= ?"
        " AND date <= ? AND slots_remaining >= ? ORDER BY date",
        (permit["permit_id"], day_to_date(first).isoformat(), day_to_date(last).isoformat(), need),
    ):
        day = int(date[-2:])
        item = {
            "package_id": PermitPackage(permit["permit_id"], day, days).id,
            "date": date,
            "slots_remaining": slots,
        }
        if party_size:
            item["total_price"] = round(permit["price_per_person"] * party_size, 2)
        available.append(item)
    return {
        "park": found["name"],
        "permit": permit,
        "duration_days": days,
        "available_dates": available,
    }


def _date_range(text: str | None) -> tuple[int, int]:
    if text is None or not text.strip():
        return 1, LAST_NIGHT
    parts = [p for p in re.split(r"\s+to\s+|\s*/\s*|\s*,\s*|\s+", text.strip()) if p]
    if len(parts) == 1:
        day = parse_date(parts[0], "date_range")
        return day, day
    if len(parts) != 2:
        raise ContentError("date_range must be 'YYYY-MM-DD to YYYY-MM-DD' or a single date")
    first, last = parse_date(parts[0], "date_range start"), parse_date(parts[1], "date_range end")
    if last < first:
        raise ContentError("date_range ends before it starts")
    return first, last


@tool
def get_permit_details(ctx: CompassContext, package_id: str) -> dict:
    """Get every detail of a permit package.

    Args:
        package_id: Permit package ID, format permit_<permitid>_<day>_<days>.

    Returns:
        The permit (park, name, type, price, party limit, durations), the date, duration,
        places left and whether it is bookable.
    """
    try:
        offer = resolve(ctx.conn, package_id, kind="permit")
    except (PackageIdError, PackageNotFound) as exc:
        raise ContentError(str(exc)) from None
    permit = dict(offer.permit)
    permit["park"] = ctx.parks[permit.pop("park_id")]["name"]
    return {
        "package_id": offer.package_id,
        **permit,
        "date": offer.date,
        "duration_days": offer.days,
        "slots_remaining": offer.slots_remaining,
        "bookable": offer.bookable,
    }
