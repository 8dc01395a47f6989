"""OpenAIChatClient against a real local HTTP server speaking the OpenAI protocol."""

from __future__ import annotations

import json
import random
import socket
import sys
import urllib.request
from email.utils import formatdate

import anyio
import pytest

from tests.fakes.openai_server import Delay, FakeOpenAIServer, HTTPError, Reply, tool_call
from travelgym.llm import (
    ChatClient,
    ChatMessage,
    LLMError,
    OpenAIChatClient,
    ResponseCache,
    RunBudget,
    make_client,
)
from travelgym.llm.base import parse_completion
from travelgym.llm.cache import request_key
from travelgym.llm.retry import RetryPolicy, parse_retry_after

pytestmark = pytest.mark.anyio

USER = [ChatMessage(role="user", content="Plan a trip to Yosemite.")]
SEARCH_TOOL = {
    "type": "function",
    "function": {
        "name": "search_hotels",
        "description": "Find hotels near a park.",
        "parameters": {"type": "object", "properties": {"park": {"type": "string"}}},
    },
}


@pytest.fixture
def anyio_backend():
    return "asyncio"


class Sleeps(list):
    """A no-op sleep that records the requested waits."""

    async def __call__(self, seconds: float) -> None:
        self.append(seconds)


@pytest.fixture
def server():
    with FakeOpenAIServer() as srv:
        yield srv


@pytest.fixture
def sleeps():
    return Sleeps()


@pytest.fixture
async def client_for(server, sleeps):
    made: list[OpenAIChatClient] = []

    def make(**kwargs) -> OpenAIChatClient:
        kwargs.setdefault("timeout_s", 5)
        kwargs.setdefault("max_retries", 3)
        client = OpenAIChatClient(
            "fake-model", base_url=server.base_url, sleep=sleeps, rng=random.Random(0), **kwargs
        )
        made.append(client)
        return client

    yield make
    for client in made:
        await client.aclose()


async def ask(client, messages=USER, **kwargs):
    with anyio.fail_after(10):
        return await client.complete(messages, **kwargs)


async def test_plain_reply_and_usage(server, client_for):
    server.push(Reply("Yosemite in May.", usage=(42, 7)))
    client = client_for(default_params={"temperature": 0})
    assert isinstance(client, ChatClient)
    resp = await ask(client, seed=3, top_k=5)
    assert resp.message.role == "assistant"
    assert resp.message.content == "Yosemite in May."
    assert resp.message.tool_calls == []
    assert (resp.usage.prompt_tokens, resp.usage.completion_tokens) == (42, 7)
    assert resp.finish_reason == "stop"
    assert resp.model == "fake-model"
    assert resp.attempts == 1 and not resp.cached and resp.latency_s > 0
    sent = server.requests[0]
    assert sent["model"] == "fake-model"
    assert sent["messages"] == [{"role": "user", "content": "Plan a trip to Yosemite."}]
    assert sent["temperature"] == 0 and sent["seed"] == 3
    assert sent["top_k"] == 5  # unknown to the SDK: sent through extra_body
    assert "tools" not in sent
    assert server.headers[0]["authorization"] == "Bearer EMPTY"
    assert client.stats.calls == 1 and client.stats.usage.total_tokens == 49


