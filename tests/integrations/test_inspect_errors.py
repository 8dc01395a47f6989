"""The inspect_ai tasks' errors and models, offline: an episode whose endpoint is down is a sample
error that ``eval_retry`` runs again once the endpoint is back, a model error is scored, and two
models evaluated with one task object each get their own episodes and scores."""

from __future__ import annotations

import json
import socket

from tests.fakes.openai_server import FakeOpenAIServer, Reply
from tests.integrations.test_inspect import COUNTS, episodes_of, metrics_of, offline  # noqa: F401

HEADLINE = {"FR", "OR5", "OR10", "OR20", "optimal"}


def free_port() -> int:
    """A loopback port nothing listens on (a connection to it is refused)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class ServerOnPort(FakeOpenAIServer):
    """The fake server listening on a chosen port: the endpoint a failed eval's log names."""

    def __init__(self, port: int, **kwargs: object) -> None:
        super().__init__(**kwargs)
        self.wanted = port

    def start(self) -> ServerOnPort:
        bind = socket.socket.bind

        def bind_wanted(sock: socket.socket, address: tuple[str, int]) -> None:
            bind(sock, (address[0], self.wanted))

        socket.socket.bind = bind_wanted  # type: ignore[method-assign]
        try:
            return super().start()  # type: ignore[return-value]
        finally:
            socket.socket.bind = bind  # type: ignore[method-assign]


def compass_plans(compass_db, count: int = 2) -> tuple[dict[str, str], dict[str, dict]]:
    """The stories and optimal plans of the first ``count`` COMPASS tasks, by task id."""
    from travelgym.suites.compass.ground_truth import ensure_ground_truth
    from travelgym.suites.compass.tasks import load_tasks

    _, truths = ensure_ground_truth(seed=0, data_dir=compass_db.parent.parent)
    tasks = load_tasks()[:count]
    return ({t.task_id: t.story for t in tasks},
            {t.task_id: truths[t.task_id].optimal_plan for t in tasks})  # fmt: skip


def optimal_reply(stories: dict[str, str], plans: dict[str, dict], messages: list) -> str:
    """The recommendation of the optimal plan of the task whose story the user told."""
    opening = next(m for m in messages if m["role"] == "user")["content"]
    task = next(t for t, story in stories.items() if story in opening)
    return json.dumps({"message": "This is it.", "recommendation": plans[task]})


def test_a_down_endpoint_is_a_sample_error_that_eval_retry_runs_again(offline, compass_db,  # noqa: F811
                                                                     tmp_path, monkeypatch):  # fmt: skip
    from inspect_ai import eval as inspect_eval
    from inspect_ai import eval_retry
    from inspect_ai.log import read_eval_log

    stories, plans = compass_plans(compass_db, 1)
    port = free_port()
    # a service of its own: inspect keeps models (and their base URL) across evals
    monkeypatch.setenv("DOWN_BASE_URL", f"http://127.0.0.1:{port}/v1")
    monkeypatch.setenv("DOWN_API_KEY", "test")
    args = {"data_dir": str(compass_db.parent.parent), "max_turns": 4, "limit": 1}
    (failed,) = inspect_eval("travelgym/compass", model="openai-api/down/fake-model",
                             task_args=args, log_dir=str(tmp_path / "logs"), display="none",
                             max_retries=0, timeout=20)  # fmt: skip
    assert failed.status == "error"
    failed = read_eval_log(failed.location)
    (sample,) = failed.samples
    assert sample.error is not None and not sample.scores
    assert "EpisodeInfraError" in sample.error.traceback
    assert "ended in an infra error (agent connection)" in sample.error.message

    def respond(body: dict) -> Reply:
        return Reply(content=optimal_reply(stories, plans, body["messages"]))

    with ServerOnPort(port, responder=respond) as server:
        (retried,) = eval_retry(failed.location, log_dir=str(tmp_path / "logs"), display="none")
        assert server.requests  # the retry reached the endpoint now up
    assert retried.status == "success", retried.error
    retried = read_eval_log(retried.location)
    (episode,) = episodes_of(retried)
    assert retried.samples[0].error is None and episode["score"]["optimal"]
    # the user kept talking past the turn limit: a model error, scored like a completed episode
    assert (episode["outcome"], episode["cause"]) == ("model_error", "turn_limit")
    metrics = metrics_of(retried)
    assert set(metrics) == HEADLINE | COUNTS and metrics["optimal"] == 100.0
    assert (metrics["completed"], metrics["model_errors"], metrics["infra_errors"]) == (0, 1, 0)


