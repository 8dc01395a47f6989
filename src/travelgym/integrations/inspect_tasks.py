"""inspect_ai tasks: one per installed suite, ``inspect eval travelgym/SUITE --model M``.

inspect_ai imports this module through the ``inspect_ai`` entry point of travelgym's package
metadata when a task name starts with ``travelgym/``. Importing it registers a task named
after every suite the registry lists (a suite of another installed package included). A
task's parameters (``-T NAME=VALUE``) are the suite's options (``Suite.Options``: ``level``,
``user``, ``split``...) and these:

- ``agent``: the agent kind driven by the eval's model (default ``Suite.model_agent``); a
  spec with its own argument runs as given (``scripted:greedy``, ``llm:inspect:OTHER``);
- ``seed``: the run seed (persona draws, scripted agents), as ``travelgym run --seed``;
- ``db_seed``, ``data_dir``: which data, as ``--db-seed`` and ``--data-dir``;
- ``limit``, ``task_ids`` (a list, or ids separated by commas): which tasks, before
  inspect's own ``--limit``/``--sample-id``;
- ``base_url``: the OpenAI-compatible endpoint of a model the options name besides the agent
  (an LLM simulated user, a judge).

A bad parameter fails the task at once with one line naming it. Episodes repeat per epoch
(the suite's trials, e.g. ``-T trials=3``, set the epochs).
"""

from __future__ import annotations

import inspect
import logging
from pathlib import Path
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from pydantic import ValidationError

from travelgym.core.errors import UserError
from travelgym.core.registry import all_suites
from travelgym.core.suite import Suite
from travelgym.integrations.inspect_episode import (
    MODEL_SLOT,
    SUITES,
    EpisodeRunner,
    suite_episode,
    suite_metrics,
    suite_score,
)

logger = logging.getLogger(__name__)
PACKAGE = "travelgym"
# the parameters every task takes besides its suite's options, with their defaults
COMMON: dict[str, Any] = {"agent": None, "seed": 0, "db_seed": 0, "limit": None,
                          "task_ids": None, "data_dir": None, "base_url": None}  # fmt: skip

try:  # inspect_ai prints this error's message alone, without a traceback
    from inspect_ai._util.error import PrerequisiteError as TaskParameterError
except ImportError:  # a later inspect_ai moved it
    TaskParameterError = ValueError  # type: ignore[misc,assignment]


def fail(suite: Suite, message: str) -> Exception:
    """The one-line error of a task that cannot be made."""
    return TaskParameterError(f"{PACKAGE}/{suite.name}: {message}")


def option_defaults(suite: Suite) -> dict[str, Any]:
    """The suite's options with the defaults shown in the task's signature (``None`` where a
    default is no plain value)."""
    plain = (str, int, float, bool, type(None))
    out = {}
    for name, info in suite.Options.model_fields.items():
        default = info.get_default(call_default_factory=True)
        out[name] = default if isinstance(default, plain) else None
    return out


def task_signature(suite: Suite) -> inspect.Signature:
    """The task's parameters: the common ones, the suite's options, and a catch-all that
    turns an unknown name into a clear error (rather than inspect's warning)."""
    keyword = inspect.Parameter.KEYWORD_ONLY
    params = [inspect.Parameter(k, keyword, default=v) for k, v in COMMON.items()]
    params += [inspect.Parameter(k, keyword, default=v)
               for k, v in option_defaults(suite).items() if k not in COMMON]  # fmt: skip
    params.append(inspect.Parameter("unknown", inspect.Parameter.VAR_KEYWORD))
    return inspect.Signature(params, return_annotation=Task)


def agent_spec(suite: Suite, agent: str | None) -> str:
    """The agent spec of the task, :data:`MODEL_SLOT` where the eval's model goes; checked
    against the suite's forms (the slot filled with a placeholder)."""
    from travelgym.runner.specs import parse_agent_spec

    text = agent or suite.model_agent
    if not text:
        raise fail(suite, "the suite has no model agent: give -T agent=SPEC")
    kinds = {k.name: k for k in suite.agent_kinds}
    kind = kinds.get(text.partition(":")[0])
    if kind is None:
        raise fail(suite, f"-T agent={text}: unknown agent kind (use {suite.agent_usage})")
    if ":" not in text and kind.arg is not None and kind.calls_llm:
        text = f"{text}:inspect:{MODEL_SLOT}"
    try:
        spec = parse_agent_spec(suite, text.replace(MODEL_SLOT, "model"))
    except UserError as exc:
        raise fail(suite, f"-T agent: {exc}") from None
    if spec.runs_code:
        from travelgym.runner.integrity import sandbox_entry
        from travelgym.sandbox.config import SandboxUnavailable

        try:
            sandbox_entry(runs_code=True)
        except SandboxUnavailable as exc:
            raise fail(suite, f"agent {spec.kind} runs model-written code: {exc}") from None
    return text