async def test_parallel_and_malformed_tool_calls_kept_raw(server, client_for):
    bad = '{"park": "Yosemite", '
    server.push(
        Reply(
            None,
            [
                tool_call("search_hotels", {"park": "Zion"}, id="c1"),
                tool_call("search_hotels", bad, id="c2"),
                tool_call("search_flights", "not json at all", id="c3"),
            ],
        ),
        Reply("Done."),
    )
    client = client_for()
    resp = await ask(client, tools=[SEARCH_TOOL])
    calls = resp.message.tool_calls
    assert [(c.id, c.name) for c in calls] == [
        ("c1", "search_hotels"),
        ("c2", "search_hotels"),
        ("c3", "search_flights"),
    ]
    assert json.loads(calls[0].arguments) == {"park": "Zion"}
    assert calls[1].arguments == bad
    assert calls[2].arguments == "not json at all"
    assert resp.finish_reason == "tool_calls"
    assert server.requests[0]["tools"] == [SEARCH_TOOL]
    # The malformed call goes back to the model verbatim in the next turn.
    follow = [
        *USER,
        resp.message,
        ChatMessage(role="tool", tool_call_id="c1", content="[]"),
        ChatMessage(role="tool", tool_call_id="c2", content="error: bad JSON"),
        ChatMessage(role="tool", tool_call_id="c3", content="error: bad JSON"),
    ]
    await ask(client, follow, tools=[SEARCH_TOOL])
    sent = server.requests[1]["messages"]
    assert sent[1]["tool_calls"][1]["function"]["arguments"] == bad
    assert [m.get("tool_call_id") for m in sent[2:]] == ["c1", "c2", "c3"]


async def test_responder_drives_multi_turn_agent(server, client_for):
    def responder(body):
        if body["messages"][-1]["role"] == "tool":
            return Reply("Book the Ahwahnee.")
        return Reply(None, [tool_call("search_hotels", {"park": "Yosemite"}, id="s1")])

    server.responder = responder
    client = client_for()
    messages = list(USER)
    for _ in range(4):
        resp = await ask(client, messages, tools=[SEARCH_TOOL])
        messages.append(resp.message)
        if not resp.message.tool_calls:
            break
        for call in resp.message.tool_calls:
            messages.append(ChatMessage(role="tool", tool_call_id=call.id, content="[]"))
    assert messages[-1].content == "Book the Ahwahnee."
    assert len(server.requests) == 2


async def test_429_honours_retry_after(server, client_for, sleeps):
    server.push(HTTPError(429, retry_after=1.5), Reply("ok"))
    resp = await ask(client_for())
    assert resp.message.content == "ok" and resp.attempts == 2
    assert sleeps == [1.5]
    assert len(server.requests) == 2


async def test_retry_after_is_capped(server, client_for, sleeps):
    server.push(HTTPError(429, retry_after=3600), Reply("ok"))
    resp = await ask(client_for(backoff_max_s=2))
    assert resp.attempts == 2 and sleeps == [2]


async def test_500_500_then_success_with_jittered_backoff(server, client_for, sleeps):
    server.push(HTTPError(500), HTTPError(503), Reply("ok"))
    resp = await ask(client_for(backoff_base_s=0.5, backoff_max_s=20))
    assert resp.message.content == "ok" and resp.attempts == 3
    assert len(sleeps) == 2
    assert 0 <= sleeps[0] <= 0.5 and 0 <= sleeps[1] <= 1.0


async def test_persistent_500_fails_after_max_retries(server, client_for, sleeps):
    server.push(*[HTTPError(500, "boom")] * 10)
    client = client_for(max_retries=3)
    with pytest.raises(LLMError) as err:
        await ask(client)
    assert err.value.category == "server"
    assert "4 attempts" in str(err.value)
    assert len(server.requests) == 4 and len(sleeps) == 3
    assert client.stats.failed_calls == 1


async def test_timeout(server, client_for):
    server.push(Delay(5), Delay(5))
    with pytest.raises(LLMError) as err:
        await ask(client_for(timeout_s=0.3, max_retries=1))
    assert err.value.category == "timeout"
    assert len(server.requests) == 2


@pytest.mark.parametrize(
    ("status", "category"),
    [(400, "bad_request"), (404, "bad_request"), (401, "auth"), (403, "auth")],
)
async def test_client_errors_are_not_retried(server, client_for, sleeps, status, category):
    server.push(HTTPError(status, "nope"), Reply("never"))
    with pytest.raises(LLMError) as err:
        await ask(client_for())
    assert err.value.category == category
    assert "nope" in str(err.value)
    assert len(server.requests) == 1 and sleeps == []


