"""SFT export of real runs (COMPASS scripted:exhaustive, Behavior2Trip scripted; chats rebuilt
and tool calls replayed), of policy transcripts (through the environments), the filters, both
output formats, and clear errors on bad input."""

from __future__ import annotations

import asyncio
import json
import shutil

import pytest
from click.testing import CliRunner

from travelgym.agents.b2t_format import parse_message
from travelgym.cli import main
from travelgym.runner.batch import RunConfig, run_suite
from travelgym.runner.store import EPISODES, MANIFEST, RunStore
from travelgym.suites.behavior2trip.environment import TripTrainingEnv
from travelgym.suites.behavior2trip.instances import ensure_instances, load_instances
from travelgym.suites.behavior2trip.tools import trips_registry
from travelgym.suites.compass.environment import CompassTrainingEnv
from travelgym.suites.compass.solver import solve
from travelgym.suites.compass.tasks import load_tasks
from travelgym.suites.compass.tools import compass_registry
from travelgym.training.chat import chat_problems, sharegpt_problems
from travelgym.training.sft import ExportError, FilterError, export_sft, read_run


@pytest.fixture(scope="module")
def runs(tmp_path_factory, compass_db, trips_database):
    """Two real runs of two episodes each, on one data directory (holding the session's two
    databases): ``{suite: (run directory, data directory)}``."""
    root = tmp_path_factory.mktemp("sft-runs")
    data = root / "data"
    data.mkdir()
    (data / "compass").symlink_to(compass_db.parent, target_is_directory=True)
    (data / "behavior2trip").symlink_to(trips_database.path.parent, target_is_directory=True)
    ensure_instances(trips_database, data, splits=("test",))
    asyncio.run(run_suite(RunConfig("compass", "scripted:exhaustive", out=root / "compass", limit=2, data_dir=data,
                                      progress=False)))  # fmt: skip
    asyncio.run(run_suite(RunConfig("behavior2trip", "scripted", out=root / "trips", limit=2, data_dir=data,
                                                progress=False)))  # fmt: skip
    return {"compass": (root / "compass", data), "trips": (root / "trips", data)}


