"""For tests that edit a run directory's files on purpose (a hostile agent message, a simulated
kill): :func:`reseal` records the files as they now are in the digest chain, as a session that
rewrote them would, so that only the edit under test is what the test sees."""

from __future__ import annotations

import hashlib
from pathlib import Path

from travelgym.runner import chain
from travelgym.runner.integrity import INTEGRITY
from travelgym.runner.store import EPISODES, MANIFEST


def reseal(run_dir: Path) -> None:
    """Append an ``open`` entry re-chaining ``run_dir``'s ``episodes.jsonl`` and manifest as
    they are now (left open, as a killed session leaves it: a torn last line stays allowed)."""
    run_dir = Path(run_dir)
    episodes = run_dir / EPISODES
    lines, _ = chain.split_lines(episodes.read_bytes() if episodes.exists() else b"")
    heads = chain.heads_of(lines)
    manifest = hashlib.sha256((run_dir / MANIFEST).read_bytes()).hexdigest()
    entry = chain.entry("open", lines=len(lines), head=(heads[-1] if heads else chain.genesis()).hex(),
                        manifest_sha256=manifest, prior=None, prior_line=None,
                        rewrite={"reason": "test edit", "heads": [h.hex() for h in heads]})  # fmt: skip
    with open(run_dir / INTEGRITY, "ab") as fh:
        fh.write(entry)
