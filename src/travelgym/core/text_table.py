"""The shared writer of the text a command prints from a suite's typed results: an aligned
table, and nested fields as indented ``key: value`` lines. Suites return data; turning it into
text is this module's (a suite may still write its own text where its figures need it)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from travelgym.core.columns import Column, table, text_column


def cell(value: Any) -> str:
    """One value as table text: floats with one decimal, ``None`` as ``-``."""
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.1f}"
    return str(value)


def format_table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """``rows`` under ``header``, the first column left-aligned and the others right-aligned:
    :func:`travelgym.core.columns.table`, the one table writer, over cells written by
    :func:`cell` (for tables whose columns are not declared figures)."""
    columns = [text_column(header[0]), *(Column(h, h, unit="", decimals=0) for h in header[1:])]
    return table(columns, [[cell(v) for v in row] for row in rows])


def format_fields(fields: Mapping[str, Any], indent: int = 0) -> str:
    """``fields`` as ``key: value`` lines, a nested mapping indented under its key and a list
    of scalars joined by commas."""
    lines, pad = [], "  " * indent
    for key, value in fields.items():
        if isinstance(value, Mapping):
            lines += (
                [f"{pad}{key}:", format_fields(value, indent + 1)] if value else [f"{pad}{key}: -"]
            )
        elif isinstance(value, list | tuple) and all(
            not isinstance(v, Mapping | list) for v in value
        ):
            lines.append(f"{pad}{key}: {', '.join(cell(v) for v in value) or '-'}")
        else:
            lines.append(f"{pad}{key}: {cell(value)}")
    return "\n".join(lines)


def metrics_table(results: Mapping[str, Mapping[str, float]]) -> str:
    """Headline figures by agent label (label -> name -> value) as one table, the names of
    every row as columns in order of first appearance."""
    names = list(dict.fromkeys(k for figures in results.values() for k in figures))
    rows = [[label, *(figures.get(k) for k in names)] for label, figures in results.items()]
    return format_table(["agent", *names], rows)
