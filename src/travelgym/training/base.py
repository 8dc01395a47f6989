"""What the text environments share: the Gymnasium-style synchronous API over async code, and
opening a database given as a connection or a path; and which installed suites train."""

from __future__ import annotations

import asyncio
import os
import random
import sqlite3
import time
from collections.abc import Coroutine, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from travelgym.db import connect_readonly

if TYPE_CHECKING:
    from travelgym.core.suite import Suite

T = TypeVar("T")


def training_suites() -> list[Suite]:
    """The installed suites that implement the Suite protocol's training methods
    (``Suite.trainable``), in listing order."""
    from travelgym.core.registry import all_suites

    return [s for s in all_suites() if s.trainable]


def training_suite_names() -> list[str]:
    """The names of :func:`training_suites` (the ``--suite`` choices of ``train`` and
    ``export``)."""
    return [s.name for s in training_suites()]


class EnvStateError(RuntimeError):
    """A call the environment's state does not allow (``step`` before ``reset`` or after the
    episode ended, the synchronous API inside a running event loop)."""


def open_database(db: Any) -> tuple[sqlite3.Connection, bool]:
    """``(connection, owned)`` for a connection, a path, or an object with a ``path`` (what
    ``ensure_database`` returns); a path is opened read-only and owned by the caller."""
    if isinstance(db, sqlite3.Connection):
        return db, False
    path = getattr(db, "path", db)
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"expected a database connection or path, got {type(db).__name__}")
    return connect_readonly(Path(path)), True


def choose_item(items: list[Any], by_id: dict[str, Any], options: dict[str, Any], key: str,
                rng: Any) -> Any:  # fmt: skip
    """The item a reset's ``options`` name: ``{key: ID}`` (a ``KeyError`` naming an unknown
    id), ``{"index": i}``, else one drawn with ``rng``."""
    if key in options:
        if options[key] not in by_id:
            raise KeyError(f"unknown {key} {options[key]!r}")
        return by_id[options[key]]
    if "index" in options:
        return items[int(options["index"])]
    return items[rng.randrange(len(items))]


