"""Tamper evidence for a whole run: the digest chain in ``integrity.jsonl`` over every line of
``episodes.jsonl`` and over the manifest.

Any single-byte edit, line swap, deletion, insertion or truncation of either file is found by
:func:`~travelgym.runner.integrity.verify_run` (property tests) and shown as TAMPERED by
``score``, ``analyze`` and ``report``; the framework's own rewrites (a resume's cut of a torn
line, ``--retry-errors``) and a run SIGKILLed and resumed still verify; a run written before
the chain reads as unchained, not tampered; an unsafe-sandbox run stays marked whatever is
deleted.
"""

from __future__ import annotations

import hashlib
import json
import random
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.runner.conftest import copy_run
from tests.runner.faults import _kill_once, child_env, cli_command, raw_episodes
from travelgym.cli import main
from travelgym.runner import chain
from travelgym.runner.integrity import INTEGRITY, verify_run
from travelgym.runner.store import EPISODES, MANIFEST


def _invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def _lines(data: bytes) -> list[bytes]:
    return data.splitlines(keepends=True)


def mutate(data: bytes, kind: str, draw: random.Random) -> bytes:
    """``data`` changed in one way of ``kind``: never equal to ``data``."""
    lines = _lines(data)
    if kind == "byte":
        at = draw.randrange(len(data))
        return data[:at] + bytes([(data[at] + draw.randrange(1, 256)) % 256]) + data[at + 1 :]
    if kind == "swap":
        i, j = draw.sample(range(len(lines)), 2)
        while lines[i] == lines[j]:
            i, j = draw.sample(range(len(lines)), 2)
        lines[i], lines[j] = lines[j], lines[i]
    elif kind == "delete":
        del lines[draw.randrange(len(lines))]
    elif kind == "insert":
        lines.insert(draw.randrange(len(lines) + 1), draw.choice(lines))
    elif kind == "truncate":
        return data[: draw.randrange(len(data))]
    return b"".join(lines)


KINDS = ("byte", "swap", "delete", "insert", "truncate")
FILES = (EPISODES, MANIFEST)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(kind=st.sampled_from(KINDS), name=st.sampled_from(FILES), seed=st.integers(0, 2**32))
def test_any_single_change_of_either_file_is_tampering(greedy_run, tmp_path, kind, name, seed):
    run = copy_run(greedy_run, tmp_path)
    path = run / name
    before = path.read_bytes()
    after = mutate(before, kind, random.Random(seed))
    assert after != before
    path.write_bytes(after)
    verdict = verify_run(run)
    assert verdict.status == "tampered", (kind, name, verdict)
    assert verdict.tampered and name.split(".")[0] in verdict.reason.replace("digest", "")


def test_a_greedy_run_verifies(greedy_run):
    verdict = verify_run(greedy_run)
    assert (verdict.status, verdict.tampered, verdict.notes) == ("verified", None, [])
    scored = _invoke("score", greedy_run, "--json")
    assert scored.exit_code == 0, scored.output
    result = json.loads(scored.stdout)
    assert result["tampered"] is None and "TAMPERED" not in scored.output


def _shown_by_the_commands(run: Path, tmp_path: Path) -> dict[str, str]:
    """What score, analyze and report print about ``run``, by command."""
    page = tmp_path / f"{run.parent.name}.html"
    results = {
        "score": _invoke("score", run),
        "analyze": _invoke("analyze", run),
        "report": _invoke("report", run, "--out", page, "--no-analysis"),
    }
    shown = {name: r.output for name, r in results.items()}
    if page.exists():
        shown["report page"] = page.read_text()
    return shown


@pytest.mark.parametrize("name", FILES)
@pytest.mark.parametrize("kind", KINDS)
def test_score_analyze_and_report_say_tampered(greedy_run, tmp_path, kind, name):
    run = copy_run(greedy_run, tmp_path)
    path = run / name
    path.write_bytes(mutate(path.read_bytes(), kind, random.Random(f"{kind}{name}")))
    for command, output in _shown_by_the_commands(run, tmp_path).items():
        assert "TAMPERED" in output, (command, output[-2000:])
    if name == EPISODES and kind in ("byte", "swap", "delete", "insert"):
        verdict = verify_run(run)
        assert verdict.line is not None and f"line {verdict.line}" in verdict.reason


