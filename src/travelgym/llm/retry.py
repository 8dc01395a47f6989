"""Retries for model calls: exponential backoff with full jitter, ``Retry-After`` honoured.

Provider clients supply a ``classify`` function that turns an exception into a
:class:`Failure` (or ``None`` for a programming error, which propagates untouched); the
loop in :func:`retrying` is shared by every backend.
"""

from __future__ import annotations

import asyncio
import email.utils
import random
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from travelgym.llm.protocol import LLMError

T = TypeVar("T")

#: Failure categories worth another attempt; the rest fail at once.
RETRYABLE = frozenset({"rate_limit", "server", "timeout", "connection"})

Sleep = Callable[[float], Awaitable[Any]]


@dataclass(frozen=True)
class Failure:
    """A classified failed attempt. ``cut_short``: the call's total deadline ended the attempt
    before it completed (so it says nothing about the endpoint, only that time ran out).
    ``retry_elsewhere``: whatever its category, another server may answer (a server of a pool
    that does not serve the model), so the attempt is retried."""

    category: str
    message: str
    retry_after_s: float | None = None
    cut_short: bool = False
    retry_elsewhere: bool = False

    @property
    def retryable(self) -> bool:
        return self.category in RETRYABLE or self.retry_elsewhere


@dataclass
class RetryPolicy:
    """How often and how long to wait: attempt ``n`` (1-based) sleeps
    ``uniform(0, min(backoff_max_s, backoff_base_s * 2**(n-1)))``, or the server's
    ``Retry-After`` capped at ``retry_after_max_s`` (default ``backoff_max_s``)."""

    max_retries: int = 5
    backoff_base_s: float = 0.5
    backoff_max_s: float = 20.0
    retry_after_max_s: float | None = None
    rng: random.Random = field(default_factory=random.Random)

    def delay(self, attempt: int, retry_after_s: float | None = None) -> float:
        """Seconds to wait after failed attempt number ``attempt``."""
        if retry_after_s is not None and retry_after_s >= 0:
            cap = self.backoff_max_s if self.retry_after_max_s is None else self.retry_after_max_s
            return min(retry_after_s, cap)
        ceiling = min(self.backoff_max_s, self.backoff_base_s * 2 ** (attempt - 1))
        return self.rng.uniform(0, ceiling)


async def retrying(
    call: Callable[[], Awaitable[T]],
    *,
    classify: Callable[[BaseException], Failure | None],
    policy: RetryPolicy,
    sleep: Sleep = asyncio.sleep,
    deadline: float | None = None,
) -> tuple[T, int]:
    """Run ``call`` until it succeeds; return ``(result, attempts)``.

    Raises :class:`LLMError` for a non-retryable failure, once ``policy.max_retries`` retries
    are spent, or when the call's total ``deadline`` (a ``time.monotonic()`` value) ends it:
    the wait before the next attempt would pass it, or it cut an attempt short (a
    :class:`Failure` with ``cut_short``). Either way the error carries the category of the last
    attempt that *completed* (a ``server`` error stays ``server`` however loaded the machine, and
    wherever the deadline happens to fall), ``timeout`` when none did, and says that the total
    deadline ended the call. Exceptions that ``classify`` maps to ``None`` propagate as they are.
    """
    attempt = 0
    last: Failure | None = None  # the last attempt that completed (and failed)
    while True:
        attempt += 1
        try:
            return await call(), attempt
        except LLMError:
            raise
        except Exception as exc:
            failure = classify(exc)
            if failure is None:
                raise
            if failure.cut_short:
                raise _cut_short(failure, last, attempt) from exc
            last = failure
            suffix = f" (after {attempt} attempts)" if attempt > 1 else ""
            if not failure.retryable or attempt > policy.max_retries:
                raise LLMError(failure.category, failure.message + suffix) from exc
            wait = policy.delay(attempt, failure.retry_after_s)
            if deadline is not None and time.monotonic() + wait >= deadline:
                spent = f"after {attempt} attempt{'s' if attempt > 1 else ''}"
                raise LLMError(failure.category,
                               f"{failure.message} ({spent}; the call's total deadline "
                               "leaves no time for another)") from exc  # fmt: skip
            await sleep(wait)


def _cut_short(failure: Failure, last: Failure | None, attempt: int) -> LLMError:
    """The error of a call whose total deadline ended attempt number ``attempt`` mid-way."""
    if last is None:
        return LLMError("timeout", f"{failure.message} (the call's total deadline ended its "
                        "first attempt)")  # fmt: skip
    return LLMError(last.category, f"{last.message} (after {attempt} attempts; the call's total "
                    f"deadline ended attempt {attempt} before it completed)")  # fmt: skip


def category_for_status(status: int) -> str:
    """The failure category for an HTTP error status."""
    if status == 429:
        return "rate_limit"
    if status in (401, 403):
        return "auth"
    if status == 408:
        return "timeout"
    if status == 409 or status >= 500:
        return "server"  # 409: OpenAI's lock timeout, retried like the SDK does
    return "bad_request"


def parse_retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds from ``retry-after-ms`` / ``Retry-After`` (seconds or HTTP date), if any."""
    if not headers:
        return None
    headers = {str(k).lower(): str(v) for k, v in headers.items()}
    raw_ms = headers.get("retry-after-ms")
    if raw_ms:
        try:
            return max(0.0, float(raw_ms) / 1000)
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if not raw:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())
