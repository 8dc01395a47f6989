"""The digest chain over a run's ``episodes.jsonl``, kept in ``integrity.jsonl``.

``h_0`` is the SHA-256 of :data:`SEED`; ``h_i = sha256(h_{i-1} || line_i)`` where ``line_i`` is
the ``i``-th line's bytes with its newline. Entries (one JSON line each, ``"chain"`` naming
the kind) sit in ``integrity.jsonl`` beside the database's session lines:

- ``open``: a session starts: ``lines`` and ``head`` of the file as it now is, the SHA-256 of
  the manifest it wrote, ``prior`` (what the verification found before it changed anything:
  ``None`` or a tampering reason, kept forever) and, when the framework rewrote the file (a
  ``--repair``, a ``--retry-errors``) or adopted lines written before the chain, ``rewrite``
  with the reason and ``heads``, every line's head after it.
- ``line``: written *before* line ``n`` is appended, with its head ``h_n``; a kill between the
  two leaves the chain one line ahead of the file, which a resume accepts and re-chains.
- ``close``: the session ended with ``lines`` lines and head ``head``; after it nothing may be
  missing.
"""

from __future__ import annotations

import copy
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

SEED = b"travelgym episodes chain v1"
# the manifest key saying the run writes a chain (a run without it was written before them)
MANIFEST_KEY = "tamper_evidence"
FORMAT = {"chain": "sha256-episodes-lines", "version": 1}


def genesis() -> bytes:
    """``h_0``: the head of an empty file."""
    return hashlib.sha256(SEED).digest()


def step(head: bytes, line: bytes) -> bytes:
    """The head after appending ``line`` (its bytes with the newline) to a file of head ``head``."""
    return hashlib.sha256(head + line).digest()


def split_lines(data: bytes) -> tuple[list[bytes], bytes]:
    """The complete lines of ``data`` (each with its newline) and the unterminated rest."""
    end = data.rfind(b"\n") + 1
    lines = [raw + b"\n" for raw in data[:end].split(b"\n")[:-1]]
    return lines, data[end:]


def heads_of(lines: list[bytes]) -> list[bytes]:
    """``[h_1, ..., h_n]`` of ``lines``."""
    head, heads = genesis(), []
    for line in lines:
        head = step(head, line)
        heads.append(head)
    return heads


def entry(kind: str, **fields: Any) -> bytes:
    """One ``integrity.jsonl`` line of the chain."""
    return (json.dumps({"chain": kind, **fields}, sort_keys=True) + "\n").encode()


@dataclass
class ChainState:
    """What the chain entries of ``integrity.jsonl`` say the file must hold."""

    heads: dict[int, str] = field(default_factory=lambda: {0: genesis().hex()})
    closed: bool = False  # the last session ended normally: nothing may be missing
    in_session: bool = False  # an open entry came and no close since: lines may follow
    manifest_sha256: str | None = None
    # a close entry that amended the manifest (end-of-run records) names the new digest; until
    # the next open entry the manifest it replaced is accepted too (a kill between the entry
    # and the replacement leaves that one)
    manifest_replaced: str | None = None
    entries: int = 0  # chain entries read
    problem: str | None = None  # the first inconsistency inside integrity.jsonl itself
    prior: str | None = None  # the first tampering a session recorded before rewriting
    prior_line: int | None = None
    # the files as they were before the last open entry: what a kill between that entry and
    # the changes it describes leaves; valid until a line or close entry follows it
    fallback: ChainState | None = None

    @property
    def lines(self) -> int:
        """Lines the chain covers."""
        return max(self.heads)

    def _cut(self, lines: Any, head: Any, where: str) -> bool:
        if not isinstance(lines, int) or self.heads.get(lines) != head:
            self.problem = self.problem or f"{where} does not continue the chain"
            return False
        self.heads = {n: h for n, h in self.heads.items() if n <= lines}
        return True

    def read(self, number: int, item: dict[str, Any]) -> None:
        """Take in the chain entry on ``integrity.jsonl`` line ``number``."""
        self.entries += 1
        kind, where = item.get("chain"), f"integrity.jsonl line {number}"
        if kind == "line":
            n = item.get("n")
            if not self.in_session or n != self.lines + 1 or not isinstance(item.get("head"), str):
                self.problem = self.problem or f"{where} is out of sequence"
                return
            self.heads[n] = item["head"]
            self.closed, self.fallback = False, None
        elif kind == "open":
            self.fallback = copy.copy(self)
            self.fallback.heads = dict(self.heads)
            self.fallback.fallback = None
            self.closed, self.in_session = False, True
            self.manifest_sha256, self.manifest_replaced = item.get("manifest_sha256"), None
            if item.get("prior") and self.prior is None:
                self.prior, self.prior_line = item["prior"], item.get("prior_line")
            rewrite = item.get("rewrite")
            if rewrite is not None:
                heads = rewrite.get("heads") if isinstance(rewrite, dict) else None
                if not isinstance(heads, list) or len(heads) != item.get("lines"):
                    self.problem = self.problem or f"{where} holds a malformed rewrite"
                    return
                self.heads = {0: genesis().hex(), **{i: h for i, h in enumerate(heads, 1)}}
            self._cut(item.get("lines"), item.get("head"), where)
        elif kind == "close":
            if self._cut(item.get("lines"), item.get("head"), where):
                self.closed, self.in_session, self.fallback = True, False, None
                amended = item.get("manifest_sha256")
                if isinstance(amended, str):
                    self.manifest_replaced, self.manifest_sha256 = self.manifest_sha256, amended
        else:
            self.problem = self.problem or f"{where} is of no known kind"