def test_the_listed_attack_is_tampered_in_score_and_analyze(greedy_run, tmp_path, compass_db):
    """Setting one episode's final recommendation and score to the optimal plan's."""
    run = copy_run(greedy_run, tmp_path)
    lines = (run / EPISODES).read_bytes().splitlines()
    episode = json.loads(lines[1])
    episode["final_recommendation"] = {"hotel": "pkg_1", "flight": "flight_1", "permit": None}
    episode["score"].update(optimal=True, optimality_gap=0.0, feasible=True)
    lines[1] = json.dumps(episode).encode()
    (run / EPISODES).write_bytes(b"\n".join(lines) + b"\n")
    scored = _invoke("score", run, "--json")
    assert scored.exit_code == 0, scored.output
    result = json.loads(scored.stdout)
    assert verify_run(run).line == 2
    # the chain's verdict first, then what re-deriving the episode from its turns found
    assert result["tampered"].startswith("episodes.jsonl line 2 differs from the digest chain; ")
    assert "line 2 (compass-002#0): its stored final answer is not" in result["tampered"]
    assert "TAMPERED: episodes.jsonl line 2" in _invoke("score", run).stdout
    analyzed = _invoke("analyze", run, "--json")
    assert analyzed.exit_code == 0, analyzed.output
    assert json.loads(analyzed.stdout)["tampered"][str(run)].startswith("episodes.jsonl line 2")
    assert f"TAMPERED {run}: episodes.jsonl line 2" in _invoke("analyze", run).stdout


def test_a_forged_line_with_a_plausible_hash_is_tampering(greedy_run, tmp_path):
    """Not listed: a copied episode appended with a chain entry whose head is the line's own
    SHA-256 (not chained), after the session's close entry."""
    run = copy_run(greedy_run, tmp_path)
    line = (run / EPISODES).read_bytes().splitlines(keepends=True)[0]
    forged = line.replace(b'"trial":0', b'"trial":1')
    with open(run / EPISODES, "ab") as fh:
        fh.write(forged)
    entry = chain.entry("line", n=4, head=hashlib.sha256(forged).hexdigest())
    with open(run / INTEGRITY, "ab") as fh:
        fh.write(entry)
    verdict = verify_run(run)
    assert verdict.status == "tampered" and "integrity.jsonl line" in verdict.reason
    # a head that does chain but no session opened for it: still refused
    lines = (run / INTEGRITY).read_bytes().splitlines(keepends=True)[:-1]
    heads = chain.heads_of((run / EPISODES).read_bytes().splitlines(keepends=True))
    (run / INTEGRITY).write_bytes(b"".join(lines) + chain.entry("line", n=4, head=heads[-1].hex()))
    assert "out of sequence" in verify_run(run).reason


