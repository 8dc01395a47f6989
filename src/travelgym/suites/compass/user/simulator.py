"""The user simulator's decisions (COMPASS Section 3.5, Appendix E).

Each turn the simulator decides, from its persona and the conversation state, which structured
dialogue acts to perform: reveal a progressive constraint (Bernoulli with the persona's p),
flag violations of revealed constraints in the agent's latest recommendation (reliable users
flag them; unreliable users mostly overlook them), question the recommendation (questioning
users, once), ask for a formal recommendation, or accept. A backend then writes the words.
"""

from __future__ import annotations

import sqlite3
import zlib
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from travelgym.llm.protocol import Repair, Usage
from travelgym.suites.compass.scoring import revealed_violations
from travelgym.suites.compass.tasks import Persona, Task
from travelgym.suites.compass.trajectory import DialogueAct

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
    persona: Persona | None = None  # this conversation's persona (default: the task's)

    def __post_init__(self) -> None:
        if self.persona is None:
            self.persona = self.task.persona


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
        self.state = ConversationState(task, initial, hidden, persona=persona)
        self.revealed_all_turn: int | None = 0 if not hidden else None

    @property
    def persona(self) -> Persona:
        """This conversation's persona (the one given, else the task's)."""
        return self.state.persona

    def _act(self, kind: str, index: int | None = None, detail: str | None = None) -> DialogueAct:
        constraint = (
            self.task.constraints[index].model_dump(mode="json") if index is not None else None
        )
        return DialogueAct(type=kind, constraint_index=index, constraint=constraint, detail=detail)

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
        acts: list[DialogueAct] = []
        lines: list[str] = []
        turns_left = self.max_turns - state.turn
        # forced in time for the agent to answer the last requirement before the turn limit
        forced = turns_left <= len(state.hidden) + 1
        if state.hidden and (forced or self.rng.random() < self.persona.reveal_probability):
            index = state.hidden.pop(0)
            state.revealed.append(index)
            acts.append(self._act("reveal", index))
            lines.append("Reveal one new must-have requirement, clearly as non-negotiable.")
            if not state.hidden:
                self.revealed_all_turn = state.turn
        flagged = False
        if recommendation:
            for index, text in revealed_violations(
                self.conn, self.task, recommendation, state.revealed
            ):
                reliable = self.persona.reliability == "reliable"
                if reliable or self.rng.random() < UNRELIABLE_FLAG_PROBABILITY:
                    acts.append(self._act("flag_violation", index, text))
                    flagged = True
            if flagged:
                lines.append("Point out the requirement(s) the recommendation violates.")
        done = False
        if not acts and state.hidden:
            # requirements are still to come: no decision yet (users accept only when all are known)
            acts.append(DialogueAct(type="acknowledge"))
            lines.append(
                "Acknowledge the reply without deciding yet; you still have requirements to share."
            )
        elif not acts:
            if not recommendation:
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
        elif self.persona.style == 6 and len(state.revealed) > 1 and self.rng.random() < 0.5:
            index = int(self.rng.choice(state.revealed[:-1]))
            acts.append(self._act("restate", index))
            lines.append("Repeat one requirement you already gave.")
        return await self._say(acts, " ".join(lines), done)

    async def _say(self, acts: list[DialogueAct], instruction: str, done: bool) -> UserReply:
        text = await self.backend.write(self.state, acts, instruction)
        self.state.history.append(("user", text))
        return UserReply(text=text, acts=acts, done=done, instruction=instruction)
