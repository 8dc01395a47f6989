"""HTML tables of the report: score tables (one cell per run, group and metric, tagged so
tests and scripts can find them), the runs' facts, and a generic rendering of JSON-like results
(key/value tables, matrices, dotted-path rows)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from travelgym.core.columns import Column
from travelgym.report.markup import esc, fmt, pct

Row = tuple[str, str, str, dict[str, Any]]  # label, run label, group, aggregate


def _pairs(columns: Sequence[Column | tuple[str, str]]) -> list[tuple[str, str]]:
    return [(c.key, c.label) if isinstance(c, Column) else c for c in columns]


def metric_row(label: str, run: str, group: str, agg: dict[str, Any],
               columns: Sequence[Column | tuple[str, str]], tag_n: bool = False) -> str:  # fmt: skip
    """One row: the label, ``n``, then one percentage per ``(key, name)`` column; every value
    cell carries ``data-run``, ``data-group`` and ``data-metric`` (``n`` too when ``tag_n``)."""
    where = f'data-run="{esc(run)}" data-group="{esc(group)}"'
    n_attrs = f' {where} data-metric="n"' if tag_n else ""
    cells = [
        f'<th scope="row">{esc(label)}</th>',
        f'<td class="num"{n_attrs}>{agg.get("n", 0)}</td>',
    ]
    for key, _ in _pairs(columns):
        cells.append(f'<td class="num" {where} data-metric="{key}">{pct(agg.get(key))}</td>')
    return "<tr>" + "".join(cells) + "</tr>"


def metric_table(heading: str, css_id: str, columns: Sequence[Column | tuple[str, str]],
                 rows: Iterable[Row], tag_n: bool = False) -> str:  # fmt: skip
    """``<h3>heading</h3>`` and a ``table.metrics`` of percentages, one row per ``rows`` item;
    ``columns``: the suite's :class:`~travelgym.core.columns.Column` (or ``(key, label)``),
    each headed by its label with its JSON key in the tooltip."""
    head = ("<thead><tr><th></th><th>n</th>"
            + "".join(f'<th title="{esc(key)}">{esc(name)} (%)</th>'
                      for key, name in _pairs(columns))
            + "</tr></thead>")  # fmt: skip
    parts = [f'<h3>{esc(heading)}</h3><table class="metrics" id="{esc(css_id)}">{head}<tbody>']
    parts += [metric_row(*row, columns, tag_n) for row in rows]
    parts.append("</tbody></table>")
    return "\n".join(parts)


def facts_table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """The runs' facts (``table#run-facts``): one row of escaped values per run."""
    head = "<thead><tr>" + "".join(f"<th>{esc(h)}</th>" for h in headers) + "</tr></thead>"
    body = "".join("<tr>" + "".join(f"<td>{esc(v)}</td>" for v in row) + "</tr>" for row in rows)
    return f'<table class="runs" id="run-facts">{head}<tbody>{body}</tbody></table>'


# --------------------------------------------------------------------------- JSON-like values


def is_scalar(value: Any) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


def is_flat_list(value: Any) -> bool:
    return isinstance(value, list) and all(is_scalar(v) for v in value)


