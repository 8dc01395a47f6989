"""Snapshot of every COMPASS tool schema, and the generated reference kept in sync.

After an intended schema change, regenerate both with:
    travelgym tools compass > tests/suites/compass/snapshots/compass_tool_schemas.json
    travelgym tools compass --markdown > docs/compass/tools.md
"""

import json
from pathlib import Path

from travelgym.suites.compass.tools import COMPASS_TOOLSET, compass_registry

ROOT = Path(__file__).resolve().parents[3]


def test_schemas_match_snapshot():
    snapshot = json.loads(
        (ROOT / "tests/suites/compass/snapshots/compass_tool_schemas.json").read_text()
    )
    current = compass_registry().openai_schemas()
    assert [s["function"]["name"] for s in current] == [s["function"]["name"] for s in snapshot]
    for now, then in zip(current, snapshot, strict=True):
        assert now == then, now["function"]["name"]


def test_every_schema_is_complete():
    for schema in compass_registry().openai_schemas():
        fn = schema["function"]
        assert fn["description"] and "Returns:" in fn["description"]
        params = fn["parameters"]
        assert params["type"] == "object" and params["additionalProperties"] is False
        for name, prop in params["properties"].items():
            assert prop.get("description"), f"{fn['name']}.{name} has no description"
        assert "ctx" not in params["properties"]


def test_markdown_reference_is_generated_from_registry():
    assert (ROOT / "docs/compass/tools.md").read_text() == COMPASS_TOOLSET.reference()
