"""One OpenAIChatClient over two local servers of the same model: requests balanced by requests
in flight, a failing server (5xx, reset, refused, silent) costing only retries on the other,
and one budget counting each call once."""

from __future__ import annotations

import asyncio
import random
import socket

import anyio
import pytest

from tests.fakes.openai_server import Delay, FakeOpenAIServer, Hang, HTTPError, Reply, Reset
from travelgym.llm import ChatMessage, LLMError, OpenAIChatClient, RunBudget

pytestmark = pytest.mark.anyio

USER = [ChatMessage(role="user", content="Plan a trip to Zion.")]
USAGE = (10, 2)


@pytest.fixture
def anyio_backend():
    return "asyncio"


async def no_sleep(seconds: float) -> None:
    return None


def make(urls, **kwargs) -> OpenAIChatClient:
    kwargs.setdefault("timeout_s", 5)
    kwargs.setdefault("max_retries", 3)
    return OpenAIChatClient("fake-model", base_url=list(urls), sleep=no_sleep,
                            rng=random.Random(0), **kwargs)  # fmt: skip


def echo(delay: float = 0.0):
    """Replies that depend on the request only (so any server gives the same answer)."""

    def respond(body: dict):
        reply = Reply(f"re: {body['messages'][-1]['content']}", usage=USAGE)
        return Delay(delay, reply) if delay else reply

    return respond


def closed_port_url() -> str:
    """A URL nothing listens on (connection refused)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


async def ask(client, text: str = "Plan a trip to Zion."):
    with anyio.fail_after(20):
        return await client.complete([ChatMessage(role="user", content=text)])


async def test_concurrent_requests_are_shared_and_in_flight_balanced():
    budget = RunBudget()
    with FakeOpenAIServer(responder=echo(0.3)) as a, FakeOpenAIServer(responder=echo(0.3)) as b:
        client = make([a.base_url, b.base_url], budget=budget)
        try:
            replies = await asyncio.gather(*(ask(client, f"q{i}") for i in range(8)))
        finally:
            await client.aclose()
    assert [r.message.content for r in replies] == [f"re: q{i}" for i in range(8)]
    assert len(a.requests) == len(b.requests) == 4
    stats = client.endpoint_stats()
    assert [s["peak_in_flight"] for s in stats] == [4, 4]
    assert [s["in_flight"] for s in stats] == [0, 0]
    assert budget.calls == 8 and budget.total_tokens == 8 * sum(USAGE)


async def test_sequential_requests_go_round_and_a_slow_server_gets_fewer():
    with FakeOpenAIServer(responder=echo()) as a, FakeOpenAIServer(responder=echo()) as b:
        client = make([a.base_url, b.base_url])
        try:
            for i in range(4):
                await ask(client, f"q{i}")
        finally:
            await client.aclose()
    assert [r["messages"][0]["content"] for r in a.requests] == ["q0", "q2"]
    assert [r["messages"][0]["content"] for r in b.requests] == ["q1", "q3"]
    # by requests in flight, not in turn: the fast server takes what the slow one cannot
    with FakeOpenAIServer(responder=echo(0.6)) as slow, FakeOpenAIServer(responder=echo()) as fast:
        client = make([slow.base_url, fast.base_url])
        gate = asyncio.Semaphore(2)

        async def one(i: int) -> None:
            async with gate:
                await ask(client, f"q{i}")

        try:
            await asyncio.gather(*(one(i) for i in range(12)))
        finally:
            await client.aclose()
    assert 1 <= len(slow.requests) < len(fast.requests)
    assert len(slow.requests) + len(fast.requests) == 12


FAILURES = {
    "5xx": lambda: [HTTPError(503, "overloaded")] * 20,
    "reset": lambda: [Reset(b'{"id": "x", "choices": [')] * 20,
    "silent": lambda: [Hang()] * 20,
}


@pytest.mark.parametrize("kind", [*FAILURES, "refused"])
async def test_a_failing_server_costs_only_a_retry_on_the_other(kind):
    budget = RunBudget()
    with (
        FakeOpenAIServer(responder=echo()) as good,
        FakeOpenAIServer(FAILURES.get(kind, list)(), abortive_close=True) as bad,
    ):
        bad_url = closed_port_url() if kind == "refused" else bad.base_url
        client = make([bad_url, good.base_url], budget=budget, timeout_s=1.0,
                      endpoint_down_s=30)  # fmt: skip
        try:
            replies = [await ask(client, f"q{i}") for i in range(5)]
        finally:
            await client.aclose()
    assert [r.message.content for r in replies] == [f"re: q{i}" for i in range(5)]
    # the first call's attempt on the bad server failed and went to the good one; the bad
    # server, set aside, saw nothing more
    assert replies[0].attempts == 2 and all(r.attempts == 1 for r in replies[1:])
    assert len(bad.requests) == (0 if kind == "refused" else 1)
    assert len(good.requests) == 5
    bad_stats, good_stats = client.endpoint_stats()
    assert bad_stats["failures"] == 1 and good_stats["failures"] == 0
    # one budget, each call counted once whatever its retries, the tokens of the replies exactly
    assert budget.calls == 5 and budget.total_tokens == 5 * sum(USAGE)
    assert client.stats.attempts == 6 and client.stats.failed_calls == 0


async def test_a_server_set_aside_comes_back_when_its_time_is_over():
    now = [0.0]
    with (
        FakeOpenAIServer([HTTPError(500)], responder=echo()) as a,
        FakeOpenAIServer(responder=echo()) as b,
    ):
        client = make([a.base_url, b.base_url], endpoint_down_s=10, clock=lambda: now[0])
        try:
            await ask(client, "q0")  # A fails (500), B answers
            for i in range(1, 4):
                await ask(client, f"q{i}")
            assert len(a.requests) == 1 and len(b.requests) == 4
            now[0] = 10.5  # A is back
            await ask(client, "q4")
            await ask(client, "q5")
        finally:
            await client.aclose()
    assert [r["messages"][0]["content"] for r in a.requests] == ["q0", "q4"]
    assert len(b.requests) == 5


async def test_every_server_failing_is_one_error_naming_a_server_after_the_retries():
    with (
        FakeOpenAIServer(responder=lambda body: HTTPError(502)) as a,
        FakeOpenAIServer(responder=lambda body: HTTPError(502)) as b,
    ):
        client = make([a.base_url, b.base_url], max_retries=3)
        try:
            with pytest.raises(LLMError) as caught:
                await ask(client)
        finally:
            await client.aclose()
    assert caught.value.category == "server"
    assert "(after 4 attempts)" in str(caught.value)
    assert a.base_url in str(caught.value) or b.base_url in str(caught.value)
    assert len(a.requests) + len(b.requests) == 4 and a.requests and b.requests
