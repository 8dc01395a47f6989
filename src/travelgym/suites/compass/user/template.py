"""The deterministic template backend: natural, varied sentences in each of the 9 styles.

The facts come from the constraints' own sentences, as the user states them (so nothing is
invented or lost); the style decides the framing: greetings, lead-ins, tone, closers (COMPASS
Table 9, phrase banks in ``phrases``). A message is an opener, each act's phrases and a closer,
drawn from a seeded generator, part by part: a part whose sentence of 4+ words the user has
already said twice is not taken (see ``sentences``); the bank's other entries are, then its
short reserves, and a fact said again gets a lead ("As I said: ..."). A message already sent
twice is drawn again. So a long wait reads as a person waiting, not a loop.
"""

from __future__ import annotations

import collections
import re
import zlib

import numpy as np

from travelgym.suites.compass.revisions import initial_versions, revision_change
from travelgym.suites.compass.trajectory import DialogueAct
from travelgym.suites.compass.user.phrases import (
    CHANGES,
    CLARIFY,
    IMPATIENT,
    MUST,
    REPLACES,
    SHORT,
    STYLES,
    UNSURE,
    WRAPPERS,
)
from travelgym.suites.compass.user.sentences import MAX_SAME_SENTENCE, long_sentences
from travelgym.suites.compass.user.simulator import CLARIFY as CLARIFY_DETAIL
from travelgym.suites.compass.user.simulator import GENERIC, ConversationState

NEEDS = {
    1: "a hotel",
    2: "a hotel and round-trip flights",
    3: "a hotel, round-trip flights and a park permit",
}
MAX_SAME_MESSAGE = 2  # the most times one message may occur in a conversation
_SAMPLES = 32  # messages drawn before the least-sent one is taken

__all__ = ["MAX_SAME_MESSAGE", "NEEDS", "STYLES", "TemplateUserBackend", "compose"]

# one part of a message: groups of alternatives ("" = leave it out), the first group first; a
# later group (the reserves) is drawn from only when no alternative of the earlier ones fits
Slot = tuple[tuple[str, ...], ...]


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
        return compose(_slots(state, acts, style), rng, state.said(), state.said_sentences())


def compose(slots: list[Slot], rng: np.random.Generator, said: dict[str, int],
            sentences: collections.Counter[str] | None = None) -> str:  # fmt: skip
    """One alternative per slot, joined: drawn part by part among the alternatives that keep
    every sentence of 4+ words within ``MAX_SAME_SENTENCE`` uses (``sentences``: the user's so
    far), a slot's reserves only when none of its first choices fits; a message ``said``
    ``MAX_SAME_MESSAGE`` times is drawn again, after half the draws from every group at once
    (the least-sent of the draws at worst)."""
    counts = sentences if sentences is not None else collections.Counter()
    best, best_count = "", None
    for attempt in range(_SAMPLES):
        text = ""
        for slot in slots:
            pooled = attempt >= _SAMPLES // 2
            text = _join((text, _choose(text, (sum(slot, ()),) if pooled else slot, rng, counts)))
        count = said.get(text, 0)
        if count < MAX_SAME_MESSAGE:
            return text
        if best_count is None or count < best_count:
            best, best_count = text, count
    return best


def _choose(text: str, slot: Slot, rng: np.random.Generator, counts) -> str:
    for group in slot:
        fitting = [option for option in group if _fits(text, option, counts)]
        if fitting:
            return fitting[int(rng.integers(len(fitting)))]
    # nothing fits (a fact asked about again and again): the least-said alternative
    options = [option for group in slot for option in group]
    return min(options, key=lambda o: max((counts[k] for k in long_sentences(o)), default=0))


def _fits(text: str, option: str, counts) -> bool:
    """Whether the message ``text`` + ``option`` says no finished sentence of 4+ words more
    than ``MAX_SAME_SENTENCE`` times, counting what the user said before."""
    seen = collections.Counter(long_sentences(_join((text, option)), complete_only=True))
    return all(counts[k] + n <= MAX_SAME_SENTENCE for k, n in seen.items())


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


def _fact(fact: str, leads: tuple[str, ...] = ("",)) -> Slot:
    """A fact (a constraint's or the objective's sentence) after one of ``leads``; once those
    are spent, the fact alone or after a wrapper ("As I said: ...")."""
    flat = _flat(fact)
    return (tuple(_join((lead, fact)) for lead in leads),
            (fact, *(f"{w} {flat}" for w in WRAPPERS)))  # fmt: skip