def cell(value: Any) -> str:
    """A ``<td>`` of a formatted value (right-aligned when a number)."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return f'<td class="num">{esc(fmt(value))}</td>'
    return f"<td>{esc(fmt(value))}</td>"


def _flat_dict(value: Any) -> bool:
    return isinstance(value, dict) and all(is_scalar(x) or is_flat_list(x) for x in value.values())


def render_value(value: Any, depth: int = 0, max_rows: int = 300) -> str:
    """A generic HTML rendering of JSON-like results: dicts of scalars become key/value tables,
    dicts (or lists) of flat dicts become matrices, deeper dicts sections."""
    if is_scalar(value) or is_flat_list(value):
        return f"<p>{esc(fmt(value))}</p>"
    if isinstance(value, list):
        if value and all(_flat_dict(v) for v in value):
            columns: list[str] = []
            for row in value:
                columns += [k for k in row if k not in columns]
            body = "".join("<tr>" + "".join(cell(row.get(c)) for c in columns) + "</tr>"
                           for row in value[:max_rows])  # fmt: skip
            more = (f"<p class='note'>{len(value) - max_rows} more rows not shown</p>"
                    if len(value) > max_rows else "")  # fmt: skip
            head = "".join(f"<th>{esc(c)}</th>" for c in columns)
            return f'<table class="analysis"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{more}'
        return "".join(render_value(v, depth + 1, max_rows) for v in value[:max_rows])
    if not isinstance(value, dict) or not value:
        return f"<p>{esc(fmt(value))}</p>"
    if _flat_dict(value):
        body = "".join(f"<tr><th scope='row'>{esc(k)}</th>{cell(v)}</tr>"
                       for k, v in list(value.items())[:max_rows])  # fmt: skip
        return f'<table class="analysis kv"><tbody>{body}</tbody></table>'
    inner = list(value.values())
    if all(v and _flat_dict(v) for v in inner):
        columns = []
        for row in inner:
            columns += [k for k in row if k not in columns]
        head = "<th></th>" + "".join(f"<th>{esc(c)}</th>" for c in columns)
        body = "".join(f"<tr><th scope='row'>{esc(k)}</th>"
                       + "".join(cell(row.get(c)) for c in columns) + "</tr>"
                       for k, row in list(value.items())[:max_rows])  # fmt: skip
        return (
            f'<table class="analysis"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
        )
    tag = f"h{min(6, 4 + depth)}"
    parts = []
    scalars = {k: v for k, v in value.items() if is_scalar(v) or is_flat_list(v)}
    if scalars:
        parts.append(render_value(scalars, depth + 1, max_rows))
    for key, sub in value.items():
        if key in scalars:
            continue
        section = f"<{tag}>{esc(key)}</{tag}>{render_value(sub, depth + 1, max_rows)}"
        parts.append(f'<div class="sub">{section}</div>' if depth else section)
    return "".join(parts)


def flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    """Leaf values of a JSON-like tree keyed by dotted paths (lists of scalars stay whole;
    list items that are dicts are named by their first string field, else by index)."""
    if is_scalar(value) or is_flat_list(value):
        return {prefix or "value": value}
    out: dict[str, Any] = {}
    if isinstance(value, dict):
        items = [(str(k), v) for k, v in value.items()]
    else:
        items = []
        for i, v in enumerate(value):
            label = (next((x for x in v.values() if isinstance(x, str)), None)
                     if isinstance(v, dict) else None)  # fmt: skip
            items.append((f"[{label}]" if label is not None else f"[{i}]", v))
    for key, sub in items:
        out.update(flatten(sub, f"{prefix}.{key}" if prefix else key))
    return out


def path_parts(path: str) -> list[str]:
    """The segments of a dotted path as :func:`flatten` writes it (``a.[x.y].b``: ``a``,
    ``[x.y]``, ``b``)."""
    return re.findall(r"\[[^\]]*\]|[^.\[\]]+", path)


def human_path(path: str, words: Mapping[str, str]) -> str:
    """A dotted path in words: each segment as ``words`` names it (else its underscores as
    spaces), joined by `` · ``."""
    return " \u00b7 ".join(words.get(p, p.replace("_", " ")) for p in path_parts(path))


def matrix(rows: dict[str, dict[str, Any]], columns: list[str], css_id: str,
           max_rows: int = 400, words: Mapping[str, str] | None = None) -> str:  # fmt: skip
    """A table of dotted paths (rows) by columns (e.g. runs): ``rows[column][path]``; each row
    is headed by its path in words (:func:`human_path`), the path itself in the tooltip."""
    paths: list[str] = []
    seen: set[str] = set()
    for column in columns:
        for p in rows.get(column, {}):
            if p not in seen:
                seen.add(p)
                paths.append(p)
    head = "<th></th>" + "".join(f"<th>{esc(c)}</th>" for c in columns)
    body = []
    for path in paths[:max_rows]:
        cells = "".join(cell(rows.get(c, {}).get(path)) for c in columns)
        label = human_path(path, words or {})
        body.append(f"<tr><th scope='row' title='{esc(path)}'>{esc(label)}</th>{cells}</tr>")
    more = (f"<p class='note'>{len(paths) - max_rows} more rows in the raw JSON</p>"
            if len(paths) > max_rows else "")  # fmt: skip
    return (f'<table class="analysis" id="{esc(css_id)}"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table>{more}")  # fmt: skip
