"""An optional on-disk response cache keyed by the canonical request.

Only useful for deterministic requests (temperature 0, fixed seed) or for replaying a run;
the caller opts in by passing a cache to a client.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import tempfile
import threading
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from travelgym.llm.protocol import ChatMessage, ChatResponse

log = logging.getLogger(__name__)


def request_key(
    model: str,
    messages: list[ChatMessage],
    tools: list[dict[str, Any]] | None,
    params: dict[str, Any],
) -> str:
    """SHA-256 of the canonical JSON of a request (sorted keys, no whitespace)."""
    canonical = {
        "model": model,
        "messages": [m.model_dump(mode="json") for m in messages],
        "tools": tools or [],
        "params": params,
    }
    text = json.dumps(
        canonical, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=repr
    )
    # surrogatepass: a request holding invalid Unicode still gets a key (valid text is unchanged)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class ResponseCache:
    """ChatResponse JSON files under ``directory/<key[:2]>/<key>.json``.

    Writes are atomic (temporary file + ``os.replace``); an unreadable or corrupt entry is
    treated as a miss and overwritten by the next :meth:`put`. The cache counts its hits,
    misses and the bytes it read and wrote (:meth:`stats`).
    """

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)
        self.hits = self.misses = self.bytes_read = self.bytes_written = 0
        self._lock = threading.Lock()  # clients on threads (hf:, local:) share the cache

    def stats(self) -> dict[str, int]:
        """What this cache did so far: ``hits``, ``misses`` (lookups that found no usable
        entry), ``bytes_read`` (of the entries hit) and ``bytes_written`` (of those stored)."""
        with self._lock:
            return {"hits": self.hits, "misses": self.misses, "bytes_read": self.bytes_read,
                    "bytes_written": self.bytes_written}  # fmt: skip

    def _count(self, hit: bool | None, read: int = 0, written: int = 0) -> None:
        with self._lock:
            self.hits += hit is True
            self.misses += hit is False
            self.bytes_read += read
            self.bytes_written += written

    def path_for(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> ChatResponse | None:
        """The stored response for ``key``, or ``None`` (missing or corrupt)."""
        path = self.path_for(key)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            self._count(False)
            return None
        except OSError as exc:
            log.warning("unreadable cache entry %s: %s", path, exc)
            self._count(False)
            return None
        try:
            response = ChatResponse.model_validate_json(data.decode("utf-8"))
        except (ValidationError, ValueError) as exc:
            log.warning("ignoring corrupt cache entry %s: %s", path, exc)
            self._count(False)
            return None
        self._count(True, read=len(data))
        return response

    def put(self, key: str, response: ChatResponse) -> None:
        """Store ``response`` atomically (a failed write is logged, never raised)."""
        path = self.path_for(key)
        tmp_name: str | None = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            data = response.model_dump_json().encode("utf-8")
            with tempfile.NamedTemporaryFile(
                "wb", dir=path.parent, suffix=".tmp", delete=False
            ) as tmp:
                tmp_name = tmp.name
                tmp.write(data)
            os.replace(tmp_name, path)
            self._count(None, written=len(data))
        except OSError as exc:
            log.warning("could not write cache entry %s: %s", path, exc)
            if tmp_name is not None:
                with contextlib.suppress(OSError):
                    os.unlink(tmp_name)


def format_stats(stats: dict[str, int]) -> str:
    """One line of a cache's :meth:`ResponseCache.stats`: ``cache: 120 hits, 3 misses, 1.2 MB
    read, 40 kB written``."""
    return (f"cache: {stats['hits']} hits, {stats['misses']} misses, "
            f"{_size(stats['bytes_read'])} read, {_size(stats['bytes_written'])} written")  # fmt: skip


def _size(n: int) -> str:
    """``n`` bytes in decimal units (B, kB, MB, GB), one decimal from MB up."""
    if n < 1000:
        return f"{n} B"
    if n < 999_500:  # 999,500 B would round to "1000 kB"
        return f"{n / 1000:.0f} kB"
    if n < 1_000_000_000:
        return f"{n / 1e6:.1f} MB"
    return f"{n / 1e9:.1f} GB"
