"""Resuming damaged run directories: a torn last line is quarantined automatically; any other bad
line stops ``--resume`` with file, line and reason, and ``--resume --repair`` quarantines it and
runs its episode again. Nothing is dropped without a trace. ``score`` reads a killed run."""

from __future__ import annotations

import base64
import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.runner.chain_helpers import reseal
from tests.runner.faults import FaultyDisk, injected, normalise, raw_episodes
from travelgym.cli import main
from travelgym.runner.counted import missing_note
from travelgym.runner.episode_file import TORN
from travelgym.runner.store import (
    EPISODES,
    MANIFEST,
    QUARANTINE,
    RunDirError,
    RunStore,
    read_run,
)

TASKS = 4


@pytest.fixture(scope="module")
def finished(compass_db, tmp_path_factory):
    """A finished 4-task greedy run: (CLI arguments without --out, its run directory)."""
    args = ["run", "compass", "--agent", "scripted:greedy", "--limit", str(TASKS), "--no-progress",
            "--data-dir", str(compass_db.parent.parent)]  # fmt: skip
    out = tmp_path_factory.mktemp("finished")
    done = CliRunner().invoke(main, [*args, "--out", str(out)])
    assert done.exit_code == 0, done.output
    return args, out / "scripted-greedy"


def _copy(finished, tmp_path, lines: list[bytes], end: bytes = b"\n"):
    """A copy of the finished run whose episodes.jsonl holds ``lines``; (args, out, run dir)."""
    args, source = finished
    run_dir = tmp_path / "out" / "scripted-greedy"
    shutil.copytree(source, run_dir)
    (run_dir / EPISODES).write_bytes(b"\n".join(lines) + end)
    return args + ["--out", str(tmp_path / "out")], run_dir


def _lines(run_dir) -> list[bytes]:
    return (run_dir / EPISODES).read_bytes().splitlines()


def _quarantine(run_dir) -> list[dict]:
    return [json.loads(x) for x in (run_dir / QUARANTINE).read_text().splitlines()]


def _assert_complete(run_dir, finished) -> None:
    got = raw_episodes(run_dir / EPISODES)
    want = raw_episodes(finished[1] / EPISODES)
    assert sorted(map(normalise, got), key=lambda e: e["task_id"]) == sorted(
        map(normalise, want), key=lambda e: e["task_id"]
    )


def test_a_torn_last_line_is_moved_to_quarantine_on_resume(finished, tmp_path):
    good = _lines(finished[1])
    args, run_dir = _copy(finished, tmp_path, good[:2] + [good[2][:300]], end=b"")
    resumed = CliRunner().invoke(main, [*args, "--resume"])
    assert resumed.exit_code == 0, resumed.output
    assert (
        f"note: {run_dir / EPISODES}:3: {TORN}; moved to {run_dir / QUARANTINE}" in resumed.output
    )
    (record,) = _quarantine(run_dir)
    assert record["line"] == 3 and record["reason"] == TORN and record["source"] == EPISODES
    assert record["text"].encode() == good[2][:300]  # kept byte for byte
    _assert_complete(run_dir, finished)


def test_a_wrong_fields_line_in_the_middle_stops_resume_and_repair_reruns_it(finished, tmp_path):
    good = _lines(finished[1])
    task = json.loads(good[1])["task_id"]
    wrong = json.dumps({"task_id": task, "trial": 0, "suite": "compass", "format_version": "1",
                        "termination": "accepted"}).encode()  # fmt: skip
    args, run_dir = _copy(finished, tmp_path, [good[0], wrong, good[2]])
    runner = CliRunner()
    refused = runner.invoke(main, [*args, "--resume"])
    assert refused.exit_code == 1
    assert refused.output.strip().splitlines() == [
        f"Error: {run_dir / EPISODES}:2: not a compass episode (format 2): episode_id: Field "
        f"required (and 3 more problem(s)); `travelgym run ... --resume --repair` moves bad lines "
        f"to {QUARANTINE} and runs their episodes again"
    ]
    assert _lines(run_dir) == [good[0], wrong, good[2]]  # refused: nothing changed
    repaired = runner.invoke(main, [*args, "--resume", "--repair", "--json"])
    assert repaired.exit_code == 0, repaired.output
    (record,) = _quarantine(run_dir)
    assert record["line"] == 2 and record["text"].encode() == wrong
    assert record["reason"].startswith("not a compass episode")
    _assert_complete(run_dir, finished)  # the task of the bad line was run again


def test_a_garbage_line_on_resume_names_file_and_line(finished, tmp_path):
    good = _lines(finished[1])
    args, run_dir = _copy(finished, tmp_path, [good[0], b"\x00\x00garbage", good[1]])
    refused = CliRunner().invoke(main, [*args, "--resume"])
    assert refused.exit_code == 1 and "Expecting value: line 1 column 1" not in refused.output
    assert f"{run_dir / EPISODES}:2: not valid JSON (Expecting value at column 1)" in refused.output


