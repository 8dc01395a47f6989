"""The worker side of the Ray backend (:mod:`~travelgym.runner.ray_backend`): what runs in a Ray
worker process, importable without Ray.

- :class:`WorkerSpec` is everything a worker needs to open the run itself, as plain picklable
  values taken from the driver's run (the suite's options, the run's task ids, seeds, client
  options): a worker never receives a live object of the driver.
- :class:`EpisodeWorker` (made a Ray actor by the driver) opens the suite's run once
  (``Suite.open_run`` with the same options and the run's own task ids, checked against the
  manifest's hashes), then runs one episode per call and returns it to the driver, which alone
  writes the run directory.
- :class:`BudgetKeeper` (an actor the driver owns, on the driver's node) holds the run's one
  :class:`~travelgym.llm.budget.RunBudget`; :class:`RemoteBudget` is the budget a worker's
  clients draw on: every call is reserved and every usage recorded at the keeper before the
  call goes on, so the calls of an episode whose worker died stay counted when it runs again.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from travelgym.core.errors import UserError
from travelgym.llm.budget import RunBudget
from travelgym.llm.protocol import LLMError, Usage


class WorkerSetupError(UserError):
    """A worker could not open the run as the driver did (different data on its machine)."""


@dataclass(frozen=True)
class WorkerSpec:
    """What a worker opens: one agent's run of one suite, as the driver opened it."""

    suite: str
    agent: str
    options: dict[str, Any]
    task_ids: list[str]
    seed: int
    db_seed: int
    data_dir: Path | None
    db_hash: str
    tasks_sha256: str
    base_url: str | None = None
    # client options without the caps (max_calls, max_tokens): the budget is the keeper's
    client_options: dict[str, Any] = field(default_factory=dict)
    generation: dict[str, Any] = field(default_factory=dict)


class RemoteBudget(RunBudget):
    """A :class:`RunBudget` whose counts live in a :class:`BudgetKeeper` actor: what a worker's
    clients get as their ``budget`` (picklable: it holds only the actor's handle)."""

    def __init__(self, keeper: Any) -> None:
        super().__init__()
        self.keeper = keeper

    def _ask(self, method: str, *args: Any) -> Any:
        import ray

        return ray.get(getattr(self.keeper, method).remote(*args))

    def acquire(self) -> None:
        """Reserve one call at the keeper, or raise ``LLMError("budget", ...)`` as it says."""
        refused = self._ask("acquire")
        if refused is not None:
            raise LLMError("budget", refused)

    def record(self, usage: Usage, model: str | None = None) -> None:
        """Add a finished call's usage (charged at ``model``'s price) at the keeper (before the
        episode goes on)."""
        self._ask("record", usage.prompt_tokens, usage.completion_tokens, model)

    def record_hit(self) -> None:
        """Count a cache hit at the keeper."""
        self._ask("record_hit")

    def snapshot(self) -> dict[str, Any]:
        """The keeper's totals and caps."""
        return self._ask("snapshot")

    def __reduce__(self):
        return (RemoteBudget, (self.keeper,))


class BudgetKeeper:
    """The run's one budget, in an actor the driver owns (a Ray actor class made by the
    driver): the caps of ``run --max-calls``/``--max-tokens-total`` over every worker."""

    def __init__(self, max_calls: int | None, max_tokens: int | None,
                 max_cost: float | None = None,
                 prices: dict[str, dict[str, float]] | None = None) -> None:  # fmt: skip
        self.budget = RunBudget(max_calls=max_calls, max_tokens=max_tokens, max_cost=max_cost,
                                prices=prices)  # fmt: skip

    def acquire(self) -> str | None:
        """Reserve a call: ``None``, or why the budget refuses it."""
        try:
            self.budget.acquire()
        except LLMError as exc:
            return str(exc).removeprefix(f"{exc.category}: ")
        return None

    def record(self, prompt_tokens: int, completion_tokens: int,
               model: str | None = None) -> None:  # fmt: skip
        """Add a finished call's tokens (charged at ``model``'s price)."""
        self.budget.record(Usage(prompt_tokens=prompt_tokens, completion_tokens=completion_tokens),
                           model)  # fmt: skip

    def record_hit(self) -> None:
        """Count a cache hit."""
        self.budget.record_hit()

    def snapshot(self) -> dict[str, Any]:
        """Totals and caps (see :meth:`RunBudget.snapshot`)."""
        return self.budget.snapshot()


class EpisodeWorker:
    """One episode slot of the run in a Ray worker: opens the run on its first episode and keeps
    it (and its agent factory and event loop) for the next ones."""

    def __init__(self, spec: WorkerSpec, budget: Any | None = None) -> None:
        self.spec = spec
        self.budget = budget
        self.loop: asyncio.AbstractEventLoop | None = None
        self.run: Any = None
        self.factory: Any = None
        self.tasks: dict[str, Any] = {}

    def pid(self) -> int:
        """The worker's process id (what a test kills)."""
        return os.getpid()

    def _open(self) -> None:
        from travelgym.core.registry import get_suite
        from travelgym.runner.specs import client_kwargs, parse_agent_spec

        spec = self.spec
        suite = get_suite(spec.suite)
        agent = parse_agent_spec(suite, spec.agent)
        options = suite.options(**spec.options)
        self.loop = asyncio.new_event_loop()
        run = suite.open_run(options, list(spec.task_ids), None, spec.db_seed, spec.data_dir)
        self.run = run
        if (run.db_hash, run.tasks_sha256) != (spec.db_hash, spec.tasks_sha256):
            raise WorkerSetupError(
                f"a Ray worker opened different data than the driver (database "
                f"{run.db_hash[:12]} vs {spec.db_hash[:12]}, tasks {run.tasks_sha256[:12]} vs "
                f"{spec.tasks_sha256[:12]}): give every node the same data directory and seeds"
            )
        generation = spec.generation if agent.calls_llm else None
        client_options = client_kwargs(spec.client_options, generation)
        if self.budget is not None:
            client_options["budget"] = self.budget
        self.factory = run.agent_factory(agent, spec.base_url, client_options, spec.seed)
        self.tasks = {t.task_id: t for t in run.tasks}

    def episode(self, task_id: str, trial: int) -> Any:
        """Run one episode of the run (opening it first when needed) and return it."""
        if self.run is None:
            self._open()
        coro = self.run.episode(self.tasks[task_id], self.factory.make(), trial, self.spec.seed)
        return self.loop.run_until_complete(coro)

    def close(self) -> None:
        """Close the agent's clients and the run (best effort: the driver is finishing)."""
        if self.run is None or self.loop is None:
            return

        async def closing() -> None:
            for client in self.factory.clients if self.factory is not None else []:
                close = getattr(client, "aclose", None)
                if close is not None:
                    await close()
            await self.run.aclose()

        try:
            self.loop.run_until_complete(closing())
        finally:
            self.loop.close()
            self.run = self.loop = None