def _flat(fact: str) -> str:
    """A fact of several sentences as one (after a wrapper): "A. If B." -> "A; if B."."""
    return re.sub(r"[.!?]\s+([A-Z])", lambda m: "; " + m.group(1).lower(), fact)


def _bank(bank: dict, key: str, **fields: str) -> Slot:
    """A style's entries for ``key`` (formatted with ``fields``), its short reserves after,
    then pairs of them (a wait of many turns)."""
    short = tuple(_capitalise(p.format(**fields)) for p in SHORT.get(key, ()))
    pairs = tuple(f"{a} {b}" for a in short for b in short if a != b)
    return tuple(_capitalise(p.format(**fields)) for p in bank[key]), short, pairs


def _revision(state: ConversationState, act: DialogueAct, bank: dict) -> list[Slot]:
    """A revision: the style's lead, which way it goes (more budget or less, a longer or
    shorter stay), the new version, and (optionally) that it replaces the old one."""
    index = act.constraint_index
    initial = initial_versions(state.task).get(index)
    change, fields = ("changed", {})
    if initial is not None:
        change, fields = revision_change(initial, state.task.constraints[index])
    said = tuple(p.format(**fields) for p in CHANGES[change])
    return [(tuple(_join((lead, c)) for lead in bank["revise"] for c in said), said, ("",)),
            _fact(state.stated(index).sentence()), (("", *REPLACES),)]  # fmt: skip


def _slots(state: ConversationState, acts: list[DialogueAct], style: int) -> list[Slot]:
    bank = STYLES[style]
    task = state.task

    def fact(act: DialogueAct, leads: tuple[str, ...] = ("",)) -> Slot:
        return _fact(state.stated(act.constraint_index).sentence(), leads)

    slots: list[Slot] = [(("", *bank["pre"]),)]
    topics = [a.detail or "that" for a in acts if a.type == "no_preference"]
    unsure = [a.detail or "that" for a in acts if a.type == "undecided"]
    clarified = False
    for act in acts:
        if act.type in ("reveal", "answer"):
            asked = act.type == "answer" or act.detail == GENERIC
            slots += [fact(act, bank["answer" if asked else "lead"]), (MUST, SHORT["must"])]
        elif act.type == "flag_violation":
            detail = f"{_capitalise(act.detail)}."
            slots.append((tuple(_join((lead, detail)) for lead in bank["flag"]),
                          tuple(_join((lead, detail)) for lead in SHORT["flag"]),
                          (detail, *(f"{w} {detail}" for w in WRAPPERS))))  # fmt: skip
            if act.constraint_index is not None:
                slots.append(fact(act))
        elif act.type == "restate" and act.detail == CLARIFY_DETAIL:
            # the first after "just to be clear", the others after it
            slots.append(fact(act) if clarified else fact(act, CLARIFY))
            clarified = True
        elif act.type == "restate":
            slots.append(fact(act, bank["restate"]))
        elif act.type == "revise":
            slots += _revision(state, act, bank)
        elif act.type == "restate_objective":
            slots.append(_fact(task.objective.sentence(), bank["objective"]))
        elif act.type == "no_preference" and topics:
            # all the topics the user does not care about, in one sentence
            slots.append(_bank(bank, "nopref", topic=_listing(topics)))
            topics = []
        elif act.type == "undecided" and unsure:
            slots.append(_bank({"unsure": UNSURE}, "unsure", topic=_listing(unsure)))
            unsure = []
        elif act.type in ("question", "ask_recommendation", "accept", "acknowledge",
                          "nothing_more", "end_conversation"):  # fmt: skip
            key = {"ask_recommendation": "ask", "acknowledge": "ack", "nothing_more": "none",
                   "end_conversation": "end"}.get(act.type, act.type)  # fmt: skip
            slots.append(_bank(bank, key))
    if style == 8 and any(a.type == "flag_violation" for a in acts):
        slots.append((IMPATIENT, SHORT["impatient"]))
    slots.append((("", *bank["close"]),))
    return slots


def _listing(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " or " + items[-1]


def _capitalise(text: str | None) -> str:
    text = (text or "").strip()
    return text[:1].upper() + text[1:]
