"""COMPASS's options: the flags of its commands (the simulated user, task level, trials, turn
limit, prompt, personas, task file) and those of ``train grpo``."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from travelgym.core.options import SuiteOptions, suite_flag

DEFAULT_MAX_TURNS = 30  # user turns of a conversation


class CompassTrainingOptions(SuiteOptions):
    """COMPASS's own flags of ``train grpo``."""

    level: int | None = suite_flag(None, help="Train on tasks of this level (1-3) only.",
                                   commands=("grpo",), ge=1, le=3)  # fmt: skip
    user: str = suite_flag("template", help="The simulated user: template or llm:MODEL.",
                           commands=("grpo",))  # fmt: skip
    user_turns: int = suite_flag(5, help="The most user turns of a training conversation.",
                                 commands=("grpo",), ge=1)  # fmt: skip


class CompassOptions(SuiteOptions):
    """COMPASS's own flags."""

    user: str = suite_flag(
        "template", help="The simulated user: template, llm:MODEL, local:smollm2 / "
        "local:PATH.gguf or hf:CHECKPOINT_DIR.", commands=("run",))  # fmt: skip
    level: int | None = suite_flag(
        None, help="Only tasks of this level (1-3).", commands=("run", "tasks", "export"),
        conflicts=("task_ids",), counterpart="difficulty", ge=1, le=3)  # fmt: skip
    trials: int = suite_flag(1, help="Conversations per task (pass^k and pass@k count them).",
                             commands=("run",), ge=1, le=100)  # fmt: skip
    max_turns: int = suite_flag(
        DEFAULT_MAX_TURNS, help="The most turns of a conversation.", commands=("run",),
        counterpart="max_steps", ge=2, le=200)  # fmt: skip
    # the model agents' system prompt: paper (Appendix G.1/G.3, no search strategy) or
    # search-hints (adds one); recorded in the manifest
    prompt: Literal["paper", "search-hints"] = suite_flag(
        "paper", help="The agent's system prompt: paper (no search strategy) or search-hints "
        "(adds one); recorded in the manifest.", commands=("run",))  # fmt: skip
    tasks_file: Path | None = suite_flag(
        None, help="Task file (default: the one shipped with travelgym).", commands=("tasks",),
        path="file", metavar="FILE")  # fmt: skip
    # each conversation's persona: drawn per (seed, task, trial), the task file's, or all 108
    # types spread evenly over the run (travelgym.suites.compass.personas)
    personas: Literal["sampled", "task", "balanced"] = suite_flag(
        "sampled", help="Each conversation's simulated-user persona: sampled per (seed, task, "
        "trial), the task file's, or every persona type spread evenly over the run.",
        commands=("run",))  # fmt: skip
