"""COMPASS's turn agents (the scripted baselines, the code agent) are played by the one episode
loop, :func:`travelgym.runner.loop.play`, through :class:`TurnPolicy`: each agent turn is one
action the loop applies (a spy on :meth:`Conversation.aapply` sees them all), and the episode is
the one the agent plays answering the conversation's session directly, turn for turn."""

from __future__ import annotations

import asyncio
import time

import pytest

from travelgym.db import connect_readonly
from travelgym.llm.protocol import LLMError, Repair, Usage
from travelgym.runner.loop import Conversation
from travelgym.suites.compass.agents.base import AgentReply
from travelgym.suites.compass.agents.scripted import ScriptedAgent
from travelgym.suites.compass.episode import run_episode
from travelgym.suites.compass.session import CompassSession
from travelgym.suites.compass.solver import solve
from travelgym.suites.compass.tasks import load_tasks
from travelgym.suites.compass.user.template import TemplateUserBackend

TIMES = {"duration_s", "duration_ms"}


@pytest.fixture(scope="module")
def sample(compass_db):
    conn = connect_readonly(compass_db)
    tasks = [next(t for t in load_tasks() if t.level == level) for level in (1, 3)]
    yield conn, tasks, {t.task_id: solve(conn, t) for t in tasks}
    conn.close()


@pytest.fixture
def actions(monkeypatch) -> list:
    """Every action applied through the loop's :meth:`Conversation.aapply`, in order."""
    seen: list = []
    aapply = Conversation.aapply

    async def spy(self, message, **meta):
        seen.append(message)
        return await aapply(self, message, **meta)

    monkeypatch.setattr(Conversation, "aapply", spy)
    return seen


async def directly(task, agent, conn, truth):
    """The conversation with ``agent`` answering the session itself, no loop between them."""
    session = CompassSession(task, TemplateUserBackend(), conn, truth, agent_name=agent.name,
                             keep_results=False)  # fmt: skip
    agent.start(session.env)
    said = await session.open()
    while not session.over:
        started = time.perf_counter()
        said = await session.respond(await agent.reply(said.text, said.acts), started)
    session.finish([])
    return session.episode


def turns(episode) -> list[dict]:
    """The turns without their timings: texts, acts, tool calls, recommendations, usage."""
    return [{**turn.model_dump(exclude=TIMES),
             "tool_calls": [c.model_dump(exclude=TIMES) for c in turn.tool_calls]}
            for turn in episode.turns]  # fmt: skip


@pytest.mark.parametrize("strategy", ["greedy", "exhaustive"])
def test_a_scripted_episode_is_played_by_the_loop_as_the_agent_plays_it(sample, actions,
                                                                        strategy):  # fmt: skip
    conn, tasks, truths = sample
    for task in tasks:
        truth = truths[task.task_id]
        actions.clear()
        played = asyncio.run(run_episode(task, ScriptedAgent(strategy), TemplateUserBackend(),
                                         conn, truth))  # fmt: skip
        direct = asyncio.run(directly(task, ScriptedAgent(strategy), conn, truth))
        agent_turns = [t for t in played.turns if t.role == "agent"]
        assert actions and all(isinstance(a, AgentReply) for a in actions)
        assert [a.text for a in actions] == [t.text for t in agent_turns]
        assert played.score == direct.score and turns(played) == turns(direct)
        assert played.termination == direct.termination == "accepted"
        assert played.final_recommendation == direct.final_recommendation
        assert played.messages == [] and played.llm_calls == 0
        calls = [c for t in agent_turns for c in t.tool_calls]
        assert calls and all(c.result is None for c in calls)  # oracle-NLU: results not kept
        if strategy == "exhaustive":
            assert played.score["optimal"], (task.task_id, played.score)