async def test_connection_error(sleeps):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    client = OpenAIChatClient(
        "m", base_url=f"http://127.0.0.1:{port}/v1", timeout_s=2, max_retries=2, sleep=sleeps
    )
    async with client:
        with pytest.raises(LLMError) as err:
            await ask(client)
    assert err.value.category == "connection" and len(sleeps) == 2


async def test_reply_without_choices_is_bad_response(server, client_for):
    server.push({"id": "x", "object": "chat.completion", "choices": []})
    with pytest.raises(LLMError) as err:
        await ask(client_for())
    assert err.value.category == "bad_response"


async def test_budget_caps_calls(server, client_for):
    budget = RunBudget(max_calls=2)
    server.responder = lambda body: Reply("ok", usage=(10, 5))
    first, second = client_for(budget=budget), client_for(budget=budget)
    await ask(first)
    await ask(second)
    with pytest.raises(LLMError) as err:
        await ask(first)
    assert err.value.category == "budget"
    assert len(server.requests) == 2
    assert budget.snapshot()["calls"] == 2 and budget.total_tokens == 30


async def test_budget_caps_tokens(server, client_for):
    budget = RunBudget(max_tokens=100)
    server.push(Reply("a", usage=(60, 10)), Reply("b", usage=(30, 5)), Reply("c"))
    client = client_for(budget=budget)
    await ask(client)
    await ask(client)  # 70 < 100: allowed, reaches 105
    with pytest.raises(LLMError) as err:
        await ask(client)
    assert err.value.category == "budget"
    assert (budget.prompt_tokens, budget.completion_tokens) == (90, 15)
    assert len(server.requests) == 2


async def test_budget_is_safe_under_concurrency(server, client_for):
    budget = RunBudget(max_calls=3)
    server.responder = lambda body: Delay(0.05, Reply("ok"))
    client = client_for(budget=budget)
    outcomes: list[str] = []

    async def one():
        try:
            await ask(client)
            outcomes.append("ok")
        except LLMError as exc:
            outcomes.append(exc.category)

    async with anyio.create_task_group() as tg:
        for _ in range(6):
            tg.start_soon(one)
    assert sorted(outcomes) == ["budget"] * 3 + ["ok"] * 3
    assert len(server.requests) == 3


async def test_cache_hit_skips_server_and_budget(server, client_for, tmp_path):
    cache = ResponseCache(tmp_path / "cache")
    budget = RunBudget(max_calls=1)
    server.push(Reply("cached answer", [tool_call("search_hotels", '{"park": ', id="k")]))
    client = client_for(cache=cache, budget=budget)
    first = await ask(client, tools=[SEARCH_TOOL], temperature=0)
    again = await ask(client, tools=[SEARCH_TOOL], temperature=0)
    assert not first.cached and again.cached
    assert again.message == first.message and again.usage == first.usage
    assert again.model == first.model and again.finish_reason == first.finish_reason
    assert len(server.requests) == 1
    assert budget.calls == 1 and budget.cached_calls == 1
    # A fresh client sharing the cache directory also hits (the budget would refuse a call).
    other = client_for(cache=ResponseCache(tmp_path / "cache"), budget=budget)
    assert (await ask(other, tools=[SEARCH_TOOL], temperature=0)).cached
    # Different params are a different request.
    with pytest.raises(LLMError, match="budget"):
        await ask(client, tools=[SEARCH_TOOL], temperature=1)


async def test_corrupt_cache_entry_is_a_miss(server, client_for, tmp_path):
    cache = ResponseCache(tmp_path)
    key = request_key("fake-model", USER, None, {})
    path = cache.path_for(key)
    path.parent.mkdir(parents=True)
    path.write_text('{"message": {"role": "assis')
    server.push(Reply("fresh"))
    resp = await ask(client_for(cache=cache))
    assert resp.message.content == "fresh" and not resp.cached
    assert len(server.requests) == 1
    assert cache.get(key).message.content == "fresh"  # rewritten atomically
    assert not list(path.parent.glob("*.tmp"))


