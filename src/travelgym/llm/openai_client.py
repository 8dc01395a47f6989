"""The default backend: any OpenAI-compatible chat-completions endpoint, via the official SDK.

Configuration comes from arguments, else the environment: ``TRAVELGYM_MODEL``,
``TRAVELGYM_BASE_URL`` / ``OPENAI_BASE_URL``, ``TRAVELGYM_API_KEY`` / ``OPENAI_API_KEY``,
``TRAVELGYM_TIMEOUT_S`` (the deadline per attempt, default 60) and ``TRAVELGYM_TOTAL_TIMEOUT_S``
(the deadline per call across its retries, default none). A custom base URL without a key (a
local vLLM or llama.cpp server) gets a dummy key. The SDK's own retries are off:
:mod:`travelgym.llm.retry` does them. The reply body is read as bytes and decoded here, so bytes
that are not UTF-8 are repaired (:mod:`travelgym.llm.text`) instead of failing the call, and a
body over :data:`MAX_REPLY_BYTES` is a ``bad_response`` as soon as that is known (its
``Content-Length``, or the bytes read so far): it is never read whole, so neither memory nor a
slow link turns it into something else. A connection that breaks while the body is read is a
``connection`` failure (retried).

``base_url`` may name several servers of one model (a list): each attempt goes to the one with
the fewest requests in flight, and a server that fails is set aside for a while so that the
retry goes to another (:mod:`travelgym.llm.endpoints`). Besides a dead server (refused, reset,
5xx, silent), that is one that answers as no server of the model would: a 404 or a 400 whose
error body names the model (the path and model are the same for every server, so only a server
without the model, e.g. one restarted with another, answers that way), or a body that is not a
completion (an HTML page from a proxy, JSON without choices). With one server these stay
errors of the call, as does a 400 about the request itself (every server would give it). Budget,
cache and usage are the client's, whichever server answers.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import os
from collections.abc import Callable, Sequence
from contextvars import ContextVar
from typing import Any

import openai
from openai.resources.chat.completions import AsyncCompletions

from travelgym.llm.base import AttemptTimeout, BaseChatClient, check_completion
from travelgym.llm.endpoints import (
    DEFAULT_DOWN_MAX_S,
    DEFAULT_DOWN_S,
    WRONG_SERVER,
    Endpoint,
    EndpointPool,
    parse_base_urls,
)
from travelgym.llm.protocol import LLMError
from travelgym.llm.retry import Failure, category_for_status, parse_retry_after
from travelgym.llm.text import load_json_body


class BodyReadError(Exception):
    """The connection failed while the reply body was read (after a 200 and its headers)."""

    def __init__(self, cause: BaseException) -> None:
        root: BaseException | None = cause
        while root is not None and not isinstance(root, OSError):
            root = root.__cause__ or root.__context__
        reason = (root.strerror if isinstance(root, OSError) and root.strerror else None) or (
            str(cause) or type(cause).__name__
        )
        super().__init__(f"the connection broke while the reply was read: {reason}")
        self.timed_out = "timeout" in type(cause).__name__.lower()


class WrongServerReply(Exception):
    """A reply of a server of several that is not a completion (``category``: what the call
    would fail as with one server); not an :class:`LLMError`, so that it is retried elsewhere."""

    def __init__(self, error: LLMError) -> None:
        super().__init__(str(error).removeprefix(f"{error.category}: "))
        self.category = error.category


DUMMY_API_KEY = "EMPTY"
DEFAULT_URL = "api.openai.com"
#: The endpoint of the attempt being made (set around each attempt, read by ``_request``).
_ENDPOINT: ContextVar[Endpoint | None] = ContextVar("travelgym_endpoint", default=None)
#: The attribute naming the server of a failed attempt on its exception (for the message).
_URL_ATTR = "_travelgym_base_url"
DEFAULT_TIMEOUT_S = 60.0
#: The largest reply body accepted (4 MiB: about a million tokens of text, far beyond any
#: model's output limit); a larger one is refused as ``bad_response``.
MAX_REPLY_BYTES = 4 * 1024 * 1024

#: Keyword arguments the SDK's ``create`` accepts; other params travel in ``extra_body``.
_CREATE_PARAMS = frozenset(inspect.signature(AsyncCompletions.create).parameters) - {
    "self",
    "model",
    "messages",
}


def _env(*names: str) -> str | None:
    for name in names:
        value = os.environ.get(name)
        if value:
            return value
    return None


def _env_seconds(name: str) -> float | None:
    """A number of seconds from the environment (unset or empty: ``None``)."""
    value = _env(name)
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        seconds = float("nan")
    if not seconds > 0:
        raise ValueError(f"{name}={value!r}: expected a positive number of seconds")
    return seconds


class OpenAIChatClient(BaseChatClient):
    """A :class:`~travelgym.llm.protocol.ChatClient` over ``openai.AsyncOpenAI`` with native
    tool calling, retries, an optional run budget and an optional response cache.

    ``timeout_s`` and ``total_timeout_s`` are the deadlines of
    :class:`~travelgym.llm.base.BaseChatClient` (``None``: from the environment, see the module
    docstring). ``sleep`` and ``rng`` make the retry waits injectable (tests pass a no-op
    sleep). ``base_url``: one URL or several (a list: one pool, see the module docstring);
    ``endpoint_down_s`` / ``endpoint_down_max_s`` bound how long a failing server of several is
    set aside, on ``clock``.
    """

    def __init__(
        self,
        model: str | None = None,
        base_url: str | Sequence[str] | None = None,
        api_key: str | None = None,
        timeout_s: float | None = None,
        *,
        default_headers: dict[str, str] | None = None,
        total_timeout_s: float | None = None,
        endpoint_down_s: float = DEFAULT_DOWN_S,
        endpoint_down_max_s: float = DEFAULT_DOWN_MAX_S,
        clock: Callable[[], float] | None = None,
        **settings: Any,
    ) -> None:
        model = model or _env("TRAVELGYM_MODEL")
        if not model:
            raise ValueError("no model given (pass model= or set TRAVELGYM_MODEL)")
        if timeout_s is None:
            timeout_s = _env_seconds("TRAVELGYM_TIMEOUT_S") or DEFAULT_TIMEOUT_S
        if total_timeout_s is None:
            total_timeout_s = _env_seconds("TRAVELGYM_TOTAL_TIMEOUT_S")
        super().__init__(model, timeout_s=timeout_s, total_timeout_s=total_timeout_s, **settings)
        urls = parse_base_urls(base_url) or parse_base_urls(
            _env("TRAVELGYM_BASE_URL", "OPENAI_BASE_URL")
        )
        #: the servers, in the order given (empty: the SDK's default endpoint)
        self.base_urls: tuple[str, ...] = urls
        self.base_url = urls[0] if len(urls) == 1 else None
        key = api_key or _env("TRAVELGYM_API_KEY", "OPENAI_API_KEY")
        if not key:
            if not urls:
                raise LLMError(
                    "auth", "no API key: set TRAVELGYM_API_KEY or OPENAI_API_KEY, or give base_url"
                )
            key = DUMMY_API_KEY
        endpoints = [
            Endpoint(url or DEFAULT_URL, openai.AsyncOpenAI(
                api_key=key, base_url=url, timeout=timeout_s, max_retries=0,
                default_headers=default_headers, http_client=_http_client()))
            for url in (urls or (None,))
        ]  # fmt: skip
        self.pool = EndpointPool(endpoints, down_s=endpoint_down_s, down_max_s=endpoint_down_max_s,
                                 **({"clock": clock} if clock is not None else {}))  # fmt: skip

    @property
    def _client(self) -> openai.AsyncOpenAI:
        """The HTTP client of the first (with one URL: the only) server."""
        return self.pool.endpoints[0].client

    @_client.setter
    def _client(self, client: openai.AsyncOpenAI) -> None:
        self.pool.endpoints[0].client = client

    def endpoint_stats(self) -> list[dict[str, Any]]:
        """Per server: attempts, failed attempts that marked it down, requests in flight now and
        at most."""
        return self.pool.stats()

    async def _attempt(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None,
                       params: dict, deadline: float | None) -> Any:  # fmt: skip
        """One attempt on the server the pool picks; its outcome goes back to the pool."""
        endpoint = self.pool.acquire()
        token = _ENDPOINT.set(endpoint)
        several = len(self.pool.endpoints) > 1
        category: str | None = "cancelled"
        try:
            result = await super()._attempt(messages, tools, params, deadline)
            if several:  # checked here, not after the retries, so another server may answer
                check_completion(result)
            category = None
            return result
        except AttemptTimeout as exc:
            category = "cancelled" if exc.cut_short else "timeout"
            _name_server(exc, endpoint)
            raise
        except LLMError as exc:  # a reply refused as it was read (with one server: not retried)
            category = exc.category
            if several and exc.category == "bad_response":
                category = WRONG_SERVER
                wrong = WrongServerReply(exc)
                _name_server(wrong, endpoint)
                raise wrong from exc
            raise
        except Exception as exc:
            failure = self._classify(exc)
            category = failure.category if failure is not None else "bug"
            if several and _wrong_server_status(exc):
                category = WRONG_SERVER
            _name_server(exc, endpoint)
            raise
        finally:
            _ENDPOINT.reset(token)
            self.pool.release(endpoint, category)

    async def _request(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, params: dict
    ) -> Any:
        kwargs: dict[str, Any] = {}
        extra: dict[str, Any] = {}
        for name, value in params.items():
            (kwargs if name in _CREATE_PARAMS else extra)[name] = value
        if tools:
            kwargs["tools"] = tools
        if extra:
            kwargs["extra_body"] = {**(kwargs.get("extra_body") or {}), **extra}
        endpoint = _ENDPOINT.get() or self.pool.endpoints[0]
        create = endpoint.client.chat.completions.with_streaming_response.create
        async with create(model=self.model, messages=messages, **kwargs) as raw:
            body = await _read_body(raw)
        try:
            return load_json_body(body)
        except ValueError as exc:
            raise LLMError("bad_response", f"reply is not JSON: {str(exc)[:200]}") from exc

    def _classify(self, exc: BaseException) -> Failure | None:
        where = getattr(exc, _URL_ATTR, None) or self.base_url or self.pool.endpoints[0].url
        if isinstance(exc, WrongServerReply):
            return Failure(exc.category, f"{exc} ({where})",
                           retry_elsewhere=self.pool.may_retry_elsewhere())  # fmt: skip
        if isinstance(exc, BodyReadError):
            return Failure("timeout" if exc.timed_out else "connection", f"{exc} ({where})")
        if isinstance(exc, openai.APITimeoutError | asyncio.TimeoutError):
            at = f" ({where})" if len(self.pool.endpoints) > 1 else ""
            return Failure("timeout", f"no reply within {self.timeout_s}s{at}")
        if isinstance(exc, openai.APIConnectionError):
            return Failure("connection", f"{exc} ({where})")
        if isinstance(exc, openai.APIStatusError):
            at = f" ({where})" if len(self.pool.endpoints) > 1 else ""
            return Failure(
                category_for_status(exc.status_code),
                str(exc)[:500] + at,
                retry_after_s=parse_retry_after(exc.response.headers),
                retry_elsewhere=_wrong_server_status(exc) and self.pool.may_retry_elsewhere(),
            )
        if isinstance(exc, openai.OpenAIError):
            return Failure("bad_response", str(exc)[:500])
        return None

    def _classify_attempt(self, exc: BaseException) -> Failure | None:
        failure = super()._classify_attempt(exc)
        where = getattr(exc, _URL_ATTR, None)
        if isinstance(exc, AttemptTimeout) and failure is not None and len(self.pool.endpoints) > 1:
            failure = Failure(failure.category, f"{failure.message} ({where})",
                              cut_short=failure.cut_short)  # fmt: skip
        return failure

    async def aclose(self) -> None:
        """Close the HTTP connection pools (one per server)."""
        for endpoint in self.pool.endpoints:
            await endpoint.client.close()

    async def __aenter__(self) -> OpenAIChatClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def _http_client() -> Any:
    """The SDK's default HTTP client without its wrapper's finaliser: that one closes a client
    left open on whatever event loop runs when it is collected, and a connection made on a loop
    that has since closed then fails there ("Event loop is closed") inside another run's loop.
    :meth:`OpenAIChatClient.aclose` closes the pools; an unclosed one is dropped, not closed
    on a foreign loop."""
    return openai.DefaultAsyncHttpxClient()


def _wrong_server_status(exc: BaseException) -> bool:
    """Whether an error status says the server does not serve the model: a 404 (every server
    of a pool gets the same path and model, so a server with the model does not answer it), or
    a 400 whose error body is about the model (OpenAI's ``model_not_found``, ``param: model``,
    vLLM's ``NotFoundError``); a 400 about the request itself is not."""
    if not isinstance(exc, openai.APIStatusError):
        return False
    if exc.status_code != 400:
        return exc.status_code == 404
    return exc.code == "model_not_found" or exc.param == "model" or exc.type == "NotFoundError"


def _name_server(exc: BaseException, endpoint: Endpoint) -> None:
    """Note on ``exc`` the server of the attempt it ended (its message names it)."""
    # an exception type with slots refuses it: the message then names the first server
    with contextlib.suppress(AttributeError):
        setattr(exc, _URL_ATTR, endpoint.url)


def _too_big(size: int | str) -> LLMError:
    return LLMError("bad_response", f"reply body of {size} bytes is over the limit of "
                    f"{MAX_REPLY_BYTES} bytes")  # fmt: skip


async def _read_body(raw: Any) -> bytes:
    """The (decoded) body of a streamed reply, refused as soon as it is over the limit."""
    declared = raw.headers.get("content-length")
    if declared is not None and declared.strip().isdigit() and int(declared) > MAX_REPLY_BYTES:
        raise _too_big(int(declared))
    chunks: list[bytes] = []
    size = 0
    try:
        async for chunk in raw.iter_bytes():
            size += len(chunk)
            if size > MAX_REPLY_BYTES:
                raise _too_big(f"more than {MAX_REPLY_BYTES}")
            chunks.append(chunk)
    except LLMError:
        raise
    except Exception as exc:  # the transport's errors (a reset, an early close, a read timeout)
        raise BodyReadError(exc) from exc
    return b"".join(chunks)
