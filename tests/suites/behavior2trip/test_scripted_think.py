"""The scripted baseline's notes look ahead: in the chat ``export sft`` rebuilds from a scripted
episode, the ``<think>`` of each assistant turn mentions only what was known before that turn's
tool calls (the prompt and earlier results), never a value its own or a later turn's results
first produced, nor the plan's cost before the routing is done."""

from __future__ import annotations

import asyncio
import json
import re

import pytest

from travelgym.db import connect_readonly
from travelgym.suites.behavior2trip.agents.infer import infer_preferences
from travelgym.suites.behavior2trip.agents.scripted import ScriptedTripAgent
from travelgym.suites.behavior2trip.agents.scripted_plan import plan_cost
from travelgym.suites.behavior2trip.episode import run_trip_episode
from travelgym.suites.behavior2trip.instances import ensure_instances, load_instances
from travelgym.suites.behavior2trip.training import trip_chat

THINK = re.compile(r"<think>(.*?)</think>", re.S)
STRING_VALUE = re.compile(r'"((?:[^"\\]|\\.){3,})"(?!\s*:)')  # a JSON string that is no key
NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w.])")


def numbers(text: str) -> set[str]:
    """The numbers of a text, thousands separators dropped and ``12.0`` also as ``12``."""
    found = set()
    for n in NUMBER.findall(re.sub(r"(?<=\d),(?=\d{3})", "", text)):
        found.add(n)
        if re.fullmatch(r"-?\d+\.0+", n):
            found.add(n.split(".")[0])
    return found


def values(response: str) -> set[str]:
    """The values of a turn's tool responses: numbers, and strings that are not keys and look
    like data (with a capital or a digit: names, ids, dates; not words such as ``hotel``)."""
    strings = {v for v in STRING_VALUE.findall(response) if re.search(r"[A-Z0-9]", v)}
    return strings | numbers(response)


def mentioned(value: str, think: str) -> bool:
    if NUMBER.fullmatch(value):
        return value in numbers(think)
    return re.search(rf"(?<!\w){re.escape(value)}(?!\w)", think) is not None


def turns(chat: list[dict]) -> list[tuple[str, str, str]]:
    """``(think, whole assistant message, the tool responses answering it)`` per turn."""
    out = []
    for i, message in enumerate(chat):
        if message["role"] != "assistant":
            continue
        found = THINK.search(message["content"])
        reply = chat[i + 1]["content"] if i + 1 < len(chat) else ""
        out.append((found.group(1) if found else "", message["content"], reply))
    return out


def leaks(chat: list[dict], request: str = "") -> list[tuple[int, str]]:
    """``(turn, value)`` where a turn's think mentions a value that first appears in the tool
    responses of that turn or a later one (and nowhere in what came before the turn: the
    system prompt, the task message, ``request`` (the request's fields, e.g. its dates as
    YYYY-MM-DD), earlier turns)."""
    steps = turns(chat)
    found = []
    for i, (think, _, _) in enumerate(steps):
        before = "\n".join([request] + [m["content"] for m in chat[:2]])
        before += "\n".join(body + "\n" + reply for _, body, reply in steps[:i])
        known = values(before) | {v for v in STRING_VALUE.findall(before)}
        later = set().union(*(values(reply) for _, _, reply in steps[i:]))
        # the short think first: most values are not in it, and ``before`` is long
        for value in sorted(later - known):
            if mentioned(value, think) and not mentioned(value, before):
                found.append((i, value))
    return found


@pytest.fixture(scope="module")
def episodes(trips_database):
    """Scripted episodes (two per level) and their rebuilt chats (tool calls replayed)."""
    paths = ensure_instances(trips_database, trips_database.path.parent.parent, splits=("test",))
    instances = load_instances(paths["test"], check=False)
    sample = [x for level in ("easy", "medium", "hard")
              for x in [i for i in instances if i.difficulty == level][3:60:50]]  # fmt: skip
    conn = connect_readonly(trips_database.path)

    async def run_all():
        return [await run_trip_episode(x, ScriptedTripAgent(), conn) for x in sample]

    try:
        runs = asyncio.run(run_all())
        yield [(x, e, trip_chat(e, x, conn)) for x, e in zip(sample, runs, strict=True)]
    finally:
        conn.close()


def test_no_think_mentions_results_of_its_own_turn_or_later(episodes):
    for instance, _, chat in episodes:
        assert len(turns(chat)) >= 3  # searches, routing, the answer
        assert leaks(chat, instance.instruction.model_dump_json()) == [], instance.instance_id


def test_the_check_finds_a_result_mentioned_too_early(episodes):
    _, _, chat = episodes[0]
    steps = turns(chat)
    prompt = "\n".join(m["content"] for m in chat[:2])
    name = sorted(v for v in STRING_VALUE.findall(steps[0][2])
                  if v[:1].isupper() and not mentioned(v, prompt))[-1]  # a value new in turn 0  # fmt: skip
    early = [dict(m) for m in chat]
    first = next(i for i, m in enumerate(early) if m["role"] == "assistant")
    early[first]["content"] = early[first]["content"].replace(
        "<think>", f"<think>I found {name}; ", 1
    )
    assert (0, name) in leaks(early)


def test_preferences_follow_the_reading_and_the_cost_follows_the_routing(episodes):
    for instance, episode, chat in episodes:
        described = infer_preferences(instance.trajectory).describe()
        first, *_ = episode.steps
        assert "trajectory" in first.text and "infer" in first.think
        assert described not in first.think
        assert not first.tool_calls  # the reading calls no tool: its note opens the first turn
        assert described in episode.steps[1].think
        steps = turns(chat)
        opening = steps[0][0]
        assert opening.index("trajectory") < opening.index(described)

        answer = json.loads(re.search(r"<answer>(.*)</answer>", episode.final_answer, re.S)[1])
        ask = instance.instruction
        cost = f"{plan_cost(answer, ask.travellers, ask.rooms):,.0f}"
        *acting, (last_think, last_body, _) = steps
        assert "<answer>" in last_body and cost in last_think
        for think, body, _ in acting:
            assert "<tool_call>" in body and cost not in think
        assert "MapGuide" in acting[-1][1]  # the last turn with tool calls routes the days
