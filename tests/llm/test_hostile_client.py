"""OpenAIChatClient against a hostile local endpoint: deadlines that a dripping or hanging
server cannot stretch, replies that are refused (huge, not JSON, absurd), text that is repaired
(lone surrogates, invalid UTF-8) and usage that is estimated (missing, negative, not a number)."""

from __future__ import annotations

import json
import random
import time

import anyio
import pytest

from tests.fakes.hostile_server import (
    BEHAVIOURS,
    HUGE_BYTES,
    LONE,
    MANY_TOOL_CALLS,
    completion_bytes,
)
from tests.fakes.openai_server import (
    Drip,
    FakeOpenAIServer,
    Hang,
    HTTPError,
    Raw,
    Reply,
    Reset,
    tool_call,
)
from travelgym.llm import ChatMessage, LLMError, OpenAIChatClient, RunBudget

pytestmark = pytest.mark.anyio

USER = [ChatMessage(role="user", content="Plan a trip to Yosemite.")]


@pytest.fixture
def anyio_backend():
    return "asyncio"


async def _no_sleep(seconds: float) -> None:
    return None


@pytest.fixture
def server():
    with FakeOpenAIServer() as srv:
        yield srv


@pytest.fixture
async def client_for(server):
    made: list[OpenAIChatClient] = []

    def make(**kwargs) -> OpenAIChatClient:
        kwargs.setdefault("timeout_s", 5)
        kwargs.setdefault("max_retries", 0)
        kwargs.setdefault("sleep", _no_sleep)
        client = OpenAIChatClient("fake-model", base_url=server.base_url, rng=random.Random(0),
                                  **kwargs)  # fmt: skip
        made.append(client)
        return client

    yield make
    for client in made:
        await client.aclose()


async def ask(client, messages=USER, limit_s=10, **kwargs):
    with anyio.fail_after(limit_s):
        return await client.complete(messages, **kwargs)


async def failure(client, limit_s=10, **kwargs) -> tuple[LLMError, float]:
    start = time.monotonic()
    with pytest.raises(LLMError) as err:
        await ask(client, limit_s=limit_s, **kwargs)
    return err.value, time.monotonic() - start


# --- deadlines ------------------------------------------------------------------------------


async def test_byte_drip_is_cut_at_the_attempt_deadline(server, client_for):
    """Each read of a dripping body succeeds, so a per-read limit never fires (a 3 s limit
    lasted 30 s); the attempt deadline covers the whole body."""
    body = completion_bytes("slow")  # about 190 bytes: 48 s at 4 bytes a second
    server.push(Drip(body, interval_s=0.25))
    err, elapsed = await failure(client_for(timeout_s=1.0), limit_s=8)
    assert err.category == "timeout"
    assert "within 1s" in str(err)
    assert elapsed < 2.5


async def test_hang_without_headers_is_a_timeout(server, client_for):
    server.push(Hang(), Hang())
    err, elapsed = await failure(client_for(timeout_s=0.5, max_retries=1), limit_s=8)
    assert err.category == "timeout" and "2 attempts" in str(err)
    assert elapsed < 2.5 and len(server.requests) == 2


async def test_total_deadline_bounds_a_call_across_retries(server, client_for):
    server.responder = lambda body: Drip(completion_bytes(), interval_s=0.25)
    client = client_for(timeout_s=1.0, total_timeout_s=1.5, max_retries=5)
    err, elapsed = await failure(client, limit_s=8)
    assert err.category == "timeout"
    assert 1.4 < elapsed < 2.5  # six attempts of 1 s would take 6 s
    assert len(server.requests) == 2  # the second attempt got what was left: 0.5 s


