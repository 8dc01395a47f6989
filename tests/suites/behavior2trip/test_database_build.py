"""The Behavior2Trip database build: the content hash computed while writing equals the one read
back from the file, worker processes change nothing, and a build shows a progress bar."""

from __future__ import annotations

import os
import random
import sqlite3
import subprocess
import sys

import pytest

from travelgym.db import ContentHasher, _canon, canonical_rows, connect_readonly, content_hash
from travelgym.suites.behavior2trip import generate
from travelgym.suites.behavior2trip.schema import TABLE_ORDER, real_columns

# The small seed-0 database of generator 1.2.0 (the reference before the build was made fast).
# A new GENERATOR_VERSION may change it; an unchanged version must not.
SMALL_SEED0_HASH = "43b22529b58d9bdbaf65cc4a9dbc3d5bad8e507d1cc08a90994a769651a39146"


def _per_value(rows: list[tuple]) -> bytes:
    """The bytes the content hash digests, one value at a time (its definition)."""
    return b"".join("\x1f".join(_canon(v) for v in row).encode() + b"\n" for row in rows)


def test_canonical_rows_equal_the_per_value_definition():
    rnd = random.Random(5)
    pools = [
        ["a", "b", "Xi'an", "", "北京"],
        [1, -3, 0, 2**40],
        [0.1, 2.5, 1e-7, 123456.789012345, 3.0, 1e17],
        ["x", None],
        [1.5, None],
        [0.0, -0.0, 1.0],
        [1, 2.5, "t", None],
    ]
    rows = [tuple(rnd.choice(p) for p in pools) for _ in range(500)]
    assert canonical_rows(rows) == _per_value(rows)
    assert canonical_rows(rows[:1]) == _per_value(rows[:1])


def test_ints_in_real_columns_hash_as_stored(tmp_path):
    conn = sqlite3.connect(tmp_path / "t.sqlite")
    conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, x REAL, y TEXT)")
    rows = [(1, 3, "a"), (2, 2.5, None), (3, None, "c")]
    conn.executemany("INSERT INTO t VALUES (?, ?, ?)", rows)
    hasher = ContentHasher(conn, [("t", "id")])
    hasher.add_rows("t", rows)
    assert hasher.hexdigest() == content_hash(conn, [("t", "id")])
    with pytest.raises(TypeError):
        canonical_rows([(True,)], strict=True)
    with pytest.raises(ValueError, match="out of hash order"):
        ContentHasher(conn, [("t", "id"), ("u", "id")]).add_rows("u", [])


def test_real_columns_follow_the_schema():
    assert real_columns("buses") == {12}
    assert {0, 9, 10} & real_columns("hotels") == {9, 10}


def test_build_hash_is_the_reference_and_the_file_content(trips_database):
    """The fixture's build (worker processes where the machine has cores) gives the reference
    hash, and the hash read back from its file is the same."""
    assert trips_database.metadata["content_hash"] == SMALL_SEED0_HASH
    conn = connect_readonly(trips_database.path)
    try:
        assert content_hash(conn, TABLE_ORDER) == SMALL_SEED0_HASH
    finally:
        conn.close()


@pytest.mark.slow
def test_in_process_build_equals_the_parallel_one(tmp_path, monkeypatch, trips_database):
    monkeypatch.setenv("TRAVELGYM_BUILD_WORKERS", "0")
    meta = generate.build_database(tmp_path / "inline.sqlite", 0, "small")
    assert meta["content_hash"] == trips_database.metadata["content_hash"]
    a = connect_readonly(trips_database.path)
    b = connect_readonly(tmp_path / "inline.sqlite")
    try:
        for table, order in TABLE_ORDER:
            sql = f"SELECT * FROM {table} ORDER BY {order}"
            assert a.execute(sql).fetchall() == b.execute(sql).fetchall(), table
    finally:
        a.close()
        b.close()


@pytest.mark.slow
def test_build_shows_progress_unless_switched_off(tmp_path):
    code = (
        "import sys; from travelgym import progress; progress.DELAY_S = 0; "
        "from travelgym.suites.behavior2trip.build import ensure_database; "
        "progress.set_enabled(sys.argv[2] == 'on'); ensure_database(data_dir=sys.argv[1])"
    )
    env = {k: v for k, v in os.environ.items() if k != "TRAVELGYM_NO_PROGRESS"}
    shown = subprocess.run([sys.executable, "-c", code, str(tmp_path / "a"), "on"], env=env,
                           capture_output=True, text=True, check=True)  # fmt: skip
    assert "behavior2trip: database" in shown.stderr
    hidden = subprocess.run([sys.executable, "-c", code, str(tmp_path / "b"), "off"], env=env,
                            capture_output=True, text=True, check=True)  # fmt: skip
    assert "behavior2trip: database" not in hidden.stderr


def test_draws_give_the_generators_numbers():
    import numpy as np

    from travelgym.suites.behavior2trip.gen_common import Draws, _matches_numpy

    # the self-check passes on the numpy the project is tested with (else every build would
    # fall back to numpy's slower scalar draws without anyone noticing); the random sequence
    # below checks more than the self-check does
    assert _matches_numpy(), f"Draws no longer reproduces numpy {np.__version__}"
    pick = random.Random(3)
    for trial in range(40):
        a, b = np.random.default_rng([trial, 9]), Draws(np.random.default_rng([trial, 9]))
        for _ in range(150):
            kind = pick.randrange(6)
            if kind == 0:
                lo, n = pick.choice([0, 1, 78, 10_000_000]), pick.choice([1, 2, 3, 7, 400, 2**32])
                assert int(a.integers(lo, lo + n)) == b.integers(lo, lo + n)
            elif kind == 1:
                assert a.random() == b.random()
            elif kind == 2:
                assert a.uniform(1, 4) == b.uniform(1, 4)
            elif kind == 3:
                assert a.normal(4.4, 0.3) == b.normal(4.4, 0.3)
            elif kind == 4:
                n = pick.choice([3, 6, 12])
                k = pick.choice([0, 1, 2, 3])
                assert a.choice(n, size=k, replace=False).tolist() == b.choice(n, k)
            else:
                assert a.random(4).tolist() == b.random(4).tolist()


def test_a_numpy_that_draws_differently_gets_the_generator_itself(monkeypatch):
    import numpy as np

    from travelgym.suites.behavior2trip import gen_common

    gen = np.random.default_rng(1)
    assert isinstance(gen_common.draws(gen), gen_common.Draws)
    monkeypatch.setattr(gen_common.Draws, "random", lambda self, size=None: -1.0)
    assert not gen_common._matches_numpy()
    gen_common._fast_draws.cache_clear()
    try:
        assert gen_common.draws(gen) is gen
    finally:
        monkeypatch.undo()
        gen_common._fast_draws.cache_clear()
