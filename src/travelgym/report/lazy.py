"""Episodes that load when they are needed: the viewer's list renders from a small index (each
episode record without its bulky keys, e.g. a conversation's turns) and each run's bulky parts
travel as one gzip-compressed, base64-encoded JSON list (``runs[i].detail``) that the page
unpacks (``DecompressionStream``) only when an episode of the run is opened or a filter needs
them (``assets/viewer.js``); top-level tables only the episodes' details use (e.g. tool-call
arguments) travel packed in ``packed`` and are unpacked first. The text compresses several
times over, so the file shrinks too."""

from __future__ import annotations

import base64
import gzip
import json
from typing import Any

from travelgym.report.markup import finite

#: the key of a run record holding its episodes' packed details
DETAIL = "detail"
#: the top-level key holding the packed tables (name -> packed value)
PACKED = "packed"


def _json_bytes(value: Any) -> bytes:
    try:
        text = json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False,
                          default=str)  # fmt: skip
    except ValueError:  # a NaN somewhere: clean the whole tree (rare)
        text = json.dumps(finite(value), separators=(",", ":"), ensure_ascii=False, default=str)
    return text.encode("utf-8")


def pack(values: Any) -> str:
    """``values`` (JSON) as base64 text of gzip-compressed JSON (no timestamp: the same bytes for the
    same values)."""
    return base64.b64encode(gzip.compress(_json_bytes(values), compresslevel=6, mtime=0)).decode()


def unpack(text: str) -> Any:
    """What :func:`pack` packed."""
    return json.loads(gzip.decompress(base64.b64decode(text)))


def pack_episodes(data: dict[str, Any], keys: tuple[str, ...],
                  tables: tuple[str, ...] = ()) -> None:  # fmt: skip
    """Move ``keys`` of every episode record of ``data["runs"][i]["episodes"]`` into the run's
    packed :data:`DETAIL` list (one object per episode, in the same order), and the top-level
    ``tables`` into :data:`PACKED`; nothing without ``keys``."""
    if not keys:
        return
    found = {name: pack(data.pop(name)) for name in tables if name in data}
    if found:
        data[PACKED] = found
    for run in data.get("runs") or []:
        episodes = run.get("episodes")
        if not isinstance(episodes, list):
            continue
        details = [{k: episode.pop(k) for k in keys if k in episode} for episode in episodes]
        run[DETAIL] = pack(details)


def unpacked(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with every run's episodes whole again (their details merged back) and its
    packed tables in place, as a reader of the embedded data without a browser wants them;
    ``data`` itself is left as it is."""
    data = dict(data)
    data.update({name: unpack(text) for name, text in data.pop(PACKED, {}).items()})
    runs = []
    for run in data.get("runs") or []:
        run = dict(run)
        if DETAIL in run:
            details = unpack(run.pop(DETAIL))
            run["episodes"] = [{**e, **d} for e, d in zip(run["episodes"], details, strict=True)]
        runs.append(run)
    return {**data, "runs": runs} if "runs" in data else data