async def test_total_deadline_stops_retrying_with_the_last_category(server):
    """500s until the total deadline: wherever it falls (in a wait between attempts or, on a
    loaded machine, in the middle of an attempt) the call fails as ``server``, the category of
    the attempts that completed, never ``timeout``."""
    server.responder = lambda body: HTTPError(500, "overloaded")
    client = OpenAIChatClient("fake-model", base_url=server.base_url, timeout_s=5,
                              total_timeout_s=1.5, max_retries=50, backoff_base_s=0.2,
                              backoff_max_s=0.3, rng=random.Random(0))  # fmt: skip
    async with client:
        err, elapsed = await failure(client, limit_s=8)
    assert err.category == "server" and "total deadline" in str(err), str(err)
    assert "overloaded" in str(err)
    # it gave up at most one wait (0.3 s) before the deadline and not long after it; 50
    # retries with their waits would take about 10 s
    assert 1.5 - 0.3 - 0.05 < elapsed < 3.5
    assert 2 <= len(server.requests) < 51


async def test_an_attempt_cut_short_by_the_total_deadline_keeps_the_last_category(server):
    """Two 500s, then a server that hangs: the total deadline ends the third attempt, which
    never completed, so the call reports the 500s (``server``) and says the deadline ended
    attempt 3. Deterministic: the deadline always falls inside the hang."""
    server.push(HTTPError(500, "overloaded"), HTTPError(500, "overloaded"), Hang())
    client = OpenAIChatClient("fake-model", base_url=server.base_url, timeout_s=30,
                              total_timeout_s=2.0, max_retries=5, backoff_base_s=0.01,
                              backoff_max_s=0.01, rng=random.Random(0))  # fmt: skip
    async with client:
        err, elapsed = await failure(client, limit_s=10)
    assert err.category == "server", str(err)
    assert "overloaded" in str(err)
    assert "after 3 attempts" in str(err) and "total deadline ended attempt 3" in str(err)
    assert 2.0 <= elapsed < 4.5 and len(server.requests) == 3


async def test_a_first_attempt_cut_short_by_the_total_deadline_is_a_timeout(server):
    server.push(Hang())
    client = OpenAIChatClient("fake-model", base_url=server.base_url, timeout_s=30,
                              total_timeout_s=0.5, max_retries=5, rng=random.Random(0))  # fmt: skip
    async with client:
        err, elapsed = await failure(client, limit_s=8)
    assert err.category == "timeout" and "total deadline ended its first attempt" in str(err)
    assert 0.5 <= elapsed < 2.5 and len(server.requests) == 1


async def test_an_attempt_past_its_own_deadline_is_a_timeout_then_retried(server):
    """The per-attempt deadline is not the total one: the hang fails as ``timeout`` (a real
    observation) and is retried; the 500 that follows is the last completed category."""
    server.push(Hang(), HTTPError(500, "overloaded"), Hang())
    client = OpenAIChatClient("fake-model", base_url=server.base_url, timeout_s=0.5,
                              total_timeout_s=30, max_retries=2, backoff_base_s=0.01,
                              backoff_max_s=0.01, rng=random.Random(0))  # fmt: skip
    async with client:
        err, _ = await failure(client, limit_s=8)
    assert err.category == "timeout" and "3 attempts" in str(err) and "total" not in str(err)
    assert len(server.requests) == 3


def test_deadlines_from_the_environment(monkeypatch):
    monkeypatch.setenv("TRAVELGYM_TIMEOUT_S", "2.5")
    monkeypatch.setenv("TRAVELGYM_TOTAL_TIMEOUT_S", "7")
    client = OpenAIChatClient("m", base_url="http://127.0.0.1:9/v1")
    assert (client.timeout_s, client.total_timeout_s) == (2.5, 7.0)
    assert OpenAIChatClient("m", base_url="http://127.0.0.1:9/v1", timeout_s=1).timeout_s == 1
    monkeypatch.setenv("TRAVELGYM_TIMEOUT_S", "soon")
    with pytest.raises(ValueError, match="TRAVELGYM_TIMEOUT_S='soon'"):
        OpenAIChatClient("m", base_url="http://127.0.0.1:9/v1")
    monkeypatch.delenv("TRAVELGYM_TIMEOUT_S")
    with pytest.raises(ValueError, match="total_timeout_s"):
        OpenAIChatClient("m", base_url="http://127.0.0.1:9/v1", total_timeout_s=-1)


