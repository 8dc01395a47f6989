import json
from pathlib import Path

from click.testing import CliRunner

from travelgym.cli import main
from travelgym.suites.compass.plots import short_park_name, write_plots

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
NAMES = ("fig15_hotels.png", "fig16_flights.png", "fig17_patterns.png")


def _assert_png(path, min_bytes=20_000, max_bytes=2_000_000):
    data = path.read_bytes()
    assert data[:8] == PNG_MAGIC, path
    assert min_bytes < len(data) < max_bytes, (path, len(data))


def test_write_plots_creates_three_pngs(compass_db, tmp_path):
    out = tmp_path / "nested" / "plots"  # created when missing
    paths = write_plots(compass_db, out)
    assert [p.name for p in paths] == list(NAMES)
    for path in paths:
        assert path.parent == out
        _assert_png(path)


def test_stats_cli_lists_plots(compass_db, tmp_path):
    out = tmp_path / "figs"
    result = CliRunner().invoke(
        main, ["stats", "compass", "--plots", str(out), "--json", "--db", str(compass_db)]
    )
    assert result.exit_code == 0, result.output
    plots = json.loads(result.output)["plots"]
    assert [Path(p).name for p in plots] == list(NAMES)
    for name in NAMES:
        _assert_png(out / name)


def test_short_park_name():
    assert short_park_name("Rocky Mountain National Park") == "Rocky Mountain"
    assert short_park_name("Somewhere") == "Somewhere"
