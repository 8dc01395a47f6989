"""Behavior2Trip's options: the flags its commands take (split, difficulty, scale, instance
set, noise level, the judge, RQ1's withheld trajectory and simulated user) and those of
``train grpo``."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import AliasChoices, field_validator

from travelgym.core.options import SuiteOptions, suite_flag

Difficulty = Literal["easy", "medium", "hard"]
Scale = Literal["small", "full"]
SCALE_HELP = ("Database scale (small: ~80-120 POIs per category and city; full: the paper's "
              "Table 6 counts).")  # fmt: skip


class TripOptions(SuiteOptions):
    """Behavior2Trip's own flags."""

    split: Literal["train", "test"] = suite_flag(
        "test", help="The split (export: every split when not given).",
        commands=("run", "tasks", "export"))  # fmt: skip
    difficulty: Difficulty | None = suite_flag(
        None, help="Only instances of this difficulty.", commands=("run", "tasks", "export"),
        conflicts=("task_ids",), counterpart="level")  # fmt: skip
    max_steps: int = suite_flag(25, help="The most agent steps of an episode.", commands=("run",),
                                counterpart="max_turns", ge=1, le=200)  # fmt: skip
    scale: Scale = suite_flag("small", help=SCALE_HELP,
                              commands=("run", "tasks", "build", "stats", "serve-mcp", "score",
                                        "export"))  # fmt: skip
    # the LLM judge's model (the "LLM" pass rate); None: no judge
    judge: str | None = suite_flag(
        None, help="Also grade every delivered plan with this LLM (the LLM pass rate; at "
        "--base-url; recorded in the manifest and each score).", commands=("run", "score"),
        metavar="MODEL")  # fmt: skip
    instances: Literal["filtered", "unfiltered"] = suite_flag(
        "filtered", help="Instance set: the default one filtered by the automatic quality "
        "control, or the unfiltered one it is drawn from (docs/behavior2trip/quality.md).",
        commands=("run", "tasks", "score", "export"))  # fmt: skip
    noise: float = suite_flag(
        0.0, help="Harder behaviour: the level (0-1, at most two decimals) of real-platform "
        "noise in the trajectories, favourites of off-profile POIs and drifting sessions; "
        "noisy instances have files of their own (docs/behavior2trip/instances.md).",
        commands=("run", "tasks", "stats", "score"), metavar="P", ge=0.0, le=1.0)  # fmt: skip
    # RQ1 (docs/behavior2trip/rq1.md): plan without the trajectory, optionally asking a user
    no_trajectory: bool = suite_flag(
        False, help="RQ1: withhold the behaviour trajectory (the agent gets only the request; "
        "the prompt says none is available).", commands=("run",))  # fmt: skip
    clarify: str | None = suite_flag(
        None, help="RQ1, with --no-trajectory: let the agent ask a simulated user who knows the "
        "hidden profile (AskUser tool): 'template', or a MODEL answering at --base-url.",
        commands=("run",), metavar="USER")  # fmt: skip
    clarify_turns: int | None = suite_flag(
        None, help="With --clarify: the most questions the user answers per episode (default 5).",
        commands=("run",), metavar="N", ge=1, le=50)  # fmt: skip

    @field_validator("noise")
    @classmethod
    def _noise_level(cls, value: float) -> float:
        from travelgym.suites.behavior2trip.noise import check_noise

        return check_noise(value)

    @field_validator("clarify")
    @classmethod
    def _clarify_needs_no_trajectory(cls, value: str | None, info: Any) -> str | None:
        if value is not None and not info.data.get("no_trajectory"):
            raise ValueError("--clarify needs --no-trajectory (RQ1 asks instead of reading the "
                             "trajectory)")  # fmt: skip
        if value is not None and not value.strip():
            raise ValueError("--clarify needs 'template' or a model name")
        return value

    @field_validator("clarify_turns")
    @classmethod
    def _turns_need_clarify(cls, value: int | None, info: Any) -> int | None:
        if value is not None and info.data.get("clarify") is None:
            raise ValueError("--clarify-turns applies with --clarify only")
        return value

    @property
    def ask_limit(self) -> int | None:
        """The clarification turn limit (``None``: no clarification)."""
        if self.clarify is None:
            return None
        from travelgym.suites.behavior2trip.clarify import DEFAULT_CLARIFY_TURNS

        return self.clarify_turns or DEFAULT_CLARIFY_TURNS


class TripTrainingOptions(SuiteOptions):
    """Behavior2Trip's own flags of ``train grpo`` (the GRPO settings it reads)."""

    difficulty: Difficulty | None = suite_flag(
        None, help="Train on instances of this difficulty only.", commands=("grpo",))  # fmt: skip
    # recorded as db_scale in settings files before the suites declared their training flags
    scale: Scale = suite_flag("small", help=SCALE_HELP, commands=("grpo",),
                              validation_alias=AliasChoices("scale", "db_scale"))  # fmt: skip


class ChainOptions(SuiteOptions):
    """Behavior2Trip's own flags of ``travelgym chains`` (which instances are annotated, on
    which database, with how many steps)."""

    split: Literal["train", "test"] = suite_flag(
        "train", help="The split to annotate.", commands=("chains",))  # fmt: skip
    difficulty: Difficulty | None = suite_flag(
        None, help="Only tasks of this difficulty.", commands=("chains",))  # fmt: skip
    max_steps: int = suite_flag(25, help="Steps an annotator may take per task.",
                                commands=("chains",), ge=1, le=200)  # fmt: skip
    scale: Scale = suite_flag("small", help=SCALE_HELP, commands=("chains",))
    # chains annotate the default (filtered) instance set: the command has no --instances
    instances: Literal["filtered", "unfiltered"] = "filtered"


class QualityOptions(SuiteOptions):
    """Behavior2Trip's own flags of ``quality assess`` (the instances judged)."""

    split: Literal["train", "test", "all"] = suite_flag(
        "test", help="The split judged (all: train and test).",
        commands=("quality assess",))  # fmt: skip
    scale: Scale = suite_flag("small", help="Database scale the instances are drawn on.",
                              commands=("quality assess",))  # fmt: skip


class SftExportOptions(SuiteOptions):
    """Behavior2Trip's own flags of ``export sft`` (what every exported run must have used)."""

    scale: Scale | None = suite_flag(
        None, help="Insist that every run used this database scale (default: each run's "
        "manifest picks its database).", commands=("export sft",))  # fmt: skip
