"""Strict, explained reading of ``episodes.jsonl``: every line read by the rules of its version;
a bad line is an error naming the file, the line and the reason, never skipped; only a torn
last line is left out (and reported)."""

from __future__ import annotations

import json

import pytest

from travelgym.core.episode import EPISODE_FORMAT
from travelgym.runner import formats
from travelgym.runner.episode_file import TORN, scan_episodes
from travelgym.runner.errors import EpisodeFileError
from travelgym.runner.store import EPISODES, read_episodes, read_run
from travelgym.suites.compass.trajectory import Episode


def _episode(task_id: str, trial: int = 0, **extra) -> Episode:
    return Episode(episode_id=f"{task_id}#{trial}", task_id=task_id, trial=trial,
                   agent="scripted:greedy", user="template", seed=0, **extra)  # fmt: skip


def _line(task_id: str, trial: int = 0, **extra) -> str:
    return _episode(task_id, trial, **extra).model_dump_json()


def _write(directory, *lines: str, end: str = "\n") -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / EPISODES).write_text("\n".join(lines) + end)


def test_a_garbage_line_names_the_file_the_line_and_the_reason(tmp_path):
    _write(tmp_path, _line("a"), "garbage", _line("b"))
    with pytest.raises(EpisodeFileError) as caught:
        read_episodes(tmp_path)
    message = str(caught.value)
    assert message.startswith(
        f"{tmp_path / EPISODES}:2: not valid JSON (Expecting value at column 1)"
    )
    assert "--resume --repair" in message and "\n" not in message


def test_a_valid_json_line_with_the_wrong_fields_in_the_middle_is_an_error(tmp_path):
    wrong = json.dumps({"task_id": "b", "trial": 0, "suite": "compass", "format_version": "1"})
    _write(tmp_path, _line("a"), wrong, _line("c"))
    with pytest.raises(EpisodeFileError, match=r":2: not a compass episode \(format 2\): "
                                               r"episode_id: Field required \(and 3 more"):  # fmt: skip
        read_episodes(tmp_path)
    unknown = json.loads(_line("b"))
    unknown["surprise"] = 1
    _write(tmp_path, _line("a"), json.dumps(unknown), _line("c"))
    with pytest.raises(EpisodeFileError, match=r":2: .*unknown field\(s\) 'surprise'"):
        read_episodes(tmp_path)


@pytest.mark.parametrize(
    "raw, reason",
    [
        (b"[1, 2]", "not an episode: a JSON list, not an object"),
        (b'{"suite": "compass", "task_id": "x"}', "not an episode: no format_version"),
        (b'{"format_version": "1"}', "not an episode: suite None is none of"),
        (b"\xff\xfe{}", "not valid UTF-8 (byte 0xff at column 1)"),
        (b"[" * 100_000 + b"]" * 100_000, "not valid JSON (nested too deeply)"),
        (b'{"a": 1', "not valid JSON (Expecting ',' delimiter at column 8)"),
    ],
)
def test_every_kind_of_bad_line_says_why(tmp_path, raw, reason):
    (tmp_path / EPISODES).write_bytes(_line("a").encode() + b"\n" + raw + b"\n")
    with pytest.raises(EpisodeFileError) as caught:
        read_run(tmp_path)
    assert f"{EPISODES}:2: {reason}" in str(caught.value)


def test_an_episode_of_the_other_suite_or_twice_is_an_error(tmp_path):
    _write(tmp_path, _line("a"), _line("b"), _line("a"))
    with pytest.raises(EpisodeFileError, match=r":3: episode a trial 0 again \(first at line 1\)"):
        read_episodes(tmp_path)
    _write(tmp_path, _line("a"))
    (tmp_path / "manifest.json").write_text(json.dumps({"suite": "behavior2trip"}))
    with pytest.raises(EpisodeFileError, match=":1: a compass episode in a behavior2trip run"):
        read_run(tmp_path)


def test_only_a_torn_last_line_is_left_out_and_it_is_reported(tmp_path):
    torn = _line("c")[:57]
    _write(tmp_path, _line("a"), _line("b"), torn, end="")
    run = read_run(tmp_path)
    assert [e.task_id for e in run.episodes] == ["a", "b"]
    assert run.torn.number == 3 and run.torn.reason == TORN and run.torn.raw == torn.encode()
    assert (tmp_path / EPISODES).read_text().endswith(torn)  # reading changes nothing
    # the same bytes followed by a newline are a bad line in the middle, not a torn one
    _write(tmp_path, _line("a"), torn, _line("b"))
    with pytest.raises(EpisodeFileError, match=":2: not valid JSON"):
        read_run(tmp_path)


def test_fields_left_to_their_defaults_are_read_as_such(tmp_path):
    bare = json.loads(_line("a", 0))
    del bare["trial"], bare["turns"], bare["score"]  # a line written with defaults omitted
    _write(tmp_path, json.dumps(bare), _line("a", 1))
    assert [(e.task_id, e.trial) for e in read_episodes(tmp_path)] == [("a", 0), ("a", 1)]


def test_the_scan_collects_every_bad_line_with_its_number(tmp_path):
    _write(tmp_path, "x", _line("a"), "", "{}", _line("b"))
    lines = scan_episodes(tmp_path / EPISODES, "compass")
    assert [b.number for b in lines.bad] == [1, 4] and lines.numbers == [2, 5]
    assert lines.keys == [("a", 0), ("b", 0)]
    assert "(and 1 more bad line(s))" in str(lines.error())


def test_lines_are_read_by_the_rules_of_their_version(tmp_path, monkeypatch):
    """An older line is brought up to date by its upgrader, not mistaken for damage; a version
    this release does not know is an error that says so."""
    old = json.loads(_line("a"))
    old["format_version"] = "0"
    old["final_plan"] = old.pop("final_recommendation")  # as an imagined older release named it
    old["final_plan"] = {"park": "Zion"}

    def upgrade_0_to_1(line: dict) -> dict:
        line["final_recommendation"] = line.pop("final_plan")
        return {**line, "format_version": "1"}

    _write(tmp_path, json.dumps(old), _line("b"))
    with pytest.raises(EpisodeFileError, match=r":1: format_version '0' is not one this "
                                               r"travelgym reads for compass \(it reads 1, 2\)"):  # fmt: skip
        read_episodes(tmp_path)
    from travelgym.suites.compass.suite import CompassSuite

    monkeypatch.setattr(CompassSuite, "episode_upgraders",
                        {**CompassSuite.episode_upgraders, "0": upgrade_0_to_1})  # fmt: skip
    first, second = read_episodes(tmp_path)
    assert first.final_recommendation == {"park": "Zion"} and first.format_version == "2"
    assert second.task_id == "b"
    newer = json.loads(_line("c"))
    newer["format_version"] = "3"
    _write(tmp_path, json.dumps(newer))
    with pytest.raises(EpisodeFileError, match="format_version '3' is not one .* reads 0, 1, 2"):
        read_episodes(tmp_path)


def test_the_registry_knows_the_versions_the_models_write():
    from travelgym.suites.behavior2trip.episode import TripEpisode

    assert formats.suite_format("compass").current == EPISODE_FORMAT
    assert formats.suite_format("behavior2trip").current == EPISODE_FORMAT
    assert formats.suite_of_model(TripEpisode) == "behavior2trip"
    assert formats.suite_of_model(Episode) == "compass"
