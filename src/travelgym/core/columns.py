"""One definition of a table column and one writer of tables from it.

A :class:`Column` names a figure once: the key it has in ``--json`` output (a dotted path where
it is nested), the label every table prints for it, its unit, how many decimals it is printed
with and a one-line legend. ``run``, ``score``, ``analyze`` and the report all print a suite's
figures through the same columns (the suite declares them:
:attr:`travelgym.core.suite.Suite.metric_columns`), so one figure has one name and one precision
wherever it is shown.

The writer is plain text, stable for snapshots and pipes: no colour, no box drawing, columns
separated by at least two spaces (a label never holds two spaces in a row, so a header splits
back into its labels on runs of two or more spaces).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

MISSING = "-"  # what a cell shows for a figure that has no value (no judge, no episode, ...)


@dataclass(frozen=True)
class Column:
    """One column: ``key`` (its JSON key or dotted path), ``label`` (the header text),
    ``unit`` (``%``, ``turns``, ...; empty for text and counts), ``decimals`` (``None``: the
    value is printed as it is, text left-aligned), ``scale`` (a stored fraction printed as a
    percentage has 100) and ``legend`` (one line saying what it means)."""

    key: str
    label: str
    unit: str = "%"
    decimals: int | None = 1
    legend: str = ""
    scale: float = 1.0

    def __post_init__(self) -> None:
        if "  " in self.label:
            raise ValueError(f"column label {self.label!r} holds two spaces in a row")

    @property
    def numeric(self) -> bool:
        """Whether the column holds numbers (right-aligned)."""
        return self.decimals is not None

    @property
    def heading(self) -> str:
        """The label with its unit, as the HTML tables head it: ``FR (%)``."""
        return f"{self.label} ({self.unit})" if self.unit else self.label

    def text(self, value: Any) -> str:
        """``value`` as this column prints it: numbers with :attr:`decimals` decimals (after
        :attr:`scale`), ``None`` as ``-``, text (an already formatted cell) as it is."""
        if value is None:
            return MISSING
        if (self.decimals is not None and isinstance(value, int | float)
                and not isinstance(value, bool)):  # fmt: skip
            return f"{value * self.scale:.{self.decimals}f}"
        return str(value)

    def value(self, record: Mapping[str, Any]) -> Any:
        """The column's value in ``record`` (its key, a dotted path, followed into mappings)."""
        node: Any = record
        for part in self.key.split("."):
            if not isinstance(node, Mapping) or part not in node:
                return None
            node = node[part]
        return node


def text_column(key: str, label: str | None = None, legend: str = "") -> Column:
    """A column of text (an agent, a group, a bin): left-aligned, printed as it is."""
    return Column(key, label if label is not None else key, unit="", decimals=None, legend=legend)


#: the episode count every metric table prints beside its figures
N = Column("n", "n", unit="", decimals=0, legend="episodes the figures count (infra errors are "
           "left out unless the run counts them as failures)")  # fmt: skip


def table(columns: Sequence[Column], rows: Iterable[Sequence[Any] | Mapping[str, Any]],
          title: str | None = None) -> str:  # fmt: skip
    """``rows`` under the columns' labels, each cell written by its column (a row is a
    sequence in the columns' order or a mapping read by each column's key); text columns
    left-aligned, numbers right-aligned, two spaces between columns. ``title``: a line above,
    underlined with dashes."""
    texts = [[c.text(c.value(row) if isinstance(row, Mapping) else row[i])
              for i, c in enumerate(columns)] for row in rows]  # fmt: skip
    header = [c.label for c in columns]
    widths = [max(len(r[i]) for r in (header, *texts)) for i in range(len(columns))]
    lines = ["  ".join(text.rjust(w) if c.numeric else text.ljust(w)
                       for text, c, w in zip(row, columns, widths, strict=True)).rstrip()
             for row in (header, *texts)]  # fmt: skip
    if title:
        lines = [title, "-" * len(title), *lines]
    return "\n".join(lines)


def unique(columns: Iterable[Column]) -> list[Column]:
    """``columns`` without repeats of a label (the first kept), in order."""
    seen: dict[str, Column] = {}
    for column in columns:
        seen.setdefault(column.label, column)
    return list(seen.values())


def legend(columns: Iterable[Column], title: str = "columns") -> str:
    """One line per column (each label once): its label, unit, meaning and JSON key."""
    kept = unique(columns)
    rows = [[c.label, c.unit or MISSING, c.legend or MISSING, c.key] for c in kept]
    spec = [text_column("label", "column"), text_column("unit"), text_column("legend", "meaning"),
            text_column("key", "JSON key")]  # fmt: skip
    return table(spec, rows, title=title)


def present(
    columns: Sequence[Column], records: Iterable[Mapping[str, Any]], optional: Iterable[str]
) -> list[Column]:
    """``columns`` less the ``optional`` keys that no record has a value for (a judge's pass
    rate in runs without a judge, ...)."""
    records = list(records)
    drop = {k for k in optional if all(r.get(k) is None for r in records)}
    return [c for c in columns if c.key not in drop]
