"""A tool whose database is damaged or unreadable ends the episode as an infrastructure error:
it was shown to the model as an "internal error" result, so a corrupt database file scored as
an agent that failed every task (0 infra errors)."""

from __future__ import annotations

import sqlite3

import pytest

from travelgym.core.outcomes import InfraError, classify
from travelgym.toolkit.errors import ErrorCategory
from travelgym.toolkit.registry import ToolRegistry


def _registry(error: Exception) -> ToolRegistry:
    registry = ToolRegistry()

    def lookup(city: str) -> str:
        """Look a city up.

        Args:
            city: The city.
        """
        raise error

    registry.register(lookup)
    return registry


@pytest.mark.parametrize("message", ["database disk image is malformed",
                                     "file is not a database"])  # fmt: skip
def test_a_damaged_database_is_an_infra_error(tmp_path, message):
    with pytest.raises(InfraError) as caught:
        _registry(sqlite3.DatabaseError(message)).call("lookup", {"city": "x"})
    assert caught.value.cause == "database" and message in str(caught.value)
    assert classify(caught.value) == ("infra_error", "database")


def test_a_real_damaged_file_raises_what_is_recognised(tmp_path):
    path = tmp_path / "db.sqlite"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE t (x)")
    conn.executemany("INSERT INTO t VALUES (?)", [(str(i) * 50,) for i in range(2000)])
    conn.commit()
    conn.close()
    data = bytearray(path.read_bytes())
    data[4096:8192] = b"\xff" * 4096  # a page of the table overwritten
    path.write_bytes(bytes(data))
    reader = sqlite3.connect(path)
    with pytest.raises(sqlite3.DatabaseError) as caught:
        reader.execute("SELECT count(*), max(x) FROM t").fetchall()
    with pytest.raises(InfraError):
        _registry(caught.value).call("lookup", {"city": "x"})


def test_other_sqlite_errors_stay_tool_results():
    result = _registry(sqlite3.OperationalError("no such column: y")).call("lookup", {"city": "x"})
    assert not result.ok and result.error.category == ErrorCategory.INTERNAL