def task_ids_of(suite: Suite, value: Any) -> list[str] | None:
    """``task_ids`` as a list (a list, or one string of ids separated by commas)."""
    if value is None:
        return None
    if isinstance(value, str):
        value = [v.strip() for v in value.split(",") if v.strip()]
    if not isinstance(value, list) or not value:
        raise fail(suite, "-T task_ids: give task ids separated by commas")
    return [str(v) for v in value]


def suite_options(suite: Suite, given: dict[str, Any]) -> Any:
    """The suite's options from the task's parameters (a bad value: one line naming it)."""
    unknown = sorted(set(given) - set(suite.Options.model_fields))
    if unknown:
        names = ", ".join([*COMMON, *suite.Options.model_fields])
        raise fail(suite, f"unknown task parameter(s) {', '.join(unknown)} (it takes {names})")
    try:
        return suite.options(**given)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in first["loc"]) or "options"
        raise fail(suite, f"-T {where}: {first['msg']}") from None


def build_task(suite: Suite, params: dict[str, Any]) -> Task:
    """The task of ``suite`` for the parameters given (see the module docstring)."""
    given = dict(params)
    common = {k: given.pop(k, v) for k, v in COMMON.items()}
    options = suite_options(suite, given)
    agent = agent_spec(suite, common["agent"])
    ids = task_ids_of(suite, common["task_ids"])
    data_dir = Path(common["data_dir"]) if common["data_dir"] else None
    try:
        run = suite.open_run(options, ids, common["limit"], common["db_seed"], data_dir)
    except (UserError, ValueError, OSError) as exc:
        raise fail(suite, str(exc).splitlines()[0] if str(exc) else type(exc).__name__) from None
    runner = EpisodeRunner(suite, options, agent, common["seed"], common["db_seed"], ids,
                           common["limit"], data_dir, common["base_url"], run)  # fmt: skip
    samples = [Sample(id=t.task_id, input=suite.task_text(t) or t.task_id,
                      metadata={"suite": suite.name, "task_id": t.task_id})
               for t in run.tasks]  # fmt: skip
    return Task(
        dataset=MemoryDataset(samples, name=suite.name),
        solver=suite_episode(runner),
        scorer=suite_score(runner),
        metrics=[suite_metrics(suite.name)],
        epochs=run.trials,
        metadata={
            "suite": suite.name,
            "agent": agent,
            "seed": common["seed"],
            "db_seed": common["db_seed"],
            "options": options.model_dump(mode="json"),
            "db_content_hash": run.db_hash,
            "tasks_sha256": run.tasks_sha256,
            "run": run.manifest(),
        },  # fmt: skip
    )


def define_task(suite: Suite) -> Any:
    """Register the task of ``suite`` with inspect_ai as ``travelgym/<suite name>``."""

    def suite_task(**params: Any) -> Task:
        return build_task(suite, params)

    suite_task.__name__ = suite_task.__qualname__ = suite.name
    suite_task.__doc__ = f"{suite.title}: {suite.description}"
    suite_task.__signature__ = task_signature(suite)  # type: ignore[attr-defined]
    SUITES[suite.name] = suite
    return task(name=suite.name)(suite_task)


def register_all() -> dict[str, Any]:
    """A task for every installed suite (one that fails to define is logged and skipped)."""
    tasks = {}
    for suite in all_suites():
        try:
            tasks[suite.name] = define_task(suite)
        except Exception as exc:  # noqa: BLE001 - another package's suite must not stop ours
            logger.warning("travelgym: no inspect task for suite %s: %s", suite.name, exc)
    return tasks


TASKS = register_all()
globals().update(TASKS)