def test_models_endpoint():
    with (
        FakeOpenAIServer() as srv,
        urllib.request.urlopen(srv.base_url + "/models", timeout=5) as r,
    ):
        assert json.load(r)["data"][0]["id"] == "fake-model"


def test_config_from_environment(monkeypatch):
    for name in ("TRAVELGYM_API_KEY", "OPENAI_API_KEY", "TRAVELGYM_BASE_URL", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(LLMError, match="auth"):
        OpenAIChatClient("gpt-x")
    monkeypatch.setenv("TRAVELGYM_MODEL", "env-model")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    client = OpenAIChatClient()
    assert client.model == "env-model" and client.base_url == "http://127.0.0.1:9/v1"
    monkeypatch.setenv("TRAVELGYM_BASE_URL", "http://127.0.0.1:8/v1")
    assert OpenAIChatClient("m").base_url == "http://127.0.0.1:8/v1"


def test_retry_policy_and_retry_after_parsing():
    policy = RetryPolicy(backoff_base_s=1, backoff_max_s=4, rng=random.Random(1))
    for attempt in range(1, 8):
        assert 0 <= policy.delay(attempt) <= min(4, 2 ** (attempt - 1))
    assert policy.delay(1, retry_after_s=10) == 4
    assert parse_retry_after({"Retry-After": "2"}) == 2
    assert parse_retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert 0 <= parse_retry_after({"Retry-After": formatdate(usegmt=True)}) <= 1
    assert parse_retry_after({"Retry-After": "soon"}) is None
    assert parse_retry_after(None) is None


def test_parse_completion_tolerates_odd_servers():
    resp = parse_completion(
        {
            "choices": [
                {
                    "message": {
                        "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
                        "tool_calls": [{"function": {"name": "f", "arguments": {"x": 1}}}],
                    }
                }
            ]
        },
        "m",
    )
    assert resp.message.content == "ab" and resp.model == "m"
    assert resp.message.tool_calls[0].arguments == '{"x": 1}'
    assert resp.message.tool_calls[0].id == "call_0"
    assert resp.usage.total_tokens == 0
    with pytest.raises(LLMError, match="bad_response"):
        parse_completion("oops")


def test_factory_and_missing_litellm(monkeypatch):
    client = make_client("Qwen/Qwen3-8B", base_url="http://127.0.0.1:9/v1", timeout_s=3)
    assert isinstance(client, OpenAIChatClient) and client.model == "Qwen/Qwen3-8B"
    monkeypatch.setitem(sys.modules, "litellm", None)  # makes `import litellm` fail
    with pytest.raises(ImportError, match=r"pip install 'travelgym\[litellm\]'"):
        make_client("litellm/anthropic/claude-sonnet-4")


def test_a_client_left_open_is_dropped_without_touching_another_loop(server):
    """A client used in one event loop and never closed is collected while another loop runs:
    nothing is scheduled on that loop (the SDK's own wrapper would close the pool there, and
    its connection, made on the closed loop, fails with "Event loop is closed")."""
    import asyncio
    import gc

    server.push(Reply("hello"))
    holder = [OpenAIChatClient("fake-model", base_url=server.base_url, timeout_s=5,
                               max_retries=0, rng=random.Random(0))]  # fmt: skip

    async def use() -> str:
        return (await holder[0].complete(USER)).message.content

    assert asyncio.run(use()) == "hello"  # a pooled connection now belongs to a closed loop
    errors: list[dict] = []

    async def collect() -> int:
        asyncio.get_running_loop().set_exception_handler(lambda _, context: errors.append(context))
        before = len(asyncio.all_tasks())
        holder.clear()
        gc.collect()
        scheduled = len(asyncio.all_tasks()) - before
        for _ in range(5):
            await asyncio.sleep(0)
        return scheduled

    assert asyncio.run(collect()) == 0
    gc.collect()
    assert errors == []
