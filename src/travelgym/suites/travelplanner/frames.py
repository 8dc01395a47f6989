"""Tables as TravelPlanner's reference information prints them (``pandas.DataFrame.to_string``:
a header line, then one line per row, every column right-justified, with or without the index
column), read back and written without pandas.

Because each column is right-justified under a right-justified header, a column's cells end
exactly where its header ends; the parser cuts every row at the header's right edges, so cells
may hold spaces (``"Entire home/apt"``, ``"2 hours 24 minutes"``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

_INDEX = re.compile(r"^\d+(?= )")
_FOOTER = re.compile(r"^\[\d+ rows x \d+ columns\]$")
_ELIDED = re.compile(r"^[.\s]+$")  # the "..." row a long frame prints in place of rows


@dataclass
class Table:
    """Rows read from table text (cells as text, keyed by column name) and how many lines of
    it could not be read as rows (an elided ``...`` line, a line too short)."""

    rows: list[dict[str, str]] = field(default_factory=list)
    skipped: int = 0


def _header_spans(header: str, columns: Sequence[str]) -> list[tuple[str, int]] | None:
    """(name, right edge) of every header cell, known columns by name and any other text as
    extra cells; ``None`` when a known column is missing."""
    spans: list[tuple[str, int, int]] = []
    start = 0
    for name in columns:
        at = _find_word(header, name, start)
        if at < 0:
            return None
        spans.append((name, at, at + len(name)))
        start = at + len(name)
    covered = [(a, b) for _, a, b in spans]
    for match in re.finditer(r"\S+", header):
        if not any(a <= match.start() < b for a, b in covered):
            spans.append((f"\x00{match.group()}", match.start(), match.end()))
    return [(name, end) for name, _, end in sorted(spans, key=lambda s: s[2])]


def _find_word(text: str, word: str, start: int) -> int:
    """The first position from ``start`` where ``word`` stands between spaces (or the ends)."""
    at = text.find(word, start)
    while at >= 0:
        before = at == 0 or text[at - 1] == " "
        after = at + len(word) == len(text) or text[at + len(word)] == " "
        if before and after:
            return at
        at = text.find(word, at + 1)
    return -1


def parse_table(text: str, columns: Sequence[str]) -> Table | None:
    """Read table text whose header holds ``columns`` (in that order; other columns are
    dropped). ``None``: the text is not such a table (no header with those columns)."""
    lines = [line.rstrip() for line in text.splitlines() if line.strip()]
    if not lines:
        return None
    spans = _header_spans(lines[0], columns)
    if spans is None:
        return None
    body = [line for line in lines[1:] if not _FOOTER.match(line.strip())]
    table = Table(skipped=sum(1 for line in body if _ELIDED.match(line)))
    body = [line for line in body if not _ELIDED.match(line)]
    # the index column (unnamed, left-justified) ends where the widest index label ends
    index_edge = 0
    if lines[0][: spans[0][1]].startswith(" ") and body:
        labels = [_INDEX.match(line) for line in body]
        if all(labels):
            index_edge = max(m.end() for m in labels)  # type: ignore[union-attr]
    last_edge = spans[-1][1]
    for line in body:
        if len(line) != last_edge:
            table.skipped += 1
            continue
        row, left = {}, index_edge
        for name, edge in spans:
            if not name.startswith("\x00"):
                row[name] = line[left:edge].strip()
            left = edge
        table.rows.append(row)
    return table


def render_table(columns: Sequence[str], rows: Sequence[dict[str, object]],
                 index: bool = True) -> str:  # fmt: skip
    """Rows as ``DataFrame.to_string`` prints them (``None`` as ``NaN``; floats as given)."""
    cells = [[_cell(row.get(c)) for c in columns] for row in rows]
    widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(columns)]
    labels = [str(i) for i in range(len(rows))]
    index_width = max((len(label) for label in labels), default=0) if index else 0
    sep = "  " if index else " "

    def line(label: str, values: list[str]) -> str:
        parts = [v.rjust(w) for v, w in zip(values, widths, strict=True)]
        lead = label.ljust(index_width) + sep if index else ""
        return lead + (sep if index else " ").join(parts)

    out = [line("", list(columns))]
    out += [line(label, row) for label, row in zip(labels, cells, strict=True)]
    return "\n".join(out)


def _cell(value: object) -> str:
    if value is None:
        return "NaN"
    return str(value)


def render_records(rows: Sequence[dict[str, object]], index: bool = True) -> str:
    """Records (as ``DataFrame.to_dict("records")`` gives them, e.g. from JSON) as
    ``pandas.DataFrame(rows).to_string(index=index)`` prints them with the default options, so
    the rows of TravelPlanner's JSON reference information become the text of its Hugging Face
    export: columns in first-seen order; a column of whole numbers stays whole, one mixing in
    fractions or missing values is printed as floats (6 decimals, trailing zeros trimmed alike
    across the column); missing values print ``NaN``; numeric columns and, with the index,
    every cell get the leading space pandas gives them."""
    columns: list[str] = []
    for row in rows:
        columns += [c for c in row if c not in columns]
    strcols = []
    for name in columns:
        values = [row.get(name) for row in rows]
        cells, numeric = _format_column(values, leading=index)
        header = (" " + name) if numeric else name
        width = max([len(header)] + [len(c) for c in cells])
        strcols.append([header.rjust(width)] + [c.rjust(width) for c in cells])
    if index:
        labels = [str(i) for i in range(len(rows))]
        width = max((len(label) for label in labels), default=0)
        strcols.insert(0, [" " * width] + [label.ljust(width) for label in labels])
    return "\n".join(" ".join(line) for line in zip(*strcols, strict=True))


def _missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and value != value)


def _format_column(values: list[object], leading: bool) -> tuple[list[str], bool]:
    """One column's cells as pandas formats them, and whether the column is numeric."""
    present = [v for v in values if not _missing(v)]
    if present and all(isinstance(v, bool) for v in present) and len(present) == len(values):
        return [(" " if leading else "") + str(v) for v in values], True
    if present and all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return [f"{v: d}" if leading else f"{v:d}" for v in values], True  # type: ignore[str-format]
    numbers = all(_missing(v) or isinstance(v, (int, float)) and not isinstance(v, bool)
                  for v in values)  # fmt: skip
    if numbers and (present or any(isinstance(v, float) for v in values)):
        floats = [None if _missing(v) else float(v) for v in values]  # type: ignore[arg-type]
        return _format_floats(floats, leading), True
    # text: a missing cell is NaN (pandas' string columns); a column of nothing but None stays
    # an object column, printed "None"
    gap = "NaN" if present else "None"
    return [(" " if leading else "") + (gap if _missing(v) else str(v)) for v in values], False


