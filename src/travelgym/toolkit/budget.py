"""The size budget of a tool result: how many characters of JSON an agent reads for one call.

One definition, :data:`RESULT_BUDGET_CHARS`, serves both sides. Tools that return lists page by
it (:func:`page_starts`: a page holds as many whole items as fit, and a cursor continues it), so
a result is never too large to begin with. The agent layer renders every result through
:func:`fit_json`, the last-resort guard: a document over the budget becomes a smaller complete
document (fewer whole items of its largest list and a note saying so, or an error naming its
size), never a prefix of the text.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

#: The characters of JSON one tool result may take in what an agent reads.
RESULT_BUDGET_CHARS = 12_000
#: What the guard tells an agent when no hint of the tool's own is given.
DEFAULT_HINT = "narrow the search or ask for a smaller page"
#: The key of the note the guard adds to a document whose list it shortened.
CUT_KEY = "truncated"
_SEPARATOR = len(", ")  # between list items in json.dumps' default layout
_HINT_CHARS = 300  # the most of a hint the guard's own documents repeat


# made once: json.dumps with a ``default`` builds an encoder on every call
_ENCODERS = {flag: json.JSONEncoder(default=str, ensure_ascii=flag) for flag in (True, False)}


def json_chars(value: Any, ensure_ascii: bool = True) -> int:
    """The length of ``value`` as JSON text in json.dumps' default layout (``ensure_ascii``:
    non-ASCII characters escaped, as a native tool message carries them; never shorter than
    the unescaped text)."""
    return len(_ENCODERS[ensure_ascii].encode(value))


def pack_pages(envelope_chars: int, items: Sequence[Any], page_size: int | None = None,
               budget: int = RESULT_BUDGET_CHARS) -> list[int]:  # fmt: skip
    """:func:`page_starts` of ``items`` themselves, measured lazily: a page's window of
    ``page_size`` items (the rest, without one) that fits whole is measured once as a list;
    only a window that does not fit is measured item by item. The same pages as measuring every
    item, at a fraction of the cost when most pages are full."""
    starts, start, total = [0], 0, len(items)
    while start < total:
        window = items[start : start + page_size] if page_size else items[start:]
        # the page's document: the envelope (its list empty, "[]") plus the window's list text
        if envelope_chars + json_chars(window) - 2 <= budget:
            start += len(window)
        else:  # the window's first page: where the next one starts (one item: it alone)
            first = page_starts(envelope_chars, [json_chars(i) for i in window], None, budget)
            start += first[1] if len(first) > 1 else len(window)
        if start < total:
            starts.append(start)
    return starts


def page_starts(envelope_chars: int, item_chars: Sequence[int], page_size: int | None = None,
                budget: int = RESULT_BUDGET_CHARS) -> list[int]:  # fmt: skip
    """The index of the first item of each page when items are packed in order, each page
    holding at most ``page_size`` items (None: no count limit) and as many whole items as keep
    its JSON within ``budget``: ``envelope_chars`` (the page's document with an empty list) plus
    the items' own lengths (``item_chars``) and the separators between them. A page holds at
    least one item, so an item too large for any page stands alone (the guard then answers for
    it). No items: one empty page, ``[0]``."""
    starts, used, count = [0], envelope_chars, 0
    for index, size in enumerate(item_chars):
        extra = size + (_SEPARATOR if count else 0)
        full = page_size is not None and count >= page_size
        if count and (full or used + extra > budget):
            starts.append(index)
            used, count, extra = envelope_chars, 0, size
        used += extra
        count += 1
    return starts


def fit_json(payload: Any, max_chars: int = RESULT_BUDGET_CHARS, hint: str = DEFAULT_HINT,
             ensure_ascii: bool = True) -> str:  # fmt: skip
    """``payload`` as JSON text of at most ``max_chars`` characters, always a complete document.

    A payload within the budget is rendered as it is. A larger one keeps the leading whole
    items of its largest list (at the top, or a value of the top-level object) that fit, with
    ``{"truncated": {"field", "shown", "total", "message"}}`` added to say so; when no list can
    be shortened enough, the answer is an error document naming the size
    (``{"error": {"category": "result_too_large", "message", "chars", "limit"}}``). ``hint``
    says what the agent can do instead (ask for fewer results, narrow the search)."""
    text = json.dumps(payload, default=str, ensure_ascii=ensure_ascii)
    if len(text) <= max_chars:
        return text
    hint = hint.strip()[:_HINT_CHARS] or DEFAULT_HINT
    shortened = _shorten_list(payload, max_chars, hint, ensure_ascii)
    if shortened is not None:
        return shortened
    message = (f"the result is {len(text):,} characters of JSON, over the {max_chars:,} a tool "
               f"result may hold; {hint}")  # fmt: skip
    error = {"error": {"category": "result_too_large", "message": message,
                       "chars": len(text), "limit": max_chars}}  # fmt: skip
    return json.dumps(error, ensure_ascii=ensure_ascii)


def _shorten_list(payload: Any, max_chars: int, hint: str, ensure_ascii: bool) -> str | None:
    """The payload with the longest prefix of its largest list that fits, and a note; None when
    there is no list to shorten or even its first item does not fit."""
    if isinstance(payload, list):
        payload, field = {"results": payload}, "results"
    elif isinstance(payload, dict) and CUT_KEY not in payload:
        lists = [k for k, v in payload.items() if isinstance(v, list) and v]
        if not lists:
            return None
        field = max(lists, key=lambda k: json_chars(payload[k], ensure_ascii))
    else:
        return None
    items = payload[field]

    def render(count: int) -> str:
        note = {"field": field, "shown": count, "total": len(items),
                "message": f"only the first {count} of {len(items)} {field} fit in "
                           f"{max_chars:,} characters; {hint}"}  # fmt: skip
        return json.dumps({**payload, field: items[:count], CUT_KEY: note}, default=str,
                          ensure_ascii=ensure_ascii)  # fmt: skip

    # the most items that fit: the length grows with the count, so bisect on it
    low, high = 0, len(items) - 1  # fewer than all: all of them did not fit
    while low < high:
        middle = (low + high + 1) // 2
        if len(render(middle)) <= max_chars:
            low = middle
        else:
            high = middle - 1
    if low == 0:
        return None
    return render(low)
