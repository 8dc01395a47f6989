"""The one episode loop (issue 33): every driver of a model-written episode applies its messages
through the loop's one body, :class:`~travelgym.runner.loop.Conversation` (``env.atransition``
behind it). Here: evaluation (``travelgym run`` with a Python policy), a person at ``travelgym
play``, the inspect_ai solver, a Gymnasium step, a TRL tool call; the GRPO rollouts in
``tests/training/test_one_loop.py``, the verifiers rollout in
``tests/integrations/test_verifiers_env.py``. A spy on the body records which environment each
applied message went to (the ``applied`` fixture); a driver with its own loop would leave it
empty."""

from __future__ import annotations

import json

from click.testing import CliRunner

from tests.training.support import need_extra
from travelgym.cli import main

TASK = "compass-004"


def test_evaluation_of_a_model_agent_goes_through_the_loop(applied, compass_db, trips_database,
                                                           tmp_path):  # fmt: skip
    for suite, data_dir, env in (("compass", compass_db.parent.parent, "CompassTrainingEnv"),
                                 ("behavior2trip", trips_database.path.parent.parent,
                                  "TripTrainingEnv")):  # fmt: skip
        applied.clear()
        result = CliRunner().invoke(main, ["run", suite, "--agent", "tests.my_agent:make",
                                           "--limit", "1", "--out", str(tmp_path / suite),
                                           "--data-dir", str(data_dir), "--no-progress"])  # fmt: skip
        assert result.exit_code == 0, result.output
        assert applied and set(applied) == {env}  # a tool call, then the text


def test_a_person_at_play_goes_through_the_loop(applied, compass_db, tmp_path):
    said = json.dumps({"message": "Nothing yet.", "recommendation": None})
    result = CliRunner().invoke(main, ["play", "compass", "--task", TASK, "--out",
                                       str(tmp_path / "play"), "--data-dir",
                                       str(compass_db.parent.parent)],
                                input=f"{said}\n/quit\n")  # fmt: skip
    assert result.exit_code == 0, result.output
    assert applied == ["CompassTrainingEnv"]  # the one message typed; /quit ends it


def test_the_inspect_solver_goes_through_the_loop(applied, compass_db, tmp_path, monkeypatch):
    need_extra("inspect", ("inspect_ai",))
    import inspect_ai.model._model as model
    from inspect_ai import eval as inspect_eval

    monkeypatch.setattr(model, "count_text_tokens", lambda text: max(1, len(text) // 4))
    (log,) = inspect_eval("travelgym/compass", model="mockllm/model", display="none", limit=1,
                          log_dir=str(tmp_path / "logs"),
                          task_args={"data_dir": str(compass_db.parent.parent), "max_turns": 2})  # fmt: skip
    assert log.status == "success", log.error
    assert applied and set(applied) == {"CompassTrainingEnv"}


def test_a_gymnasium_step_goes_through_the_loop(applied, compass_db):
    need_extra("gym", ("gymnasium",))
    import gymnasium

    from travelgym.integrations.gym_env import register_envs

    register_envs()
    env = gymnasium.make("travelgym/COMPASS-v0", data_dir=str(compass_db.parent.parent),
                         task_ids=[TASK], max_turns=2, rank=False)  # fmt: skip
    env.reset(options={"task_id": TASK})
    env.step('{"message": "Nothing yet.", "recommendation": null}')
    env.close()
    assert applied == ["CompassTrainingEnv"]


def test_a_trl_tool_call_goes_through_the_loop(applied, compass_db):
    from travelgym.suites.compass.environment import CompassTrainingEnv
    from travelgym.suites.compass.ground_truth import ensure_ground_truth
    from travelgym.suites.compass.tasks import load_tasks
    from travelgym.training.trl_env import tool_environment

    _, truths = ensure_ground_truth(seed=0, data_dir=compass_db.parent.parent)
    task = next(t for t in load_tasks() if t.task_id == TASK)
    env = tool_environment(CompassTrainingEnv(compass_db, [task], truths, tools_only=True,
                                              max_turns=2))  # fmt: skip
    env.reset(task_id=TASK)
    env.search_airports(park_name="Yosemite")
    env.reply_to_user(message="Nothing yet.")
    env._env.close()
    assert applied == ["CompassTrainingEnv"] * 2
