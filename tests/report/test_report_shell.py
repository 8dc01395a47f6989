"""The report shell without a browser: its CSS and JavaScript are package data an installed
wheel carries, the page's script is the shared scaffolding around the suite's, and the
embedded data survives values JSON cannot hold."""

from __future__ import annotations

import fnmatch
import json
import sys
from pathlib import Path

import pytest

import travelgym
from travelgym.report.markup import embed_json
from travelgym.report.page import asset, viewer_script

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    tomllib = pytest.importorskip("tomli")

PACKAGE = Path(travelgym.__file__).resolve().parent
PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"  # the checkout under test


def test_report_assets_are_package_data():
    globs = tomllib.loads(PYPROJECT.read_text())["tool"]["setuptools"]["package-data"]
    assets = [p for folder in ("report/assets", "suites/*/report_assets")
              for p in PACKAGE.glob(f"{folder}/*") if p.is_file()]  # fmt: skip
    assert {p.name for p in assets} >= {"report.css", "error_hook.js", "dom.js", "viewer.js"}
    for path in assets:
        package = ".".join(("travelgym", *path.parent.parent.relative_to(PACKAGE).parts))
        relative = f"{path.parent.name}/{path.name}"
        assert any(fnmatch.fnmatch(relative, g) for g in globs.get(package, [])), (
            package,
            relative,
        )


def test_viewer_script_is_one_function_around_the_suites_script():
    script = viewer_script("startViewer({ marker: 1 });")
    assert script.strip().startswith("(function () {\n'use strict';")
    assert script.strip().endswith("})();")
    dom, shared = (
        asset("travelgym.report", "assets", "dom.js"),
        asset("travelgym.report", "assets", "viewer.js"),
    )
    assert script.index(dom) < script.index(shared) < script.index("startViewer({ marker: 1 });")
    with pytest.raises(ValueError):
        viewer_script("var s = '</script>';")


def test_embedded_data_writes_nan_as_null():
    text = embed_json({"x": [1.5, float("nan")], "y": {"z": float("inf")}, "t": "<b>"})
    assert json.loads(text) == {"x": [1.5, None], "y": {"z": None}, "t": "<b>"}
    assert "<" not in text


def test_a_body_without_a_viewer_is_a_page_of_its_sections(tmp_path):
    from travelgym.report.body import ReportBody, ReportRun, Section
    from travelgym.report.page import document

    runs = [ReportRun(tmp_path, {}, [], label="toy <run>")]
    body = ReportBody(sections=[Section("summary", "Summary", "<table id='t'></table>")])
    page = document(suite="toy", title="Toy report", generated="now", runs=runs, body=body,
                    notes=["a <note>"], data_json=embed_json({"runs": []}))  # fmt: skip
    assert '<section id="summary">\n<h2>Summary</h2>' in page and 'id="viewer"' not in page
    assert '<nav><a href="#summary">Summary</a></nav>' in page
    assert "<li>a &lt;note&gt;</li>" in page and 'data-suite="toy"' in page
    assert page.count('id="report-data"') == 1 and "data-ready" in page
