"""The ``travelgym`` console script: the command line (:mod:`travelgym.cli`), whose imports take
a moment. A Ctrl-C during them ends the command as one during the command does (one line,
exit status 130), not with a traceback of the import under way."""

from __future__ import annotations

import sys


def main() -> None:
    """Import and run the command line."""
    try:
        from travelgym.cli import main as command_line
    except KeyboardInterrupt:
        sys.stderr.write("\ninterrupted (SIGINT): stopped before starting\n")
        raise SystemExit(130) from None
    command_line()
