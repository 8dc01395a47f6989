"""A server of a pool that does not serve the model (a 404 or model-not-found error, a body that
is not a completion) is set aside like a dead one and the call answered by another; with one
server, or for a 400 about the request itself, these stay errors of the call as before."""

from __future__ import annotations

import asyncio
import json

import anyio
import pytest

from tests.fakes.openai_server import FakeOpenAIServer, Raw, Reply
from tests.llm.test_multi_url import USAGE, anyio_backend  # noqa: F401 - the fixture
from tests.llm.test_multi_url import make as make_pool
from travelgym.llm import ChatMessage, LLMError, OpenAIChatClient, RunBudget

pytestmark = pytest.mark.anyio


def make(urls, **kwargs) -> OpenAIChatClient:
    """The pool client of ``tests/llm/test_multi_url.py``, a server set aside for 30 s."""
    kwargs.setdefault("endpoint_down_s", 30)
    return make_pool(urls, **kwargs)


async def failure(client: OpenAIChatClient) -> LLMError:
    """The error one call of ``client`` fails with (the client closed after)."""
    try:
        with pytest.raises(LLMError) as caught:
            await ask(client, "q")
    finally:
        await client.aclose()
    return caught.value


def echo(body: dict) -> Reply:
    return Reply(f"re: {body['messages'][-1]['content']}", usage=USAGE)


def error_body(status: int, **error) -> Raw:
    return Raw(json.dumps({"error": error}).encode(), status=status)


#: vLLM restarted with another model (its own error shape: type NotFoundError, code 404)
VLLM_NO_MODEL = error_body(404, message="The model `fake-model` does not exist.",
                           type="NotFoundError", param=None, code=404)  # fmt: skip
#: OpenAI's shape of the same, as a 400 (``param`` or ``code`` names the model)
OPENAI_NO_MODEL = error_body(400, message="The model does not exist.",
                             type="invalid_request_error", param="model",
                             code="model_not_found")  # fmt: skip
HTML = Raw(b"<html><body><h1>Welcome to nginx!</h1></body></html>", content_type="text/html")
NO_CHOICES = Raw(json.dumps({"object": "chat.completion", "choices": []}).encode())
#: vLLM's context-length error: about the request, so every server gives it
CONTEXT_LENGTH = error_body(400, message="This model's maximum context length is 4096 tokens.",
                            type="BadRequestError", param=None, code=400)  # fmt: skip

WRONG = {"404": VLLM_NO_MODEL, "400_model": OPENAI_NO_MODEL, "html": HTML,
         "no_choices": NO_CHOICES}  # fmt: skip
#: the category each wrong answer has with one server (as before)
ALONE = {"404": "bad_request", "400_model": "bad_request", "html": "bad_response",
         "no_choices": "bad_response"}  # fmt: skip


async def ask(client, text: str):
    with anyio.fail_after(20):
        return await client.complete([ChatMessage(role="user", content=text)])


@pytest.mark.parametrize("kind", WRONG)
async def test_a_server_without_the_model_is_set_aside_and_no_call_fails(kind):
    budget = RunBudget()
    with (
        FakeOpenAIServer(responder=lambda body: WRONG[kind]) as bad,
        FakeOpenAIServer(responder=echo) as good,
    ):
        client = make([bad.base_url, good.base_url], budget=budget)
        try:
            replies = await asyncio.gather(*(ask(client, f"q{i}") for i in range(20)))
            set_aside = client.pool.is_down(client.pool.endpoints[0])
        finally:
            await client.aclose()
    assert [r.message.content for r in replies] == [f"re: q{i}" for i in range(20)]
    assert set_aside
    # the attempts that went to the bad server before it was set aside were retried on the good
    # one; each call counted once, with the tokens of the reply used
    assert 1 <= len(bad.requests) <= 10 and len(good.requests) == 20
    assert all(r.attempts <= 2 for r in replies)
    assert sum(r.attempts for r in replies) == 20 + len(bad.requests)
    bad_stats, good_stats = client.endpoint_stats()
    assert bad_stats["failures"] == len(bad.requests) and good_stats["failures"] == 0
    assert budget.calls == 20 and budget.total_tokens == 20 * sum(USAGE)
    assert client.stats.failed_calls == 0


@pytest.mark.parametrize("kind", WRONG)
async def test_one_server_alone_fails_the_call_as_before(kind):
    with FakeOpenAIServer(responder=lambda body: WRONG[kind]) as only:
        error = await failure(make([only.base_url]))
    assert error.category == ALONE[kind]
    assert len(only.requests) == 1  # not retried
    assert "after" not in str(error)


@pytest.mark.parametrize("kind", ["404", "html"])
async def test_every_server_answering_wrong_fails_once_each_has_answered(kind):
    """A model name no server has (a typo): each server is tried once, then the call fails
    with the category it has with one server, not after all the retries."""
    with (
        FakeOpenAIServer(responder=lambda body: WRONG[kind]) as a,
        FakeOpenAIServer(responder=lambda body: WRONG[kind]) as b,
    ):
        error = await failure(make([a.base_url, b.base_url], max_retries=5))
    assert error.category == ALONE[kind]
    assert len(a.requests) == len(b.requests) == 1
    assert "(after 2 attempts)" in str(error)


async def test_a_400_about_the_request_sets_no_server_aside():
    with (
        FakeOpenAIServer(responder=lambda body: CONTEXT_LENGTH) as a,
        FakeOpenAIServer(responder=echo) as b,
    ):
        client = make([a.base_url, b.base_url])
        try:
            with pytest.raises(LLMError) as caught:
                await ask(client, "q0")  # to A (the first): a request error, not retried
            assert await ask(client, "q1")  # to B, in turn
            with pytest.raises(LLMError):
                await ask(client, "q2")  # A again: it was not set aside
            down = [client.pool.is_down(e) for e in client.pool.endpoints]
        finally:
            await client.aclose()
    assert caught.value.category == "bad_request" and "maximum context length" in str(caught.value)
    assert len(a.requests) == 2 and len(b.requests) == 1
    assert down == [False, False]
    assert [s["failures"] for s in client.endpoint_stats()] == [0, 0]
