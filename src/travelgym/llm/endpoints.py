"""Several base URLs for one model: a pool of OpenAI-compatible servers (a vLLM or SGLang
fleet) that one client balances its requests over, without a proxy.

:func:`parse_base_urls` checks what a user gave (``--base-url`` repeated, a list in a config);
:func:`base_url_record` is what a run manifest records (one URL as given, several sorted, so
the order they were given in does not change a run's identity). :class:`EndpointPool` picks
the server of each attempt: the one with the fewest requests in flight among those up, ties
broken by a rotating cursor (deterministic: the same sequence of picks and releases gives the
same servers). A server whose attempt fails in a way that says something about the server (a
refused or reset connection, a 5xx, a timeout, or an answer no server of the model gives:
:data:`WRONG_SERVER`) is marked down for a short time that doubles with each failure in a row
(``down_s`` up to ``down_max_s``) and comes back by itself when that time is over; a success
clears its record. When every server is down the one back soonest is used, so a pool never
refuses an attempt: failures cost retries, nothing else. A wrong-server
answer is worth a retry only while some server has not just given one
(:meth:`EndpointPool.may_retry_elsewhere`): when every server answers the same, the fault is
the request's or the model name's, not a server's.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

#: A base URL option's value: none (the environment's), one URL, or several.
BaseURL = str | tuple[str, ...] | None

#: The release category of an attempt answered as only a server without the model answers (a
#: 404, a model-not-found error, a body that is not a completion): the server is set aside.
WRONG_SERVER = "wrong_server"
#: Failure categories that mark a server down (the rest say nothing about the server).
DOWN_CATEGORIES = frozenset({"connection", "timeout", "server", WRONG_SERVER})
DEFAULT_DOWN_S = 2.0
DEFAULT_DOWN_MAX_S = 30.0


def check_base_url(url: Any) -> str:
    """``url`` stripped, or ``ValueError`` with a one-line reason when it is empty or not an
    ``http(s)://HOST...`` URL."""
    if not isinstance(url, str) or not url.strip():
        raise ValueError("base URL is empty: give an http(s):// URL")
    text = url.strip()
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - a port that is not a number raises here
    except ValueError:
        raise ValueError(f"base URL {text!r} is not a valid URL") from None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise ValueError(f"base URL {text!r} is not an http:// or https:// URL with a host")
    return text


def parse_base_urls(value: Any) -> tuple[str, ...]:
    """The base URLs of ``value`` (``None``, one URL, or a list of them), each checked by
    :func:`check_base_url`; ``ValueError`` for an empty list or a URL given twice."""
    if value is None:
        return ()
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, Sequence) or isinstance(items, bytes | bytearray):
        raise ValueError(f"base URL must be a URL or a list of URLs, not {type(value).__name__}")
    if not items:
        raise ValueError("the list of base URLs is empty")
    urls = tuple(check_base_url(u) for u in items)
    seen: set[tuple] = set()
    for url in urls:
        if _server_key(url) in seen:
            raise ValueError(f"base URL {url!r} is given twice")
        seen.add(_server_key(url))
    return urls


