"""The deterministic template backend: natural, varied sentences in each of the 9 styles.

The facts come from the constraints' own sentences, as the user states them (so nothing is
invented or lost); the style decides the framing: greetings, lead-ins, tone, closers (COMPASS
Table 9, phrase banks in ``phrases``). A message is an opener, each act's phrases and a closer,
drawn from a seeded generator; a message the user has already sent twice in the conversation is
never sent again (the next unused combination is taken), so a long wait reads as a person
waiting, not a loop.
"""

from __future__ import annotations

import itertools
import zlib

import numpy as np

from travelgym.suites.compass.trajectory import DialogueAct
from travelgym.suites.compass.user.phrases import MUST, REPLACES, STYLES
from travelgym.suites.compass.user.simulator import ConversationState

NEEDS = {
    1: "a hotel",
    2: "a hotel and round-trip flights",
    3: "a hotel, round-trip flights and a park permit",
}
MAX_SAME_MESSAGE = 2  # the most times one message may occur in a conversation
_SAMPLES = 32  # random combinations tried before the exhaustive search for an unused one
_EXHAUSTIVE = 20000  # bound on that search (a message has far fewer combinations in practice)

__all__ = ["MAX_SAME_MESSAGE", "NEEDS", "STYLES", "TemplateUserBackend", "compose"]

Slot = tuple[str, ...]  # the alternatives for one part of a message ("" = leave it out)


class TemplateUserBackend:
    """Writes the user's turn from its dialogue acts, in the persona's style, deterministically."""

    name = "template"

    async def write(
        self, state: ConversationState, acts: list[DialogueAct], instruction: str
    ) -> str:
        """The message for ``acts``: seeded by the simulator's seed, the trial, the task, the turn
        and the style, and not sent more than ``MAX_SAME_MESSAGE`` times in the conversation."""
        style = state.persona.style
        key = [state.seed, zlib.crc32(state.task.task_id.encode()), state.trial, state.turn, style]
        rng = np.random.default_rng(key)
        if any(a.type == "open" for a in acts):
            return _opening(state, acts, style, rng)
        return compose(_slots(state, acts, style), rng, state.said())


def compose(slots: list[Slot], rng: np.random.Generator, said: dict[str, int]) -> str:
    """One alternative per slot, joined: a seeded draw that the user has not sent yet, else the
    least-sent combination (searched exhaustively, in a fixed order, up to a bound)."""
    best, best_count = "", None
    for _ in range(_SAMPLES):
        text = _join(slot[int(rng.integers(len(slot)))] for slot in slots)
        count = said.get(text, 0)
        if count == 0:
            return text
        if best_count is None or count < best_count:
            best, best_count = text, count
    for combination in itertools.islice(itertools.product(*slots), _EXHAUSTIVE):
        text = _join(combination)
        count = said.get(text, 0)
        if count < best_count:
            best, best_count = text, count
            if count == 0:
                break
    return best


def _join(parts) -> str:
    return " ".join(p for p in parts if p).strip()


def _opening(state: ConversationState, acts: list[DialogueAct], style: int, rng) -> str:
    bank = STYLES[style]

    def pick(key: str) -> str:
        options = bank[key]
        return options[int(rng.integers(len(options)))]

    task = state.task
    parts = [pick("hello"), task.story, f"I need {NEEDS[task.level]} booked."]
    opening = [state.stated(a.constraint_index).sentence() for a in acts if a.type == "reveal"]
    if style == 9:
        parts.append("My requirements are: " + " ".join(
            f"{n}) {s}" for n, s in enumerate(opening, start=1)))  # fmt: skip
    else:
        parts += opening
    parts += [task.objective.sentence(), pick("close")]
    return _join(parts)


def _slots(state: ConversationState, acts: list[DialogueAct], style: int) -> list[Slot]:
    bank = STYLES[style]
    task = state.task

    def said(act: DialogueAct) -> Slot:
        return (state.stated(act.constraint_index).sentence(),)

    slots: list[Slot] = [("", *bank["pre"])]
    topics = [a.detail or "that" for a in acts if a.type == "no_preference"]
    for act in acts:
        if act.type in ("reveal", "answer"):
            slots += [bank["lead" if act.type == "reveal" else "answer"], said(act), MUST]
        elif act.type == "flag_violation":
            what = said(act) if act.constraint_index is not None else ("",)
            slots += [bank["flag"], (f"{_capitalise(act.detail)}.",), what]
        elif act.type == "restate":
            slots += [bank["restate"], said(act)]
        elif act.type == "revise":
            slots += [bank["revise"], said(act), ("", *REPLACES)]
        elif act.type == "restate_objective":
            slots += [bank["objective"], (task.objective.sentence(),)]
        elif act.type == "no_preference" and topics:
            # all the topics the user does not care about, in one sentence
            joined = _listing(topics)
            slots.append(tuple(_capitalise(p.format(topic=joined)) for p in bank["nopref"]))
            topics = []
        elif act.type in ("question", "ask_recommendation", "accept", "acknowledge"):
            key = {"ask_recommendation": "ask", "acknowledge": "ack"}.get(act.type, act.type)
            slots.append(bank[key])
    if style == 8 and any(a.type == "flag_violation" for a in acts):
        slots.append(("I'm losing my patience here!",))
    slots.append(("", *bank["close"]))
    return slots


def _listing(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " or " + items[-1]


def _capitalise(text: str | None) -> str:
    text = (text or "").strip()
    return text[:1].upper() + text[1:]
