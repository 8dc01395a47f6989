"""The user simulator's decisions (COMPASS Section 3.5, Appendix E, the responsibilities of App. H).

Each turn the simulator decides, from its persona and the conversation state, which structured
dialogue acts to perform; a backend then writes the words.

* Revelation follows a schedule: each turn with a hidden (progressive) constraint draws one
  Bernoulli(p), p the persona's; a success lets one more constraint out. Without questions the
  next pending one is revealed; a generic question ("anything else?") gets it as the answer, or
  an honest "that's all for now" when the draw failed. A question about topics is answered on
  those topics only: a hidden constraint asked about is revealed only while the reveals stay
  within the schedule plus one (one reveal ahead, repaid by the next success), so questioning
  cannot bypass the revelation speed; one held back gets "not sure yet", never a denial. Near
  the turn limit the rest are forced out, one a turn, in time for the agent to answer.
* Revisions of stated constraints (tighter or looser) come one a turn, on their own draws.
* Violations of the constraints as stated so far are flagged (reliable users always,
  unreliable ones mostly not); questioning users, shown a recommendation once everything is
  known, restate their latest requirements ("just to be clear") and ask for a double-check.
* With everything known and no recommendation, the user asks for one; after
  :data:`MAX_UNANSWERED_REQUESTS` requests answered without one, it ends the conversation.
* The user accepts only once every constraint is revealed and revised.
"""

from __future__ import annotations

import collections
import sqlite3
import zlib
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from travelgym.llm.protocol import Repair, Usage
from travelgym.suites.compass.constraints import Constraint
from travelgym.suites.compass.revisions import initial_versions, stated_task
from travelgym.suites.compass.scoring import revealed_option_violations
from travelgym.suites.compass.tasks import Persona, Task
from travelgym.suites.compass.trajectory import DialogueAct
from travelgym.suites.compass.user.sentences import sentence_counts
from travelgym.suites.compass.user.topics import asked_topics, asks_for_more

#: The simulator's behaviour version: recorded in a run's manifest and part of its identity, so
#: a run is never resumed with another simulator. 2: the revelation schedule (generic and topic
#: questions), restatements of questioning users, user-ended conversations, direction-aware
#: revisions, no long sentence said more than twice.
USER_SIMULATOR_VERSION = "2"
UNRELIABLE_FLAG_PROBABILITY = 0.2
MAX_UNANSWERED_REQUESTS = 3  # requests for a formal recommendation answered without one
RESTATED_WHEN_QUESTIONING = 2  # requirements a questioning user restates "to be clear"
CLARIFY = "just to be clear"  # the detail of those restatements
GENERIC = "anything else"  # the detail of a reveal that answers a generic question
FORCED = "turn limit"  # the detail of a reveal forced by the turn limit (not drawn)
_REVEAL, _REVISE = zlib.crc32(b"reveal"), zlib.crc32(b"revise")


@dataclass
class UserReply:
    text: str
    acts: list[DialogueAct]
    done: bool  # the user accepted: the conversation ends
    instruction: str  # the dynamic instruction the simulator followed this turn
    ended: bool = False  # the user ended the conversation without accepting


@dataclass
class ConversationState:
    """What the user knows and has said: shared with the backend that writes the words."""

    task: Task
    revealed: list[int]
    hidden: list[int]
    turn: int = 0
    questioned: bool = False
    history: list[tuple[str, str]] = field(default_factory=list)  # (role, text)
    last_usage: Usage = field(default_factory=Usage)  # of the backend's last model call, if any
    last_repairs: list[Repair] = field(default_factory=list)  # of that call's reply
    revised: list[int] = field(default_factory=list)  # constraints revised so far, in order
    seed: int = 0  # the simulator's seed and trial: the template's wording follows them too
    trial: int = 0
    persona: Persona | None = None  # this conversation's persona (default: the task's)
    scheduled: int = 0  # revelation draws that succeeded so far (the schedule)
    asked: bool = False  # the user's last message asked for a formal recommendation
    unanswered: int = 0  # such requests the agent answered without one

    def __post_init__(self) -> None:
        if self.persona is None:
            self.persona = self.task.persona

    def stated(self, index: int) -> Constraint:
        """Constraint ``index`` as the user states it now: its initial version until revised."""
        initial = initial_versions(self.task)
        if index in initial and index not in self.revised:
            return initial[index]
        return self.task.constraints[index]

    def pending_revisions(self) -> list[int]:
        """Revealed constraints whose revision is still to come, in the order revealed."""
        initial = initial_versions(self.task)
        return [i for i in self.revealed if i in initial and i not in self.revised]

    def revisions_left(self) -> int:
        """Revisions not made yet, of revealed and hidden constraints alike."""
        return len(self.task.revisions) - len(self.revised)

    def said(self) -> collections.Counter[str]:
        """How often the user has sent each message so far."""
        return collections.Counter(text for role, text in self.history if role == "user")

    def said_sentences(self) -> collections.Counter[str]:
        """How often the user has said each sentence of 4+ words so far (see ``sentences``)."""
        return sentence_counts(text for role, text in self.history if role == "user")


