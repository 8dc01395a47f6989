"""The Python API: what the command line does, called from code.

``travelgym.evaluate(suite, agent, **options)`` runs one agent's episodes into a run directory
exactly as ``travelgym run`` does (the same runner, manifest, scores and resume rules) and
returns a typed :class:`RunResult`; ``travelgym.load_suite(name)`` gives a suite from the
registry; ``travelgym.make_env(suite, **options)`` its training environment (reset/step).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from travelgym.core.errors import UserError
from travelgym.core.suite import Suite


class RunResult(BaseModel):
    """One agent's run: where it is stored and its score summary (``summary``: the same dict
    ``travelgym run --json`` prints for the agent; ``metrics``: its headline figures, flat)."""

    model_config = ConfigDict(frozen=True)

    suite: str
    agent: str
    directory: Path
    episodes: int
    summary: dict[str, Any]
    metrics: dict[str, float]


def load_suite(name: str) -> Suite:
    """The installed suite called ``name`` (an :class:`~travelgym.core.errors.UnknownSuite`
    naming the installed ones otherwise)."""
    from travelgym.core.registry import get_suite

    return get_suite(name)


def _config(suite: Suite, agent: str, options: dict[str, Any], **run: Any) -> Any:
    """The runner's configuration of one run (the suite's options checked first)."""
    from travelgym.runner.batch import RunConfig
    from travelgym.runner.specs import parse_agent_spec

    spec = parse_agent_spec(suite, agent)
    try:
        suite.options(**options)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in first["loc"])
        raise UserError(f"{suite.name} option {where}: {first['msg']}") from None
    out = run.pop("out", None)
    if out is None:  # a new directory under runs/SUITE, named by the runner (as ``run`` does)
        return RunConfig(suite.name, spec.text, Path("runs") / suite.name, options=dict(options),
                         name_run=True, **run)  # fmt: skip
    return RunConfig(suite.name, spec.text, Path(out), options=dict(options), **run)


async def aevaluate(suite: str, agent: str, *, limit: int | None = None,
                    tasks: list[str] | None = None, out: str | Path | None = None,
                    seed: int = 0, db_seed: int = 0, data_dir: str | Path | None = None,
                    base_url: str | list[str] | None = None, concurrency: int = 8,
                    resume: bool = False, progress: bool = False,
                    **options: Any) -> RunResult:  # fmt: skip
    """:func:`evaluate` inside a running event loop."""
    from travelgym.runner.batch import run_suite

    chosen = load_suite(suite)
    cfg = _config(chosen, agent, {k: v for k, v in options.items() if v is not None},
                  out=out, task_ids=list(tasks) if tasks is not None else None, limit=limit,
                  seed=seed, db_seed=db_seed,
                  data_dir=Path(data_dir) if data_dir is not None else None,
                  base_url=base_url, concurrency=concurrency, resume=resume,
                  progress=progress)  # fmt: skip
    summary = await run_suite(cfg)
    return RunResult(suite=chosen.name, agent=cfg.agent, directory=cfg.out, episodes=cfg.finished,
                     summary=summary, metrics=chosen.headline_metrics(summary))  # fmt: skip


def evaluate(suite: str, agent: str, **kwargs: Any) -> RunResult:
    """Run ``agent`` (a spec as ``--agent`` takes it: ``scripted:greedy``, ``llm:MODEL``,
    ``package.module:factory``...) on ``suite`` into a run directory and score it, as
    ``travelgym run SUITE --agent AGENT`` does. Keywords: ``limit``, ``tasks`` (ids), ``out``
    (the run directory; default: a new one under ``runs/SUITE`` named
    ``<UTC start>-<agent>-<identity hash>``, with ``resume`` the latest of the same identity
    there), ``seed``, ``db_seed``, ``data_dir``, ``base_url``, ``concurrency``, ``resume``,
    ``progress``, and the suite's own options by name (``level=2``, ``max_turns=6``,
    ``split="test"``...)."""
    return asyncio.run(aevaluate(suite, agent, **kwargs))


def make_env(suite: str, **options: Any) -> Any:
    """``suite``'s training environment over its shipped data (``reset``/``step`` and their
    async forms, ``episode()``, ``reward``): :meth:`travelgym.core.Suite.training_env` with
    ``options`` (``db_seed``, ``data_dir``, ``limit`` and the suite's selection options)."""
    return load_suite(suite).training_env(**options)


__all__ = ["RunResult", "aevaluate", "evaluate", "load_suite", "make_env"]
