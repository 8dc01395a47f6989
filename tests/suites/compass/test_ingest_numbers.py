"""``ingest compass`` accepts only finite numbers of a sane size: ``NaN``, ``Infinity``, an
integer of thousands of digits or one too large for the database is one line of error naming
the file and the field, never a traceback and never a stored value."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.suites.compass.test_ingest import make_raw
from travelgym.cli import main
from travelgym.suites.compass.ingest import IngestError, ingest_raw

AVAILABILITY = "hotels/availability_201_2025-08-01.json"
PERMITS = "permits/permits.json"
PRICE = "block[0].min_price.price"


def _put(raw: Path, rel: str, where: list, text: str) -> None:
    """Set the value at the key path ``where`` of ``raw/rel`` to the JSON text ``text`` (which
    ``json.dumps`` could not write: 5,000 digits, a bare NaN)."""
    path = raw / rel
    data = json.loads(path.read_text())
    node = data
    for key in where[:-1]:
        node = node[key]
    node[where[-1]] = "@@VALUE@@"
    path.write_text(json.dumps(data).replace('"@@VALUE@@"', text))


CASES = {
    # the three
    "NaN price": (AVAILABILITY, ["block", 0, "min_price", "price"], "NaN",
                  f"{AVAILABILITY}: {PRICE}: NaN is not a finite number"),
    "Infinity price": (AVAILABILITY, ["block", 0, "min_price", "price"], "Infinity",
                       f"{AVAILABILITY}: {PRICE}: Infinity is not a finite number"),
    "5,000-digit integer": (AVAILABILITY, ["block", 0, "nr_available"], "7" * 5000,
                            f"{AVAILABILITY}: block[0].nr_available: 77777777777777777777..."
                            "(5000 characters) is out of range (at most 1e+12 in size)"),
    # variants: an overflowing exponent, a price sent as text, a negative infinity in another
    # file, and an integer of 20 digits (valid JSON, too large for the database's INTEGER)
    "1e999 price": (AVAILABILITY, ["block", 0, "min_price", "price"], "1e999",
                    f"{AVAILABILITY}: {PRICE}: inf is not a finite number"),
    "'nan' as text": (AVAILABILITY, ["block", 0, "min_price", "price"], '"nan"',
                      f"{AVAILABILITY}: {PRICE}: nan is not a finite number"),
    "-Infinity permit price": (PERMITS, ["permits", 0, "price_per_person"], "-Infinity",
                               f"{PERMITS}: permits[0].price_per_person: -Infinity is not a "
                               "finite number"),
    "20-digit party size": (PERMITS, ["permits", 0, "max_party_size"], "9" * 20,
                            f"{PERMITS}: permits[0].max_party_size: {'9' * 20} is out of range"),
    "13-digit party size": (PERMITS, ["permits", 0, "max_party_size"], "9" * 13,
                            f"{PERMITS}: permits[0].max_party_size: 9999999999999 is out of "
                            "range"),
}  # fmt: skip


@pytest.mark.parametrize("case", CASES)
def test_a_bad_number_is_refused_naming_the_file_and_the_field(tmp_path, case):
    rel, where, text, message = CASES[case]
    raw = make_raw(tmp_path / "raw")
    _put(raw, rel, where, text)
    out = tmp_path / "compass.sqlite"
    with pytest.raises(IngestError) as caught:
        ingest_raw(raw, out)
    assert str(caught.value).startswith(message), str(caught.value)
    assert "\n" not in str(caught.value) and not out.exists()


def test_the_cli_says_one_line(tmp_path):
    raw = make_raw(tmp_path / "raw")
    _put(raw, AVAILABILITY, ["block", 0, "min_price", "price"], "NaN")
    out = tmp_path / "cli.sqlite"
    result = CliRunner().invoke(main, ["ingest", "compass", str(raw), "--out", str(out)])
    assert result.exit_code == 1, result.output
    assert result.output.strip() == f"Error: {AVAILABILITY}: {PRICE}: NaN is not a finite number"


def test_deeply_nested_json_is_refused(tmp_path):
    # variant: a file nested beyond what the parser can follow
    raw = make_raw(tmp_path / "raw")
    (raw / AVAILABILITY).write_text('{"block": ' + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(IngestError, match=f"{AVAILABILITY}: invalid JSON: nested too deeply"):
        ingest_raw(raw, tmp_path / "x.sqlite")


def test_ordinary_numbers_still_read(tmp_path):
    raw = make_raw(tmp_path / "raw")
    _put(raw, AVAILABILITY, ["block", 0, "min_price", "price"], "1.4e2")
    _put(raw, PERMITS, ["permits", 0, "max_party_size"], "999999999999")
    ingest_raw(raw, tmp_path / "ok.sqlite")
    assert (tmp_path / "ok.sqlite").is_file()


def test_a_raw_file_that_is_a_fifo_is_refused(tmp_path):
    # a special file among the raw responses: refused, not waited on
    raw = make_raw(tmp_path / "raw")
    (raw / AVAILABILITY).unlink()
    os.mkfifo(raw / AVAILABILITY)

    def blocked(signum, frame):
        raise TimeoutError("ingest waited on the FIFO")

    previous = signal.signal(signal.SIGALRM, blocked)
    signal.alarm(10)  # a reader blocked on the FIFO fails the test instead of hanging it
    try:
        with pytest.raises(IngestError, match=f"^{AVAILABILITY}: unreadable: not a regular"):
            ingest_raw(raw, tmp_path / "x.sqlite")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
