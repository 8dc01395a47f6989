"""The generated Behavior2Trip database: determinism, counts, vocabulary coverage, consistency."""

from __future__ import annotations

import json
import re
import sqlite3

import pytest

from travelgym.db import connect_readonly, content_hash, read_metadata
from travelgym.suites.behavior2trip import vocab
from travelgym.suites.behavior2trip.build import database_path, ensure_database
from travelgym.suites.behavior2trip.generate import FULL_TOTALS, GENERATOR_VERSION, poi_counts
from travelgym.suites.behavior2trip.schema import DATES, POI_TABLES, TABLE_ORDER
from travelgym.suites.behavior2trip.stats import CATEGORICAL, database_stats

TABLE6 = {"restaurants": 29_604, "hotels": 22_473, "entertainment": 20_250, "attractions": 8_229}


@pytest.fixture(scope="module")
def conn(trips_db):
    c = connect_readonly(trips_db)
    yield c
    c.close()


def test_metadata_and_file_name(trips_database, tmp_path):
    meta = trips_database.metadata
    assert meta["scale"] == "small" and meta["seed"] == "0"
    assert meta["generator_version"] == GENERATOR_VERSION
    assert meta["date_range"] == "2025-10-01..2025-11-29"
    assert trips_database.path.name == "behavior2trip-small-seed0.sqlite"
    assert trips_database.path.parent.name == "behavior2trip"
    assert database_path("full", 3, tmp_path).name == "behavior2trip-full-seed3.sqlite"
    with pytest.raises(ValueError, match="unknown scale"):
        database_path("huge", 0, tmp_path)


@pytest.mark.slow
def test_same_seed_same_hash_and_rows(trips_database, tmp_path):
    again = ensure_database(data_dir=tmp_path)
    assert again.built
    assert again.metadata["content_hash"] == trips_database.metadata["content_hash"]
    a, b = connect_readonly(trips_database.path), connect_readonly(again.path)
    try:
        assert content_hash(b, TABLE_ORDER) == again.metadata["content_hash"]
        for table, order in TABLE_ORDER[:5]:
            sql = f"SELECT * FROM {table} ORDER BY {order}"
            assert a.execute(sql).fetchall() == b.execute(sql).fetchall()
    finally:
        a.close()
        b.close()


def test_stale_database_is_rebuilt(trips_database, tmp_path, monkeypatch):
    import shutil

    from travelgym.suites.behavior2trip import build

    path = database_path("small", 0, tmp_path)
    shutil.copy(trips_database.path, path)
    calls = []
    monkeypatch.setattr(build, "build_database", lambda *a: calls.append(a) or {"rebuilt": "1"})
    assert not ensure_database(data_dir=tmp_path).built  # current copy: reused
    conn = sqlite3.connect(path)
    conn.execute("UPDATE metadata SET value = '0.0.0' WHERE key = 'generator_version'")
    conn.commit()
    conn.close()
    assert read_metadata(path)["generator_version"] == "0.0.0"
    rebuilt = ensure_database(data_dir=tmp_path)
    assert rebuilt.built and calls == [(path, 0, "small")]
    assert ensure_database(data_dir=tmp_path, force=True).built and len(calls) == 2
    assert ensure_database(seed=2, data_dir=tmp_path).built  # another seed, another file


def test_other_seed_other_hash(trips_database, tmp_path):
    other = ensure_database(seed=1, data_dir=tmp_path)
    assert other.metadata["seed"] == "1"
    assert other.metadata["content_hash"] != trips_database.metadata["content_hash"]


def test_small_counts(trips_db):
    stats = database_stats(trips_db)
    counts = stats["counts"]
    assert counts["cities"] == 24 and counts["weather"] == 24 * len(DATES) == 1440
    assert counts["hotels"] == 24 * 80 and counts["restaurants"] == 24 * 360
    assert counts["attractions"] == 24 * 60 and counts["entertainment"] == 24 * 60
    # about 4 daily schedules per route (a quarter of the full scale's), a third of its trains
    assert 100_000 < counts["flights"] < 200_000
    assert counts["trains"] > 3000 and counts["buses"] > 100
    for city in vocab.CITIES:
        per = stats["per_city"][city]
        assert per["hotels"] == 80 and per["weather"] == 60
        assert per.get("train_departures", 0) > 0
        assert (per.get("departures", 0) > 0) == (city != "Suzhou")


def test_full_scale_counts_follow_table6():
    counts = poi_counts("full")
    assert FULL_TOTALS == TABLE6
    for table, total in TABLE6.items():
        assert sum(counts[table].values()) == total
        assert min(counts[table].values()) >= 60
    assert counts["hotels"]["Beijing"] > counts["hotels"]["Lhasa"]


