"""Multi-turn rollouts for RL: one episode of a text environment as token ids with a loss mask.

:func:`run_rollout` plays one episode of a suite's training environment
(:meth:`~travelgym.core.suite.Suite.training_env`; e.g. Behavior2Trip's
:class:`~travelgym.suites.behavior2trip.environment.TripTrainingEnv` with B2T-Agent text actions, or
COMPASS's :class:`~travelgym.suites.compass.environment.CompassTrainingEnv` with tool calls prompted as
Hermes ``<tool_call>`` blocks, as the ``hf:`` and ``local:`` clients do), seen as plain-text chat
(:class:`EnvChat` over the environment protocol, :mod:`travelgym.core.environment`), with a
``generate`` callable: ``generate(context_ids, max_new_tokens) -> new_ids`` (a transformers
model, a vLLM engine or a scripted fake).

The token stream is built incrementally, so it is exactly what the model saw:

- ``prompt_ids``: the chat template of ``reset``'s messages with the generation prompt;
- each model turn: the generated ids as they are (ending with the stop token, unless the turn
  ran out of ``max_new_tokens``), ``env_mask`` 1;
- each environment turn: the template's rendering of what follows the assistant message (its
  closing, the tool / memory responses or the simulated user's reply as the next user
  message, and the generation prompt of the next assistant turn), ``env_mask`` 0 (1 with
  ``loss_mask=False``, the "w/o loss mask" ablation).

The environment turn's text comes from the chat template itself: the chat so far plus an
assistant message holding a sentinel is rendered twice, without and with the new messages
(and the generation prompt); the text after the sentinel is the delta. When the model closed
its turn with a stop token that the delta starts with (``<|im_end|>``), that prefix is dropped
(the model already wrote it); a turn cut by ``max_new_tokens`` gets the template's full
closing, as environment tokens. Templates that re-render earlier turns (e.g. dropping old
reasoning) do not change the stream: the model's own tokens are never re-tokenized.

The rollout ends when the environment does (reward: its terminal reward), after
``max_turns`` model turns, or when the next turn would not fit ``max_completion_length``
tokens; a rollout cut short is scored as an undelivered plan (Behavior2Trip: ``P_action``
only; COMPASS: 0).

:func:`tokenize_chat` tokenizes a finished chat the same way (assistant tokens 1, the rest 0),
for SFT on exported trajectories.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from travelgym.llm.hf_client import chat_text, encode, stop_token_ids
from travelgym.llm.prompted_tools import split_tool_calls, to_prompted_messages
from travelgym.runner.loop import Conversation

GenerateFn = Callable[[list[int], int], list[int]]
PromptFn = Callable[[list[dict[str, Any]], Any], list[dict[str, Any]]]
Stop = Literal["terminated", "truncated", "max_turns", "token_budget"]
SENTINEL = "TRAVELGYM_SENTINEL_7f3a"


@dataclass
class Rollout:
    """One episode as token ids: ``prompt_ids``, ``completion_ids`` and ``env_mask`` (1 for
    model tokens, 0 for environment tokens), the reward and its breakdown, the episode."""

    prompt_ids: list[int]
    completion_ids: list[int]
    env_mask: list[int]
    reward: float
    breakdown: dict[str, Any] | None
    episode: Any
    turns: int
    stop: Stop
    info: dict[str, Any] = field(default_factory=dict)
    messages: list[dict[str, Any]] = field(default_factory=list)  # the chat, template form

    @property
    def model_tokens(self) -> int:
        return sum(self.env_mask)


class ChatView(Protocol):
    """What :func:`run_rollout` drives: an environment (:mod:`travelgym.core.environment`) as
    plain-text chat messages (:func:`chat_adapter`)."""

    def reset(self, seed: int | None, options: dict[str, Any] | None) -> tuple[list, dict]:
        """The opening chat messages and the environment's info."""

    def step(self, text: str) -> tuple[list[dict[str, Any]], float, bool, bool]:
        """Apply one model message: ``(new messages, reward, terminated, truncated)``."""

    def breakdown(self) -> dict[str, Any] | None:
        """The ended episode's reward breakdown."""


class EnvChat:
    """An environment as the plain-text chat a token-level policy writes, played through the
    one loop's body (:class:`~travelgym.runner.loop.Conversation`): a text-format environment
    as it is; a native-tools one (``env.native_tools``) with its tools prompted in the system
    message and each reply's ``<tool_call>`` blocks parsed into native calls, the tool results
    given back as text (Hermes style, as the ``hf:`` and ``local:`` clients do)."""

    def __init__(self, env: Any) -> None:
        self.env, self.episode = env, Conversation(env)
        self.prompted = bool(getattr(env, "native_tools", False))

    def reset(self, seed: int | None, options: dict[str, Any] | None) -> tuple[list, dict]:
        messages, info = self.episode.start(seed=seed, options=options)
        if self.prompted:
            messages = to_prompted_messages(messages, self.env.tool_schemas)
        return messages, info

    def step(self, text: str) -> tuple[list[dict[str, Any]], float, bool, bool]:
        action: Any = text
        if self.prompted:
            content, calls = split_tool_calls(text)
            action = {"role": "assistant", "content": content, "tool_calls": calls}
        moved = self.episode.apply(action)
        new = moved.messages
        if self.prompted and new:
            new = to_prompted_messages(new, None)
        return new, moved.reward, moved.terminated, moved.truncated

    def breakdown(self) -> dict[str, Any] | None:
        return self.env.breakdown()


