"""The human user backend (user spec ``human``, ``travelgym play compass --as user``): a person
at the terminal writes the traveller's words.

The simulator still decides each turn's dialogue acts (which requirement to reveal or revise,
which violation to flag, when to accept), exactly as with the template and LLM backends, so the
episode is recorded and scored like any other; the person sees the task's whole script at the
start (story, persona, every requirement, including the hidden ones and the revisions still to
come) and, each turn, what the simulator decided and the template's words for it, which Enter
sends as they are.
"""

from __future__ import annotations

from travelgym.llm.human_client import PlayerQuit, Terminal
from travelgym.suites.compass.revisions import initial_versions
from travelgym.suites.compass.trajectory import DialogueAct
from travelgym.suites.compass.user.llm_backend import STYLE_TEXT, act_instruction
from travelgym.suites.compass.user.simulator import ConversationState
from travelgym.suites.compass.user.template import NEEDS, TemplateUserBackend

HELP = """Your turn as the traveller. Type your message to the agent, or press Enter to send the
suggested words. The simulator decides what happens in the conversation (what you reveal, when
you accept); you choose the words. Commands: /brief (your script again), /help, /quit (ends
the episode; it is stored and scored)."""


def briefing(state: ConversationState) -> str:
    """The person's script: story, what to book, persona, every requirement (the ones stated at
    the start, the hidden ones and the changes of mind to come) and the objective."""
    task, persona = state.task, state.persona
    initial = initial_versions(task)
    lines = [f"You play the traveller of task {task.task_id}.",
             f"Your story: {task.story}", f"You need {NEEDS[task.level]} booked.",
             f"Your style: {STYLE_TEXT[persona.style]}",
             f"You are {persona.trust} and {persona.reliability} (you reveal requirements at "
             f"{persona.revelation_speed} speed).", "Your requirements (all must-haves):"]  # fmt: skip
    for index, constraint in enumerate(task.constraints):
        when = (
            "stated at the start"
            if constraint.revelation == "initial"
            else "hidden: revealed later"
        )
        if index in initial:
            lines.append(f"  - {initial[index].sentence()} ({when}; later you change it to: "
                         f"{constraint.sentence()})")  # fmt: skip
        else:
            lines.append(f"  - {constraint.sentence()} ({when})")
    lines.append(f"What makes one option better than another: {task.objective.sentence()}")
    return "\n".join(lines)


class HumanUserBackend:
    """Writes the user's turns with the words a person types (see the module docstring);
    ``terminal``: where to talk (default: the process's stdin and stdout)."""

    name = "human"

    def __init__(self, terminal: Terminal | None = None) -> None:
        self.terminal = terminal if terminal is not None else Terminal()
        self.template = TemplateUserBackend()

    async def write(
        self, state: ConversationState, acts: list[DialogueAct], instruction: str
    ) -> str:
        """The person's message for this turn (the suggested words on an empty line)."""
        suggested = await self.template.write(state, acts, instruction)
        show = self.terminal.show
        if any(a.type == "open" for a in acts):
            self.terminal.heading("your script")
            show(briefing(state))
            show(HELP)
        else:
            said = next((text for role, text in reversed(state.history) if role == "agent"), "")
            self.terminal.heading("agent")
            show(said or "(no message)")
        self.terminal.heading("this turn")
        for line in (act_instruction(state, act) for act in acts):
            if line:
                show(f"  - {line}")
        show(f"  - {instruction}")
        show(f"suggested: {suggested}")
        while True:
            line = self.terminal.ask("you (user)> ").strip()
            if not line:
                return suggested
            if not line.startswith("/"):
                return line
            command = line[1:].split(" ", 1)[0].lower()
            if command in ("quit", "exit", "q"):
                raise PlayerQuit("/quit")
            if command == "brief":
                show(briefing(state))
            elif command == "help":
                show(HELP)
            else:
                show(f"error: unknown command /{command} (/help lists them)")