def lines(path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def check_openai_chat(messages: list[dict]) -> None:
    """Roles in order: system, user, then assistant turns; every tool message answers a call
    of an earlier assistant message, and every call is answered before the next turn."""
    assert messages[0]["role"] == "system" and messages[1]["role"] == "user"
    assert messages[-1]["role"] == "assistant" and not messages[-1].get("tool_calls")
    seen, pending = set(), set()
    for prev, m in zip(messages, messages[1:], strict=False):
        if m["role"] == "tool":
            assert m["tool_call_id"] in pending and m["tool_call_id"] in seen
            pending.discard(m["tool_call_id"])
            continue
        assert not pending, f"unanswered calls {pending}"
        if m["role"] == "assistant":
            assert prev["role"] in ("user", "tool")
            ids = [c["id"] for c in m.get("tool_calls") or []]
            assert not set(ids) & seen, "tool call ids are unique"
            seen.update(ids)
            pending = set(ids)
        else:
            assert m["role"] == "user" and prev["role"] in ("system", "assistant")
    assert chat_problems(messages) == []


def test_openai_export_of_scripted_runs(runs, tmp_path):
    (compass_run, compass_data), (trips_run, trips_data) = runs["compass"], runs["trips"]
    out = tmp_path / "compass.jsonl"
    summary = export_sft([compass_run], out, data_dir=compass_data)
    assert (summary.episodes, summary.kept, summary.rebuilt) == (2, 2, 2)
    assert summary.by_suite == {"compass": 2} and summary.skipped == {}
    _, episodes = read_run(compass_run)
    names = set(compass_registry().names)
    for example, episode in zip(lines(out), episodes, strict=True):
        assert set(example) == {"messages", "tools"}
        assert {t["function"]["name"] for t in example["tools"]} == names
        messages = example["messages"]
        check_openai_chat(messages)
        calls = [c for t in episode["turns"] for c in t["tool_calls"]]
        sent = [c for m in messages for c in m.get("tool_calls") or []]
        assert [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in sent] == [
            (c["name"], c["arguments"]) for c in calls
        ]  # every recorded call, in order, one per assistant message
        results = [m["content"] for m in messages if m["role"] == "tool"]
        assert len(results) == len(calls) and all(r.startswith("{") for r in results)
        final = json.loads(messages[-1]["content"])  # the JSON response format
        assert final["recommendation"] == episode["final_recommendation"]
        users = [t["text"] for t in episode["turns"] if t["role"] == "user"]
        assert [m["content"] for m in messages if m["role"] == "user"] == users[: len(
            [m for m in messages if m["role"] == "user"])]  # fmt: skip

    out = tmp_path / "trips.jsonl"
    # the default keeps only plans passing Final (every applicable check): as many as the
    # run's scores say, and at least one scripted plan fails it here
    _, trip_episodes = read_run(trips_run)
    final = sum(1 for e in trip_episodes if e["score"]["final"])
    assert final < 2
    summary = export_sft([trips_run], out, data_dir=trips_data)
    assert summary.kept == final and summary.skipped == {"not_final": 2 - final}
    summary = export_sft([trips_run], out, data_dir=trips_data, filters={"keep_failing": True})
    assert (summary.kept, summary.rebuilt, summary.by_suite) == (2, 2, {"behavior2trip": 2})
    names = trips_registry().names
    for example in lines(out):
        messages = example["messages"]
        assert example["tools"] == [] and chat_problems(messages) == []
        roles = [m["role"] for m in messages]
        assert roles == ["system", "user"] + ["assistant", "user"] * ((len(roles) - 3) // 2) + ["assistant"]  # fmt: skip
        for m in messages[2:-1:2]:
            parsed = parse_message(m["content"], names)
            assert parsed.invalid == 0 and parsed.tool_calls and parsed.answer is None
        for m, reply in zip(messages[2:-1:2], messages[3:-1:2], strict=True):
            n_calls = len(parse_message(m["content"], names).tool_calls)
            assert reply["content"].count("<tool_response>") == n_calls
        assert parse_message(messages[-1]["content"], names).answer.startswith("[")


def test_sharegpt_export(runs, tmp_path):
    (compass_run, compass_data), (trips_run, trips_data) = runs["compass"], runs["trips"]
    out = tmp_path / "both.jsonl"
    summary = export_sft([compass_run], out, fmt="sharegpt", data_dir=compass_data)
    assert summary.kept == 2
    for example in lines(out):
        assert set(example) == {"conversations", "system", "tools"}
        assert sharegpt_problems(example) == [] and example["system"].startswith("You are")
        turns = example["conversations"]
        froms = [t["from"] for t in turns]
        assert froms[0] == "human" and froms[-1] == "gpt"
        for i, t in enumerate(turns):
            assert t["from"] in (("human", "observation"), ("gpt", "function_call"))[i % 2]
            if t["from"] == "function_call":
                call = json.loads(t["value"])
                assert set(call) == {"name", "arguments"} and isinstance(call["arguments"], dict)
                assert froms[i + 1] == "observation"
        assert {t["name"] for t in json.loads(example["tools"])} == set(compass_registry().names)
    summary = export_sft([trips_run], out, fmt="sharegpt", data_dir=trips_data,
                         filters={"keep_failing": True})  # fmt: skip
    assert summary.kept == 2
    for example in lines(out):
        assert sharegpt_problems(example) == [] and example["tools"] == "[]"
        assert {t["from"] for t in example["conversations"]} == {"human", "gpt"}


def test_filters_drop_failures(runs, tmp_path):
    (compass_run, compass_data), (trips_run, trips_data) = runs["compass"], runs["trips"]
    compass_copy, trips_copy = tmp_path / "c", tmp_path / "t"
    shutil.copytree(compass_run, compass_copy)
    shutil.copytree(trips_run, trips_copy)
    first, second = lines(compass_copy / EPISODES)
    first["score"]["feasible"] = False  # as if the plan broke a constraint
    second["termination"] = "error"
    (compass_copy / EPISODES).write_text(json.dumps(first) + "\n" + json.dumps(second) + "\n")
    summary = export_sft([compass_copy], tmp_path / "c.jsonl", data_dir=compass_data)
    assert summary.kept == 0 and summary.skipped == {"infeasible": 1, "error": 1}
    assert (tmp_path / "c.jsonl").read_text() == ""

    one, two = lines(trips_copy / EPISODES)
    two["score"] = None
    one["score"]["delivered"] = False
    (trips_copy / EPISODES).write_text(json.dumps(one) + "\n" + json.dumps(two) + "\n")
    summary = export_sft([trips_copy], tmp_path / "t.jsonl", data_dir=trips_data)
    assert summary.kept == 0 and summary.skipped == {"undelivered": 1, "unscored": 1}

    # min-score: the exhaustive agent's plans are optimal (reward 1); above the best scripted
    # plan's reward nothing is kept
    failing = {"keep_failing": True}
    summary = export_sft([compass_run, trips_run], tmp_path / "all.jsonl", min_score=1.0,
                         data_dir=compass_data, filters=failing)  # fmt: skip
    assert summary.by_suite == {"compass": 2, "behavior2trip": 2}
    from travelgym.suites.behavior2trip.training import b2t_episode_reward

    best = max(b2t_episode_reward(e).total for e in lines(trips_run / EPISODES))
    summary = export_sft([trips_run], tmp_path / "t.jsonl", min_score=best + 0.01,
                         data_dir=trips_data, filters=failing)  # fmt: skip
    assert summary.kept == 0 and summary.skipped == {"below_min_score": 2}
    summary = export_sft([trips_run], tmp_path / "t.jsonl", max_chars=1000, data_dir=trips_data,
                         filters=failing)  # fmt: skip
    assert summary.kept == 0 and summary.skipped == {"too_long": 2}


def _set_checks(episode: dict, group: str, failing: int) -> None:
    """Make the episode's applicable checks of ``group`` pass, but the last ``failing`` (the
    Format check, which gates the reward, comes first)."""
    checks = episode["score"]["checks"]
    applicable = [c for c in checks if c["group"] == group and c["passed"] is not None]
    for i, check in enumerate(applicable):
        check["passed"] = i < len(applicable) - failing


def test_behavior2trip_thresholds(runs, tmp_path):
    """Final by default, ``keep_failing`` to drop that, C / UPC micro minimums on top."""
    trips_run, trips_data = runs["trips"]
    copy = tmp_path / "t"
    shutil.copytree(trips_run, copy)
    perfect, flawed = lines(copy / EPISODES)
    for group in ("C", "UPC"):
        _set_checks(perfect, group, 0)
        _set_checks(flawed, group, 0)
    _set_checks(flawed, "C", 1)  # one commonsense check fails
    n_c = sum(c["group"] == "C" and c["passed"] is not None for c in flawed["score"]["checks"])
    (copy / EPISODES).write_text(json.dumps(perfect) + "\n" + json.dumps(flawed) + "\n")
    out = tmp_path / "t.jsonl"

    def export(**filters):
        return export_sft([copy], out, data_dir=trips_data, filters=filters)

    summary = export()
    assert summary.kept == 1 and summary.skipped == {"not_final": 1}
    (kept,) = lines(out)
    assert kept["messages"][1]["content"]  # the perfect one, rebuilt
    assert export(keep_failing=True).kept == 2
    share = (n_c - 1) / n_c
    summary = export(keep_failing=True, min_c_micro=share + 1e-9)
    assert summary.kept == 1 and summary.skipped == {"below_min_c_micro": 1}
    assert export(keep_failing=True, min_c_micro=share).kept == 2  # the minimum is inclusive
    assert export(keep_failing=True, min_c_micro=0.0).kept == 2
    _set_checks(flawed, "C", 0)
    _set_checks(flawed, "UPC", 1)
    (copy / EPISODES).write_text(json.dumps(perfect) + "\n" + json.dumps(flawed) + "\n")
    summary = export(keep_failing=True, min_upc_micro=1.0)
    assert summary.kept == 1 and summary.skipped == {"below_min_upc_micro": 1}
    assert export(keep_failing=True, min_c_micro=1.0).kept == 2
    assert export().skipped == {"not_final": 1}
    # a filter for runs of no suite that reads it, or of no suite at all, is refused
    compass_run, _ = runs["compass"]
    with pytest.raises(FilterError, match="--min-c-micro applies to behavior2trip runs only"):
        export_sft([compass_run], out, filters={"min_c_micro": 0.5})
    with pytest.raises(FilterError, match="unknown filter --min-nothing"):
        export_sft([copy], out, filters={"min_nothing": 0.5})


def test_policy_transcripts_are_exported_as_they_are(tmp_path, compass_db, trips_database):
    conn_task = next(t for t in load_tasks() if t.level == 1)
    from travelgym.db import connect_readonly

    conn = connect_readonly(compass_db)
    truth = solve(conn, conn_task)
    conn.close()
    env = CompassTrainingEnv(compass_db, [conn_task], {conn_task.task_id: truth}, rank=False)
    env.reset()
    reply = json.dumps({"message": "Book this.", "recommendation": truth.optimal_plan})
    env.step({"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function",
         "function": {"name": "search_airports", "arguments": {"park_name": "Zion"}}},
        {"id": "c2", "type": "function",
         "function": {"name": "get_weekday", "arguments": {"date_str": "2025-08-04"}}}]})  # fmt: skip
    done = False
    while not done:
        *_, terminated, truncated, _ = env.step(reply)
        done = terminated or truncated
    episode = env.episode()
    run = tmp_path / "policy"
    RunStore(run).open({"suite": "compass", "agent": "llm:policy"}, resume=False)
    RunStore(run).append(episode)
    out = tmp_path / "policy.jsonl"
    summary = export_sft([run], out)  # no database needed: the transcript is complete
    assert summary.kept == 1 and summary.rebuilt == 0
    (example,) = lines(out)
    assert example["messages"] == episode.messages
    check_openai_chat(example["messages"])
    assert [m["tool_call_id"] for m in example["messages"] if m["role"] == "tool"] == ["c1", "c2"]
    sharegpt = export_sft([run], tmp_path / "p.jsonl", fmt="sharegpt")
    (converted,) = lines(tmp_path / "p.jsonl")
    assert sharegpt.kept == 1 and sharegpt_problems(converted) == []
    parallel = json.loads(converted["conversations"][1]["value"])
    assert [c["name"] for c in parallel] == ["search_airports", "get_weekday"]
    assert converted["conversations"][2]["from"] == "observation"
    assert "</tool_response>\n<tool_response>" in converted["conversations"][2]["value"]

    paths = ensure_instances(trips_database, trips_database.path.parent.parent, splits=("test",))
    instance = load_instances(paths["test"], check=False)[0]
    trip_env = TripTrainingEnv(trips_database, [instance], max_turns=1)
    trip_env.reset()
    trip_env.step("<answer>[]</answer>")  # delivered nothing readable
    trip_run = tmp_path / "trip-policy"
    RunStore(trip_run).open({"suite": "behavior2trip", "agent": "b2t:policy"}, resume=False)
    RunStore(trip_run).append(trip_env.episode())
    summary = export_sft([trip_run], tmp_path / "tp.jsonl", min_score=-5)
    assert summary.kept == 0 and summary.skipped == {"undelivered": 1}
    trip_env.close()
    env.close()


