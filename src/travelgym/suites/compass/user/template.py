"""The deterministic template backend: natural, varied sentences in each of the 9 styles.

The facts come from the constraints' own sentences (so nothing is invented or lost); the style
decides the framing: greetings, lead-ins, tone, closers (COMPASS Table 9).
"""

from __future__ import annotations

import zlib

import numpy as np

from travelgym.suites.compass.trajectory import DialogueAct
from travelgym.suites.compass.user.simulator import ConversationState

NEEDS = {
    1: "a hotel",
    2: "a hotel and round-trip flights",
    3: "a hotel, round-trip flights and a park permit",
}

# style -> phrase banks; every style has its own vocabulary so wording differs across styles
STYLES: dict[int, dict[str, tuple[str, ...]]] = {
    1: {"ack": ("That sounds lovely, thank you! Let me think about it for a moment.",),
        "hello": ("Hi there, I hope your day is going wonderfully!", "Hello! Thank you so much for helping me today."),
        "lead": ("Oh, and one more thing, if you don't mind:", "I really appreciate this - also:"),
        "flag": ("I'm so sorry, but I think there's a small problem:", "You're being so helpful, but I noticed:"),
        "question": ("Thank you! Before I book, would you mind double-checking this is truly the best option for me?",),
        "ask": ("Could you kindly give me your formal recommendation with the package IDs?",),
        "accept": ("This is perfect, thank you so much for all your help! I'll book it.",),
        "restate": ("Just so we're on the same page, dear:",),
        "close": ("I really appreciate this!", "You're being so helpful.")},
    2: {"ack": ("Sorry, I need a moment to think, if that's okay.",),
        "hello": ("Hi, I'm so sorry to bother you, I hope this isn't too much trouble.",),
        "lead": ("I'm sorry, I should have said this earlier:", "Sorry to add to the list, but:"),
        "flag": ("I'm really sorry to be a pain, but:", "I hate to bother you again, but:"),
        "question": ("I'm sorry, I know you're busy, but could you check once more that it's the best one?",),
        "ask": ("Sorry, could you possibly give me the formal recommendation with the package IDs?",),
        "accept": ("Thank you, and sorry again for all the trouble - I'll take it.",),
        "restate": ("Sorry for repeating myself, but:",),
        "close": ("Sorry again for the trouble.", "I hope that's not too much to ask.")},
    3: {"ack": ("Hmm. I'm not convinced yet.",),
        "hello": ("Hello. I've been scammed by booking sites before, so I'll be careful.",),
        "lead": ("Also, and I'm watching for this:", "Another thing, don't try to slip past this:"),
        "flag": ("Are you sure about that? Because:", "Why should I trust this? It fails:"),
        "question": ("Are you sure about that? Why should I trust this recommendation? Show me your reasoning and check again.",),
        "ask": ("I want a formal recommendation with exact package IDs, nothing vague.",),
        "accept": ("Fine. It checks out. I'll book it.",),
        "restate": ("I'm repeating this so there's no funny business:",),
        "close": ("Prove to me this is legitimate.", "I'll be checking everything.")},
    4: {"ack": ("Noted. I still need to understand more before deciding.",),
        "hello": ("Hello. I will need to understand your logic before I trust any recommendation.",),
        "lead": ("Add this to your reasoning:", "Factor this in, and tell me how:"),
        "flag": ("Walk me through your thinking, because:", "How did you arrive at that? It breaks a requirement:"),
        "question": ("But why? Show me your thinking process and prove this is the best option.",),
        "ask": ("Give me a formal recommendation with package IDs, and explain how you got there.",),
        "accept": ("Your reasoning holds up. I'll take it.",),
        "restate": ("Remember this in your reasoning:",),
        "close": ("What's your reasoning behind it?", "Explain your logic.")},
    5: {"ack": ("Interesting, that reminds me of the time we went camping, but let me think it over.",),
        "hello": ("Hello! So, this trip has been a long time coming - last summer our plans fell apart when the car broke down, my aunt still talks about it, and ever since then we've been saving up.",),
        "lead": ("Oh, that reminds me of something my cousin said at dinner the other night, which is relevant:",
                 "Which brings me to a story, but the short version is:"),
        "flag": ("Now, I read through everything twice over my morning coffee, and I noticed:",),
        "question": ("Before I call my sister and tell her it's all settled - you know how she is - could you double-check it's really the best?",),
        "ask": ("Anyway, after all that rambling, could you give me a formal recommendation with the package IDs?",),
        "accept": ("Wonderful, I can't wait to tell the whole family. We'll book that one.",),
        "restate": ("As I may have mentioned in all my rambling:",),
        "close": ("Anyway, I'm getting off track.", "But I digress.")},
    6: {"ack": ("Okay. Hmm. Okay, let me think. Let me think.",),
        "hello": ("Hi. So. Okay, a trip. We need a trip, yes.",),
        "lead": ("Wait, also, also:", "Oh and - right, I wanted to say:"),
        "flag": ("Hmm, wait, no, that's not right:", "No no, hold on:"),
        "question": ("Hmm, is this the best one? Is it? Can you check, is it really the best?",),
        "ask": ("So which one is it? Which one? Give me the package IDs, the formal recommendation.",),
        "accept": ("Okay. Okay, yes. That one. Yes, I'll take that one.",),
        "restate": ("Like I said, like I said before:",),
        "close": ("Right. Yes.", "Okay, where was I.")},
    7: {"ack": ("Ooh, that sounds exciting! Let me think!",),
        "hello": ("Oh my goodness, this is so exciting!!",),
        "lead": ("Oh, and this is absolutely essential!!", "Oh no, I almost forgot something HUGE:"),
        "flag": ("Oh no, that won't work at all! This is a complete disaster:", "That's terrible!"),
        "question": ("This looks amazing, but is it truly THE best? I'd be devastated if it wasn't!",),
        "ask": ("I need the formal recommendation with the package IDs, I'm dying to see it!",),
        "accept": ("PERFECT!! This is absolutely amazing, book it!",),
        "restate": ("And remember, this is SO important:",),
        "close": ("This is going to be amazing!", "I'm so excited!")},
    8: {"ack": ("Whatever. I'm not done yet.",),
        "hello": ("Hi. Let's get this done quickly.",),
        "lead": ("And another thing:", "Also, pay attention:"),
        "flag": ("What the hell? Are you even reading what I write?", "Damn it, this is wrong:"),
        "question": ("Don't waste my time. Double-check that this is really the best, or I'm going elsewhere.",),
        "ask": ("Just give me the damn formal recommendation with package IDs already.",),
        "accept": ("Finally. Fine, I'll book it.",),
        "restate": ("I already told you this:",),
        "close": ("Don't make me repeat myself.", "Get it right this time.")},
    9: {"ack": ("Noted. Not final yet.",),
        "hello": ("Hello. Requirements follow.",),
        "lead": ("Additional requirement:", "Update to requirements:"),
        "flag": ("Issue with the recommendation:",),
        "question": ("Please verify the recommendation is optimal against the stated criteria and summarise why.",),
        "ask": ("Please provide a formal recommendation with package IDs.",),
        "accept": ("Confirmed. Proceeding with this booking.",),
        "restate": ("Reminder of an existing requirement:",),
        "close": ("Please provide options that meet these criteria.",)},
}  # fmt: skip


