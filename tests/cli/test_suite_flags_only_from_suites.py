"""A suite's flags come only from the suites: every flag an installed suite declares (in any of
its flag models) is added to the commands it names by ``suite_flags``, never written in
``travelgym.cli``; and the commands that moved to the suites' models (``chains``, ``quality
assess``, ``export sft``) still take the same flags the same way."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import travelgym.cli
from travelgym.cli import main
from travelgym.core.options import declared_flags, suite_flag_models
from travelgym.core.registry import all_suites, get_suite

CLI = Path(travelgym.cli.__file__).parent
GOLDEN_RUNS = Path(__file__).parents[1] / "golden" / "runs"


def _declared() -> dict[str, set[str]]:
    """Command key -> the flags (``--name``) some installed suite declares for it."""
    found: dict[str, set[str]] = {}
    for suite in all_suites():
        for model in suite_flag_models(suite):
            for name, (_, meta) in declared_flags(model).items():
                for command in meta["commands"]:
                    found.setdefault(command, set()).add("--" + name.replace("_", "-"))
    return found


def _commands() -> list[tuple[str, set[str], bool, set[str]]]:
    """Each decorated function of ``travelgym.cli``: (where, its ``suite_flags`` keys, whether
    it picks a suite (a SUITE argument or a ``--suite`` option), the ``--flags`` written in its
    decorators)."""
    found = []
    for path in sorted(CLI.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.FunctionDef) or not node.decorator_list:
                continue
            keys, written, picks = set(), set(), False
            for decorator in node.decorator_list:
                for part in ast.walk(decorator):
                    if isinstance(part, ast.Call) and getattr(part.func, "id", "") == "suite_flags":
                        keys |= {a.value for a in part.args if isinstance(a, ast.Constant)}
                    elif isinstance(part, ast.Call) and getattr(part.func, "id", "") == (
                        "suite_argument"
                    ):
                        picks = True
                    elif (isinstance(part, ast.Constant) and isinstance(part.value, str)
                          and part.value.startswith("--")):  # fmt: skip
                        written.add(part.value)
            picks = picks or "--suite" in written
            found.append((f"{path.name}:{node.name}", keys, picks, written))
    return found


def test_no_suite_flag_is_written_in_the_cli():
    declared = _declared()
    every = set().union(*declared.values())
    commands = _commands()
    served = set().union(*(keys for _, keys, _, _ in commands))
    assert set(declared) <= served, f"suite flags of no command: {set(declared) - served}"
    for where, keys, picks, written in commands:
        # travelgym's own option of the command, named like another command's suite flag
        mine = written & set().union(*(declared.get(k, set()) for k in keys))
        assert not mine, f"{where} writes the suite flags {sorted(mine)}"
        # a command that picks a suite takes that suite's flags from the suites
        if picks and not keys:
            assert not written & every, f"{where} writes {sorted(written & every)}"


@pytest.fixture
def calls(monkeypatch):
    """What the Behavior2Trip suite's chains and quality methods were called with."""
    suite = get_suite("behavior2trip")
    seen: dict[str, object] = {}

    def annotate(annotator, out, options, **kwargs):
        seen["chains"] = options
        return {"out": str(out)}

    def assess(out, **kwargs):
        seen["assess"] = kwargs
        return {"out": str(out)}

    monkeypatch.setattr(suite, "annotate_chains", annotate)
    monkeypatch.setattr(suite, "quality_assess", assess)
    return seen


def test_chains_flags_reach_the_suite(calls, tmp_path):
    out = str(tmp_path / "c.jsonl")
    base = ["chains", "--annotator", "scripted", "--out", out, "--json"]
    done = CliRunner().invoke(main, [*base, "--scale", "full", "--difficulty", "hard"])
    assert done.exit_code == 0, done.output
    options = calls["chains"]
    assert (options.split, options.difficulty, options.scale, options.max_steps) == (
        "train", "hard", "full", 25)  # fmt: skip
    assert options.instances == "filtered"
    done = CliRunner().invoke(main, [*base, "--split", "test", "--max-steps", "7"])
    assert done.exit_code == 0, done.output
    assert (calls["chains"].split, calls["chains"].scale, calls["chains"].max_steps) == (
        "test", "small", 7)  # fmt: skip
    for bad in (["--split", "validation"], ["--max-steps", "0"], ["--difficulty", "tiny"]):
        refused = CliRunner().invoke(main, [*base, *bad])
        assert refused.exit_code == 2 and bad[0] in refused.output, refused.output


def test_quality_assess_takes_split_all_and_its_scale(calls, tmp_path):
    out = str(tmp_path / "qc.jsonl")
    base = ["quality", "assess", "--backend", "rules", "--out", out, "--json"]
    done = CliRunner().invoke(main, base)
    assert done.exit_code == 0, done.output
    assert (calls["assess"]["split"], calls["assess"]["scale"]) == ("test", "small")
    done = CliRunner().invoke(main, [*base, "--split", "all", "--scale", "full"])
    assert done.exit_code == 0, done.output
    assert (calls["assess"]["split"], calls["assess"]["scale"]) == ("all", "full")
    refused = CliRunner().invoke(main, [*base, "--split", "validation"])
    assert refused.exit_code == 2 and "--split" in refused.output


def test_export_sft_scale_still_insists(trips_database, tmp_path):
    out = str(tmp_path / "sft.jsonl")
    run = str(GOLDEN_RUNS / "behavior2trip_small")
    data_dir = str(trips_database.path.parent.parent)  # the run's scripted calls are replayed

    def export(*args):
        return CliRunner().invoke(main, ["export", "sft", *args, "--out", out, "--json",
                                         "--data-dir", data_dir])  # fmt: skip

    wrong = export(run, "--scale", "full")
    assert wrong.exit_code == 1 and "is a run at scale small, not full" in wrong.output
    named = export(run, "--suite", "behavior2trip", "--scale", "full")
    assert named.exit_code == 1 and "is a run at scale small, not full" in named.output
    other = export(str(GOLDEN_RUNS / "compass_small"), "--scale", "small")
    assert other.exit_code == 1 and "compass runs have no database scale" in other.output
    elsewhere = export(run, "--suite", "compass", "--scale", "small")
    assert elsewhere.exit_code == 2, elsewhere.output
    assert "--scale applies to behavior2trip only, not to compass" in elsewhere.output
    assert export(run, "--scale", "huge").exit_code == 2
    kept = export(run, "--scale", "small", "--keep-failing")
    assert kept.exit_code == 0, kept.output
    assert json.loads(kept.output[kept.output.index("{") :])["kept"] >= 1