def test_an_edited_manifest_seed_is_tampering(greedy_run, tmp_path):
    run = copy_run(greedy_run, tmp_path)
    manifest = json.loads((run / MANIFEST).read_text())
    manifest["seed"] = 1
    (run / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    verdict = verify_run(run)
    assert verdict.status == "tampered" and verdict.reason.startswith("manifest.json differs")
    scored = _invoke("score", run, "--json")
    assert "manifest.json differs" in json.loads(scored.stdout)["tampered"]


@pytest.mark.parametrize("how", ["deleted", "emptied", "cut"])
def test_a_missing_or_truncated_integrity_log_is_tampering(greedy_run, tmp_path, how):
    run = copy_run(greedy_run, tmp_path)
    log = run / INTEGRITY
    if how == "deleted":
        log.unlink()
    elif how == "emptied":
        log.write_bytes(b"")
    else:  # its last session's entries cut off: line 3 is no longer in the chain
        log.write_bytes(b"".join(_lines(log.read_bytes())[:3]))
    verdict = verify_run(run)
    assert verdict.status == "tampered", verdict
    assert "TAMPERED" in _invoke("score", run).output


def test_a_run_written_before_the_chain_is_unchained_not_tampered(greedy_run, tmp_path):
    run = copy_run(greedy_run, tmp_path)
    manifest = json.loads((run / MANIFEST).read_text())
    del manifest[chain.MANIFEST_KEY]
    (run / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    sessions = [x for x in _lines((run / INTEGRITY).read_bytes()) if b'"chain"' not in x]
    (run / INTEGRITY).write_bytes(b"".join(sessions))
    verdict = verify_run(run)
    assert (verdict.status, verdict.tampered) == ("unchained", None)
    assert verdict.notes == ["no chain (written before tamper evidence)"]
    scored = _invoke("score", run, "--json")
    assert json.loads(scored.stdout)["tampered"] is None
    assert "no chain (written before tamper evidence)" in scored.stderr
    # resuming it adopts its lines into a chain: from then on edits show
    resumed = _invoke("run", "compass", "--agent", "scripted:greedy", "--limit", 3, "--out",
                      run.parent, "--resume", "--no-progress")  # fmt: skip
    assert resumed.exit_code == 0, resumed.output
    assert verify_run(run).status == "verified"


def test_a_torn_line_and_its_resume_verify(greedy_run, tmp_path, data_dir):
    """A kill mid-write leaves the chain entry and part of the line: not tampering; the
    resume cuts the part, logs it, and the run verifies whole."""
    run = copy_run(greedy_run, tmp_path)
    lines = _lines((run / EPISODES).read_bytes())
    log = _lines((run / INTEGRITY).read_bytes())
    # back to the moment line 3's chain entry was written and half its bytes
    (run / EPISODES).write_bytes(b"".join(lines[:2]) + lines[2][:100])
    (run / INTEGRITY).write_bytes(b"".join(log[:4]))
    verdict = verify_run(run)
    assert verdict.status == "verified" and any("torn" in n for n in verdict.notes), verdict
    resumed = _invoke("run", "compass", "--agent", "scripted:greedy", "--limit", 3, "--out",
                      run.parent, "--resume", "--data-dir", data_dir, "--no-progress")  # fmt: skip
    assert resumed.exit_code == 0, resumed.output
    assert verify_run(run) == verify_run(greedy_run)
    assert len(_lines((run / EPISODES).read_bytes())) == 3


@pytest.mark.slow
def test_retry_errors_rewrite_is_logged_and_verifies(tmp_path, data_dir):
    from tests.cli.test_infra_errors import closed_port_url
    from tests.fakes.openai_server import FakeOpenAIServer, Reply

    common = ["run", "compass", "--agent", "llm:fake-model", "--limit", 2, "--out", tmp_path,
              "--data-dir", data_dir, "--no-progress"]  # fmt: skip
    down = _invoke(*common, "--base-url", closed_port_url())
    run = tmp_path / "llm-fake-model"
    assert down.exit_code != 0 and len(raw_episodes(run / EPISODES)) == 2, down.output
    assert verify_run(run).status == "verified"

    def respond(body: dict) -> Reply:
        return Reply(json.dumps({"message": "Here.", "recommendation": {}}))

    with FakeOpenAIServer(responder=respond) as server:
        retried = _invoke(*common, "--base-url", server.base_url, "--resume", "--retry-errors")
    assert retried.exit_code in (0, 3), retried.output
    opens = [json.loads(x) for x in _lines((run / INTEGRITY).read_bytes()) if b'"open"' in x]
    assert "--retry-errors" in opens[-1]["rewrite"]["reason"]
    verdict = verify_run(run)
    assert (verdict.status, verdict.tampered) == ("verified", None), verdict


def test_an_edit_before_a_resume_stays_tampered(greedy_run, tmp_path, data_dir):
    """A resume re-chains the file it finds but records what it found: an edit is not
    laundered by running the run again."""
    run = copy_run(greedy_run, tmp_path)
    lines = _lines((run / EPISODES).read_bytes())
    (run / EPISODES).write_bytes(b"".join(lines[:2]))  # the last episode deleted
    resumed = _invoke("run", "compass", "--agent", "scripted:greedy", "--limit", 3, "--out",
                      run.parent, "--resume", "--data-dir", data_dir, "--no-progress")  # fmt: skip
    assert resumed.exit_code == 0, resumed.output
    verdict = verify_run(run)
    assert verdict.status == "tampered" and "before a resume" in verdict.reason
    assert verdict.line == 3


def test_an_unsafe_run_is_marked_whatever_is_deleted(greedy_run, tmp_path):
    run = copy_run(greedy_run, tmp_path)
    manifest = json.loads((run / MANIFEST).read_text())
    manifest["sandbox"] = {"boundary": "unsafe", "used": "yes"}
    text = json.dumps(manifest, indent=2, sort_keys=True) + "\n"
    (run / MANIFEST).write_text(text)
    (run / INTEGRITY).unlink()
    verdict = verify_run(run)
    assert "--unsafe-sandbox" in verdict.unsafe
    for command, output in _shown_by_the_commands(run, tmp_path).items():
        assert "--unsafe-sandbox" in output, (command, output[-2000:])
    scored = _invoke("score", run, "--json")
    assert "--unsafe-sandbox" in json.loads(scored.stdout)["tampered"]


@pytest.mark.slow
def test_sigkill_and_resume_still_verifies(tmp_path, data_dir):
    """Real runs SIGKILLed at seeded random points (on a slow disk, so kills land mid-write),
    each checked, then resumed to the end: the run verifies at every kill point and after."""
    out = tmp_path / "runs"
    command = cli_command("run", "compass", "--agent", "scripted:sampled", "--limit", "8",
                          "--no-progress", "--data-dir", str(data_dir), "--out", str(out),
                          slow_disk=True)  # fmt: skip
    run, rng = out / "scripted-sampled", random.Random(34)
    first, kills = True, 0
    for when in ("write", "any", "write", "start", "write", "any"):
        killed, code = _kill_once(command + ([] if first else ["--resume"]), run / EPISODES, rng,
                                  when, 120)  # fmt: skip
        first = False
        if not killed:
            assert code == 0
            break
        kills += 1
        verdict = verify_run(run)
        assert verdict.tampered is None and verdict.status in ("verified", "unchained"), verdict
    assert kills >= 1
    done = subprocess.run(command + ["--resume"], env=child_env(), capture_output=True,
                          timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert len(raw_episodes(run / EPISODES)) == 8
    verdict = verify_run(run)
    assert (verdict.status, verdict.tampered, verdict.notes) == ("verified", None, [])
