"""The endpoint pool of several base URLs: least in flight first, ties rotated, a failing server
set aside for a bounded time and brought back; the URLs checked and recorded order-free."""

from __future__ import annotations

import pytest

from travelgym.llm.endpoints import (
    WRONG_SERVER,
    Endpoint,
    EndpointPool,
    base_url_record,
    base_url_value,
    parse_base_urls,
)
from travelgym.llm.factory import make_client

A, B, C = "http://a:8000/v1", "http://b:8000/v1", "https://c.example/v1"


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def pool_of(*urls: str, clock: Clock | None = None, **kwargs) -> EndpointPool:
    return EndpointPool([Endpoint(u) for u in urls], clock=clock or Clock(), **kwargs)


def test_least_in_flight_first_and_ties_rotate():
    pool = pool_of(A, B, C)
    held = [pool.acquire() for _ in range(6)]
    assert [e.url for e in held] == [A, B, C, A, B, C]
    assert [e.in_flight for e in pool.endpoints] == [2, 2, 2]
    pool.release(held[1])  # B now has the fewest in flight: it is next, whatever the cursor says
    assert pool.acquire().url == B
    for endpoint in held:
        pool.release(endpoint)
    # sequential calls (nothing in flight) go round the servers
    order = []
    for _ in range(4):
        endpoint = pool.acquire()
        order.append(endpoint.url)
        pool.release(endpoint)
    assert set(order[:3]) == {A, B, C} and order[3] == order[0]


def test_same_picks_and_releases_give_the_same_servers():
    def trace() -> list[str]:
        pool, seen, held = pool_of(A, B, C), [], []
        for step in range(20):
            if step % 3 == 2:
                pool.release(held.pop(step % len(held)))
            held.append(pool.acquire())
            seen.append(held[-1].url)
        return seen

    assert trace() == trace()


def test_a_failing_server_is_set_aside_for_a_bounded_doubling_time_and_comes_back():
    clock = Clock()
    pool = pool_of(A, B, clock=clock, down_s=2.0, down_max_s=5.0)
    a, b = pool.endpoints
    first = pool.acquire()
    assert first is a
    pool.release(a, "connection")
    assert pool.is_down(a) and a.down_until == clock.now + 2.0
    # while A is down every attempt goes to B, even with requests in flight there
    held = [pool.acquire() for _ in range(3)]
    assert all(e is b for e in held)
    clock.now += 2.01
    assert not pool.is_down(a) and pool.acquire() is a  # back, and the least busy
    pool.release(a, "server")  # failed again at once: set aside twice as long
    assert a.down_until == pytest.approx(clock.now + 4.0)
    pool.acquire()
    pool.release(a, "timeout")
    assert a.down_until == pytest.approx(clock.now + 5.0)  # capped at down_max_s
    clock.now += 5.01
    pool.acquire()
    pool.release(a)  # a success clears the record
    assert a.failures_in_a_row == 0 and a.failures == 3


def test_failures_that_say_nothing_about_the_server_do_not_set_it_aside():
    pool = pool_of(A, B)
    for category in ("bad_request", "rate_limit", "auth", "bad_response", "cancelled", "bug"):
        endpoint = pool.acquire()
        pool.release(endpoint, category)
        assert not pool.is_down(endpoint)
    assert [e.failures for e in pool.endpoints] == [0, 0]
    assert [e.attempts for e in pool.endpoints] == [3, 3]


def test_all_down_uses_the_one_back_soonest_and_one_server_is_never_set_aside():
    clock = Clock()
    pool = pool_of(A, B, clock=clock, down_s=1.0)
    a, b = pool.endpoints
    pool.release(pool.acquire(), "server")  # A down until +1
    clock.now += 0.5
    pool.release(pool.acquire(), "server")  # B down until +1.5
    assert pool.is_down(a) and pool.is_down(b)
    assert pool.acquire() is a
    single = pool_of(A, clock=clock)
    only = single.acquire()
    single.release(only, "connection")
    assert not single.is_down(only) and single.acquire() is only


def test_a_wrong_server_is_set_aside_and_retried_elsewhere_while_one_may_answer():
    clock = Clock()
    pool = pool_of(A, B, clock=clock, down_s=1.0)
    a, b = pool.endpoints
    assert pool.may_retry_elsewhere()
    pool.release(pool.acquire(), WRONG_SERVER)  # A answers as a server without the model
    assert pool.is_down(a) and a.failures == 1 and pool.may_retry_elsewhere()
    pool.release(pool.acquire(), WRONG_SERVER)  # so does B: the fault is no server's
    assert not pool.may_retry_elsewhere()
    clock.now += 10
    pool.release(pool.acquire())  # one answers again: a retry elsewhere is worth it again
    assert pool.may_retry_elsewhere()
    single = pool_of(A, clock=clock)
    assert not single.may_retry_elsewhere()


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("", "base URL is empty"),
        ("   ", "base URL is empty"),
        ([A, ""], "base URL is empty"),
        ("ftp://host/v1", "is not an http:// or https:// URL"),
        ("localhost:8000/v1", "is not an http:// or https:// URL"),
        ("http://", "is not an http:// or https:// URL"),
        ("http://host:port/v1", "is not a valid URL"),
        ([A, A + "/"], "is given twice"),
        # one server however its URL is spelt: host case, the default port
        (["http://LocalHost/v1", "http://localhost:80/v1/"], "is given twice"),
        (["HTTPS://h/v1", "https://h:443/v1"], "is given twice"),
        ([], "the list of base URLs is empty"),
        (3, "must be a URL or a list of URLs"),
    ],
)
def test_bad_base_urls_are_one_line_errors(value, message):
    with pytest.raises(ValueError, match=message) as caught:
        parse_base_urls(value)
    assert "\n" not in str(caught.value)


def test_values_and_records():
    assert parse_base_urls(None) == () and base_url_value(None) is None
    assert base_url_value(f" {A} ") == A and base_url_value([A]) == A
    assert base_url_value([B, A]) == (B, A)  # the order given: ties rotate from the first
    assert base_url_record([B, C, A]) == base_url_record((A, B, C)) == [A, B, C]
    assert base_url_record(A) == A and base_url_record(None) is None


def test_several_urls_reach_the_openai_client_and_litellm_refuses_them():
    client = make_client("some-model", base_url=[A, B])
    assert client.base_urls == (A, B) and client.base_url is None
    assert [s["url"] for s in client.endpoint_stats()] == [A, B]
    assert make_client("some-model", base_url=A).base_url == A
    with pytest.raises(ValueError, match="LiteLLM takes one base URL, not 2"):
        make_client("litellm/openai/x", base_url=[A, B])