def test_cli_and_bad_input(runs, tmp_path):
    (compass_run, compass_data), (trips_run, _) = runs["compass"], runs["trips"]
    runner = CliRunner()
    out = tmp_path / "sft.jsonl"
    ok = runner.invoke(main, ["export", "sft", str(compass_run), "--out", str(out),
                              "--data-dir", str(compass_data), "--format", "sharegpt"])  # fmt: skip
    assert ok.exit_code == 0, ok.output
    assert (
        "wrote 2 of 2 episode(s)" in ok.output and "sharegpt" in ok.output and len(lines(out)) == 2
    )
    as_json = runner.invoke(main, ["export", "sft", str(compass_run), "--out", str(out), "--json",
                                   "--data-dir", str(compass_data), "--min-score", "1.5"])  # fmt: skip
    assert as_json.exit_code == 0
    assert json.loads(as_json.output)["skipped"] == {"below_min_score": 2}

    trips = runner.invoke(main, ["export", "sft", str(trips_run), "--out", str(out), "--json",
                                 "--data-dir", str(compass_data)])  # fmt: skip
    final = sum(1 for e in lines(trips_run / EPISODES) if e["score"]["final"])
    assert final < 2  # at least one scripted plan fails Final
    assert trips.exit_code == 0 and json.loads(trips.output)["skipped"] == {"not_final": 2 - final}
    loose = runner.invoke(main, ["export", "sft", str(trips_run), "--out", str(out), "--json",
                                 "--data-dir", str(compass_data), "--keep-failing",
                                 "--min-c-micro", "0.5", "--min-upc-micro", "0"])  # fmt: skip
    assert loose.exit_code == 0, loose.output
    assert json.loads(loose.output)["kept"] == 2
    misplaced = runner.invoke(main, ["export", "sft", str(compass_run), "--out", str(out),
                                     "--keep-failing"])  # fmt: skip
    assert misplaced.exit_code == 2 and "--keep-failing applies to behavior2trip runs only" in (
        misplaced.output)  # fmt: skip
    bad_share = runner.invoke(main, ["export", "sft", str(trips_run), "--out", str(out),
                                     "--min-c-micro", "1.5"])  # fmt: skip
    assert bad_share.exit_code == 2 and "--min-c-micro" in bad_share.output

    missing = runner.invoke(main, ["export", "sft", str(tmp_path / "nope"), "--out", str(out)])
    assert missing.exit_code == 2 and "does not exist" in missing.output
    no_args = runner.invoke(main, ["export", "sft", "--out", str(out)])
    assert no_args.exit_code == 2
    empty = tmp_path / "empty"
    empty.mkdir()
    not_run = runner.invoke(main, ["export", "sft", str(empty), "--out", str(out)])
    assert not_run.exit_code == 1 and f"no {EPISODES}" in not_run.output

    corrupt = tmp_path / "corrupt"
    shutil.copytree(compass_run, corrupt)
    good = (corrupt / EPISODES).read_text().splitlines()
    (corrupt / EPISODES).write_text(good[0] + "\n{not json\n" + good[1] + "\n")
    bad = runner.invoke(main, ["export", "sft", str(corrupt), "--out", str(out)])
    assert bad.exit_code == 1 and f"{EPISODES}:2: not valid JSON" in bad.output
    assert "Traceback" not in bad.output
    # a killed run's partial last line is not an error (resume would cut it off)
    (corrupt / EPISODES).write_text(good[0] + "\n" + good[1][:100])
    assert len(read_run(corrupt)[1]) == 1

    wrong = runner.invoke(main, ["export", "sft", str(compass_run), "--suite", "behavior2trip",
                                 "--out", str(out)])  # fmt: skip
    assert wrong.exit_code == 1 and "is a compass run, not behavior2trip" in wrong.output
    other_db = tmp_path / "otherdb"
    shutil.copytree(compass_run, other_db)
    manifest = json.loads((other_db / MANIFEST).read_text())
    manifest["db_content_hash"] = "0" * 64
    (other_db / MANIFEST).write_text(json.dumps(manifest))
    before = out.read_text()
    hashed = runner.invoke(main, ["export", "sft", str(other_db), "--out", str(out),
                                  "--data-dir", str(compass_data)])  # fmt: skip
    assert hashed.exit_code == 1 and "content hash differs" in hashed.output
    assert out.read_text() == before  # a failed export leaves the previous file alone
    assert not (tmp_path / "sft.jsonl.tmp").exists()
    with pytest.raises(ExportError, match="unknown format"):
        export_sft([trips_run], out, fmt="alpaca")


def test_export_insists_on_a_scale_when_asked(runs, tmp_path):
    run_dir, data = runs["trips"]
    compass_dir, _ = runs["compass"]
    assert json.loads((run_dir / MANIFEST).read_text())["db_scale"] == "small"
    keep = {"keep_failing": True}  # the scripted plans fail Final
    kept = export_sft([run_dir], tmp_path / "a.jsonl", data_dir=data, scale="small", filters=keep)
    assert kept.kept >= 1
    with pytest.raises(ExportError, match="is a run at scale small, not full"):
        export_sft([run_dir], tmp_path / "b.jsonl", data_dir=data, scale="full")
    with pytest.raises(ExportError, match="compass runs have no database scale"):
        export_sft([compass_dir], tmp_path / "c.jsonl", data_dir=data, scale="small")


def test_grpo_db_scale_is_a_behavior2trip_setting():
    from travelgym.training.grpo_config import GRPOSettings

    assert GRPOSettings(suite="behavior2trip", db_scale="full").suite_options.scale == "full"
    with pytest.raises(ValueError, match="db_scale=full: Behavior2Trip settings, not for compass"):
        GRPOSettings(suite="compass", db_scale="full")
