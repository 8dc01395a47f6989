"""What the report shell and a suite hand each other: the runs as read (:class:`ReportRun`), the
suite's part of the page (:class:`ReportBody`, from :meth:`Suite.report_body
<travelgym.core.suite.Suite.report_body>`) and what the command prints (:class:`ReportResult`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class ReportRun:
    """One run directory as the shell read it: manifest, episodes (the suite's episode model)
    and a label unique among the report's runs."""

    directory: Path
    manifest: dict[str, Any]
    episodes: list[Any]  # those the metrics count: infra errors are only in ``accounting``
    label: str = ""
    # the run's outcome counts, usage and pass^k (travelgym.core.summary.ACCOUNTING)
    accounting: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Section:
    """One ``<section id=ID><h2>TITLE</h2>HTML</section>`` of the page, linked from the nav."""

    id: str
    title: str
    html: str


@dataclass(frozen=True)
class Filter:
    """A ``<select>`` of the viewer's controls: element id, label and ``(value, text)`` options
    (the suite's viewer script reads its value)."""

    id: str
    label: str
    options: tuple[tuple[str, str], ...]


def viewer_filters(level_label: str, levels: dict[str, str],
                   outcomes: dict[str, str]) -> tuple[Filter, Filter]:  # fmt: skip
    """A viewer's two filters, ``level-filter`` (labelled ``level_label``) and
    ``outcome-filter``: each offers ``all`` (the empty value) and then its ``value: text``
    options."""
    return (Filter("level-filter", level_label, (("", "all"), *levels.items())),
            Filter("outcome-filter", "Outcome", (("", "all"), *outcomes.items())))  # fmt: skip


@dataclass(frozen=True)
class Viewer:
    """The words of the episode viewer the shell lays out: its section's title, the filters
    besides run and text search, the search box's placeholder, the list's accessible name and
    the hint shown while no episode is picked."""

    title: str
    filters: tuple[Filter, ...]
    find_placeholder: str
    list_label: str
    hint: str


@dataclass
class ReportBody:
    """A suite's part of the report.

    ``sections``: the page's sections before the viewer, in order; ``legend``: HTML after the
    header's counts (what the numbers mean); ``data``: the suite's keys of the embedded
    ``report-data`` JSON (the shell adds ``generated`` first and ``max_result_chars`` last);
    ``css``/``js``: the suite's style sheet and viewer script (see
    :func:`travelgym.report.page.viewer_script`); ``verdicts``: the count the command prints;
    ``notes``: what was left out and why; ``timings``: seconds per stage (``*_s``);
    ``lazy_keys``: the bulky keys of the episode records in ``data["runs"][i]["episodes"]``
    that the page unpacks only when needed (:mod:`travelgym.report.lazy`): the list, the
    suite's ``listEntry`` and its filters with no value set must not read them;
    ``lazy_tables``: top-level keys of ``data`` that only those details use, packed alike."""

    sections: list[Section]
    legend: str = ""
    viewer: Viewer | None = None  # None: no episode viewer (and no viewer script)
    data: dict[str, Any] = field(default_factory=dict)
    css: str = ""
    js: str = ""
    verdicts: int = 0
    notes: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    lazy_keys: tuple[str, ...] = ()
    lazy_tables: tuple[str, ...] = ()


@dataclass
class ReportResult:
    """What ``travelgym report`` wrote."""

    path: Path
    size_bytes: int
    runs: int
    episodes: int
    verdicts: int
    timings: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # what was left out, and why
