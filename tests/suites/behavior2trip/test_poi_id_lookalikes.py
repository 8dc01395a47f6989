"""A Behavior2Trip POI id names a place only as the tools write it (any case, ASCII spaces
around it): the same id in Arabic-Indic or fullwidth digits, or padded with a no-break,
ideographic or zero-width space, names nothing, so a plan cannot be credited with it."""

from __future__ import annotations

import pytest

from travelgym.suites.behavior2trip.checks.data import PlanDB
from travelgym.suites.behavior2trip.schema import POI_TABLES

DIGITS = {
    "arabic-indic": str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩"),
    "fullwidth": str.maketrans("0123456789", "０１２３４５６７８９"),
    "devanagari": str.maketrans("0123456789", "०१२३४५६७८९"),
}
PADDING = {"no-break space": "\u00a0", "ideographic space": "\u3000", "zero-width space": "\u200b"}


@pytest.fixture(scope="module")
def plan_db(trips_db):
    db = PlanDB.open(trips_db)
    yield db
    db.close()


@pytest.mark.parametrize("table", sorted(POI_TABLES))
def test_only_the_ascii_id_names_a_poi(plan_db, table):
    (poi_id,) = plan_db.conn.execute(f"SELECT {POI_TABLES[table]} FROM {table} LIMIT 1").fetchone()
    assert plan_db.poi(poi_id)[0] == table
    assert plan_db.poi(f" {poi_id.lower()}\n")[0] == table  # any case, ASCII spaces: as before
    for how, digits in DIGITS.items():
        assert plan_db.poi(poi_id[0] + poi_id[1:].translate(digits)) is None, how
    for how, pad in PADDING.items():
        assert plan_db.poi(poi_id + pad) is None, how
        assert plan_db.poi(pad + poi_id) is None, how
