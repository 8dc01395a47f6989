"""The ``travelgym`` command line: one entry point, one module per command group. Every
command reaches its suite through the registry (:mod:`travelgym.core.registry`)."""

from __future__ import annotations

import sys

import click

from travelgym.clikit import GuardedGroup
from travelgym.clikit.errors import ASKS_FOR_HELP, exit_on_sigterm, interrupt_on_sigint
from travelgym.version import __version__


@click.group(cls=GuardedGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="travelgym")
def main() -> None:
    """travelgym: benchmarks and training environments for travel-planning LLM agents."""
    import signal
    import threading

    from travelgym.parallel import build_workers
    from travelgym.progress import delay_s

    # a bad TRAVELGYM_BUILD_WORKERS or TRAVELGYM_PROGRESS_DELAY stops any command before it
    # builds anything (not only one whose build happens to run long enough for a bar), but
    # not a command's --help
    if not click.get_current_context().meta.get(ASKS_FOR_HELP):
        build_workers()
        delay_s()
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, exit_on_sigterm)
        if hasattr(signal, "SIGHUP") and signal.getsignal(signal.SIGHUP) is signal.SIG_DFL:
            signal.signal(signal.SIGHUP, exit_on_sigterm)  # not under nohup (ignored there)
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:  # not if ignored
            signal.signal(signal.SIGINT, interrupt_on_sigint)


from travelgym.cli import analysis, data  # noqa: E402 - the groups add their commands to main
from travelgym.cli.chains import chains  # noqa: E402 - Chain-of-Action annotation
from travelgym.cli.export import export  # noqa: E402 - training data (SFT export)
from travelgym.cli.play import play  # noqa: E402 - a person plays an episode
from travelgym.cli.quality import quality  # noqa: E402 - quality control of tasks
from travelgym.cli.running import run  # noqa: E402
from travelgym.cli.runs import runs  # noqa: E402 - the run directories found
from travelgym.cli.scoring import score  # noqa: E402
from travelgym.cli.train import train  # noqa: E402 - GRPO / SFT (the train extra)

data.register(main)
main.add_command(run)
main.add_command(runs)
main.add_command(score)
analysis.register(main)
main.add_command(chains)
main.add_command(export)
main.add_command(quality)
main.add_command(play)
main.add_command(train)

if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
