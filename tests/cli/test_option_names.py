"""One concept, one option name: the generated database's seed is ``--db-seed`` in every
command (``build``, ``stats``, ``tasks``, ``solve``, ``score`` and ``quality assess`` called it
``--seed``, which ``run`` and ``play`` use for the run's own seed)."""

from __future__ import annotations

from tests.clikit.test_progress_switches import _leaf_commands
from travelgym.cli import main


def test_the_database_seed_is_db_seed_everywhere():
    named = {}
    for name, command in _leaf_commands(main).items():
        for param in command.params:
            text = (getattr(param, "help", None) or "").lower()
            if "seed of the" in text and "database" in text:
                named[name] = param.opts
    assert {"build", "stats", "solve", "score", "run", "play", "chains",
            "export dataset", "train grpo", "quality assess"} <= set(named)  # fmt: skip
    assert {n: o for n, o in named.items() if "--db-seed" not in o} == {}