def test_repair_keeps_undecodable_bytes_and_the_first_of_a_duplicate(finished, tmp_path):
    good = _lines(finished[1])
    junk = b"\xff\xfe half an episode"
    args, run_dir = _copy(finished, tmp_path, [good[0], good[1], junk, good[0], good[2]])
    repaired = CliRunner().invoke(main, [*args, "--resume", "--repair"])
    assert repaired.exit_code == 0, repaired.output
    undecodable, duplicate = _quarantine(run_dir)
    assert undecodable["line"] == 3 and base64.b64decode(undecodable["bytes_base64"]) == junk
    assert "not valid UTF-8" in undecodable["reason"] and "text" not in undecodable
    assert duplicate["line"] == 4 and duplicate["text"].encode() == good[0]
    assert "again (first at line 1)" in duplicate["reason"]
    assert _lines(run_dir)[:3] == [good[0], good[1], good[2]]  # kept lines untouched, in order
    _assert_complete(run_dir, finished)


def test_an_episode_outside_the_run_is_an_error(finished, tmp_path):
    good = _lines(finished[1])
    stranger = json.loads(good[0])
    stranger["trial"] = 7  # the manifest has one trial
    args, run_dir = _copy(finished, tmp_path, [good[0], json.dumps(stranger).encode()])
    refused = CliRunner().invoke(main, [*args, "--resume"])
    assert refused.exit_code == 1 and ":2: episode" in refused.output
    assert "trial 7 is not part of this run" in refused.output


def test_repair_needs_resume(finished, tmp_path):
    args, _ = _copy(finished, tmp_path, _lines(finished[1]))
    bad = CliRunner().invoke(main, [*args, "--repair"])
    assert (
        bad.exit_code == 2 and "--repair works on a run being continued: add --resume" in bad.output
    )


def test_retry_errors_rewrites_atomically_and_keeps_what_it_takes_out(finished, tmp_path):
    good = _lines(finished[1])
    failed = json.loads(good[1])
    failed.update(termination="error", error="agent: server: 500", outcome="infra_error",
                  cause="agent server")  # fmt: skip
    lines = [good[0], json.dumps(failed).encode(), good[2], good[3]]
    args, run_dir = _copy(finished, tmp_path, lines)
    before = (run_dir / EPISODES).read_bytes()
    with injected(FaultyDisk(fail_on={2: 28})):  # the rewrite's write fails (after the quarantine)
        stopped = CliRunner().invoke(main, [*args, "--resume", "--retry-errors"])
    assert stopped.exit_code == 1 and "No space left on device" in stopped.output
    assert "Traceback" not in stopped.output
    assert (run_dir / EPISODES).read_bytes() == before  # the old file, whole
    assert not [p for p in run_dir.iterdir() if p.name.endswith(".tmp")]
    retried = CliRunner().invoke(main, [*args, "--resume", "--retry-errors"])
    assert retried.exit_code == 0, retried.output
    (record,) = _quarantine(run_dir)  # the failed attempt's record is not kept twice
    assert record["line"] == 2 and json.loads(record["text"])["error"] == "agent: server: 500"
    assert "--retry-errors" in record["reason"]
    _assert_complete(run_dir, finished)


def test_score_reads_a_killed_run_and_says_what_is_missing(finished, tmp_path):
    good = _lines(finished[1])
    args, run_dir = _copy(finished, tmp_path, good[:2] + [good[2][:100]], end=b"")
    reseal(run_dir)  # as a kill leaves the digest chain: open, two lines
    data_dir = args[args.index("--data-dir") + 1]
    scored = CliRunner().invoke(main, ["score", str(run_dir), "--json", "--data-dir", data_dir])
    assert scored.exit_code == 0, scored.output
    note = (f"note: {run_dir} is an unfinished run: 2 of 4 episode(s) missing, a torn last line "
            "(line 3) left out; scored what is there (`travelgym run ... --resume` completes it)")  # fmt: skip
    assert scored.stderr == note + "\n"
    assert json.loads(scored.stdout)["overall"]["n"] == 2


def test_trip_answers_of_a_killed_run(tmp_path):
    from travelgym.suites.behavior2trip.agents.base import TripStep
    from travelgym.suites.behavior2trip.episode import TripEpisode
    from travelgym.suites.behavior2trip.scoring import read_answers

    def line(iid):
        answer = "<answer>[]</answer>"  # delivered by its last step, as a run records it
        return TripEpisode(episode_id=f"{iid}#0", task_id=iid, instance_id=iid, split="test",
                           difficulty="easy", agent="scripted", final_answer=answer,
                           steps=[TripStep(index=0, answer=True, delivered=answer)],
                           ).model_dump_json()  # fmt: skip

    (tmp_path / MANIFEST).write_text(json.dumps({"suite": "behavior2trip", "trials": 1,
                                                 "task_ids": ["x", "y", "z"]}))  # fmt: skip
    (tmp_path / EPISODES).write_text(line("x") + "\n" + line("y")[:80])
    notes: list[str] = []
    assert read_answers(tmp_path, notes) == [{"instance_id": "x", "trial": 0,
                                              "answer": "<answer>[]</answer>",
                                              "judge": None}]  # fmt: skip
    assert notes == [missing_note(read_run(tmp_path))]
    assert "2 of 3 episode(s) missing" in notes[0]


def test_a_path_that_cannot_be_a_run_directory_is_one_line(tmp_path):
    not_dir = tmp_path / "file"
    not_dir.write_text("x")
    for out in (Path("/dev/null") / "run", not_dir / "run", not_dir):
        with pytest.raises(RunDirError) as caught:
            RunStore(out).open({"suite": "compass"}, resume=False)
        assert str(caught.value) in (f"cannot create the run directory {out}: Not a directory",
                                     f"cannot create the run directory {out}: File exists")  # fmt: skip