class TemplateUserBackend:
    """Writes the user's turn from its dialogue acts, in the persona's style, deterministically."""

    name = "template"

    async def write(
        self, state: ConversationState, acts: list[DialogueAct], instruction: str
    ) -> str:
        style = state.persona.style
        bank = STYLES[style]
        rng = np.random.default_rng([zlib.crc32(state.task.task_id.encode()), state.turn, style])

        def pick(key: str) -> str:
            options = bank[key]
            return options[int(rng.integers(len(options)))]

        task = state.task
        sentences = {i: task.constraints[i].sentence() for i in range(len(task.constraints))}
        parts: list[str] = []
        for act in acts:
            if act.type == "open":
                parts += [pick("hello"), task.story, f"I need {NEEDS[task.level]} booked."]
                opening = [sentences[a.constraint_index] for a in acts if a.type == "reveal"]
                if style == 9:
                    parts.append("My requirements are: " + " ".join(
                        f"{n}) {s}" for n, s in enumerate(opening, start=1)))  # fmt: skip
                else:
                    parts += opening
                parts += [task.objective.sentence(), pick("close")]
                break
            if act.type == "reveal":
                parts += [pick("lead"), sentences[act.constraint_index] + " This is a must-have."]
            elif act.type == "flag_violation":
                what = sentences[act.constraint_index] if act.constraint_index is not None else ""
                parts += [pick("flag"), f"{_capitalise(act.detail)}.", what]
            elif act.type == "restate":
                parts += [pick("restate"), sentences[act.constraint_index]]
            elif act.type in ("question", "ask_recommendation", "accept", "acknowledge"):
                key = {"ask_recommendation": "ask", "acknowledge": "ack"}.get(act.type, act.type)
                parts.append(pick(key))
        if style == 8 and any(a.type == "flag_violation" for a in acts):
            parts.append("I'm losing my patience here!")
        return " ".join(p for p in parts if p).strip()


def _capitalise(text: str | None) -> str:
    text = (text or "").strip()
    return text[:1].upper() + text[1:]
