"""The user simulator's decisions (COMPASS Section 3.5, Appendix E).

Each turn the simulator decides, from its persona and the conversation state, which structured
dialogue acts to perform: answer the agent's clarifying questions from its script (reveal the
hidden constraint asked about, restate a known one, restate the objective, or say it has no
preference), reveal a progressive constraint or revise one stated earlier (Bernoulli with the
persona's p, one a turn), flag violations of the constraints as stated so far in the agent's
latest recommendation (reliable users flag them; unreliable users mostly overlook them),
question the recommendation (questioning users, once), ask for a formal recommendation, or
accept (only once every constraint is revealed and revised). A backend then writes the words.
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
from travelgym.suites.compass.scoring import revealed_violations
from travelgym.suites.compass.tasks import Persona, Task
from travelgym.suites.compass.trajectory import DialogueAct
from travelgym.suites.compass.user.topics import asked_topics

UNRELIABLE_FLAG_PROBABILITY = 0.2


@dataclass
class UserReply:
    text: str
    acts: list[DialogueAct]
    done: bool  # the user accepted: the conversation ends
    instruction: str  # the dynamic instruction the simulator followed this turn


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
        self.rng = np.random.default_rng([seed, zlib.crc32(task.task_id.encode()), trial])
        initial = [i for i, c in enumerate(task.constraints) if c.revelation == "initial"]
        hidden = [i for i, c in enumerate(task.constraints) if c.revelation == "progressive"]
        self.state = ConversationState(
            task, initial, hidden, persona=persona, seed=seed, trial=trial
        )
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

    def _answer(self, agent_text: str) -> tuple[list[DialogueAct], list[str]]:
        """Answers to the agent's clarifying questions, from the script (see ``topics``)."""
        state, task = self.state, self.task
        acts: list[DialogueAct] = []
        lines: list[str] = []
        answered: set[int] = set()
        for topic in asked_topics(agent_text):
            covered = [i for i in range(len(task.constraints)) if topic.covers(state.stated(i))]
            for index in (i for i in covered if i not in answered):
                answered.add(index)
                if index in state.hidden:
                    state.hidden.remove(index)
                    state.revealed.append(index)
                    acts.append(self._act("answer", index, topic.label))
                    lines.append(f"Answer the question about {topic.label}: reveal this must-have.")
                else:
                    acts.append(self._act("restate", index, topic.label))
                    lines.append(f"Answer the question about {topic.label} with what you said.")
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

    async def respond(self, agent_text: str, recommendation: dict | None) -> UserReply:
        """React to the agent's latest message (and formal recommendation, if any)."""
        state = self.state
        state.history.append(("agent", agent_text))
        state.turn += 1
        answers, lines = self._answer(agent_text)
        # a new requirement: no decision yet, and no revision of it before a later turn
        just_stated = {a.constraint_index for a in answers if a.type == "answer"}
        learned = bool(just_stated)
        acts: list[DialogueAct] = []
        turns_left = self.max_turns - state.turn
        # forced in time for the agent to answer the last change before the turn limit: one
        # reveal or revision a turn, so each still to come needs a turn of its own
        forced = turns_left <= len(state.hidden) + state.revisions_left() + 1
        if state.hidden and (forced or self.rng.random() < self.persona.reveal_probability):
            index = state.hidden.pop(0)
            state.revealed.append(index)
            acts.append(self._act("reveal", index))
            lines.append("Reveal one new must-have requirement, clearly as non-negotiable.")
        elif (revisable := [i for i in state.pending_revisions() if i not in just_stated]) and (
            forced or self.rng.random() < self.persona.reveal_probability
        ):
            acts.append(self._revise(revisable[0]))
            lines.append("Say you changed your mind about one requirement: the new version "
                         "replaces what you said before, and is a must-have.")  # fmt: skip
        if self.revealed_all_turn is None and not state.hidden and not state.revisions_left():
            self.revealed_all_turn = state.turn
        flagged = False
        if recommendation:
            for index, text in revealed_violations(
                self.conn, self._stated_task(), recommendation, state.revealed
            ):
                reliable = self.persona.reliability == "reliable"
                if reliable or self.rng.random() < UNRELIABLE_FLAG_PROBABILITY:
                    acts.append(self._act("flag_violation", index, text))
                    flagged = True
            if flagged:
                lines.append("Point out the requirement(s) the recommendation violates.")
        done = False
        if acts or learned:
            # news this turn (a new or changed requirement, a violation): no decision yet
            if (
                acts
                and self.persona.style == 6
                and len(state.revealed) > 1
                and self.rng.random() < 0.5
            ):
                index = int(self.rng.choice(state.revealed[:-1]))
                acts.append(self._act("restate", index))
                lines.append("Repeat one requirement you already gave.")
        elif state.hidden or state.pending_revisions():
            # requirements are still to come: no decision yet (users accept only when all are known)
            if not answers:  # an answer to the agent's question is reply enough
                acts.append(DialogueAct(type="acknowledge"))
                lines.append(
                    "Acknowledge the reply without deciding yet; you still have requirements to share."
                )
        elif not recommendation:
            acts.append(DialogueAct(type="ask_recommendation"))
            lines.append("Ask the agent for a formal recommendation with package IDs.")
        elif self.persona.trust == "questioning" and not state.questioned:
            state.questioned = True
            acts.append(DialogueAct(type="question"))
            lines.append("Ask the agent to double-check that this is really the best option.")
        else:
            acts.append(DialogueAct(type="accept"))
            lines.append("Accept the recommendation and close the conversation.")
            done = True
        return await self._say(answers + acts, " ".join(lines), done)

    async def _say(self, acts: list[DialogueAct], instruction: str, done: bool) -> UserReply:
        text = await self.backend.write(self.state, acts, instruction)
        self.state.history.append(("user", text))
        return UserReply(text=text, acts=acts, done=done, instruction=instruction)
