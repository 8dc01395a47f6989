"""One run of a suite as the runner drives it: :class:`SuiteRun` (its prepared data, manifest
fields, agents and episodes), the :class:`AgentFactory` it gives and the :class:`ProgressTally`
of its progress bar."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from travelgym.core.episode import EpisodeBase


@dataclass
class AgentFactory:
    """Makes a fresh agent per episode; ``clients`` are closed by the runner at the end."""

    make: Callable[[], Any]
    clients: list[Any] = field(default_factory=list)


@dataclass
class ProgressTally:
    """Running figures for the progress bar: a suite adds ``(label, test)`` pairs and the tally
    shows the share of episodes passing each test (infra errors left out, as in the summaries,
    and counted), plus tokens when ``show_tokens``."""

    tests: Sequence[tuple[str, Callable[[dict[str, Any]], bool], int]]
    show_tokens: bool = False
    n: int = 0
    tokens: int = 0
    infra_errors: int = 0
    passed: dict[str, int] = field(default_factory=dict)

    def add(self, score: dict[str, Any] | None, tokens: int = 0, infra_error: bool = False) -> None:
        """Count one finished episode (its score dict, ``None`` when unscored)."""
        self.tokens += tokens
        if infra_error:
            self.infra_errors += 1
            return
        self.n += 1
        for label, test, _ in self.tests:
            self.passed[label] = self.passed.get(label, 0) + bool(test(score or {}))

    def postfix(self) -> dict[str, Any]:
        """The progress bar's postfix (percentages so far)."""
        out: dict[str, Any] = {}
        for label, _, digits in self.tests:
            out[label] = f"{100 * self.passed.get(label, 0) / max(1, self.n):.{digits}f}%"
        if self.infra_errors:
            out["infra errors"] = self.infra_errors
        if self.show_tokens:
            out["tokens"] = self.tokens
        return out


class SuiteRun(ABC):
    """One run's prepared data (database, tasks, what scoring needs), opened by
    :meth:`Suite.open_run` and closed by the runner."""

    db_path: Path
    db_hash: str
    tasks_sha256: str
    tasks: list[Any]  # the selected tasks, each with a ``task_id``
    trials: int = 1
    # the suite's own manifest fields that must match for a run to be resumed, each with the
    # value a manifest written before the field existed stands for
    identity_keys: ClassVar[dict[str, Any]] = {}

    @abstractmethod
    def manifest(self) -> dict[str, Any]:
        """The suite's own fields of the run's ``manifest.json`` (options that change results)."""

    @abstractmethod
    def agent_factory(self, spec: Any, base_url: str | None, client_options: dict[str, Any],
                      seed: int = 0) -> AgentFactory:  # fmt: skip
        """A factory of fresh agents for ``spec`` (:class:`~travelgym.runner.specs.AgentSpec`);
        ``seed``: the run seed (scripted agents that sample draw from it)."""

    @abstractmethod
    async def episode(self, task: Any, agent: Any, trial: int, seed: int) -> EpisodeBase:
        """Run one episode of ``agent`` on ``task`` and score it. Never raises for an agent's,
        a tool's or a model's failure: the episode records it."""

    async def aclose(self) -> None:  # noqa: B027 - optional: most runs hold nothing to release
        """Release what the run opened (connections, a simulated user's client)."""

    def data_identity(self) -> dict[str, Any]:
        """The versions of the run's data besides :attr:`db_hash` and :attr:`tasks_sha256`
        (generator and format versions, the instance set): what an exported dataset records
        and ``run --tasks-from`` checks; none by default."""
        return {}
