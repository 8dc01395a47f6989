"""Gymnasium environments of the trainable suites: ``travelgym/COMPASS-v0``,
``travelgym/Behavior2Trip-v0``, ``travelgym/TravelPlanner-v0`` and one per trainable suite any
installed package registers (the id is ``travelgym/`` + the suite's title + ``-v0``).

Each is a :class:`TravelGymEnv` over the suite's training text environment
(:meth:`~travelgym.core.suite.Suite.training_env`) seen as plain-text chat
(:func:`~travelgym.training.rollout.chat_adapter`), the view GRPO rollouts drive:

- action: the model's message text (tool calls as the prompted ``<tool_call>`` blocks, or the
  suite's own action format), a :class:`~gymnasium.spaces.Text`;
- observation: the text of the new messages (the opening messages on ``reset``), a ``Text``
  whose charset covers the suite's text (:data:`BASE_RANGES` plus the suite's
  ``text_ranges``); a character outside it becomes U+FFFD and text beyond ``max_length`` is
  cut, both counted in ``info`` (``replaced_chars``, ``cut_chars``), so every observation is
  inside the space by construction;
- reward: 0 until the episode ends, then the suite's reward; ``info`` carries the task id,
  the new messages as chat dicts and, at the end, the reward's ``breakdown``.

Importing this module registers the environments (gymnasium 1.x no longer reads plugin entry
points): ``import travelgym.integrations.gym_env`` then ``gymnasium.make("travelgym/COMPASS-v0")``,
or in one step ``gymnasium.make("travelgym.integrations.gym_env:travelgym/COMPASS-v0")``.
``gymnasium.make``'s other keyword arguments go to the suite's training environment
(``data_dir``, ``db_seed``, ``limit``, ``level``, ``split``, ...).
"""

from __future__ import annotations

import copy
import numbers
import re
from functools import lru_cache
from typing import Any

import gymnasium
from gymnasium import spaces
from gymnasium.error import ResetNeeded

from travelgym.core.registry import get_suite
from travelgym.core.suite import Suite
from travelgym.terminal import printable
from travelgym.training.base import training_suites
from travelgym.training.rollout import chat_adapter

NAMESPACE = "travelgym"
VERSION = 0
ENTRY_POINT = f"{__name__}:TravelGymEnv"
MAX_LENGTH = 1 << 20  # observation characters (a turn of many tool results fits)
MAX_ACTION_LENGTH = 1 << 14  # action characters (a long plan fits)
REPLACEMENT = "\ufffd"
# every suite's text: tab, newlines, printable ASCII, Latin-1 and the Latin extensions, Greek,
# general punctuation (dashes, curly quotes), currency, letter-like symbols, arrows, maths
# and technical symbols, box drawing and shapes, and the replacement character
BASE_RANGES: tuple[tuple[int, int], ...] = (
    (0x09, 0x0A),
    (0x0D, 0x0D),
    (0x20, 0x7E),
    (0xA0, 0x24F),
    (0x370, 0x3FF),
    (0x1E00, 0x1EFF),
    (0x2000, 0x206F),
    (0x20A0, 0x20CF),
    (0x2100, 0x23FF),
    (0x2500, 0x25FF),
    (0xFFFD, 0xFFFD),
)
OPTION_KEYS = ("task_id", "index", "trial")


@lru_cache(maxsize=16)
def charset(ranges: tuple[tuple[int, int], ...] = ()) -> str:
    """The characters of :data:`BASE_RANGES` and ``ranges`` (inclusive code-point pairs)."""
    chars = dict.fromkeys(chr(c) for lo, hi in (*BASE_RANGES, *ranges) for c in range(lo, hi + 1))
    return "".join(chars)


def suite_charset(suite: Suite) -> str:
    """The charset of ``suite``'s text spaces."""
    return charset(tuple((int(lo), int(hi)) for lo, hi in suite.text_ranges))


def env_name(suite: Suite) -> str:
    """The environment name of ``suite``: its title as letters, digits, ``_``, ``.``, ``-``."""
    return re.sub(r"[^A-Za-z0-9_.-]", "", suite.title) or re.sub(r"\W", "_", suite.name)


