"""``travelgym analyze`` on Behavior2Trip run directories: three hand-made runs (a base and two
ablations) on six instances whose behaviour trajectories have known lengths (10, 19, 20, 45, 60
and 75 actions) and whose stored scores were chosen by hand, so every figure below (metrics by
difficulty, per-check rates, RQ2's length bins, RQ3's table and its differences) is computed by
hand. Also: the plot files, and the clear one-line errors (no episodes, an older checks version,
mixed task sets, mixed suites)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from travelgym.cli import main
from travelgym.suites.behavior2trip.checks import CHECK_IDS, CHECKS_VERSION
from travelgym.suites.behavior2trip.episode import TripEpisode
from travelgym.suites.behavior2trip.instances import INSTANCE_FORMAT_VERSION, instances_path
from travelgym.suites.behavior2trip.judge import JudgeVerdict
from travelgym.suites.behavior2trip.scoring import InstanceResult

C_CHECKS = ("format.json", "auth.poi", "auth.major_transport", "auth.local_transport")
U_CHECKS = ("pref.hotel_star", "pref.budget")
# instance -> (difficulty, trajectory actions)
INSTANCES = {
    "b2t-test-easy-0000": ("easy", 10),
    "b2t-test-easy-0001": ("easy", 19),
    "b2t-test-medium-0000": ("medium", 20),
    "b2t-test-medium-0001": ("medium", 45),
    "b2t-test-hard-0000": ("hard", 60),
    "b2t-test-hard-0001": ("hard", 75),
}
# per run and instance: the four C checks / the two UPC checks (P pass, F fail, - not
# applicable); "x" before the slash: nothing delivered (every applicable check fails)
RUNS = {
    "full": ("hf:ckpt/full", ["PPPP/PP", "PPPP/PF", "PPPP/P-", "PPPF/PP", "xFFFF/FF", "PPPP/PP"]),
    "no-memory": (
        "hf:ckpt/no-memory",
        ["PPPP/PP", "PPPP/PP", "PPPP/F-", "xFFFF/FF", "PPPP/PF", "PPFF/PP"],
    ),
    "no-penalty": (
        "hf:ckpt/no-penalty",
        ["xFFFF/FF", "xFFFF/FF", "PPPP/PP", "PPPP/PP", "PPPP/PP", "PPPP/FF"],
    ),
}
# the judge of the no-penalty run, on its delivered plans
JUDGE = {"b2t-test-medium-0000": True, "b2t-test-medium-0001": True,
         "b2t-test-hard-0000": True, "b2t-test-hard-0001": False}  # fmt: skip


def _verdict(cid: str, group: str, mark: str) -> dict:
    passed = None if mark == "-" else mark == "P"
    return {"id": cid, "group": group, "category": "format" if group == "C" else "personalization",
            "passed": passed, "reason": "by hand"}  # fmt: skip


def _score(iid: str, code: str, judged: bool | None) -> dict:
    delivered = not code.startswith("x")
    c_marks, u_marks = code.lstrip("x").split("/")
    checks = [_verdict(c, "C", m) for c, m in zip(C_CHECKS, c_marks, strict=True)]
    checks += [_verdict(c, "UPC", m) for c, m in zip(U_CHECKS, u_marks, strict=True)]
    judge = None if judged is None else JudgeVerdict(passed=judged, reason="by hand")
    return InstanceResult(instance_id=iid, difficulty=INSTANCES[iid][0], delivered=delivered,
                          checks=checks, judge=judge).model_dump(mode="json")  # fmt: skip


def write_run(directory: Path, agent: str, codes: list[str], *, judge: dict | None = None,
              checks_version: str = CHECKS_VERSION, task_ids: list[str] | None = None) -> Path:  # fmt: skip
    """A run directory as ``travelgym run`` leaves it: the manifest and one episode per line."""
    directory.mkdir(parents=True)
    manifest = {"suite": "behavior2trip", "agent": agent, "split": "test", "db_scale": "small",
                "db_seed": 0, "db_content_hash": "h", "tasks_sha256": "s", "seed": 0,
                "trials": 1, "task_ids": task_ids or list(INSTANCES), "judge": None,
                "instances": "filtered", "checks_version": checks_version, "instances_version": "2/2.0.0",
                "max_turns": 25, "user": None, "difficulty": None, "generation": {}}  # fmt: skip
    if judge:
        manifest["judge"] = "judge-model"
    (directory / "manifest.json").write_text(json.dumps(manifest, indent=2))
    lines = []
    for iid, code in zip(INSTANCES, codes, strict=True):
        judged = (judge or {}).get(iid) if not code.startswith("x") else None
        episode = TripEpisode(episode_id=f"{iid}#0", task_id=iid, instance_id=iid, split="test",
                              difficulty=INSTANCES[iid][0], agent=agent,
                              termination="step_limit" if code.startswith("x") else "answered",
                              final_answer=None if code.startswith("x") else "<answer>{}</answer>",
                              score=_score(iid, code, judged))  # fmt: skip
        lines.append(episode.model_dump_json())
    (directory / "episodes.jsonl").write_text("\n".join(lines) + "\n")
    return directory


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory, trips_db):
    """A data directory whose test instance file holds the six instances: real generated
    instances (one per difficulty) with their behaviour trajectories cut or repeated to the
    lengths of :data:`INSTANCES`."""
    from travelgym.suites.behavior2trip.behaviour import PoiCatalog
    from travelgym.suites.behavior2trip.instances import generate_instance

    catalog = PoiCatalog.from_database(trips_db)
    base = {d: generate_instance(catalog, 2024, "test", d, 0) for d in ("easy", "medium", "hard")}
    root = tmp_path_factory.mktemp("analysis-data")
    path = instances_path("test", root, "small")
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        for iid, (level, n) in INSTANCES.items():
            actions = base[level].trajectory
            trajectory = (actions * (n // len(actions) + 1))[:n]
            x = base[level].model_copy(update={"instance_id": iid, "trajectory": trajectory})
            fh.write(x.model_dump_json() + "\n")
    return root


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> list[Path]:
    root = tmp_path_factory.mktemp("analysis-runs")
    return [write_run(root / name, agent, codes, judge=JUDGE if name == "no-penalty" else None)
            for name, (agent, codes) in RUNS.items()]  # fmt: skip


def analyze(args: list, data_dir: Path, monkeypatch) -> tuple[int, str]:
    monkeypatch.setenv("TRAVELGYM_DATA_DIR", str(data_dir))
    result = CliRunner().invoke(main, ["analyze", *map(str, args)])
    return result.exit_code, result.output


def test_length_bins_and_ablation_table_from_three_runs(runs, data_dir, tmp_path, monkeypatch):
    plots = tmp_path / "plots"
    code, out = analyze([*runs, "--json", "--plots", plots], data_dir, monkeypatch)
    assert code == 0, out
    result = json.loads(out)
    assert result["bins"] == ["0-19", "20-39", "40-59", "60+"]
    assert list(result["runs"]) == ["hf:ckpt/full", "hf:ckpt/no-memory", "hf:ckpt/no-penalty"]
    full = result["runs"]["hf:ckpt/full"]
    # RQ2, the base run: 0-19 holds 10 and 19 actions, 20-39 holds 20, 60+ holds 60 and 75
    bins = {b["bin"]: (b["n"], b["DR"], b["final"], b["C_micro"], b["UPC_micro"], b["LLM"])
            for b in full["length_bins"]}  # fmt: skip
    assert bins == {"0-19": (2, 100.0, 50.0, 100.0, 75.0, None),
                    "20-39": (1, 100.0, 100.0, 100.0, 100.0, None),
                    "40-59": (1, 100.0, 0.0, 75.0, 100.0, None),
                    "60+": (2, 50.0, 50.0, 50.0, 50.0, None)}  # fmt: skip
    judged = {b["bin"]: (b["n"], b["final"], b["LLM"])
              for b in result["runs"]["hf:ckpt/no-penalty"]["length_bins"]}  # fmt: skip
    assert judged == {"0-19": (2, 0.0, None), "20-39": (1, 100.0, 100.0),
                      "40-59": (1, 100.0, 100.0), "60+": (2, 50.0, 50.0)}  # fmt: skip
    assert [e["actions"] for e in full["episodes"]] == [10, 19, 20, 45, 60, 75]
    # metrics by difficulty (scoring.summarize_run's)
    easy = full["summary"]["by_difficulty"]["easy"]
    assert (easy["n"], easy["DR"], easy["final"], easy["UPC_micro"]) == (2, 100.0, 50.0, 75.0)
    hard = full["summary"]["by_difficulty"]["hard"]
    assert (hard["n"], hard["DR"], hard["C_micro"], hard["C_macro"]) == (2, 50.0, 50.0, 50.0)
    # per-check pass rates: all 32 checks listed; auth.local_transport 4 of 6, pref.budget 3 of 5
    checks = {c["id"]: (c["applicable"], c["passed"], c["rate"]) for c in full["checks"]}
    assert list(checks) == list(CHECK_IDS)
    assert checks["auth.local_transport"] == (6, 4, 66.67)
    assert checks["pref.budget"] == (5, 3, 60.0)
    assert checks["info.richness"] == (0, 0, None)
    # RQ3: rows against the first run, in points and relative to the base
    rows = {r["label"]: r for r in result["table"]["rows"]}
    base = rows["hf:ckpt/full"]
    assert (base["DR"], base["final"], base["LLM"], base["C_micro"], base["UPC_micro"]) == (
        83.33, 50.0, None, 79.17, 72.73)  # fmt: skip
    assert "delta" not in base
    memory = rows["hf:ckpt/no-memory"]
    assert (memory["DR"], memory["final"], memory["C_micro"], memory["UPC_micro"]) == (
        83.33, 33.33, 75.0, 63.64)  # fmt: skip
    assert memory["delta"] == {"DR": 0.0, "final": -16.67, "LLM": None, "C_micro": -4.17,
                               "UPC_micro": -9.09}  # fmt: skip
    assert memory["relative"]["final"] == -33.34
    penalty = rows["hf:ckpt/no-penalty"]
    assert (penalty["DR"], penalty["final"], penalty["LLM"]) == (66.67, 50.0, 75.0)
    assert penalty["delta"] == {"DR": -16.66, "final": 0.0, "LLM": None, "C_micro": -12.5,
                                "UPC_micro": -22.73}  # fmt: skip
    assert penalty["relative"]["DR"] == -19.99
    for row in (memory, penalty):  # paired bootstrap intervals hold the observed difference
        for key in ("DR", "final"):
            low, high = row["interval"][key]
            assert low <= row["delta"][key] <= high
    written = sorted(p.name for p in plots.iterdir())
    assert written == ["b2t_rq2_trajectory_length.png", "b2t_rq2_trajectory_length.svg"]
    assert result["plots"] == [str(plots / name) for name in written]
    assert all((plots / name).stat().st_size > 1000 for name in written)


def test_text_output_shows_the_table_with_arrows(runs, data_dir, monkeypatch):
    code, out = analyze([*runs, "--seed", "3", "--resamples", "200"], data_dir, monkeypatch)
    assert code == 0, out
    table = out[out.index("RQ3:") :].splitlines()
    row = next(line for line in table if line.startswith("hf:ckpt/no-memory"))
    # the suite's columns in its order, one decimal; this run has no judge (LLM: -)
    assert row.split()[1:] == ["6", "83.3", "(±0.0)", "75.0", "(↓4.2)", "63.6", "(↓9.1)",
                               "33.3", "(↓16.7)", "-"]  # fmt: skip
    assert "Final -33.3%" in out and "(200 resamples)" in out
    bins = out[out.index("RQ2:") : out.index("RQ3:")].splitlines()
    first = next(line for line in bins if line.split()[:2] == ["hf:ckpt/full", "0-19"])
    assert first.split()[2:] == ["2", "100.0", "100.0", "75.0", "50.0", "-"]
    assert "auth.local_transport" in out and "66.7 4/6" in out


def test_no_episodes_older_checks_and_mixed_runs_are_one_line_errors(runs, data_dir, tmp_path,
                                                                   monkeypatch):  # fmt: skip
    empty = write_run(tmp_path / "empty", "scripted", RUNS["full"][1])
    (empty / "episodes.jsonl").write_text("")
    code, out = analyze([empty], data_dir, monkeypatch)
    assert code == 1 and "has no episodes yet" in out and "Traceback" not in out
    old = write_run(tmp_path / "old", "scripted", RUNS["full"][1], checks_version="2")
    code, out = analyze([runs[0], old], data_dir, monkeypatch)
    assert code == 1 and f"checks version 2 and this travelgym has version {CHECKS_VERSION}" in out
    other = write_run(tmp_path / "other", "scripted", RUNS["full"][1],
                      task_ids=[*INSTANCES, "b2t-test-easy-0002"])  # fmt: skip
    code, out = analyze([runs[0], other], data_dir, monkeypatch)
    assert code == 1 and "differ in task_ids" in out and "--allow-mixed" in out
    code, out = analyze([runs[0], other, "--allow-mixed", "--json", "--no-episodes"], data_dir,
                        monkeypatch)  # fmt: skip
    assert code == 0, out
    result = json.loads(out)
    assert any("mixed task sets" in n for n in result["notes"])
    assert all("episodes" not in run for run in result["runs"].values())
    broken = write_run(tmp_path / "broken", "scripted", RUNS["full"][1])
    lines = (broken / "episodes.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    first["score"] = {"delivered": "perhaps"}
    (broken / "episodes.jsonl").write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    code, out = analyze([broken], data_dir, monkeypatch)
    assert code == 1 and len(out.strip().splitlines()) == 1, out
    assert "episode 'b2t-test-easy-0000#0' stores a score that is not a Behavior2Trip" in out
    compass = tmp_path / "compass"
    compass.mkdir()
    (compass / "manifest.json").write_text(json.dumps({"suite": "compass", "agent": "x"}))
    (compass / "episodes.jsonl").write_text("")
    code, out = analyze([runs[0], compass], data_dir, monkeypatch)
    assert code == 1 and "cannot mix" in out and len(out.strip().splitlines()) == 1


def test_missing_instance_file_is_a_note(runs, data_dir, tmp_path, monkeypatch):
    code, out = analyze([runs[0], "--json"], tmp_path / "nothing", monkeypatch)
    assert code == 0, out
    result = json.loads(out)
    run = result["runs"]["hf:ckpt/full"]
    assert run["unknown_length"] == 6 and all(b["n"] == 0 for b in run["length_bins"])
    assert run["summary"]["overall"]["final"] == 50.0
    assert any("no trajectory lengths" in n for n in result["notes"])
    # a run from before instance sets ran on what is now the unfiltered set: that file is read
    old = write_run(tmp_path / "old", "scripted", RUNS["full"][1])
    manifest = json.loads((old / "manifest.json").read_text())
    del manifest["instances"]
    (old / "manifest.json").write_text(json.dumps(manifest))
    code, out = analyze([old, "--json"], data_dir, monkeypatch)
    notes = json.loads(out)["notes"]
    unfiltered = instances_path("test", data_dir, "small", "unfiltered")
    assert [n for n in notes if "trajectory" in n] == [
        f"no trajectory lengths for the small test split (unfiltered): {unfiltered} does not "
        "exist (`travelgym run behavior2trip` with this data directory writes it)"
    ]
    manifest["instances_version"] = "1/1.0.0"  # another instance format: its ids are not looked up
    (old / "manifest.json").write_text(json.dumps(manifest))
    code, out = analyze([old, "--json"], data_dir, monkeypatch)
    assert json.loads(out)["notes"] == [
        f"no trajectory lengths for {old}: it ran on instance format 1 and this install's files "
        f"are format {INSTANCE_FORMAT_VERSION}"
    ]


def test_labels_name_the_rq1_mode_and_stay_unique(tmp_path):
    from travelgym.suites.behavior2trip.analysis import run_label, run_labels

    rq1 = {"agent": "scripted", "no_trajectory": True, "clarify": "template"}
    assert run_label(rq1, tmp_path) == "scripted, no trajectory, clarify: template"
    runs = [{"manifest": {"agent": "scripted"}, "dir": tmp_path / name} for name in "aab"]
    runs.append({"manifest": {}, "dir": tmp_path / "c"})
    assert run_labels(runs) == ["scripted (a) #1", "scripted (a) #2", "scripted (b)", "c"]
