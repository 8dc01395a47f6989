"""Solve-once agents (the scripted baseline, the oracle, ReAct) are played by the one episode loop
(:func:`travelgym.runner.loop.play`, a :class:`~travelgym.runner.loop.SolverPolicy`) over
:class:`~travelgym.suites.behavior2trip.environment.TripTrainingEnv`, and their episode is the
one their own ``solve`` over a fresh tool session gives: the same score, termination, tool
calls and steps; a solver that gives up or fails ends its one act as before."""

from __future__ import annotations

import asyncio

import pytest

from travelgym.db import connect_readonly
from travelgym.llm.protocol import ChatMessage, ChatResponse, LLMError, Usage
from travelgym.runner.loop import SolverPolicy, play
from travelgym.suites.behavior2trip.agents.base import TripRequest, TripToolSession
from travelgym.suites.behavior2trip.agents.oracle import OracleTripAgent
from travelgym.suites.behavior2trip.agents.react import ReactAgent
from travelgym.suites.behavior2trip.agents.scripted import ScriptedTripAgent
from travelgym.suites.behavior2trip.clarify import enable_clarification
from travelgym.suites.behavior2trip.clarify_user import SimulatedUser
from travelgym.suites.behavior2trip.environment import TripTrainingEnv
from travelgym.suites.behavior2trip.episode import run_trip_episode
from travelgym.suites.behavior2trip.instances import ensure_instances, load_instances
from travelgym.suites.behavior2trip.scoring import score_plan


@pytest.fixture(scope="module")
def sample(trips_database):
    """Two instances of each level."""
    paths = ensure_instances(trips_database, trips_database.path.parent.parent, splits=("test",))
    instances = load_instances(paths["test"], check=False)
    return [x for level in ("easy", "medium", "hard")
            for x in [y for y in instances if y.difficulty == level][::60][:2]]  # fmt: skip


@pytest.fixture(scope="module")
def conn(trips_db):
    c = connect_readonly(trips_db)
    yield c
    c.close()


def calls(steps) -> list[tuple]:
    return [(c.name, c.arguments, c.ok, c.result) for s in steps for c in s.tool_calls]


def solved(agent, instance, conn, withhold: bool = False, user=None):
    """The agent's own ``solve`` over a fresh tool session: ``(session, plan)``."""
    session = TripToolSession(conn, keep_results=getattr(agent, "keep_results", True))
    if user is not None:
        enable_clarification(session, user)
    request = TripRequest.of(instance, withhold=withhold,
                             ask_limit=user.log.limit if user is not None else 0)  # fmt: skip
    inputs = {"profile": instance.profile} if getattr(agent, "reads_hidden_profile", False) else {}
    return session, asyncio.run(agent.solve(request, session, **inputs))


@pytest.mark.parametrize("agent_class", [ScriptedTripAgent, OracleTripAgent])
def test_a_solver_episode_through_the_loop_is_its_own_solve(agent_class, sample, conn, applied):
    for x in sample:
        applied.clear()
        episode = asyncio.run(run_trip_episode(x, agent_class(), conn, seed=2, trial=1))
        assert applied == ["TripTrainingEnv"]  # one act, applied through the loop's body
        session, plan = solved(agent_class(), x, conn)
        assert plan is not None and episode.final_answer == f"<answer>{plan}</answer>"
        assert episode.score == score_plan(x, episode.final_answer, conn)
        assert episode.termination == "answered" and episode.outcome == "completed"
        assert episode.error is None and (episode.seed, episode.trial) == (2, 1)
        assert calls(episode.steps) == calls(session.steps) and episode.tool_calls > 0
        assert [s.text for s in episode.steps] == [s.text for s in session.steps]
        assert episode.messages == session.messages == []  # a scripted solver writes no chat
        assert episode.agent == agent_class().name and episode.llm_calls == 0


class Replies:
    """A chat client answering with the given texts in order, each call costing 10 + 3 tokens."""

    model = "replies"

    def __init__(self, texts: list[str]) -> None:
        self.texts = list(texts)

    async def complete(self, messages, **params) -> ChatResponse:
        message = ChatMessage(role="assistant", content=self.texts.pop(0))
        return ChatResponse(message=message, usage=Usage(prompt_tokens=10, completion_tokens=3))