def env_id(suite: Suite) -> str:
    """The Gymnasium id of ``suite``'s environment, e.g. ``travelgym/COMPASS-v0``."""
    return f"{NAMESPACE}/{env_name(suite)}-v{VERSION}"


def register_envs() -> list[str]:
    """Register an environment for every installed trainable suite (again: no-op); their ids."""
    ids = []
    for suite in training_suites():
        eid = env_id(suite)
        if eid not in gymnasium.registry:
            gymnasium.register(id=eid, entry_point=ENTRY_POINT, kwargs={"suite": suite.name})
        ids.append(eid)
    return ids


def _is_int(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _length(value: Any, what: str) -> int:
    if not _is_int(value) or value < 1:
        raise ValueError(f"{what} must be a positive integer, not {value!r}")
    return int(value)


class TravelGymEnv(gymnasium.Env[str, str]):
    """A suite's training text environment as a Gymnasium environment (module docstring).

    ``suite``: the suite's name; ``max_length`` / ``max_action_length``: the observation and
    action spaces' longest text; the other keyword arguments go to the suite's
    ``training_env``. ``reset(seed, options)``: ``options`` may name ``task_id`` (or the
    suite's own task key, e.g. ``instance_id``), ``index`` and ``trial``; otherwise a task is
    drawn with the seed."""

    metadata = {"render_modes": ["ansi", "human"], "render_fps": 1}

    def __init__(self, suite: str, render_mode: str | None = None, max_length: int = MAX_LENGTH,
                 max_action_length: int = MAX_ACTION_LENGTH, **kwargs: Any) -> None:  # fmt: skip
        self._closed, self.text_env = True, None
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or "
                             f"None, not {render_mode!r}")  # fmt: skip
        self.suite = get_suite(suite)
        self.env_id = env_id(self.suite)
        if not self.suite.trainable:
            raise ValueError(f"{suite} has no training environment")
        self.render_mode = render_mode
        chars = suite_charset(self.suite)
        self._chars = frozenset(chars)
        self.observation_space = spaces.Text(_length(max_length, "max_length"), min_length=0,
                                             charset=chars)  # fmt: skip
        self.action_space = spaces.Text(_length(max_action_length, "max_action_length"),
                                        min_length=0, charset=chars)  # fmt: skip
        try:
            self.text_env = self.suite.training_env(**kwargs)
        except (TypeError, ValueError, KeyError) as exc:
            raise ValueError(f"{self.env_id}: {exc}") from exc
        self._closed = False
        self._chat = chat_adapter(self.text_env)
        self.task_key: str = self.text_env.task_key
        self.task_ids: list[str] = list(self.text_env.item_ids)
        self.task_id: str | None = None
        self._turn, self._done = 0, False
        self._last: tuple[str | None, str] = (None, "")

    # ---------------------------------------------------------------- the Gymnasium API
    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:  # fmt: skip
        """Start an episode: ``(observation, info)``; ``info``: ``task_id``, the suite's
        reset info, ``messages`` (the opening chat) and the text counts."""
        super().reset(seed=seed)
        self._check_open()
        chosen = self._options(options)
        messages, info = self._chat.reset(seed, chosen)
        self.task_id = info.get(self.task_key)
        self._turn, self._done = 0, False
        observation, counts = self._observe(messages)
        self._last = (None, observation)
        info = {**copy.deepcopy(info), "task_id": self.task_id, "suite": self.suite.name,
                "messages": copy.deepcopy(messages), **counts}  # fmt: skip
        return observation, info

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Apply the model's message ``action``: ``(observation, reward, terminated,
        truncated, info)``; ``info``: ``task_id``, ``turn``, ``messages`` (the new chat
        messages), the text counts and, once the episode ended, ``breakdown`` and ``outcome``."""
        self._check_open()
        if self.task_id is None:
            raise ResetNeeded("call reset() before step()")
        if self._done:
            raise ResetNeeded("the episode has ended: call reset() to start another")
        if not isinstance(action, str):
            raise TypeError(f"an action is the model's message text (str), not "
                            f"{type(action).__name__}")  # fmt: skip
        messages, reward, terminated, truncated = self._chat.step(action)
        self._turn += 1
        observation, counts = self._observe(messages)
        self._last = (action, observation)
        info: dict[str, Any] = {"task_id": self.task_id, "turn": self._turn,
                                "messages": copy.deepcopy(messages), **counts}  # fmt: skip
        if terminated or truncated:
            self._done = True
            info["breakdown"] = copy.deepcopy(self._chat.breakdown())
            # completed or model_error (core.outcomes): an infra error raises out of step();
            # a training environment that keeps no episode records no outcome
            episode = getattr(self.text_env, "episode", None)
            if callable(episode):
                info["outcome"] = episode().outcome
        return observation, float(reward), bool(terminated), bool(truncated), info

    def render(self) -> str | None:
        """The last exchange as text (``ansi``), or printed (``human``); either way with its
        terminal control characters shown escaped (:func:`~travelgym.terminal.printable`)."""
        if self.render_mode is None:
            gymnasium.logger.warn("render() without a render_mode: make the environment "
                                  "with render_mode='ansi' or 'human'")  # fmt: skip
            return None
        action, observation = self._last
        head = f"[{self.env_id} {self.task_id or '(not reset)'} turn {self._turn}]"
        text = "\n".join([head, *([f"> {action}"] if action is not None else []), observation])
        text = printable(text)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        """Release the suite's environment (its database, event loop, clients); again: no-op."""
        if self._closed:
            return
        self._closed = True
        self.text_env.close()

    # ------------------------------------------------------------------------ helpers
    def episode(self) -> Any:
        """The current episode as the suite's episode model (what ``travelgym run`` stores),
        scored once it has ended."""
        self._check_open()
        return self.text_env.episode()

    def _check_open(self) -> None:
        if self._closed:
            raise gymnasium.error.ClosedEnvironmentError(f"{self.env_id} is closed")

    def _options(self, options: Any) -> dict[str, Any]:
        """The training environment's reset options from Gymnasium's (checked)."""
        if options is None:
            return {}
        if not isinstance(options, dict):
            raise ValueError(f"reset options must be a dict, not {type(options).__name__}")
        keys = dict.fromkeys((*OPTION_KEYS, self.task_key))
        unknown = [k for k in options if k not in keys]
        if unknown:
            raise ValueError(f"unknown reset option {unknown[0]!r}: the options are "
                             f"{', '.join(keys)}")  # fmt: skip
        named = [options[k] for k in dict.fromkeys(("task_id", self.task_key)) if k in options]
        if any(not isinstance(v, str) for v in named):
            raise ValueError(f"a task id is a string, not {named[0]!r}")
        if len(set(named)) > 1 or (named and "index" in options):
            also = f", {self.task_key} (the same id)" if self.task_key != "task_id" else ""
            raise ValueError(f"name one task: task_id{also} or index")
        out: dict[str, Any] = {}
        if named:
            if named[0] not in self.task_ids:
                shown = ", ".join(self.task_ids[:5]) + (", ..." if len(self.task_ids) > 5 else "")
                raise ValueError(f"unknown task_id {named[0]!r}: this environment has "
                                 f"{len(self.task_ids)} tasks ({shown})")  # fmt: skip
            out[self.task_key] = named[0]
        elif "index" in options:
            index = options["index"]
            if not _is_int(index) or not 0 <= index < len(self.task_ids):
                raise ValueError(f"index must be an integer from 0 to {len(self.task_ids) - 1},"
                                 f" not {index!r}")  # fmt: skip
            out["index"] = int(index)
        if "trial" in options:
            trial = options["trial"]
            if not _is_int(trial) or trial < 0:
                raise ValueError(f"trial must be a non-negative integer, not {trial!r}")
            out["trial"] = int(trial)
        return out

    def _observe(self, messages: list[dict[str, Any]]) -> tuple[str, dict[str, int]]:
        """The observation text of ``messages`` (inside the space) and what it took."""
        text = "\n\n".join(m["content"] for m in messages if m.get("content"))
        outside = set(text) - self._chars
        replaced = sum(text.count(c) for c in outside)
        if outside:
            text = text.translate(dict.fromkeys(map(ord, outside), REPLACEMENT))
        cut = max(0, len(text) - self.observation_space.max_length)
        return text[: self.observation_space.max_length], {"replaced_chars": replaced,
                                                           "cut_chars": cut}  # fmt: skip


register_envs()