def _format_floats(values: list[float | None], leading: bool, digits: int = 6) -> list[str]:
    """pandas' float column: fixed ``digits`` decimals trimmed alike, or scientific notation
    when a value would print as 0 or a large value makes the column too wide."""
    space = " " if leading else ""

    def formatted(kind: str) -> list[str]:
        return ["NaN" if v is None else format(v, f"{space}.{digits}{kind}") for v in values]

    cells = _trim_zeros(formatted("f"))
    numbers = [abs(v) for v in values if v is not None]
    too_long = max((len(c) for c in cells), default=0) > digits + 6
    large = any(v > 1e6 for v in numbers)
    small = any(0 < v < 10**-digits for v in numbers)
    if small or (too_long and large):
        cells = _trim_zeros(formatted("e"))
    return cells


_DECIMAL = re.compile(r"^\s*[+-]?[0-9]+\.[0-9]*$")


def _trim_zeros(cells: list[str]) -> list[str]:
    """Trailing zeros dropped from every number of a column while all of them end in one,
    keeping a digit after the point (pandas' ``_trim_zeros_float``)."""
    while True:
        numbers = [c for c in cells if _DECIMAL.match(c)]
        if not numbers or not all(c.endswith("0") for c in numbers):
            break
        cells = [c[:-1] if _DECIMAL.match(c) else c for c in cells]
    return [c + "0" if _DECIMAL.match(c) and c.endswith(".") else c for c in cells]
