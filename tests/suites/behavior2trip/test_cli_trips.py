"""The CLI commands that accept ``behavior2trip``: build, stats (with ``--plots``), tasks, tools
(serve-mcp: test_mcp_trips)."""

from __future__ import annotations

import json
import shutil

import pytest
from click.testing import CliRunner

from travelgym.cli import main


def test_build_reports_the_current_database(trips_database, tmp_path, monkeypatch):
    monkeypatch.delenv("TRAVELGYM_DATA_DIR", raising=False)
    target = tmp_path / "behavior2trip" / "behavior2trip-small-seed0.sqlite"
    target.parent.mkdir()
    shutil.copy(trips_database.path, target)
    runner = CliRunner()
    result = runner.invoke(main, ["build", "behavior2trip", "--json", "--data-dir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert out["path"] == str(target) and out["built"] is False
    assert out["content_hash"] == trips_database.metadata["content_hash"]
    assert out["scale"] == "small"
    result = runner.invoke(main, ["build", "behavior2trip", "--scale", "huge"])
    assert result.exit_code == 2 and "huge" in result.output


def test_stats_json_has_database_and_instance_statistics(trips_db, monkeypatch):
    runner = CliRunner()
    from travelgym.suites.behavior2trip import instances

    # the instance statistics are stood in for: building the 11,400 instances is not this
    # test's subject
    monkeypatch.setattr(instances, "instance_stats",
                        lambda **kwargs: {"splits": {"train": None, "test": None}, "total": 0})  # fmt: skip
    data_dir = str(trips_db.parent.parent)
    result = runner.invoke(main, ["stats", "behavior2trip", "--json", "--data-dir", data_dir])
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert out["counts"]["hotels"] == 1920 and out["coverage"]["complete"] is True
    assert out["per_city"]["Beijing"]["restaurants"] == 360
    assert out["instances"] == {"splits": {"train": None, "test": None}, "total": 0}
    text = runner.invoke(main, ["stats", "behavior2trip", "--data-dir", data_dir]).output
    assert "hotels" in text and "covered in every city: True" in text
    assert "train: no instance file" in text and "test: no instance file" in text
    # a database FILE is described alone: the instances are drawn over the generated one (they
    # were built and shown beside FILE's counts as if they were FILE's)
    calls = []
    monkeypatch.setattr(instances, "instance_stats", lambda **kwargs: calls.append(kwargs))
    result = runner.invoke(main, ["stats", "behavior2trip", "--json", "--db", str(trips_db)])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["instances"] is None and calls == []
    text = runner.invoke(main, ["stats", "behavior2trip", "--db", str(trips_db)]).output
    assert "hotels" in text and "drop --db" in text and calls == [] and "Table 2" not in text


def test_tools_lists_the_9_tools():
    result = CliRunner().invoke(main, ["tools", "behavior2trip"])
    assert result.exit_code == 0, result.output
    names = [t["function"]["name"] for t in json.loads(result.output)]
    assert names[0] == "AccommodationSearch" and names[-1] == "Python" and len(names) == 9


# --- tasks and stats over the instance files ----------------------------------------------------


@pytest.fixture(scope="module")
def instance_data(trips_database, monkeypatch_module):
    """The session's data directory with the test split's instance files, as
    ``$TRAVELGYM_DATA_DIR``."""
    from travelgym.suites.behavior2trip.instances import ensure_instances

    data_dir = trips_database.path.parent.parent
    paths = ensure_instances(trips_database, data_dir, splits=("test",))
    monkeypatch_module.setenv("TRAVELGYM_DATA_DIR", str(data_dir))
    return data_dir, paths


@pytest.fixture(scope="module")
def both_splits(instance_data, trips_instances):
    """The same data directory once the train split's instance files are there too."""
    return instance_data


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as patch:
        yield patch


@pytest.mark.slow
def test_tasks_lists_instances_without_their_hidden_profile(instance_data):
    from travelgym.suites.behavior2trip.instances import load_instances

    _, paths = instance_data
    test = {x.instance_id: x for x in load_instances(paths["test"], check=False)}
    runner = CliRunner()
    result = runner.invoke(main, ["tasks", "behavior2trip", "--split", "test", "--difficulty",
                                  "hard", "--json"])  # fmt: skip
    assert result.exit_code == 0, result.output
    records = json.loads(result.output)
    assert len(records) == 800 and {r["difficulty"] for r in records} == {"hard"}
    for record in records[:50]:
        instance = test[record["instance_id"]]
        assert set(record) == {"instance_id", "split", "difficulty", "instruction", "actions"}
        assert record["split"] == "test" and record["actions"] == len(instance.trajectory)
        assert record["instruction"] == instance.instruction.model_dump(mode="json")
    # nothing of the profile: not its persona, not its preference values
    profile = test[records[0]["instance_id"]].profile
    text_json = result.output
    assert "profile" not in text_json and "persona" not in text_json
    assert profile.persona.occupation not in json.dumps(records[0])

    text = runner.invoke(main, ["tasks", "behavior2trip", "--difficulty", "easy"])
    assert text.exit_code == 0, text.output
    lines = text.output.splitlines()
    assert lines[0].split() == ["instance", "difficulty", "from", "to", "days", "travellers",
                                "budget", "CNY", "actions"]  # fmt: skip
    assert lines[-1] == "800 instances" and len(lines) == 802
    first = lines[1].split()
    x = test[first[0]]
    ask = x.instruction
    assert first[1:] == ["easy", ask.departure_city, ask.destination_city, str(ask.days),
                         str(ask.travellers), "-", str(len(x.trajectory))]  # fmt: skip
    assert ask.budget_cny == 0  # an Easy request states no budget: the table shows "-"
    assert "persona" not in text.output and x.profile.persona.occupation not in text.output


def test_tasks_refuses_flags_of_the_other_suite(instance_data):
    runner = CliRunner()
    for argv, flag in ((["tasks", "behavior2trip", "--level", "2"], "--level"),
                       (["tasks", "behavior2trip", "--tasks-file", __file__], "--tasks-file"),
                       (["tasks", "compass", "--split", "train"], "--split"),
                       (["tasks", "compass", "--difficulty", "easy"], "--difficulty")):  # fmt: skip
        result = runner.invoke(main, argv)
        assert result.exit_code == 2, result.output
        error = [line for line in result.output.splitlines() if line.startswith("Error:")]
        assert len(error) == 1 and flag in error[0] and "applies to" in error[0]
        assert "Traceback" not in result.output
    compass = runner.invoke(main, ["tasks", "compass", "--level", "1", "--json"])
    assert compass.exit_code == 0 and {t["level"] for t in json.loads(compass.output)} == {1}


@pytest.mark.slow  # statistics over both splits' 11,400 instances
def test_stats_text_compares_instances_with_table2(both_splits, trips_db):
    from travelgym.suites.behavior2trip.instance_stats import PAPER_TABLE2
    from travelgym.suites.behavior2trip.instances import instance_stats

    data_dir, _ = both_splits
    result = CliRunner().invoke(main, ["stats", "behavior2trip", "--data-dir", str(data_dir)])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    at = next(i for i, line in enumerate(lines) if "Table 2" in line)
    assert any("hotels" in line for line in lines[:at])  # the database counts come first
    rows = {tuple(line.split()[:2]): line for line in lines[at + 2 : at + 8]}
    assert set(rows) == {(s, d) for s in ("train", "test") for d in ("easy", "medium", "hard")}
    stats = instance_stats(data_dir=data_dir, generate=False)["splits"]
    for (split, level), line in rows.items():
        cells = [c.strip() for c in line.split("  ") if "|" in c]
        for key, cell in zip(("actions", "preferences", "pois", "days", "companions"), cells[1:],
                             strict=True):  # fmt: skip
            measured = stats[split]["by_difficulty"][level][key]["measured"]
            paper = PAPER_TABLE2[split][key][("easy", "medium", "hard").index(level)]
            assert cell == f"{measured} | {paper}", (split, level, key)
    assert "largest relative difference" in lines[at + 8]


@pytest.mark.slow  # figures of both splits' 11,400 instances, three times
def test_stats_plots_writes_the_instance_figures(both_splits, trips_db, tmp_path):
    data_dir, _ = both_splits
    out = tmp_path / "figures"
    runner = CliRunner()
    result = runner.invoke(main, ["stats", "behavior2trip", "--data-dir", str(data_dir),
                                  "--plots", str(out)])  # fmt: skip
    assert result.exit_code == 0, result.output
    names = ["instances_table2.png", "instances_histograms.png"]
    for name in names:
        assert f"plot: {out / name}" in result.output
        assert (out / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    as_json = runner.invoke(main, ["stats", "behavior2trip", "--data-dir", str(data_dir),
                                   "--plots", str(out), "--json"])  # fmt: skip
    assert json.loads(as_json.output)["plots"] == [str(out / n) for n in names]
    no_plots = runner.invoke(main, ["stats", "behavior2trip", "--json", "--data-dir",
                                    str(data_dir)])  # fmt: skip
    assert "plots" not in json.loads(no_plots.output)


def test_instance_values_per_difficulty(tmp_path):
    from travelgym.suites.behavior2trip.plots import instance_values

    path = tmp_path / "x.jsonl"
    rows = [{"difficulty": "easy", "instruction": {"days": 3, "companions": 1},
             "trajectory": [{}] * 4},
            {"difficulty": "hard", "instruction": {"days": 5, "companions": 0},
             "trajectory": [{}] * 60},
            {"difficulty": "easy", "instruction": {"days": 2, "companions": 2},
             "trajectory": [{}] * 9}]  # fmt: skip
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n\n")
    assert instance_values({"test": path}) == {
        "easy": {"days": [3, 2], "actions": [4, 9], "companions": [1, 2]},
        "hard": {"days": [5], "actions": [60], "companions": [0]},
    }