class SyncAPI:
    """What the suites' environments share: the items an episode is drawn from, the draw of a
    reset, and the Gymnasium-style synchronous API: ``reset``/``step`` run the
    ``areset``/``astep`` coroutines on a private event loop (one per environment, so clients
    bound to a loop keep working). Inside a running loop, await ``areset``/``astep`` instead.
    A subclass sets ``task_key`` (the item field that names it) and calls :meth:`_hold`."""

    task_key: str
    _loop: asyncio.AbstractEventLoop | None = None

    def _hold(self, items: Sequence[Any], seed: int, what: str) -> list[Any]:
        """Keep ``items`` (a ``ValueError`` naming ``what`` when there are none) and seed the
        draw of a reset without an item named; the items as a list."""
        if not items:
            raise ValueError(f"{type(self).__name__} needs at least one {what}")
        self._items = list(items)
        self._by_id = {getattr(x, self.task_key): x for x in self._items}
        self._rng = random.Random(seed)
        return self._items

    def _draw(self, seed: int | None, options: dict[str, Any] | None) -> tuple[Any, int, int]:
        """``(item, trial, seed)`` of a reset: the item ``options`` name (``{task_key: ID}`` or
        ``{"index": i}``) or one drawn with the generator (reseeded by ``seed``), the
        ``trial`` option and the episode's seed (0 when none is given)."""
        options = dict(options or {})
        if seed is not None:
            self._rng = random.Random(seed)
        item = choose_item(self._items, self._by_id, options, self.task_key, self._rng)
        return item, int(options.get("trial", 0)), seed if seed is not None else 0

    @property
    def item_ids(self) -> list[str]:
        """The ids of the environment's items, in order."""
        return [getattr(x, self.task_key) for x in self._items]

    def reset(self, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[list[dict[str, Any]], dict]:  # fmt: skip
        """Start an episode: ``(observation, info)``, the observation the chat so far; see
        :meth:`areset`."""
        return self._run(self.areset(seed=seed, options=options))  # type: ignore[attr-defined]

    async def astep(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """:meth:`step` for async code."""
        moved = await self.atransition(action)  # type: ignore[attr-defined]
        return moved.gym(moved.info["observation"])

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """Apply one assistant message: ``(observation, reward, terminated, truncated, info)``
        (what ``info`` holds: the environment's ``atransition``)."""
        return self._run(self.astep(action))

    def _count_turn(self, answered: bool) -> tuple[bool, bool]:
        """Count one assistant message: ``(terminated, truncated)``, it answered or it was the
        last of ``max_turns``."""
        self.turn += 1
        return answered, not answered and self.turn >= self.max_turns

    def breakdown(self) -> dict[str, Any] | None:
        """The ended episode's reward parts (``None`` before it ends)."""
        reward = getattr(self, "reward", None)
        return reward.model_dump() if reward is not None else None

    def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            pass
        else:
            coro.close()
            raise EnvStateError(
                "reset()/step() cannot run inside an event loop: await areset()/astep() instead"
            )
        if self._loop is None or self._loop.is_closed():
            self._loop = asyncio.new_event_loop()
        return self._loop.run_until_complete(coro)

    def transition(self, action: Any, **meta: Any) -> Any:
        """:meth:`atransition` (the environment protocol, :mod:`travelgym.core.environment`) on
        the environment's own event loop."""
        return self._run(self.atransition(action, **meta))  # type: ignore[attr-defined]

    def _close_loop(self) -> None:
        if self._loop is not None and not self._loop.is_closed():
            self._loop.close()
        self._loop = None


class AnswerEnv(SyncAPI):
    """What the environments of the answer-once suites share (Behavior2Trip, TravelPlanner): an
    episode ends when the agent delivers ``<answer>...</answer>``, fails (:meth:`fail`) or runs
    out of turns, and a solve-once agent (:class:`~travelgym.runner.loop.SolverPolicy`) may take
    it: its chat is its own, its tool calls go through the episode's session, and its one
    message, :meth:`answer_message`, ends the episode. A subclass keeps its tool session in
    ``tools`` and scores in :meth:`_end`."""

    ANSWER_OPEN, ANSWER_CLOSE = "<answer>", "</answer>"
    tools: Any
    reward: Any

    def _reset_state(self) -> None:
        self.turn, self.trial, self.seed = 0, 0, 0
        self.done = False
        self.answer: str | None = None
        self.termination = "step_limit"
        self.error: str | None = None
        self.failure: BaseException | None = None
        self.solving = False  # a solver took the episode: its one message delivers the answer
        self.score: dict[str, Any] | None = None
        self.reward = None
        self._started = time.perf_counter()

    def _end(self) -> float:
        """Mark the episode done, score its answer (or its absence), set and return the reward."""
        raise NotImplementedError

    def _record_answer(self, answer: str) -> None:
        """Keep a delivered answer (the text inside the tags) and record it in the step that
        delivered it: the episode's own steps then give its final answer, which ``score``
        re-derives (:mod:`travelgym.runner.recheck`)."""
        self.answer, self.termination = answer, "answered"
        steps = self.tools.steps
        if not steps or not steps[-1].answer:  # a solver that wrote no step of its own for it
            self.tools.close_step([], answer=True)
        steps[-1].delivered = answer

    def _take_for_solver(self) -> None:
        """A solver takes the open episode: its chat is the one it writes."""
        if getattr(self, "tools", None) is None or self.done:
            raise EnvStateError("a solver takes an open episode: call reset() first")
        self.solving, self.tools.messages = True, []

    def answer_message(self, answer: str | None) -> str:
        """The assistant message delivering a solver's ``answer``; an empty one when it gave up
        (``None``), which ends the episode undelivered."""
        return "" if answer is None else f"{self.ANSWER_OPEN}{answer}{self.ANSWER_CLOSE}"

    def _solver_delivered(self, message: Any) -> Any:
        """End a solver's episode on its one message (:meth:`answer_message`'s; anything else is
        a ValueError). Its steps are in the tool session already."""
        from travelgym.core.environment import Transition

        wrapped = isinstance(message, str) and message.startswith(self.ANSWER_OPEN) and (
            message.endswith(self.ANSWER_CLOSE))  # fmt: skip
        if message != "" and not wrapped:
            raise ValueError(f"a solver's message is answer_message's, not {message!r:.200}")
        self.turn += 1
        if wrapped:
            self._record_answer(message[len(self.ANSWER_OPEN) : -len(self.ANSWER_CLOSE)])
        reward = self._end()
        info = {"turn": self.turn, "answered": wrapped, "observation": "",
                "reward_breakdown": self.reward.model_dump(), "score": self.score}  # fmt: skip
        return Transition([], reward, wrapped, not wrapped, info)

    def fail(self, exc: BaseException) -> None:
        """End the episode on the policy's failure (its model call failed for good, or its code
        raised): recorded with its error and outcome, scored as undelivered."""
        from travelgym.core.outcomes import failure_text

        self.termination, self.failure, self.error = "error", exc, failure_text(exc)
        self._end()