def test_a_tolerated_infra_error_is_counted_and_left_out_of_the_figures(offline, compass_db,  # noqa: F811
                                                                        tmp_path):  # fmt: skip
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import ModelOutput, get_model

    stories, plans = compass_plans(compass_db, 2)
    broken = next(iter(stories))

    def outputs(messages, tools, tool_choice, config) -> ModelOutput:
        chat = [{"role": m.role, "content": m.text} for m in messages]
        if any(stories[broken] in m["content"] for m in chat if m["role"] == "user"):
            raise ConnectionError("endpoint down")
        return ModelOutput.from_content("mockllm/model", optimal_reply(stories, plans, chat))

    model = get_model("mockllm/flaky", custom_outputs=outputs)
    args = {"data_dir": str(compass_db.parent.parent), "max_turns": 4, "limit": 2}
    (log,) = inspect_eval("travelgym/compass", model=model, task_args=args, display="none",
                          log_dir=str(tmp_path / "logs"), fail_on_error=False,
                          score_on_error=True)  # fmt: skip
    # tolerated: the eval succeeds with one sample error, scored but not counted in the figures
    assert log.status == "success"
    errors = {s.id: s.error for s in log.samples}
    assert errors[broken] is not None and "(agent connection)" in errors[broken].message
    assert sum(e is None for e in errors.values()) == 1
    episodes = {e["task_id"]: e for e in episodes_of(log)}
    assert episodes[broken]["outcome"] == "infra_error"
    scored = next(s.scores["suite_score"] for s in log.samples if s.id == broken)
    assert "outcome: infra_error (agent connection)" in scored.explanation
    metrics = metrics_of(log)
    assert metrics["optimal"] == 100.0  # the one episode that counts
    assert metrics["completed"] + metrics["model_errors"] == 1 and metrics["infra_errors"] == 1


def test_two_models_of_one_task_get_their_own_scores(offline, compass_db, tmp_path):  # noqa: F811
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import ModelOutput, get_model

    from travelgym.integrations.inspect_tasks import TASKS

    stories, plans = compass_plans(compass_db, 2)

    def optimal(messages, tools, tool_choice, config) -> ModelOutput:
        chat = [{"role": m.role, "content": m.text} for m in messages]
        return ModelOutput.from_content("mockllm/optimal", optimal_reply(stories, plans, chat))

    def empty(messages, tools, tool_choice, config) -> ModelOutput:
        return ModelOutput.from_content("mockllm/empty", "")

    models = [get_model("mockllm/optimal", custom_outputs=optimal),
              get_model("mockllm/empty", custom_outputs=empty)]  # fmt: skip
    task = TASKS["compass"](data_dir=str(compass_db.parent.parent), max_turns=2, limit=2)
    # both models in one eval (run side by side), then each again in an eval of its own
    together = inspect_eval(task, model=models, log_dir=str(tmp_path / "together"),
                            display="none")  # fmt: skip
    apart = [log for m in models for log in inspect_eval(task, model=m, display="none",
                                                         log_dir=str(tmp_path / "apart"))]  # fmt: skip
    for log in [*together, *apart]:
        assert log.status == "success", log.error
        name = str(log.eval.model)
        expected = 100.0 if name == "mockllm/optimal" else 0.0
        assert [s.scores["suite_score"].value["optimal"] for s in log.samples] == [expected] * 2
        assert all(name in e["agent"] for e in episodes_of(log))
        metrics = metrics_of(log)
        assert metrics["optimal"] == expected and metrics["infra_errors"] == 0
        assert metrics["completed"] + metrics["model_errors"] == 2
    assert sorted(str(log.eval.model) for log in together) == ["mockllm/empty", "mockllm/optimal"]