def chat_adapter(env: Any) -> ChatView:
    """The plain-text chat view of an environment (:class:`EnvChat`)."""
    return EnvChat(env)


def turn_delta(tokenizer: Any, history: list[dict[str, Any]], new: list[dict[str, Any]],
               closed_with: str | None = None, **template_kwargs: Any) -> str:  # fmt: skip
    """The template text between the end of an assistant turn and the start of the next one:
    the turn's closing, the ``new`` messages and the generation prompt. ``closed_with``: the
    stop token text the model ended its turn with, dropped from the front when the template
    closes the turn with it."""
    turn = [*history, {"role": "assistant", "content": SENTINEL}]
    head = chat_text(tokenizer, turn, False, **template_kwargs)
    full = chat_text(tokenizer, turn + new, True, **template_kwargs)
    cut = head.rindex(SENTINEL) + len(SENTINEL)
    if full[:cut] != head[:cut]:
        raise ValueError("the chat template renders the chat differently once messages follow")
    delta = full[cut:]
    if closed_with and delta.startswith(closed_with):
        delta = delta[len(closed_with) :]
    return delta


class RolloutState:
    """One rollout as a state machine, so that :func:`run_rollout` (one at a time) and
    :func:`~travelgym.training.batched_rollout.run_rollouts` (in lockstep) build the same
    streams: the constructor resets the environment; :meth:`request` is the next generation
    (``(context_ids, max_new_tokens)``, ``None`` once finished); :meth:`advance` applies the
    generated ids (one model turn, the environment's step, its delta); :attr:`rollout` is the
    finished :class:`Rollout`. The keyword arguments are :func:`run_rollout`'s."""

    def __init__(self, env: Any, tokenizer: Any, *, seed: int | None = None,
                 options: dict[str, Any] | None = None, max_turns: int | None = None,
                 max_new_tokens: int = 256, max_completion_length: int = 4096,
                 loss_mask: bool = True, prompt_fn: PromptFn | None = None,
                 assistant_prefix: str = "",
                 template_kwargs: dict[str, Any] | None = None) -> None:  # fmt: skip
        self.env, self.tokenizer = env, tokenizer
        self.max_turns, self.max_new_tokens = max_turns, max_new_tokens
        self.max_completion_length, self.loss_mask = max_completion_length, loss_mask
        self.prefix, self.kwargs = assistant_prefix, dict(template_kwargs or {})
        self.adapter = chat_adapter(env)
        messages, self.info = self.adapter.reset(seed, options)
        if prompt_fn is not None:
            messages = prompt_fn(messages, env)
        self.history = [dict(m) for m in messages]
        text = chat_text(tokenizer, self.history, True, **self.kwargs) + assistant_prefix
        self.prompt_ids = encode(tokenizer, text)
        self.stops = set(stop_token_ids(tokenizer))
        self.completion: list[int] = []
        self.mask: list[int] = []
        self.turns = 0
        self.rollout: Rollout | None = None
        self._check_room()

    @property
    def done(self) -> bool:
        """Whether the rollout has finished (:attr:`rollout` is set)."""
        return self.rollout is not None

    def request(self) -> tuple[list[int], int] | None:
        """``(context_ids, max_new_tokens)`` of the next model turn, or ``None`` when done."""
        if self.done:
            return None
        room = self.max_completion_length - len(self.completion)
        return self.prompt_ids + self.completion, min(self.max_new_tokens, room)

    def advance(self, new: list[int]) -> None:
        """Apply one model turn's generated ids: the environment steps, then its delta (the
        template's text up to the next generation prompt) joins the stream, unless the episode
        ended or the next turn would not fit."""
        if self.done:
            raise RuntimeError("the rollout has finished")
        tok, new = self.tokenizer, list(new)
        self.completion += new
        self.mask += [1] * len(new)
        self.turns += 1
        text = self.prefix + tok.decode(new, skip_special_tokens=True)
        env_messages, _, terminated, truncated = self.adapter.step(text)
        if terminated or truncated:
            self.history.append({"role": "assistant", "content": text})
            self._finish("terminated" if terminated else "truncated")
            return
        closed = tok.convert_ids_to_tokens(new[-1]) if new and new[-1] in self.stops else None
        delta_text = turn_delta(tok, self.history, env_messages, closed, **self.kwargs)
        delta = encode(tok, delta_text + self.prefix)
        self.history += [{"role": "assistant", "content": text}, *env_messages]
        if len(self.completion) + len(delta) >= self.max_completion_length:
            self._finish("token_budget")
            return
        self.completion += delta
        self.mask += [1 if not self.loss_mask else 0] * len(delta)
        self._check_room()

    def _check_room(self) -> None:
        """Finish when no model turn is left (``max_turns``) or no token (the budget)."""
        if self.max_turns is not None and self.turns >= self.max_turns:
            self._finish("max_turns")
        elif self.max_completion_length - len(self.completion) <= 0:
            self._finish("token_budget")

    def _finish(self, stop: Stop) -> None:
        """Score the episode (its terminal reward, or a cut one's: the loop's
        :meth:`~travelgym.runner.loop.Conversation.result`) and build the rollout."""
        played = self.adapter.episode.result()
        self.rollout = Rollout(prompt_ids=self.prompt_ids, completion_ids=self.completion,
                               env_mask=self.mask, reward=float(played.reward),
                               breakdown=played.breakdown, episode=played.episode,
                               turns=self.turns, stop=stop, info=self.info,
                               messages=self.history)  # fmt: skip


