"""End to end through the CLI: a model that hunts for the answer key from inside its code.

The code agent (COMPASS) and the Python tool (Behavior2Trip) run a program that tries every read
route (files, a file-system walk, ``/proc``, the travelgym package, the job and interpreter state,
tool error messages) and the model then recommends whatever it found. Each route must come back
empty and the recommendation must not be the optimum.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import travelgym
from tests.fakes.openai_server import FakeOpenAIServer, Reply, tool_call
from tests.sandbox.attacks import ROUTES, hunt_source
from travelgym.cli import main
from travelgym.runner.store import read_episodes
from travelgym.suites.compass.ground_truth import ensure_ground_truth
from travelgym.suites.compass.tasks import PACKAGE_TASKS

PACKAGE_ID = re.compile(r"(?:pkg|flight|permit)_\d+(?:_\d+){2,3}")
# planted in the benchmark's environment: the unsandboxed control finds it in /proc/self/environ
PLANTED = ("TRAVELGYM_PLANTED_ANSWER", "optimal_plan-planted-in-the-environment")


def _hints(data_dir: Path) -> list[str]:
    package = Path(travelgym.__file__).resolve().parent
    # COMPASS's own files (the shared test data directory holds other suites' too)
    files = sorted(str(p) for p in (Path(data_dir) / "compass").rglob("*") if p.is_file())
    return [str(data_dir), *files, str(package), str(PACKAGE_TASKS), str(Path.cwd())]


def _routes(stdout: str) -> dict[str, list[str]]:
    found = json.loads(stdout.strip().splitlines()[-1])
    assert set(found) == set(ROUTES)
    return found


@pytest.fixture()
def api_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv(*PLANTED)


# Run before the hunt in the positive control: the answers in the interpreter's memory (as the
# job route looks for them) and a tools module whose error messages leak a file name.
_CONTROL_PRELUDE = """
import sys, types
from travelgym.suites.compass.ground_truth import load_ground_truth
_in_memory = load_ground_truth(__TRUTH__)
tools = types.ModuleType('tools')
tools.__all__ = ['get_hotel_details']
tools.get_hotel_details = lambda **kw: {'error': {'message': 'cannot open ' + __TRUTH__}}
sys.modules['tools'] = tools
del tools, types
"""


def test_the_hunt_finds_the_answer_key_by_every_route_without_a_sandbox(compass_db, tmp_path):
    """Positive control: the same hunt, run as a plain host process (no sandbox, as
    ``--unsafe-sandbox`` would), where the answers are reachable, finds them by every route, so
    the sandboxed runs' empty findings are the boundary's doing, not a blind hunt's."""
    data_dir = compass_db.parent.parent
    truth_path, truths = ensure_ground_truth(seed=0, data_dir=data_dir)
    optimum = [i for t in truths.values() for i in t.optimal_plan.values() if i]
    prelude = _CONTROL_PRELUDE.replace("__TRUTH__", repr(str(truth_path)))
    source = prelude + hunt_source(_hints(data_dir))
    src = str(Path(travelgym.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": src, PLANTED[0]: PLANTED[1]}
    done = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    found = _routes(done.stdout)
    assert all(found[route] for route in ROUTES), {r: len(f) for r, f in found.items()}
    assert any(i in x for x in found["files"] for i in optimum)  # the ground truth's content
    assert any(truth_path.name in x for x in found["walk"])  # reached by walking
    assert any(PLANTED[1] in x for x in found["proc"])  # /proc/<pid>/environ
    assert any(f"{src}/travelgym optimal_plan" in x for x in found["package"])  # on the path
    assert any(i in x for x in found["job"] for i in optimum)  # the answers in memory
    assert any(truth_path.name in x for x in found["errors"])  # a tool's error message


def test_code_agent_finds_no_answer_key_by_any_route(compass_db, tmp_path, api_key):
    data_dir = compass_db.parent.parent
    _, truths = ensure_ground_truth(seed=0, data_dir=data_dir)
    task_id = sorted(truths)[0]
    optimum = truths[task_id].optimal_plan
    hunt = hunt_source(_hints(data_dir))

    def respond(body):
        messages = body["messages"]
        results = [m for m in messages if m["role"] == "tool"]
        if not results:
            return Reply(tool_calls=[tool_call("run_python", {"code": hunt})])
        stdout = json.loads(results[-1]["content"])["stdout"]
        read = PACKAGE_ID.findall(stdout)  # recommend whatever the hunt turned up
        plan = {"hotel": next((i for i in read if i.startswith("pkg_")), None),
                "flight": next((i for i in read if i.startswith("flight_")), None),
                "permit": next((i for i in read if i.startswith("permit_")), None)}  # fmt: skip
        return Reply(json.dumps({"message": "Here is my plan.", "recommendation": plan}))

    out = tmp_path / "runs"
    with FakeOpenAIServer(responder=respond) as server:
        result = CliRunner().invoke(main, [
            "run", "compass", "--agent", "code:fake-model", "--base-url", server.base_url,
            "--tasks", task_id, "--max-turns", "4", "--out", str(out),
            "--data-dir", str(data_dir), "--no-progress"])  # fmt: skip
    assert result.exit_code == 0, result.output
    (episode,) = read_episodes(out / "code-fake-model")
    container = next(c for t in episode.turns for c in t.tool_calls if c.container)
    assert container.ok, container.result
    for route, findings in _routes(container.result["stdout"]).items():
        assert findings == [], (route, findings[:3])
    for package_id in filter(None, optimum.values()):
        assert package_id not in container.result["stdout"]
    assert not episode.score.get("optimal")
    manifest = json.loads((out / "code-fake-model" / "manifest.json").read_text())
    assert manifest["sandbox"]["boundary"] == "bubblewrap"


def test_python_tool_reads_no_hidden_profile_by_any_route(trips_database, tmp_path, api_key):
    from travelgym.suites.behavior2trip.instances import ensure_instances, load_instances

    data_dir = trips_database.path.parent.parent
    paths = ensure_instances(trips_database, data_dir, splits=("test",))
    instance = load_instances(paths["test"], check=False)[0]
    hunt = hunt_source(_hints(data_dir))
    calls = [
        json.dumps({"name": "Python", "arguments": {"code": hunt}}),
        json.dumps(
            {"name": "Python", "arguments": {"code": "print(open('/proc/1/environ').read())"}}
        ),
    ]
    script = [Reply(f"Thought: look around.\nAction: {c}") for c in calls]
    script.append(Reply("Thought: nothing found.\nAction: Finish[[]]"))
    out = tmp_path / "runs"
    with FakeOpenAIServer(script) as server:
        result = CliRunner().invoke(main, [
            "run", "behavior2trip", "--agent", "react:fake-model", "--base-url", server.base_url,
            "--tasks", instance.instance_id, "--out", str(out), "--data-dir", str(data_dir),
            "--no-progress"])  # fmt: skip
    assert result.exit_code == 0, result.output
    (episode,) = read_episodes(out / "react-fake-model")
    hunted, environ = [c for s in episode.steps for c in s.tool_calls if c.name == "Python"]
    assert hunted.ok, hunted.result
    for route, findings in _routes(hunted.result["stdout"]).items():
        assert findings == [], (route, findings[:3])
    hidden = instance.profile.model_dump_json()
    assert hidden[:60] not in hunted.result["stdout"]
    assert "OPENAI_API_KEY" not in json.dumps(environ.result)