def test_every_preference_value_matches_and_misses_in_every_city(conn):
    for table, column, values in CATEGORICAL:
        city_col = "dep_city_id" if table == "flights" else "city_id"
        cities = [r[0] for r in conn.execute(f"SELECT DISTINCT {city_col} FROM {table}")]
        assert len(cities) == (23 if table == "flights" else 24)
        for city in cities:
            found = dict(
                conn.execute(
                    f"SELECT {column}, COUNT(*) FROM {table} WHERE {city_col} = ? GROUP BY 1",
                    (city,),
                ).fetchall()
            )
            assert set(found) <= set(values), (table, column, set(found) - set(values))
            for value in values:
                assert found.get(value, 0) > 0, (table, column, city, value)
                assert sum(found.values()) > found[value], (table, column, city, value)
    for city in [r[0] for r in conn.execute("SELECT city_id FROM cities")]:
        lists = [json.loads(t) for (t,) in conn.execute(
            "SELECT facilities FROM hotels WHERE city_id = ?", (city,))]  # fmt: skip
        for facility in vocab.FACILITIES:
            assert any(facility in f for f in lists) and not all(facility in f for f in lists)
    assert database_stats_complete(conn)


def database_stats_complete(conn) -> bool:
    from travelgym.suites.behavior2trip.stats import coverage

    return coverage(conn)["complete"]


def test_values_are_consistent(conn):
    for level, price in conn.execute("SELECT price_level, avg_price FROM restaurants"):
        lo, hi = vocab.PRICE_RANGES[level]
        assert lo <= price < hi or (price == hi == 500), (level, price)
    for km, level in conn.execute("SELECT walking_km, walking_level FROM attractions"):
        limit = {"Low (1-3km)": 3, "Medium (3-5km)": 5, "High (5km+)": 1e9}[level]
        assert 1 <= km < limit and (level == "Low (1-3km)" or km >= (3 if "Medium" in level else 5))
    for facilities, wifi, parking, rooms in conn.execute(
        "SELECT facilities, has_wifi, has_parking, room_info FROM hotels"
    ):
        f = json.loads(facilities)
        assert f == [x for x in vocab.FACILITIES if x in f]
        assert wifi == ("Free WiFi" in f) and parking == ("Parking" in f)
        assert all(r["private_bathroom"] == ("Private Bathroom" in f) for r in json.loads(rooms))
    for kind, first, second in conn.execute(
        "SELECT train_type, fare_first_class, fare_second_class FROM trains"
    ):
        assert kind in vocab.INTERCITY_TRANSPORT[:2] and (first is None or first > second)
    bad = conn.execute(
        "SELECT COUNT(*) FROM flights WHERE adult_total != adult_fare + fuel_surcharge + airport_fee"
        " OR discount < 0.3 OR discount > 1 OR dep_date NOT BETWEEN ? AND ?",
        (DATES[0], DATES[-1]),
    ).fetchone()[0]
    assert bad == 0
    weather = {w for (w,) in conn.execute("SELECT DISTINCT weather FROM weather")}
    assert weather <= set(vocab.WEATHER_KINDS) and len(weather) >= 6


def test_ids_and_references(conn):
    for table, id_col in POI_TABLES.items():
        ids = [r[0] for r in conn.execute(f"SELECT {id_col} FROM {table} ORDER BY rowid")]
        prefix = {"hotels": "H", "restaurants": "R", "attractions": "A", "entertainment": "E"}
        assert all(re.fullmatch(prefix[table] + r"\d{5}", i) for i in ids)
        assert ids == sorted(ids) and len(set(ids)) == len(ids)
        orphans = conn.execute(
            f"SELECT COUNT(*) FROM {table} WHERE city_id NOT IN (SELECT city_id FROM cities)"
        ).fetchone()[0]
        assert orphans == 0
    for col in ("dep_airport_code", "arr_airport_code"):
        missing = conn.execute(
            f"SELECT COUNT(*) FROM flights WHERE {col} NOT IN (SELECT code FROM airports)"
        ).fetchone()[0]
        assert missing == 0
    for col in ("dep_station", "arr_station"):
        for table in ("trains", "buses"):
            missing = conn.execute(
                f"SELECT COUNT(*) FROM {table} WHERE {col} NOT IN (SELECT name FROM stations)"
            ).fetchone()[0]
            assert missing == 0


def test_real_geography(conn):
    rows = {r[0]: r[1:] for r in conn.execute("SELECT name, lat, lon, city_code FROM cities")}
    assert [r[0] for r in conn.execute("SELECT name FROM cities ORDER BY rowid")] == list(
        vocab.CITIES
    )
    lat, lon, code = rows["Beijing"]
    assert abs(lat - 39.9) < 0.2 and abs(lon - 116.4) < 0.2 and code == "BJS"
    assert rows["Suzhou"][2] is None
    pek = conn.execute("SELECT name, lat FROM airports WHERE code = 'PEK'").fetchone()
    assert "Capital" in pek[0] and abs(pek[1] - 40.08) < 0.05
    landmark = conn.execute(
        "SELECT attraction_type, is_landmark FROM attractions WHERE name = 'The Forbidden City'"
    ).fetchone()
    assert tuple(landmark) == ("Cultural/Historic Site", 1)
