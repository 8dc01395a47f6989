"""The 24 city centres are vendored (pyecharts is no dependency): the table holds each city with
the coordinates the database has always used, a fresh build keeps the reference content hash,
and neither the install nor a build pulls pyecharts in."""

from __future__ import annotations

import importlib.metadata
import json
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

from travelgym.db import connect_readonly
from travelgym.suites.behavior2trip import catalog, generate
from travelgym.suites.behavior2trip.vocab import CITIES

from .test_database_build import SMALL_SEED0_HASH

ROOT = Path(__file__).resolve().parents[3]

# catalog.city_coordinates() as it was when read from pyecharts 2.1.0's
# datasets/city_coordinates.json (the entries "<name_zh>市", [lon, lat] there), printed before the
# table was vendored: (lat, lon).
PYECHARTS_2_1_0 = {
    "Beijing": (39.9, 116.4), "Shanghai": (31.23, 121.47), "Guangzhou": (23.13, 113.27),
    "Shenzhen": (22.55, 114.05), "Chengdu": (30.67, 104.07), "Chongqing": (29.57, 106.55),
    "Hangzhou": (30.28, 120.15), "Xi'an": (34.27, 108.93), "Nanjing": (32.07, 118.78),
    "Suzhou": (31.3, 120.58), "Wuhan": (30.6, 114.3), "Changsha": (28.23, 112.93),
    "Xiamen": (24.48, 118.08), "Qingdao": (36.07, 120.38), "Kunming": (25.05, 102.72),
    "Guilin": (25.28, 110.28), "Sanya": (18.25, 109.5), "Lijiang": (26.88, 100.23),
    "Harbin": (45.8, 126.53), "Tianjin": (39.12, 117.2), "Dalian": (38.92, 121.62),
    "Zhangjiajie": (29.13, 110.47), "Huangshan": (29.72, 118.33), "Lhasa": (29.65, 91.13),
}  # fmt: skip


def test_the_vendored_table_holds_the_24_cities_as_pyecharts_gave_them():
    coords = catalog.city_coordinates()
    assert tuple(coords) == CITIES and len(coords) == 24
    assert coords == PYECHARTS_2_1_0
    data = json.loads(Path(catalog.__file__).with_name("city_coordinates.json").read_text())
    assert "pyecharts 2.1.0" in data["source"] and "MIT" in data["source"]
    assert {name: tuple(v) for name, v in data["cities"].items()} == PYECHARTS_2_1_0


@pytest.mark.slow
def test_a_build_from_the_vendored_table_keeps_the_reference_hash(tmp_path):
    """A fresh small seed-0 build (not the session's cached one) gives the hash pinned before
    the table was vendored, and its cities carry the vendored centres."""
    meta = generate.build_database(tmp_path / "b2t.sqlite", 0, "small")
    assert meta["content_hash"] == SMALL_SEED0_HASH
    conn = connect_readonly(tmp_path / "b2t.sqlite")
    try:
        rows = conn.execute("SELECT name, lat, lon FROM cities").fetchall()
    finally:
        conn.close()
    assert {name: (lat, lon) for name, lat, lon in rows} == PYECHARTS_2_1_0


def test_pyecharts_is_neither_required_nor_imported():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert not [d for d in project["dependencies"] if "pyecharts" in d.lower()]
    installed = importlib.metadata.requires("travelgym") or []
    assert not [d for d in installed if "pyecharts" in d.lower()]
    # a fresh interpreter: this one may have imported anything
    code = (
        "import sys\n"
        "from travelgym.suites.behavior2trip import catalog, generate\n"
        "assert catalog.city_coordinates()\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'pyecharts'))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
