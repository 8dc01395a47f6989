"""The report page: one self-contained HTML document (inline CSS and JavaScript, the data as
JSON in ``<script type="application/json" id="report-data">``) around a suite's
:class:`~travelgym.report.body.ReportBody`.

The style sheet and scripts are files of the package (``travelgym/report/assets/``: the shared
``report.css``, ``error_hook.js``, ``dom.js``, ``viewer.js`` and ``tabs.js``; a suite keeps its own beside its
code, read with :func:`asset`). The viewer script of the page is one function: ``dom.js``, the
shared ``viewer.js`` (the data, run select, episode list, selection and URL hash) and the
suite's viewer script, which defines its hooks and calls ``startViewer`` (see ``viewer.js``).
Plain ES2017, no library.
"""

from __future__ import annotations

from functools import cache
from importlib import resources

from travelgym.report.body import ReportBody, ReportRun, Section, Viewer
from travelgym.report.markup import esc

PACKAGE = "travelgym.report"


@cache
def asset(package: str, *parts: str) -> str:
    """The text of the package data file ``parts`` (``"assets", "report.css"``) of ``package``."""
    node = resources.files(package)
    for part in parts:
        node = node.joinpath(part)
    return node.read_text(encoding="utf-8")


NO_VIEWER_JS = "document.documentElement.setAttribute('data-ready', '1');"


def _inline(text: str, tag: str) -> str:
    if f"</{tag}" in text.lower():
        raise ValueError(f"an inline <{tag}> must not contain </{tag}")
    return text


def error_hook_js() -> str:
    """The script that records errors into ``#console-errors`` (first in ``<head>``)."""
    return asset(PACKAGE, "assets", "error_hook.js")


def report_css(suite_css: str = "") -> str:
    """The shared style sheet, then the suite's rules."""
    return _inline(asset(PACKAGE, "assets", "report.css") + suite_css, "style")


def tabs_script() -> str:
    """The script that shows the sections one at a time beside the leaderboard (``tabs.js``)."""
    return _inline(asset(PACKAGE, "assets", "tabs.js"), "script")


def viewer_script(suite_js: str) -> str:
    """The page's viewer script: the DOM helpers, the shared scaffolding and ``suite_js`` in one
    strict function (so they share its names and leak none)."""
    shared = asset(PACKAGE, "assets", "dom.js") + "\n" + asset(PACKAGE, "assets", "viewer.js")
    return _inline(f"\n(function () {{\n'use strict';\n{shared}\n{suite_js}\n}})();\n", "script")


def _section(section: Section) -> str:
    return f'<section id="{esc(section.id)}">\n<h2>{esc(section.title)}</h2>\n{section.html}\n</section>'


def _viewer(viewer: Viewer) -> str:
    filters = "\n".join(
        f'<label>{esc(f.label)} <select id="{esc(f.id)}">'
        + "".join(f'<option value="{esc(v)}">{esc(t)}</option>' for v, t in f.options)
        + "</select></label>"
        for f in viewer.filters
    )
    return f"""<section id="viewer">
<h2>{esc(viewer.title)}</h2>
<div class="controls">
<label>Run <select id="run-select"></select></label>
{filters}
<label>Find <input id="task-filter" type="search" placeholder="{esc(viewer.find_placeholder)}"></label>
<span id="list-count"></span>
</div>
<div class="viewer-body">
<ol id="episode-list" aria-label="{esc(viewer.list_label)}"></ol>
<article id="episode-view"><p class="hint">{esc(viewer.hint)}</p></article>
</div>
</section>"""


def document(*, suite: str, title: str, generated: str, runs: list[ReportRun],
             body: ReportBody, notes: list[str], data_json: str) -> str:  # fmt: skip
    """The whole page. ``suite``: the suite's name (``data-suite`` of ``<body>``);
    ``data_json``: the embedded data, already escaped (:func:`~travelgym.report.markup.embed_json`)."""
    links = [(s.id, s.title) for s in body.sections]
    if body.viewer is not None:
        links.append(("viewer", body.viewer.title))
    nav = " ".join(f'<a href="#{esc(i)}">{esc(t)}</a>' for i, t in links)
    viewer = _viewer(body.viewer) if body.viewer is not None else ""
    script = viewer_script(body.js) if body.viewer is not None else NO_VIEWER_JS
    note_html = ""
    tampered = [n for n in notes if n.startswith("TAMPERED ")]
    if tampered:  # the first thing a reader sees: these figures may not be what was run
        note_html += ('<div class="tampered" id="report-tampered" role="alert" style="border:3px '
                      'solid #b00;padding:.5em 1em;color:#b00"><strong>TAMPERED</strong><ul>'
                      + "".join(f"<li>{esc(n)}</li>" for n in tampered) + "</ul></div>")  # fmt: skip
    if notes:
        note_html += ('<ul class="notes" id="report-notes">'
                     + "".join(f"<li>{esc(n)}</li>" for n in notes) + "</ul>")  # fmt: skip
    sections = "\n".join(_section(s) for s in body.sections)
    episodes = sum(len(r.episodes) for r in runs)
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="travelgym report ({esc(suite)})">
<title>{esc(title)}</title>
<script>{error_hook_js()}</script>
<style>{report_css(body.css)}</style>
</head>
<body data-suite="{esc(suite)}">
<header>
<h1>{esc(title)}</h1>
<p class="meta">Generated {esc(generated)} from {len(runs)} run(s), {episodes} episode(s).
{body.legend}</p>
<nav>{nav}</nav>
{note_html}
</header>
<main>
{sections}
{viewer}
</main>
<pre id="console-errors" hidden></pre>
<script type="application/json" id="report-data">{data_json}</script>
<script>{script}</script>
<script>{tabs_script()}</script>
</body>
</html>
"""