# --- refused replies ------------------------------------------------------------------------


async def test_huge_body_is_refused(server, client_for):
    server.push(Raw(completion_bytes("x" * HUGE_BYTES)))
    err, _ = await failure(client_for())
    assert err.category == "bad_response" and "over the limit" in str(err)


async def test_a_body_declared_huge_is_refused_before_it_is_read(server, client_for):
    """The headers promise 10 MiB and one byte follows, then nothing: the client refuses on
    the ``Content-Length`` (a ``bad_response`` at once), it does not wait for the body."""
    server.push(Reset(b"{", length=HUGE_BYTES, pause_s=3))
    err, elapsed = await failure(client_for(timeout_s=5))
    assert err.category == "bad_response" and f"{HUGE_BYTES} bytes is over the limit" in str(err)
    assert elapsed < 2.5


async def test_a_huge_body_without_a_length_is_cut_at_the_limit(server, client_for):
    """Chunked, no ``Content-Length``, 1 MiB every 0.4 s: reading stops once the limit is
    passed (the 5th MiB, at 1.6 s), it does not wait 3.6 s for the other 5 MiB."""
    server.push(Drip(completion_bytes("x" * HUGE_BYTES), interval_s=0.4, chunk=1024 * 1024))
    err, elapsed = await failure(client_for(timeout_s=20), limit_s=30)
    assert err.category == "bad_response" and "more than 4194304 bytes" in str(err)
    assert 1.5 < elapsed < 3.2


async def test_a_connection_reset_mid_body_is_a_retried_connection_error():
    with FakeOpenAIServer(
        [Reset(completion_bytes()[:40]), Reply("ok")], abortive_close=True
    ) as srv:
        client = OpenAIChatClient("fake-model", base_url=srv.base_url, timeout_s=5,
                                  max_retries=1, sleep=_no_sleep)  # fmt: skip
        async with client:
            resp = await ask(client)
            assert resp.message.content == "ok" and resp.attempts == 2
            srv.push(Reset(completion_bytes()[:40]), Reset(completion_bytes()[:40]))
            err, _ = await failure(client)
    assert err.category == "connection"
    assert "broke while the reply was read: Connection reset by peer" in str(err)
    assert "2 attempts" in str(err) and len(srv.requests) == 4


async def test_thousands_of_tool_calls_are_refused(server, client_for):
    server.push(BEHAVIOURS["many_tool_calls"].respond({"messages": []}))
    err, _ = await failure(client_for())
    # the model's doing, not the endpoint's: an episode's model error (core.outcomes)
    assert err.category == "too_many_tool_calls" and f"{MANY_TOOL_CALLS} tool calls" in str(err)


@pytest.mark.parametrize(
    "body",
    [b'{"choices": [{"message": ', b"<html>502</html>", b"[" * 100_000, b""],
    ids=["truncated", "html", "nested_100k", "empty"],
)
async def test_bodies_that_are_not_json_are_bad_responses(server, client_for, body):
    server.push(Raw(body))
    err, _ = await failure(client_for())
    assert err.category == "bad_response" and "not JSON" in str(err)


async def test_odd_field_types_do_not_escape_as_bugs(server, client_for):
    server.push({"choices": [{"message": {"content": "ok"}, "finish_reason": 7}]})
    resp = await ask(client_for())
    assert resp.message.content == "ok" and resp.finish_reason is None


# --- repaired text --------------------------------------------------------------------------