def _server_key(url: str) -> tuple:
    """What names one endpoint: scheme and host without case, the port with its default
    filled in, the path without a trailing slash (``http://A:80/v1/`` is ``http://a/v1``)."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    port = parts.port or (443 if scheme == "https" else 80)
    return scheme, (parts.hostname or "").lower(), port, parts.path.rstrip("/"), parts.query


def base_url_value(value: Any) -> BaseURL:
    """``value`` checked and in the form clients and suites take: ``None``, one URL as a
    string, or several as a tuple."""
    urls = parse_base_urls(value)
    if not urls:
        return None
    return urls[0] if len(urls) == 1 else urls


def base_url_record(value: Any) -> str | list[str] | None:
    """What a run manifest records of ``value``: ``None``, the one URL, or the URLs sorted (the
    order they were given in is no part of a run's identity)."""
    urls = parse_base_urls(value)
    if len(urls) <= 1:
        return urls[0] if urls else None
    return sorted(urls)


@dataclass
class Endpoint:
    """One server of a pool and what the pool knows of it (``client``: its HTTP client)."""

    url: str
    client: Any = None
    in_flight: int = 0
    peak_in_flight: int = 0
    attempts: int = 0
    failures: int = 0
    failures_in_a_row: int = 0
    down_until: float = 0.0
    wrong_server: bool = False  # its last attempt ended as WRONG_SERVER

    def stats(self) -> dict[str, Any]:
        """Counts for a report or a test (no client)."""
        return {"url": self.url, "attempts": self.attempts, "failures": self.failures,
                "in_flight": self.in_flight, "peak_in_flight": self.peak_in_flight}  # fmt: skip


class EndpointPool:
    """The servers of one client; see the module docstring. Not awaited anywhere, so one pool
    is safe to share between the coroutines of one event loop."""

    def __init__(self, endpoints: Sequence[Endpoint], *, down_s: float = DEFAULT_DOWN_S,
                 down_max_s: float = DEFAULT_DOWN_MAX_S,
                 clock: Callable[[], float] = time.monotonic) -> None:  # fmt: skip
        if not endpoints:
            raise ValueError("an endpoint pool needs at least one endpoint")
        if not 0 < down_s <= down_max_s:
            raise ValueError(f"need 0 < down_s <= down_max_s, got {down_s} and {down_max_s}")
        self.endpoints = list(endpoints)
        self.down_s = down_s
        self.down_max_s = down_max_s
        self._clock = clock
        self._cursor = 0

    def is_down(self, endpoint: Endpoint) -> bool:
        """Whether ``endpoint`` is marked down now."""
        return endpoint.down_until > self._clock()

    def acquire(self) -> Endpoint:
        """The endpoint of the next attempt (counted in flight until :meth:`release`): the
        fewest in flight among those up (all down: the one back soonest), ties broken by the
        rotating cursor."""
        count = len(self.endpoints)
        order = [self.endpoints[(self._cursor + i) % count] for i in range(count)]
        up = [e for e in order if not self.is_down(e)]
        if up:
            chosen = min(up, key=lambda e: e.in_flight)
        else:
            chosen = min(order, key=lambda e: (e.down_until, e.in_flight))
        self._cursor = (self.endpoints.index(chosen) + 1) % count
        chosen.in_flight += 1
        chosen.attempts += 1
        chosen.peak_in_flight = max(chosen.peak_in_flight, chosen.in_flight)
        return chosen

    def release(self, endpoint: Endpoint, failure_category: str | None = None) -> None:
        """End an attempt on ``endpoint``: ``None`` for a success (its failures are cleared),
        else the attempt's failure category (one of :data:`DOWN_CATEGORIES` marks it down)."""
        endpoint.in_flight = max(0, endpoint.in_flight - 1)
        endpoint.wrong_server = failure_category == WRONG_SERVER
        if failure_category is None:
            endpoint.failures_in_a_row = 0
            return
        if failure_category not in DOWN_CATEGORIES:
            return
        endpoint.failures += 1
        endpoint.failures_in_a_row += 1
        if len(self.endpoints) > 1:
            spell = min(self.down_max_s, self.down_s * 2 ** (endpoint.failures_in_a_row - 1))
            endpoint.down_until = self._clock() + spell

    def may_retry_elsewhere(self) -> bool:
        """Whether a wrong-server answer is worth a retry: there are several servers and not
        all of them gave one on their last attempt."""
        return len(self.endpoints) > 1 and not all(e.wrong_server for e in self.endpoints)

    def stats(self) -> list[dict[str, Any]]:
        """Each endpoint's counts, in the order the URLs were given."""
        return [e.stats() for e in self.endpoints]