class UserBackend(Protocol):
    name: str

    async def write(
        self, state: ConversationState, acts: list[DialogueAct], instruction: str
    ) -> str:
        """The user's message for these acts, in the persona's style."""
        ...


class UserSimulator:
    """Decides the user's dialogue acts each turn; a backend writes the text."""

    def __init__(self, task: Task, backend: UserBackend, conn: sqlite3.Connection, seed: int,
                 max_turns: int = 30, trial: int = 0,
                 persona: Persona | None = None) -> None:  # fmt: skip
        self.task = task
        self.backend = backend
        self.conn = conn
        self.max_turns = max_turns
        key = [seed, zlib.crc32(task.task_id.encode()), trial]
        self.rng = np.random.default_rng(key)  # flags, style 6's repetitions
        # the revelation and revision draws: their own streams, whatever the agent does
        self.reveal_rng = np.random.default_rng([*key, _REVEAL])
        self.revise_rng = np.random.default_rng([*key, _REVISE])
        initial = [i for i, c in enumerate(task.constraints) if c.revelation == "initial"]
        hidden = [i for i, c in enumerate(task.constraints) if c.revelation == "progressive"]
        self.state = ConversationState(
            task, initial, hidden, persona=persona, seed=seed, trial=trial
        )
        self.progressive = len(hidden)
        self.revealed_all_turn: int | None = 0 if not hidden and not task.revisions else None
        self._stated: dict[tuple[int, ...], Task] = {}

    @property
    def persona(self) -> Persona:
        """This conversation's persona (the one given, else the task's)."""
        return self.state.persona

    def _act(self, kind: str, index: int | None = None, detail: str | None = None) -> DialogueAct:
        # the constraint as the user states it: the initial version of one not yet revised
        constraint = self.state.stated(index).model_dump(mode="json") if index is not None else None
        return DialogueAct(type=kind, constraint_index=index, constraint=constraint, detail=detail)

    def _stated_task(self) -> Task:
        """The task as the user has stated it so far (what it checks recommendations against)."""
        key = tuple(sorted(self.state.revised))
        if key not in self._stated:
            self._stated[key] = stated_task(self.task, key)
        return self._stated[key]

    def _answer(self, agent_text: str, allowance: int) -> tuple[list[DialogueAct], list[str]]:
        """Answers to the agent's clarifying questions, from the script (see ``topics``): at
        most ``allowance`` hidden constraints asked about are revealed, in the order asked."""
        state, task = self.state, self.task
        acts: list[DialogueAct] = []
        lines: list[str] = []
        answered: set[int] = set()
        for topic in asked_topics(agent_text):
            covered = [i for i in range(len(task.constraints)) if topic.covers(state.stated(i))]
            held = False
            for index in (i for i in covered if i not in answered):
                answered.add(index)
                if index in state.hidden and allowance > 0:
                    allowance -= 1
                    state.hidden.remove(index)
                    state.revealed.append(index)
                    acts.append(self._act("answer", index, topic.label))
                    lines.append(f"Answer the question about {topic.label}: reveal this must-have.")
                elif index in state.hidden:
                    held = True  # the schedule holds it back: not yet, and no denial either
                else:
                    acts.append(self._act("restate", index, topic.label))
                    lines.append(f"Answer the question about {topic.label} with what you said.")
            if held:
                acts.append(DialogueAct(type="undecided", detail=topic.label))
                lines.append(f"Say you are not sure about {topic.label} yet.")
            if covered:
                continue
            if topic.in_objective(task.objective):
                if not any(a.type == "restate_objective" for a in acts):
                    acts.append(DialogueAct(type="restate_objective", detail=topic.label,
                                            objective=task.objective.model_dump(mode="json")))  # fmt: skip
                    lines.append(f"Answer the question about {topic.label}: say what makes one "
                                 "option better than another.")  # fmt: skip
            else:
                acts.append(DialogueAct(type="no_preference", detail=topic.label))
                lines.append(f"Say you have no preference about {topic.label}.")
        return acts, lines

    def _revise(self, index: int) -> DialogueAct:
        before = self.state.stated(index).sentence()
        self.state.revised.append(index)
        return DialogueAct(type="revise", constraint_index=index, detail=before,
                           constraint=self.task.constraints[index].model_dump(mode="json"))  # fmt: skip

    async def open(self) -> UserReply:
        """The opening request: the story, what to book, initial constraints, the objective."""
        needs = ",".join(("hotel", "flight", "permit")[: self.task.level])
        acts = [
            DialogueAct(
                type="open", objective=self.task.objective.model_dump(mode="json"), detail=needs
            )
        ]
        acts += [self._act("reveal", i) for i in self.state.revealed]
        instruction = ("Open the conversation: say what you need booked, state these requirements "
                       "and what makes one option better than another.")  # fmt: skip
        return await self._say(acts, instruction, done=False)

    def shown(self) -> int:
        """How many hidden (progressive) constraints the user has revealed so far."""
        return self.progressive - len(self.state.hidden)

    async def respond(self, agent_text: str, recommendation: dict | None) -> UserReply:
        """React to the agent's latest message (and formal recommendation, if any)."""
        state = self.state
        state.history.append(("agent", agent_text))
        state.turn += 1
        if state.asked and not recommendation:
            state.unanswered += 1
        state.asked = False
        if state.unanswered >= MAX_UNANSWERED_REQUESTS:
            act = DialogueAct(type="end_conversation",
                              detail=f"{state.unanswered} requests for a formal recommendation "
                                     "went unanswered")  # fmt: skip
            return await self._say([act], "You asked for a formal recommendation several times "
                                   "and got none: say so and end the conversation.",
                                   done=False, ended=True)  # fmt: skip
        turns_left = self.max_turns - state.turn
        # forced in time for the agent to answer the last change before the turn limit: one
        # reveal or revision a turn, so each still to come needs a turn of its own
        forced = turns_left <= len(state.hidden) + state.revisions_left() + 1
        if state.hidden and self.reveal_rng.random() < self.persona.reveal_probability:
            state.scheduled += 1
        # a question may take the user one reveal ahead of the schedule, never more
        answers, lines = self._answer(agent_text, max(0, state.scheduled + 1 - self.shown()))
        # a new requirement: no decision yet, and no revision of it before a later turn
        just_stated = {a.constraint_index for a in answers if a.type == "answer"}
        learned = bool(just_stated)
        generic = asks_for_more(agent_text)
        acts: list[DialogueAct] = []
        if state.hidden and (forced or self.shown() < state.scheduled):
            index = state.hidden.pop(0)
            state.revealed.append(index)
            acts.append(
                self._act("reveal", index, FORCED if forced else GENERIC if generic else None)
            )
            state.scheduled = max(state.scheduled, self.shown())
            lines.append("Reveal one new must-have requirement, clearly as non-negotiable"
                         + (", as the answer to the agent's question." if generic else "."))  # fmt: skip
        elif (revisable := [i for i in state.pending_revisions() if i not in just_stated]) and (
            forced or self.revise_rng.random() < self.persona.reveal_probability
        ):
            acts.append(self._revise(revisable[0]))
            lines.append("Say you changed your mind about one requirement: the new version "
                         "replaces what you said before, and is a must-have.")  # fmt: skip
        elif generic and not learned:
            acts.append(DialogueAct(type="nothing_more"))
            lines.append("The agent asked if there is anything else: say that is all for now.")
        if self.revealed_all_turn is None and not state.hidden and not state.revisions_left():
            self.revealed_all_turn = state.turn
        flagged = False
        if recommendation:
            for index, text in revealed_option_violations(
                self.conn, self._stated_task(), recommendation, state.revealed
            ):
                reliable = self.persona.reliability == "reliable"
                if reliable or self.rng.random() < UNRELIABLE_FLAG_PROBABILITY:
                    acts.append(self._act("flag_violation", index, text))
                    flagged = True
            if flagged:
                lines.append("Point out the requirement(s) the recommendation violates.")
        done = False
        news = [a for a in acts if a.type != "nothing_more"]
        if news or learned:
            # news this turn (a new or changed requirement, a violation): no decision yet
            if (
                news
                and self.persona.style == 6
                and len(state.revealed) > 1
                and self.rng.random() < 0.5
            ):
                index = int(self.rng.choice(state.revealed[:-1]))
                acts.append(self._act("restate", index))
                lines.append("Repeat one requirement you already gave.")
        elif state.hidden or state.pending_revisions():
            # requirements are still to come: no decision yet (users accept only when all are known)
            if not answers and not acts:  # an answer to the agent's question is reply enough
                acts.append(DialogueAct(type="acknowledge"))
                lines.append(
                    "Acknowledge the reply without deciding yet; you still have requirements to share."
                )
        elif not recommendation:
            acts.append(DialogueAct(type="ask_recommendation"))
            state.asked = True
            lines.append("Ask the agent for a formal recommendation with package IDs.")
        elif self.persona.trust == "questioning" and not state.questioned:
            state.questioned = True
            acts += [self._act("restate", i, CLARIFY) for i in self._to_clarify()]
            acts.append(DialogueAct(type="question"))
            lines.append("Restate your latest requirements to be sure the agent understood them, "
                         "and ask it to double-check that this is really the best option.")  # fmt: skip
        else:
            acts.append(DialogueAct(type="accept"))
            lines.append("Accept the recommendation and close the conversation.")
            done = True
        return await self._say(answers + acts, " ".join(lines), done)

    def _to_clarify(self) -> list[int]:
        """What a questioning user restates (App. H: "just to be clear, it MUST be ..."): the
        requirements it stated last (a revision counts as stated when made)."""
        revised = [i for i in self.state.revised if i in self.state.revealed]
        order = [i for i in self.state.revealed if i not in revised] + revised
        return order[-RESTATED_WHEN_QUESTIONING:]

    async def _say(self, acts: list[DialogueAct], instruction: str, done: bool,
                   ended: bool = False) -> UserReply:  # fmt: skip
        text = await self.backend.write(self.state, acts, instruction)
        self.state.history.append(("user", text))
        return UserReply(text=text, acts=acts, done=done, instruction=instruction, ended=ended)