async def test_lone_surrogates_in_a_reply_are_replaced_and_flagged(server, client_for):
    args = f'{{"park": "Zion{LONE}"}}'
    server.push(Reply(f"Hi {LONE}!", [tool_call(f"search{LONE}", args, id=f"c{LONE}")]))
    resp = await ask(client_for())
    call = resp.message.tool_calls[0]
    assert resp.message.content == "Hi \ufffd!"
    assert (call.id, call.name) == ("c\ufffd", "search\ufffd")
    assert json.loads(call.arguments) == {"park": "Zion\ufffd"}
    flagged = {(r.kind, r.where, r.count) for r in resp.repairs}
    assert {("invalid_unicode", w, 1) for w in ("content", "tool_calls[0].id",
            "tool_calls[0].name", "tool_calls[0].arguments")} <= flagged  # fmt: skip
    resp.model_dump_json().encode("utf-8")  # what the run store writes


async def test_surrogate_pairs_are_joined_not_replaced(server, client_for):
    server.push(Reply("\ud83d\ude00 and \U0001f600"))
    resp = await ask(client_for())
    assert resp.message.content == "\U0001f600 and \U0001f600"
    assert not [r for r in resp.repairs if r.kind == "invalid_unicode"]


async def test_invalid_utf8_in_the_body_is_replaced_and_flagged(server, client_for):
    server.push(Raw(completion_bytes("caf@").replace(b"@", b"\xe9 \xff")))
    resp = await ask(client_for())
    assert resp.message.content == "caf\ufffd \ufffd"
    assert [(r.kind, r.where, r.count) for r in resp.repairs] == [("invalid_unicode", "content", 2)]


async def test_provider_error_text_with_lone_surrogates_is_clean(server, client_for):
    server.push(Raw(b'{"error": {"message": "bad \\ud83d input"}}', status=400))
    err, _ = await failure(client_for())
    assert err.category == "bad_request"
    str(err).encode("utf-8")


# --- usage and the budget -------------------------------------------------------------------


async def test_missing_usage_is_estimated_and_trips_the_token_cap(server, client_for):
    from travelgym.llm.usage import estimate_tokens

    budget = RunBudget(max_tokens=60)
    server.responder = lambda body: Reply("y" * 100, omit_usage=True)
    client = client_for(budget=budget)
    first = await ask(client)
    assert first.usage.completion_tokens == 25  # 100 bytes / 4
    assert first.usage.prompt_tokens == estimate_tokens(json.dumps(
        [[m.to_openai() for m in USER], []], ensure_ascii=False))  # fmt: skip
    assert {r.kind for r in first.repairs} == {"usage_estimated"}
    await ask(client)  # 25 + prompt < 60: allowed
    err, _ = await failure(client)
    assert err.category == "budget"
    assert len(server.requests) == 2 and budget.total_tokens >= 60


@pytest.mark.parametrize(
    "usage",
    [{"prompt_tokens": -1_000_000, "completion_tokens": -5}, {"prompt_tokens": "many"},
     {"prompt_tokens": 1.5, "completion_tokens": True}, "lots", [3, 4]],
    ids=["negative", "text", "float_bool", "string", "list"],
)  # fmt: skip
async def test_invalid_usage_is_never_taken_at_its_word(server, client_for, usage):
    budget = RunBudget(max_tokens=1_000_000)
    body = json.loads(completion_bytes("z" * 40))
    server.push({**body, "usage": usage})
    resp = await ask(client_for(budget=budget))
    assert resp.usage.prompt_tokens > 0 and resp.usage.completion_tokens == 10
    assert {r.kind for r in resp.repairs} == {"usage_estimated"}
    assert budget.total_tokens == resp.usage.total_tokens > 0


async def test_valid_usage_is_kept(server, client_for):
    server.push(Reply("ok", usage=(0, 3)))
    resp = await ask(client_for())
    assert (resp.usage.prompt_tokens, resp.usage.completion_tokens) == (0, 3)
    assert resp.repairs == []


def test_budget_never_adds_negative_usage():
    from travelgym.llm.protocol import Usage

    budget = RunBudget(max_tokens=10)
    budget.record(Usage(prompt_tokens=-100, completion_tokens=12))
    assert budget.total_tokens == 12
    with pytest.raises(LLMError, match="budget"):
        budget.acquire()