class Scripted:
    """A turn agent with set replies: its first turn calls a tool and answers with what a
    model's turn would carry (calls, usage, an error, repairs); its second fails after two
    model calls, kept in ``partial``."""

    name = "scripted-replies"
    reads_dialogue_acts = False

    def start(self, env) -> None:
        self.env, self.heard = env, []
        self.partial: AgentReply | None = None

    def transcript(self) -> list[dict]:
        return [{"role": "user", "content": text} for text in self.heard]

    async def reply(self, user_text, acts) -> AgentReply:
        self.heard.append(user_text)
        if len(self.heard) == 1:
            self.env.call("search_airports", {"park_name": "Zion"})
            return AgentReply("Looking.", {"hotel": "pkg_1_2_3_1"}, Usage(prompt_tokens=10,
                              completion_tokens=5), 3, "reply is not the required JSON object",
                              [Repair(kind="invalid_unicode", where="content", count=1)])  # fmt: skip
        self.partial = AgentReply("", usage=Usage(prompt_tokens=7), llm_calls=2)
        raise LLMError("server", "the model is gone")


def test_the_environment_records_a_turn_agents_reply_as_it_is(sample, actions):
    conn, tasks, truths = sample
    task = tasks[0]
    agent = Scripted()
    episode = asyncio.run(run_episode(task, agent, TemplateUserBackend(), conn,
                                      truths[task.task_id]))  # fmt: skip
    first, failed = [t for t in episode.turns if t.role == "agent"]
    assert len(actions) == 1  # the failed turn is no action: the loop records the failure
    assert (first.text, first.recommendation) == ("Looking.", {"hotel": "pkg_1_2_3_1"})
    assert first.error == "reply is not the required JSON object"
    assert first.usage == Usage(prompt_tokens=10, completion_tokens=5)
    assert [r.kind for r in first.repairs] == ["invalid_unicode"]
    assert [c.name for c in first.tool_calls] == ["search_airports"]
    assert first.tool_calls[0].result is not None  # a model agent's results are kept
    assert failed.error == "server: the model is gone" and failed.usage == Usage(prompt_tokens=7)
    assert episode.llm_calls == 5 and episode.usage == Usage(prompt_tokens=17, completion_tokens=5)
    assert (episode.termination, episode.outcome) == ("error", "infra_error")
    assert episode.messages == agent.transcript() and len(episode.messages) == 2


def test_a_run_of_a_scripted_agent_plays_its_turns_through_the_loop(compass_db, actions,
                                                                    tmp_path):  # fmt: skip
    from click.testing import CliRunner

    from travelgym.cli import main
    from travelgym.runner.store import read_run

    args = ["run", "compass", "--agent", "scripted:exhaustive", "--limit", "2", "--out",
            str(tmp_path), "--data-dir", str(compass_db.parent.parent), "--no-progress"]  # fmt: skip
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    episodes = read_run(tmp_path / "scripted-exhaustive").episodes
    agent_turns = [t for e in episodes for t in e.turns if t.role == "agent"]
    assert len(episodes) == 2 and all(isinstance(a, AgentReply) for a in actions)
    assert [a.text for a in actions] == [t.text for t in agent_turns]
    assert all(e.agent == "scripted:exhaustive" and e.score["optimal"] for e in episodes)


def test_the_loops_chat_of_a_turn_agent_is_openai_messages(sample):
    """The loop keeps the chat every driver reads as OpenAI-style messages: a turn agent's reply
    is its assistant message in the JSON response format, between the user's messages."""
    import json

    from travelgym.runner.loop import play
    from travelgym.suites.compass.agents.turn_policy import TurnPolicy
    from travelgym.suites.compass.environment import CompassTrainingEnv

    conn, tasks, truths = sample
    env = CompassTrainingEnv(conn, tasks[:1], truths, rank=False, keep_results=False,
                             max_steps_per_turn=1)  # fmt: skip
    played = asyncio.run(play(env, TurnPolicy(ScriptedAgent("greedy")), seed=0))
    env.close()
    assert all(isinstance(m, dict) and m["role"] in ("system", "user", "assistant")
               for m in played.messages)  # fmt: skip
    said = [json.loads(m["content"]) for m in played.messages if m["role"] == "assistant"]
    assert said and said[-1]["recommendation"] == played.episode.final_recommendation
    assert [s["message"] for s in said] == [t.text for t in played.episode.turns
                                            if t.role == "agent"]  # fmt: skip
