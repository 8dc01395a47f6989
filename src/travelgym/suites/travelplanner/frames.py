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
