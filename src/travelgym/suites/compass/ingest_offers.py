"""The booking terms of one Booking.com rate block, mapped to the schema's vocabularies.

A block (an entry of the ``block`` list of a room-list / availability response) is one room
sold under one rate plan for the requested night. The mapping of every field is documented in
``docs/compass/ingest.md``.
"""

from __future__ import annotations

from typing import Any

from travelgym.suites.compass.ingest_json import Loc, check, get, get_path, lookup

CANCELLATION_TYPES = {
    "free_cancellation": "free_cancellation",
    "non_refundable": "non_refundable",
    "partially_refundable": "partially_refundable",
    "special_conditions": "partially_refundable",
}
PREPAYMENT_TYPES = {
    "no_prepayment": "no_prepayment",
    "pay_at_property": "no_prepayment",
    "pay_later": "no_prepayment",
    "prepayment": "prepayment_required",
    "prepayment_needed": "prepayment_required",
    "prepayment_required": "prepayment_required",
    "full_prepayment": "prepayment_required",
    "partial_prepayment": "prepayment_required",
    "pay_online": "prepayment_required",
}


def block_terms(block: Any, loc: Loc) -> tuple[float, int, str, str, str]:
    """(price, available, cancellation_policy, meal_plan, prepayment) of one rate block."""
    return (
        _price(block, loc),
        _available(block, loc),
        _cancellation(block, loc),
        _meal_plan(block, loc),
        _prepayment(block, loc),
    )


def _usd(amount: Any, currency: Any, loc: Loc, amount_key: str) -> float:
    value = check(amount, loc.key(amount_key), "number")
    if currency is not None and check(currency, loc.key("currency"), "str") != "USD":
        raise loc.key("currency").error(f"{currency!r} is not USD (request prices in USD)")
    if value <= 0:
        raise loc.key(amount_key).error(f"{value} is not a positive price")
    return round(value, 2)


def _price(block: dict, loc: Loc) -> float:
    min_price = get(block, "min_price", loc, "dict", required=False)
    if min_price is not None:
        at = loc.key("min_price")
        return _usd(get(min_price, "price", at, "number"), min_price.get("currency"), at, "price")
    gross = get_path(block, "product_price_breakdown.gross_amount", loc, "dict", required=False)
    if gross is None:
        raise loc.key("min_price").error("missing (nor product_price_breakdown.gross_amount)")
    at = loc.key("product_price_breakdown").key("gross_amount")
    return _usd(get(gross, "value", at, "number"), gross.get("currency"), at, "value")


def _available(block: dict, loc: Loc) -> int:
    key = "nr_available" if block.get("nr_available") is not None else "room_count"
    if block.get(key) is None:
        raise loc.key("nr_available").error("missing (nor room_count)")
    count = get(block, key, loc, "int")
    if count < 0:
        raise loc.key(key).error(f"{count} is negative")
    return count


def _cancellation(block: dict, loc: Loc) -> str:
    kind = get_path(block, "paymentterms.cancellation.type", loc, "str", required=False)
    if kind is not None:
        at = loc.key("paymentterms").key("cancellation").key("type")
        return lookup(CANCELLATION_TYPES, kind, at)
    if get(block, "is_free_cancellable", loc, "flag", required=False):
        return "free_cancellation"
    return "partially_refundable" if get(block, "refundable", loc, "flag") else "non_refundable"


def _meal_plan(block: dict, loc: Loc) -> str:
    if any(get(block, k, loc, "flag", required=False) for k in ("half_board", "full_board")):
        return "half_board"
    if get(block, "all_inclusive", loc, "flag", required=False):
        return "half_board"  # the schema's richest plan
    breakfast = get(block, "breakfast_included", loc, "flag", required=False)
    text = get(block, "mealplan", loc, "str", required=False)
    if text is None:
        if breakfast is None:
            raise loc.key("mealplan").error("missing (nor breakfast_included)")
        return "breakfast_included" if breakfast else "room_only"
    plan = _meal_from_text(text.lower())
    return "breakfast_included" if breakfast and plan == "room_only" else plan


def _meal_from_text(text: str) -> str:
    if any(k in text for k in ("half board", "full board", "all-inclusive", "all inclusive")):
        return "half_board"
    if "included" in text and ("dinner" in text or "lunch" in text):
        return "half_board"
    if "included" in text and "breakfast" in text:
        return "breakfast_included"
    return "room_only"  # "Breakfast costs US$15", "There is no meal option with this room."


def _prepayment(block: dict, loc: Loc) -> str:
    kind = get_path(block, "paymentterms.prepayment.type", loc, "str", required=False)
    if kind is not None:
        at = loc.key("paymentterms").key("prepayment").key("type")
        return lookup(PREPAYMENT_TYPES, kind, at)
    advance = get(block, "pay_in_advance", loc, "flag", required=False)
    if advance is None:
        raise loc.key("paymentterms").error("missing (nor pay_in_advance)")
    return "prepayment_required" if advance else "no_prepayment"