def test_a_react_episode_through_the_loop_keeps_its_chat_and_usage(sample, conn, applied):
    x = sample[1]
    city = x.instruction.destination_city
    texts = [f'Thought: hotels.\nAction: {{"name": "AccommodationSearch", "arguments": '
             f'{{"city": "{city}", "n": 1}}}}', "Thought: bad.\nAction: Finish", "Thought: done.\n"
             "Action: Finish[[]]"]  # fmt: skip
    episode = asyncio.run(run_trip_episode(x, ReactAgent(Replies(texts)), conn))
    assert applied == ["TripTrainingEnv"]
    session, plan = solved(ReactAgent(Replies(texts)), x, conn)
    assert plan == "[]" and episode.final_answer == "<answer>[]</answer>"
    assert episode.termination == "answered" and episode.invalid_actions == 1
    assert calls(episode.steps) == calls(session.steps) and len(episode.steps) == 3
    assert episode.messages == session.messages and episode.messages[0]["role"] == "system"
    assert episode.llm_calls == session.llm_calls == 3
    assert episode.usage == session.usage == Usage(prompt_tokens=30, completion_tokens=9)
    assert episode.score == score_plan(x, episode.final_answer, conn)


def test_the_clarifying_scripted_agent_through_the_loop(sample, conn, applied):
    """RQ1: the trajectory withheld, the simulated user's ask limit in the request, its
    ``AskUser`` calls recorded in the episode as in the agent's own solve."""
    x = sample[3]
    user = SimulatedUser(x.profile, 3, None, "template")
    episode = asyncio.run(
        run_trip_episode(x, ScriptedTripAgent(), conn, withhold_trajectory=True, user=user)
    )
    assert applied == ["TripTrainingEnv"]
    session, plan = solved(ScriptedTripAgent(), x, conn, withhold=True,
                           user=SimulatedUser(x.profile, 3, None, "template"))  # fmt: skip
    assert episode.final_answer == f"<answer>{plan}</answer>" and episode.trajectory_withheld
    assert calls(episode.steps) == calls(session.steps)
    assert "AskUser" in {name for name, *_ in calls(episode.steps)}
    assert episode.clarification is not None and episode.clarification.turns > 0


def test_keep_results_and_the_profile_are_the_agents(sample, conn):
    x = sample[0]
    kept = asyncio.run(run_trip_episode(x, ScriptedTripAgent(), conn, keep_results=True))
    dropped = asyncio.run(run_trip_episode(x, ScriptedTripAgent(), conn))
    assert all(c.result is not None for s in kept.steps for c in s.tool_calls)
    assert all(c.result is None for s in dropped.steps for c in s.tool_calls)
    seen = []

    class Reader:
        name = "reader"
        reads_hidden_profile = True

        async def solve(self, request, session, **inputs):
            seen.append(inputs)

    asyncio.run(run_trip_episode(x, Reader(), conn))
    assert seen == [{"profile": x.profile}]


class GivesUp:
    name = "gives-up"

    def __init__(self, failure: Exception | None = None) -> None:
        self.failure, self.solves = failure, 0

    async def solve(self, request, session):
        self.solves += 1
        await session.acall("WeatherSearch", {"city": request.instruction.destination_city})
        session.add_step(text="looked at the weather")
        if self.failure is not None:
            raise self.failure
        return None


def test_a_solver_that_gives_up_or_fails_ends_its_one_act(sample, conn):
    x = sample[0]
    agent = GivesUp()
    env = TripTrainingEnv(conn, [x])  # 25 turns: a solver's episode still ends on its one act
    played = asyncio.run(play(env, SolverPolicy(agent), options={"instance_id": x.instance_id}))
    episode = played.episode
    assert agent.solves == 1 and played.turns == 1 and env.done
    assert episode.termination == "step_limit" and episode.final_answer is None
    assert episode.outcome == "model_error" and episode.cause == "step_limit"
    assert episode.score["delivered"] is False and len(episode.steps) == 1
    assert episode.tool_calls == 1
    for failure, error in (
        (LLMError("server", "down"), "agent: "),
        (ValueError("bug"), "ValueError: bug"),
    ):
        episode = asyncio.run(run_trip_episode(x, GivesUp(failure), conn))
        assert episode.termination == "error" and episode.error.startswith(error)
        assert episode.outcome == "infra_error" and episode.tool_calls == 1
        assert episode.score["delivered"] is False


def test_a_solvers_message_is_only_its_answer(sample, conn):
    env = TripTrainingEnv(conn, [sample[0]])
    env.reset(options={"index": 0})
    request, session, inputs = env.solver_inputs()
    assert request == TripRequest.of(sample[0]) and session is env.tools and inputs == {}
    with pytest.raises(ValueError, match="answer_message"):
        env.transition("<think>not an answer</think>")
    assert env.answer_message(None) == "" and env.answer_message("[]") == "<answer>[]</answer>"
    env.close()
