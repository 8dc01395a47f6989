import sqlite3

import pytest

from travelgym.db import connect_readonly, content_hash, read_metadata
from travelgym.suites.compass.build import ensure_database, is_current
from travelgym.suites.compass.generate import GENERATOR_VERSION, build_database
from travelgym.suites.compass.schema import TABLE_ORDER
from travelgym.suites.compass.stats import compute_stats


@pytest.mark.slow
def test_same_seed_same_hash_other_seed_other_hash(tmp_path, compass_db):
    again = build_database(tmp_path / "again.sqlite", seed=0)
    other = build_database(tmp_path / "other.sqlite", seed=1)
    reference = read_metadata(compass_db)["content_hash"]
    assert again["content_hash"] == reference
    assert other["content_hash"] != reference


def test_stored_hash_matches_content(compass_db):
    conn = connect_readonly(compass_db)
    stored = dict(conn.execute("SELECT key, value FROM metadata").fetchall())
    assert stored["content_hash"] == content_hash(conn, TABLE_ORDER)
    assert stored["generator_version"] == GENERATOR_VERSION
    assert stored["seed"] == "0"


def test_tool_connections_are_read_only(compass_db):
    conn = connect_readonly(compass_db)
    for sql in ("DELETE FROM hotels", "PRAGMA query_only = 0", "CREATE TABLE x (y)"):
        with pytest.raises(sqlite3.DatabaseError, match="not authorized"):
            conn.execute(sql)
    assert conn.execute("SELECT count(*) FROM hotels").fetchone()[0] > 0


def test_scale_and_calibration(compass_db):
    stats = compute_stats(compass_db)
    counts, cal = stats["counts"], stats["calibration"]
    assert counts["parks"] == 20
    assert counts["offers"] >= 100_000
    assert counts["flight_prices"] >= 67_000
    assert counts["permits"] >= 50
    assert counts["airlines"] == 4
    assert cal["weekend_weekday_price_ratio"] > 1.1
    assert cal["weekend_weekday_availability_ratio"] < 1.0
    assert cal["parks_by_mean_price"][0] == "romo"
    median = cal["median_hotels_per_park"]
    assert cal["parks"]["deva"]["hotels"] < median
    assert cal["parks"]["ever"]["hotels"] < median
    assert max(p["hotels"] for p in cal["parks"].values()) <= 20
    shares = {p["share_4_star_plus"] for p in cal["parks"].values()}
    assert max(shares) - min(shares) > 0.3
    pct = cal["flight_price_percentiles"]
    # long right tail: the 99th percentile is far further above the median than p5 below it
    assert pct["p99"] - pct["p50"] > 3 * (pct["p50"] - pct["p5"])
    types = cal["mean_routes_per_airport_type"]
    assert types["regional"] < types["major"]
    assert 0 < cal["direct_share"] < 1


def test_referential_integrity(compass_db):
    conn = connect_readonly(compass_db)
    orphans = [
        "SELECT COUNT(*) FROM rooms WHERE hotel_id NOT IN (SELECT hotel_id FROM hotels)",
        "SELECT COUNT(*) FROM room_configs WHERE room_id NOT IN (SELECT room_id FROM rooms)",
        "SELECT COUNT(*) FROM offers WHERE config_id NOT IN (SELECT config_id FROM room_configs)",
        "SELECT COUNT(*) FROM flight_templates WHERE outbound_flight_id NOT IN "
        "(SELECT flight_id FROM flights) OR return_flight_id NOT IN (SELECT flight_id FROM flights)",
        "SELECT COUNT(*) FROM flight_prices WHERE flight_id NOT IN (SELECT flight_id FROM flights)",
        "SELECT COUNT(*) FROM permit_availability WHERE permit_id NOT IN (SELECT permit_id FROM permits)",
        "SELECT COUNT(*) FROM flights WHERE origin NOT IN (SELECT code FROM airports)"
        " OR destination NOT IN (SELECT code FROM airports)",
    ]
    for sql in orphans:
        assert conn.execute(sql).fetchone()[0] == 0, sql
    # a round-trip template returns from where it went, with the same airline
    bad = conn.execute(
        """SELECT COUNT(*) FROM flight_templates t JOIN flights o ON o.flight_id = t.outbound_flight_id
           JOIN flights r ON r.flight_id = t.return_flight_id
           WHERE o.origin != r.destination OR o.destination != r.origin OR o.airline != r.airline"""
    ).fetchone()[0]
    assert bad == 0
    # every hotel has a full month of offers for each of its configurations
    assert (
        conn.execute(
            "SELECT COUNT(*) FROM (SELECT config_id FROM offers GROUP BY config_id HAVING COUNT(*) != 31)"
        ).fetchone()[0]
        == 0
    )


@pytest.mark.slow
def test_ensure_database_skips_current_and_rebuilds_stale(tmp_path):
    first = ensure_database(seed=3, data_dir=tmp_path)
    assert first.built
    second = ensure_database(seed=3, data_dir=tmp_path)
    assert not second.built and second.path == first.path
    conn = sqlite3.connect(first.path)
    conn.execute("UPDATE metadata SET value = '0.0.0' WHERE key = 'generator_version'")
    conn.commit()
    conn.close()
    assert not is_current(read_metadata(first.path), 3)
    third = ensure_database(seed=3, data_dir=tmp_path)
    assert third.built
    assert third.metadata["content_hash"] == first.metadata["content_hash"]


@pytest.mark.parametrize("seed", [0, 1])
def test_death_valley_and_everglades_have_the_most_remote_lodging(compass_db, seed):
    """Appendix F: Death Valley and Everglades have few nearby lodging options: the fewest
    hotels within 10 km and the largest mean hotel distance of all 20 parks."""
    data_dir = compass_db.parent.parent
    conn = connect_readonly(ensure_database(seed=seed, data_dir=data_dir).path)
    rows = conn.execute(
        "SELECT park_id, AVG(distance_km), SUM(distance_km < 10) FROM hotels GROUP BY park_id"
    ).fetchall()
    mean = {park: m for park, m, _ in rows}
    near = {park: n for park, _, n in rows}
    remote = {"deva", "ever"}
    others = set(mean) - remote
    assert len(mean) == 20
    assert min(mean[p] for p in remote) > max(mean[p] for p in others), mean
    assert max(near[p] for p in remote) < min(near[p] for p in others), near
