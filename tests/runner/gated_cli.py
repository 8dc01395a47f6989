"""``python -m tests.runner.gated_cli RELEASE ARGS``: the ``travelgym`` CLI whose run pauses after
each saved episode until the file RELEASE exists (at most 120 s), so that a test can act while
the run certainly still holds its directory, however fast its episodes are."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from travelgym.cli import main
from travelgym.runner.store import RunStore

WAIT_S = 120


def gate(release: Path) -> None:
    """Make every :meth:`RunStore.append` wait for ``release`` after saving its episode."""
    append = RunStore.append

    def paused(self, episode):
        append(self, episode)
        deadline = time.monotonic() + WAIT_S
        while not release.exists() and time.monotonic() < deadline:
            time.sleep(0.01)

    RunStore.append = paused


if __name__ == "__main__":
    gate(Path(sys.argv.pop(1)))
    main()
