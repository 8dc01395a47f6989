"""``travelgym report``'s embedded data JSON and ``travelgym export sft`` lines, for the
checked-in run directories."""

from __future__ import annotations

import json
import re

import pytest

from tests.golden.golden import (
    check_json,
    ids_as_star,
    invoke,
    key_paths,
    mask,
    read_jsonl,
    skeleton,
)
from travelgym.report.lazy import unpacked

SUITES = ["compass", "behavior2trip"]

DATA_ELEMENT = re.compile(r'<script type="application/json" id="report-data">(.*?)</script>', re.S)
# id-keyed maps (tasks, trajectories) and tool-argument tables are free-form
REPORT_MAPS = ("tasks", "trajectories", "arguments[]")
WROTE = re.compile(r"wrote (?P<path>.+) \(\d+\.\d MiB\): (?P<runs>\d+) run\(s\), (?P<episodes>\d+) "
                   r"episode\(s\), (?P<verdicts>\d+) plan verdict\(s\) in \d+\.\d s")  # fmt: skip


@pytest.mark.parametrize("suite", SUITES)
def test_report_data(golden, tmp_path, suite):
    """The data blob the viewer reads: every key path (ids as ``*``) of the data as the viewer
    has it once the episodes' packed details are unpacked, which keys are packed, and its
    scalar values' types at the top; plus the counts the command prints. Scoring first builds whatever the
    suite's data directory lacks (Behavior2Trip's instance files, whose behaviour trajectories
    the report embeds), so the blob does not depend on which tests ran before."""
    golden.checked_in_score(suite)
    out = tmp_path / "report.html"
    printed = invoke(
        "report", golden.checked_in(suite), "--out", out, data_dir=golden.data_dir(suite)
    ).stdout
    found = WROTE.search(printed)
    assert found, printed
    counts = {k: int(found[k]) for k in ("runs", "episodes", "verdicts")}
    elements = DATA_ELEMENT.findall(out.read_text(encoding="utf-8"))
    assert len(elements) == 1
    packed = json.loads(elements[0])
    data = unpacked(packed)
    index = set(key_paths(packed, REPORT_MAPS))
    check_json(f"report_data_{suite}.json", {
        "printed_counts": counts,
        "packed_key_paths": [k for k in key_paths(data, REPORT_MAPS) if k not in index],
        "top_level_scalars": skeleton({k: v for k, v in data.items() if not isinstance(v, dict | list)}),
        "key_paths": ids_as_star(key_paths(data, REPORT_MAPS)),
    })  # fmt: skip


SFT_MAPS = ("tools[].function.parameters.properties",)
MIN_SCORE = {"compass": [], "behavior2trip": ["--min-score", "0", "--keep-failing"]}  # b2t final: 0


def _roles(line: dict) -> list[str]:
    if "messages" in line:
        return [m["role"] for m in line["messages"]]
    return [m["from"] for m in line["conversations"]]


def _tool_names(line: dict) -> list[str]:
    tools = line.get("tools")
    if isinstance(tools, str):  # sharegpt keeps the schemas as a JSON string
        tools = json.loads(tools) if tools else []
    return sorted(t["function"]["name"] if "function" in t else t["name"] for t in tools or [])


@pytest.mark.parametrize("fmt", ["openai", "sharegpt"])
@pytest.mark.parametrize("suite", SUITES)
def test_sft_export_line(golden, tmp_path, suite, fmt):
    """The export summary, and the first line: key paths, role sequence, tool names."""
    out = tmp_path / "sft.jsonl"
    summary = json.loads(invoke("export", "sft", golden.checked_in(suite), "--out", out,
                                "--format", fmt, "--json", *MIN_SCORE[suite],
                                data_dir=golden.data_dir(suite)).stdout)  # fmt: skip
    lines = read_jsonl(out)
    assert summary["kept"] == len(lines) >= 1
    first = lines[0]
    check_json(f"sft_{fmt}_{suite}.json", {
        "summary": mask(summary, ("out",)),
        "key_paths": key_paths(first, SFT_MAPS),
        "roles": _roles(first),
        "tool_names": _tool_names(first),
    })  # fmt: skip
    assert all(set(line) == set(first) for line in lines)
