import json

from click.testing import CliRunner

from travelgym.cli import main


def test_build_and_stats_json_use_data_dir(tmp_path, monkeypatch):
    monkeypatch.delenv("TRAVELGYM_DATA_DIR", raising=False)
    runner = CliRunner()
    result = runner.invoke(
        main, ["build", "compass", "--data-dir", str(tmp_path), "--db-seed", "5"]
    )
    assert result.exit_code == 0, result.output
    db = tmp_path / "compass" / "compass-seed5.sqlite"
    assert db.exists() and str(db) in result.output
    result = runner.invoke(
        main,
        ["stats", "compass", "--json", "--seed", "5"],  # the option's other name
        env={"TRAVELGYM_DATA_DIR": str(tmp_path)},
    )
    assert result.exit_code == 0, result.output
    stats = json.loads(result.output)
    assert stats["path"] == str(db)
    assert stats["counts"]["offers"] >= 100_000
    assert len(stats["content_hash"]) == 64


def test_bad_flags_give_clear_errors(tmp_path):
    runner = CliRunner()
    result = runner.invoke(main, ["build", "nowhere"])
    assert result.exit_code == 2 and "nowhere" in result.output
    result = runner.invoke(main, ["build", "compass", "--seed", "-1", "--data-dir", str(tmp_path)])
    assert result.exit_code == 2 and "--seed" in result.output
