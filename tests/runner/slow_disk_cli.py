"""``python -m tests.runner.slow_disk_cli ARGS``: the ``travelgym`` CLI on a slow disk that stores
at most 4 KiB per write, 1 ms apart, so that a kill can land while an episode line is written
(and every append goes through the short-write retry)."""

from __future__ import annotations

from tests.runner.faults import FaultyDisk, injected
from travelgym.cli import main

if __name__ == "__main__":
    with injected(FaultyDisk(chunk=4096, delay_s=0.001)):
        main()
