"""Small text helpers of the report: HTML escaping, value formatting, cutting long texts, and
JSON that is safe inside a ``<script type="application/json">`` element."""

from __future__ import annotations

import html
import json
import math
from typing import Any

DEFAULT_MAX_RESULT_CHARS = 2000  # tool results longer than this are cut in the embedded data
MAX_ARGUMENT_CHARS = 20000  # tool-call arguments (e.g. code) longer than this are cut
MAX_TEXT_CHARS = 50000  # one turn's text
DASH = "\u2013"


def esc(value: Any) -> str:
    """``value`` as HTML text (quotes escaped too, so it may go in an attribute)."""
    return html.escape(str(value), quote=True)


def clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, saying how long it was."""
    if len(text) <= limit:
        return text
    return text[:limit] + f"\u2026 [cut: {len(text):,} characters in all]"


def json_text(value: Any) -> str:
    """A string as is, anything else as compact JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)


def finite(obj: Any) -> Any:
    """Replace NaN and infinities (not JSON) with None, recursively."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {str(k): finite(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [finite(v) for v in obj]
    return obj


def _json_default(value: Any) -> Any:
    return str(value)


def embed_json(data: Any) -> str:
    """JSON for a ``<script type="application/json">`` element: every ``<`` is written as
    ``\\u003c`` (so no ``</script>``, ``<!--`` or ``<script`` can end or confuse the element),
    ``>`` and ``&`` likewise, and U+2028/U+2029 are escaped too. NaN and infinities become
    ``null``. ``JSON.parse`` reads the text back unchanged."""
    try:
        text = json.dumps(data, separators=(",", ":"), ensure_ascii=False, allow_nan=False,
                          default=_json_default)  # fmt: skip
    except ValueError:  # a NaN somewhere: clean the whole tree (rare, so not done up front)
        text = json.dumps(finite(data), separators=(",", ":"), ensure_ascii=False,
                          allow_nan=False, default=_json_default)  # fmt: skip
    return (text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))  # fmt: skip


def fmt(value: Any) -> str:
    """A JSON-like value as table text: floats to a few significant digits, big integers with
    thousands separators, lists shortened, ``None`` and non-finite numbers as a dash."""
    if value is None:
        return DASH
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if not math.isfinite(value):
            return DASH
        if value == int(value) and abs(value) < 1e15:
            return f"{value:.1f}"
        return (
            f"{value:.4g}" if abs(value) < 1e-3 or abs(value) >= 1e5 else f"{value:.3f}".rstrip("0")
        )
    if isinstance(value, int):
        return f"{value:,}" if abs(value) >= 10000 else str(value)
    if isinstance(value, list | tuple):
        shown = ", ".join(fmt(v) for v in value[:20])
        return shown + (f", \u2026 ({len(value)} in all)" if len(value) > 20 else "")
    return str(value)


def pct(value: Any) -> str:
    """A percentage cell: one decimal, or a dash."""
    return f"{value:.1f}" if isinstance(value, int | float) else DASH
