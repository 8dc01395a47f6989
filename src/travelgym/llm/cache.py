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
    treated as a miss and overwritten by the next :meth:`put`.
    """

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)

    def path_for(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> ChatResponse | None:
        """The stored response for ``key``, or ``None`` (missing or corrupt)."""
        path = self.path_for(key)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except OSError as exc:
            log.warning("unreadable cache entry %s: %s", path, exc)
            return None
        try:
            return ChatResponse.model_validate_json(text)
        except (ValidationError, ValueError) as exc:
            log.warning("ignoring corrupt cache entry %s: %s", path, exc)
            return None

    def put(self, key: str, response: ChatResponse) -> None:
        """Store ``response`` atomically (a failed write is logged, never raised)."""
        path = self.path_for(key)
        tmp_name: str | None = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile(
                "w", encoding="utf-8", dir=path.parent, suffix=".tmp", delete=False
            ) as tmp:
                tmp_name = tmp.name
                tmp.write(response.model_dump_json())
            os.replace(tmp_name, path)
        except OSError as exc:
            log.warning("could not write cache entry %s: %s", path, exc)
            if tmp_name is not None:
                with contextlib.suppress(OSError):
                    os.unlink(tmp_name)
