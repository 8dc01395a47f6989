"""The LLM user backend: the dynamic prompt of COMPASS Appendix E.2, rebuilt every turn."""

from __future__ import annotations

from travelgym.llm.protocol import ChatClient, ChatMessage
from travelgym.suites.compass.revisions import initial_versions, revision_change
from travelgym.suites.compass.tasks import STYLES
from travelgym.suites.compass.trajectory import DialogueAct
from travelgym.suites.compass.user.simulator import CLARIFY, ConversationState
from travelgym.suites.compass.user.template import NEEDS, TemplateUserBackend

STYLE_TEXT = {
    1: "You are extremely polite and want to be personal with the agent; you thank them often.",
    2: "You are overly apologetic and worry about being a burden ('I'm sorry to bother you').",
    3: "You are suspicious and paranoid about being scammed; you question everything.",
    4: "You demand that the agent explain and justify its reasoning ('But why?').",
    5: "You are verbose and give far too much background before getting to the point.",
    6: "You are scattered and repetitive; you repeat the same points.",
    7: "You are dramatic and emotional: everything is 'amazing' or 'a disaster'!",
    8: "You get agitated easily; once things go wrong you swear and threaten to leave.",
    9: "You are direct and businesslike; you use numbered lists and no pleasantries.",
}


def build_prompt(state: ConversationState, acts: list[DialogueAct], instruction: str) -> str:
    """The simulator's system prompt for this turn: persona, script so far, what to do now."""
    task = state.task
    persona = state.persona
    now = {a.constraint_index for a in acts if a.type in ("reveal", "answer", "revise")}
    revealed = [state.stated(i).sentence() for i in state.revealed if i not in now]
    lines = [
        "You are role-playing a traveller talking to a travel-planning agent. Never act as the agent.",
        f"Your story: {task.story}",
        f"You need {NEEDS[task.level]} booked.",
        f"Your communication style: {STYLE_TEXT[persona.style]} ({STYLES[persona.style]})",
        "Style changes your tone only, never the facts.",
        "Requirements you have stated so far (all are non-negotiable must-haves):",
        *[f"- {s}" for s in revealed],
        f"What makes one option better than another: {task.objective.sentence()}",
        "Do not mention requirements other than those listed or given below.",
        "Do not repeat any of your earlier messages word for word.",
        "This turn:",
    ]
    lines += [f"- {line}" for act in acts if (line := act_instruction(state, act))]
    lines.append(f"- {instruction}")
    lines.append("Reply with the traveller's message only.")
    return "\n".join(lines)


def act_instruction(state: ConversationState, act: DialogueAct) -> str | None:
    """What the model must say for one act that carries facts (None for the others, which the
    turn's instruction covers)."""
    index = act.constraint_index
    sentence = state.stated(index).sentence() if index is not None else None
    if act.type == "reveal" and sentence:
        return f"Reveal this new must-have clearly: {sentence}"
    if act.type == "answer" and sentence:
        return f"The agent asked about {act.detail}: answer with this new must-have: {sentence}"
    if act.type == "restate" and sentence and act.detail == CLARIFY:
        return f"To be sure the agent understood, restate clearly as a must-have: {sentence}"
    if act.type == "restate" and sentence:
        asked = (
            f"The agent asked about {act.detail}: answer by repeating" if act.detail else "Repeat"
        )
        return f"{asked} this requirement: {sentence}"
    if act.type == "revise" and sentence:
        return (f"You have changed your mind{_direction(state, index)}: instead of "
                f"'{act.detail}', say clearly that now: {sentence} The new version replaces the "
                "old one and is a must-have.")  # fmt: skip
    if act.type == "flag_violation":
        return f"Point out this problem with the recommendation: {act.detail}"
    if act.type == "no_preference":
        return f"The agent asked about {act.detail}: say you have no preference about it."
    if act.type == "undecided":
        return (f"The agent asked about {act.detail}: say you are not sure about it yet "
                "(do not say it does not matter).")  # fmt: skip
    if act.type == "restate_objective":
        return (f"The agent asked about {act.detail}: answer with what makes one option better "
                f"than another: {state.task.objective.sentence()}")  # fmt: skip
    return None


_DIRECTIONS = {"budget_up": " (you can spend more)", "budget_down": " (you must spend less)",
               "longer": " (you can stay longer)", "shorter": " (the stay must be shorter)",
               "looser": " (you can be more flexible)", "tighter": " (you must be stricter)"}  # fmt: skip


def _direction(state: ConversationState, index: int) -> str:
    """Which way the revision of constraint ``index`` goes, for the instruction."""
    initial = initial_versions(state.task).get(index)
    if initial is None:
        return ""
    return _DIRECTIONS.get(revision_change(initial, state.task.constraints[index])[0], "")


class LLMUserBackend:
    """Writes the user's turns with a model, following the simulator's decisions."""

    def __init__(self, client: ChatClient, **params) -> None:
        self.client = client
        self.params = params
        self.name = f"llm:{client.model}"
        self.fallback = TemplateUserBackend()

    async def write(
        self, state: ConversationState, acts: list[DialogueAct], instruction: str
    ) -> str:
        messages = [ChatMessage(role="system", content=build_prompt(state, acts, instruction))]
        # the user sees the conversation from its side: the agent speaks as "user" to the model
        for role, text in state.history:
            messages.append(
                ChatMessage(role="user" if role == "agent" else "assistant", content=text)
            )
        if not state.history:
            messages.append(
                ChatMessage(role="user", content="(The agent greets you. Start the conversation.)")
            )
        response = await self.client.complete(messages, **self.params)
        state.last_usage, state.last_repairs = response.usage, response.repairs
        text = (response.message.content or "").strip()
        # an empty reply would stall the conversation: say the same acts with the template words
        return text or await self.fallback.write(state, acts, instruction)