def run_rollout(env: Any, tokenizer: Any, generate: GenerateFn, *, seed: int | None = None,
                options: dict[str, Any] | None = None, max_turns: int | None = None,
                max_new_tokens: int = 256, max_completion_length: int = 4096,
                loss_mask: bool = True, prompt_fn: PromptFn | None = None,
                assistant_prefix: str = "",
                template_kwargs: dict[str, Any] | None = None) -> Rollout:  # fmt: skip
    """Play one episode (see the module docstring). ``options`` go to ``env.reset`` (e.g.
    ``{"instance_id": ...}`` or ``{"task_id": ...}``); ``prompt_fn(messages, env)`` may rewrite
    the opening chat (e.g. a compact prompt); ``assistant_prefix`` opens every assistant turn
    (environment tokens; the message is the prefix plus the generated text);
    ``template_kwargs`` go to the chat template."""
    state = RolloutState(env, tokenizer, seed=seed, options=options, max_turns=max_turns,
                         max_new_tokens=max_new_tokens,
                         max_completion_length=max_completion_length, loss_mask=loss_mask,
                         prompt_fn=prompt_fn, assistant_prefix=assistant_prefix,
                         template_kwargs=template_kwargs)  # fmt: skip
    while (request := state.request()) is not None:
        state.advance(generate(*request))
    assert state.rollout is not None
    return state.rollout


def _closing_stop(tokenizer: Any, closing: str) -> tuple[int | None, str]:
    """The stop token the template's turn closing starts with (if any) and the closing's text
    after it."""
    for token_id in stop_token_ids(tokenizer):
        token = tokenizer.convert_ids_to_tokens(token_id)
        if token and closing.startswith(token):
            return token_id, token
    return None, ""


def tokenize_chat(tokenizer: Any, messages: list[dict[str, Any]],
                  **template_kwargs: Any) -> tuple[list[int], list[int]]:  # fmt: skip
    """``(input_ids, assistant_mask)`` of a chat (plain-text messages; prompt tool calls first
    with :func:`~travelgym.llm.prompted_tools.to_prompted_messages`), built turn by turn as
    :func:`run_rollout` builds a rollout: each assistant message is its content's tokens plus
    the template's stop token (mask 1), everything else the template's text (mask 0)."""
    first = next((i for i, m in enumerate(messages) if m.get("role") == "assistant"), None)
    if first is None:
        raise ValueError("the chat has no assistant message")
    history = [dict(m) for m in messages[:first]]
    ids = encode(tokenizer, chat_text(tokenizer, history, True, **template_kwargs))
    mask = [0] * len(ids)
    i = first
    while i < len(messages):
        message = messages[i]
        end = i + 1
        while end < len(messages) and messages[end].get("role") != "assistant":
            end += 1
        new = [dict(m) for m in messages[i + 1 : end]]
        turn = [*history, {"role": "assistant", "content": SENTINEL}]
        head = chat_text(tokenizer, turn, False, **template_kwargs)
        stop_id, stop_text = _closing_stop(tokenizer, head[head.rindex(SENTINEL) + len(SENTINEL) :])
        content = encode(tokenizer, message.get("content") or "")
        content += [stop_id] if stop_id is not None else []
        ids += content
        mask += [1] * len(content)
        if new:
            delta = encode(tokenizer, turn_delta(tokenizer, history, new, stop_text or None,
                                                 **template_kwargs))  # fmt: skip
            ids += delta
            mask += [0] * len(delta)
        history += [dict(message), *new]
        i = end
    return ids, mask
