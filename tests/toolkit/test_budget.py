"""page_starts: packing a list into pages of whole items within the result size budget."""

from __future__ import annotations

import json
import random

import pytest

from travelgym.toolkit.budget import json_chars, pack_pages, page_starts


def page_length(envelope: int, sizes: list[int]) -> int:
    return envelope + sum(sizes) + 2 * max(0, len(sizes) - 1)


@pytest.mark.parametrize("seed", range(20))
def test_pages_are_maximal_runs_of_whole_items_within_the_budget(seed):
    rng = random.Random(seed)
    sizes = [rng.randint(1, 900) for _ in range(rng.randint(0, 300))]
    envelope, budget = rng.randint(2, 400), rng.randint(1000, 12_000)
    page_size = rng.choice([None, 20])
    starts = page_starts(envelope, sizes, page_size, budget)
    assert starts[0] == 0 and starts == sorted(set(starts))
    bounds = list(zip(starts, [*starts[1:], len(sizes)], strict=True))
    assert all(end > start for start, end in bounds) or sizes == []  # no empty page
    for start, end in bounds:
        page = sizes[start:end]
        assert page_length(envelope, page) <= budget
        assert page_size is None or len(page) <= page_size
        if end < len(sizes):  # closed early only because the next item would not fit
            full = page_size is not None and len(page) == page_size
            assert full or page_length(envelope, sizes[start : end + 1]) > budget


def test_the_arithmetic_is_json_dumps_own_length():
    items = [{"a": "é" * i, "b": [i, None]} for i in range(30)]
    doc = {"head": "x", "results": []}
    for count in (0, 1, 7, 30):
        assert len(json.dumps({**doc, "results": items[:count]})) == page_length(
            json_chars(doc), [json_chars(i) for i in items[:count]])  # fmt: skip


def test_an_item_larger_than_the_budget_stands_alone():
    assert page_starts(10, [5, 50, 5], None, 30) == [0, 1, 2]
    assert page_starts(10, [], 20, 30) == [0]


@pytest.mark.parametrize("seed", range(20))
def test_packing_items_lazily_gives_the_pages_of_measuring_each(seed):
    """pack_pages measures a window that fits once: the pages are page_starts' of every
    item's own length, whatever the sizes (an item over the budget included)."""
    rng = random.Random(seed)
    items = [{"id": k, "text": "é" * rng.choice([0, 5, 80, 400, 3000])}
             for k in range(rng.randint(0, 200))]  # fmt: skip
    envelope, budget = rng.randint(2, 400), rng.randint(1000, 12_000)
    for page_size in (None, 1, 20):
        expected = page_starts(envelope, [json_chars(i) for i in items], page_size, budget)
        assert pack_pages(envelope, items, page_size, budget) == expected
