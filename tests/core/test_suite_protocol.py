"""The Suite protocol is small (issue 33): an evaluation-only suite gives ten members (four
attributes, six methods) and everything else has a working default; the toy suite
(``tests/core/toy_suite.py``) is such a suite, and its text, statistics and reference come from
the shared defaults."""

from __future__ import annotations

import json
import sys
import types

import pytest

from tests.core.toy_suite import SOURCE
from travelgym.core.suite import Suite

REQUIRED = {"name", "title", "episode_model", "agent_kinds", "build", "toolset",
            "list_tasks", "open_run", "summarize_episodes", "succeeded"}  # fmt: skip


def required_members(cls: type) -> set[str]:
    """Abstract methods and attributes annotated without a value, along the class's bases."""
    unset = {name for klass in cls.__mro__ for name in getattr(klass, "__annotations__", {})
             if not hasattr(cls, name)}  # fmt: skip
    return set(cls.__abstractmethods__) | unset


@pytest.fixture
def toy():
    module = types.ModuleType("toysuite_protocol")
    exec(compile(SOURCE, "toysuite_protocol.py", "exec"), module.__dict__)  # noqa: S102
    sys.modules[module.__name__] = module
    yield module
    del sys.modules[module.__name__]


def test_an_evaluation_only_suite_gives_ten_members(toy):
    assert required_members(Suite) == REQUIRED and len(REQUIRED) <= 10
    own = {k for k in vars(toy.ToySuite)
           if not k.startswith("_") and (hasattr(Suite, k) or k in REQUIRED)}  # fmt: skip
    assert own >= REQUIRED
    # beyond the ten, the toy adds only its own flags and its answers-file format
    assert own - REQUIRED == {"Options", "answer_markers", "score"}
    assert required_members(toy.ToySuite) == set()  # nothing left to write


def test_the_defaults_serve_the_toy(toy, tmp_path):
    suite = toy.ToySuite()
    assert suite.agent_usage == "scripted:right|wrong"
    assert suite.default_agents == ("scripted:right",)
    options = suite.options()
    stats = suite.stats(options, 0, None, tmp_path, None)
    assert stats["counts"] == {"t": 0} and stats["path"].endswith("toy.sqlite")
    assert suite.format_stats(stats).splitlines()[1:] == ["metadata: -", "counts:", "  t: 0"]
    listed = suite.format_tasks(suite.list_tasks(options)).splitlines()
    assert listed[0].split() == ["task_id", "a", "b"] and listed[2].split() == ["toy-1", "1", "10"]
    reference = suite.tool_reference()
    assert reference.startswith("# Toy tools") and "`add`" in reference
    factory, intro = suite.tool_server(options, 0, None, tmp_path)
    assert isinstance(factory(), toy.ToyContext) and intro == "Toy tools."
    results = {"scripted:right": {"n": 2, "accuracy": 100.0, "episodes_wall_s": 0.5}}
    assert suite.format_results(results).splitlines() == ["agent           accuracy",
                                                          "scripted:right     100.0"]  # fmt: skip
    assert suite.format_score({"n": 2, "accuracy": 50.0}) == "accuracy: 50.0"
    with pytest.raises(Exception, match="toy scores run directories only"):
        Suite.score(suite, tmp_path / "answers.jsonl", 0, None, [])
    assert Suite.score(suite, tmp_path, 0, None, []) is None  # the stored scores stand
    assert json.loads(json.dumps(stats))  # plain data, as ``stats --json`` prints it
