"""The capabilities only some suites have: each a small abstract class a suite also derives
from (next to :class:`~travelgym.core.suite.Suite`), so a command asks the registry which suites
support it (:func:`travelgym.core.registry.capable`)."""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from travelgym.core.suite import Suite, SuiteOptions


class ExactGroundTruth(ABC):
    """Capability: an exact ground truth per task (``travelgym solve``)."""

    @abstractmethod
    def solve(self, task_ids: Sequence[str], seed: int,
              data_dir: Path | None) -> tuple[Path, list[Any]]:  # fmt: skip
        """``(where the ground truth is stored, the chosen tasks' ground truths)``."""

    @abstractmethod
    def format_solution(self, path: Path, truths: list[Any]) -> str:
        """:meth:`solve` as text."""


class RawIngest(ABC):
    """Capability: normalise raw data into the suite's database (``travelgym ingest``)."""

    @abstractmethod
    def ingest(self, raw_dir: Path | None, out: Path | None, options: SuiteOptions,
               data_dir: Path | None) -> dict[str, Any]:  # fmt: skip
        """Write the suite's database from raw data: ``raw_dir`` and ``out`` as the command
        line gives them (either may be ``None``: a suite that needs one raises
        :class:`~travelgym.core.errors.UserError`), ``options`` the suite's own ``ingest``
        flags, ``data_dir`` the data directory. Returns its metadata (with ``path`` and
        ``content_hash``)."""


class TaskGeneration(ABC):
    """Capability: regenerate the task file (``travelgym generate-tasks``)."""

    @abstractmethod
    def generate_tasks(
        self, out: Path, task_seed: int | None, data_dir: Path | None, db_seed: int = 0
    ) -> str:
        """Write a task file drawn on database seed ``db_seed`` to ``out``; return a one-line
        summary."""


class RunAnalysis(ABC):
    """Capability: the paper's analyses over run directories (``travelgym analyze``). A suite
    names its three functions in ``analysis_functions`` (``"package.module:function"``, imported
    on first use): ``analyze_runs(run_dirs, *, resamples, seed, allow_mixed)`` (every metric of
    the runs and their comparisons, bootstrapped with ``resamples`` and ``seed``; runs on
    different tasks or data refused unless ``allow_mixed``), ``write_plots(result, out_dir)``
    (the figures written, their paths) and ``format_analysis(result)`` (the text); and
    ``columns``, the :class:`~travelgym.core.columns.Column` of every column the text prints
    (its legend: ``analyze --legend``)."""

    analysis_functions: ClassVar[dict[str, str]]

    def _analysis_function(self, name: str) -> Callable[..., Any]:
        module, _, function = self.analysis_functions[name].partition(":")
        return getattr(importlib.import_module(module), function)

    def analyze(self, run_dirs: Sequence[Path], *, resamples: int, seed: int,
                allow_mixed: bool, plots: Path | None) -> dict[str, Any]:  # fmt: skip
        """Every metric of the runs (and their comparisons); figures written to ``plots``, their
        paths listed under ``"plots"``."""
        result = self.analyze_runs(list(run_dirs), resamples=resamples, seed=seed,
                                   allow_mixed=allow_mixed)  # fmt: skip
        if plots is not None:
            result["plots"] = [str(p) for p in self.write_plots(result, plots)]
        return result

    def analyze_runs(self, run_dirs: list[Path], *, resamples: int, seed: int,
                     allow_mixed: bool) -> dict[str, Any]:  # fmt: skip
        """The suite's ``analyze_runs`` (see the class docstring)."""
        return self._analysis_function("analyze_runs")(run_dirs, resamples=resamples, seed=seed,
                                                       allow_mixed=allow_mixed)  # fmt: skip

    def write_plots(self, result: dict[str, Any], out_dir: Path) -> list[Path]:
        """Write :meth:`analyze_runs`'s figures into ``out_dir``; the paths written."""
        return self._analysis_function("write_plots")(result, out_dir)

    def format_analysis(self, result: dict[str, Any]) -> str:
        """:meth:`analyze` as text."""
        return self._analysis_function("format_analysis")(result)

    def analysis_legend(self) -> str:
        """One line per column of :meth:`format_analysis`'s tables: label, unit, meaning and
        JSON key."""
        from travelgym.core.columns import legend
        from travelgym.core.summary_table import OUTCOME_COLUMNS

        columns = (*self._analysis_function("columns"), *OUTCOME_COLUMNS)
        return legend(columns, title="Columns")


class Annotation(ABC):
    """Capability: human annotation sheets of a run (``travelgym annotate``)."""

    @abstractmethod
    def export_sheet(self, run_dir: Path, out: Path, *, conversations: int, seed: int, fmt: str,
                     responses: int | None) -> str:  # fmt: skip
        """Write an annotation sheet; return a one-line summary."""

    @abstractmethod
    def summarize_sheet(self, sheet: Path) -> dict[str, Any]:
        """The statistics of a filled sheet."""

    @abstractmethod
    def format_sheet_summary(self, result: dict[str, Any]) -> str:
        """:meth:`summarize_sheet` as text."""


class ChainAnnotation(ABC):
    """Capability: Chain-of-Action annotation of the suite's tasks (``travelgym chains``) and
    the annotated chains as SFT chats (``travelgym export sft --chains``)."""

    @abstractmethod
    def annotate_chains(self, annotator: str, out: Path, options: SuiteOptions, *,
                        task_ids: list[str] | None, limit: int | None, base_url: str | None,
                        client_options: dict[str, Any], concurrency: int, db_seed: int,
                        data_dir: Path | None) -> dict[str, Any]:  # fmt: skip
        """Annotate the tasks the options select with ``annotator`` (a spec) and write the
        chains file ``out`` and its manifest; return the summary. A bad spec is a
        :class:`~travelgym.core.errors.UserError`; an annotator's failure on one task is
        recorded on that task's line."""

    @abstractmethod
    def format_chains(self, result: dict[str, Any]) -> str:
        """:meth:`annotate_chains`'s summary as text."""

    @abstractmethod
    def chain_examples(self, path: Path, min_score: float, data_dir: Path | None,
                       **filters: Any) -> Any:  # fmt: skip
        """``((chat messages, tool schemas), None)`` for each chain of the file ``path`` kept
        for SFT and ``(None, reason)`` for each left out (``min_score``: the minimum reward;
        ``filters``: the suite's :attr:`Suite.sft_filters` that were given); a bad file is a
        ``ValueError`` naming it."""


class QualityControl(ABC):
    """Capability: quality control of the suite's generated tasks (``travelgym quality``): an
    automatic stage (a rule or LLM backend scoring each task and giving an operation code),
    applying the codes into a filtered task set, and a human stage (a sheet and its summary)."""

    @abstractmethod
    def quality_assess(self, out: Path, *, backend: str, split: str, limit: int | None,
                       chains: Path | None, data_dir: Path | None, scale: str, db_seed: int,
                       base_url: str | None, concurrency: int) -> dict[str, Any]:  # fmt: skip
        """Judge the tasks with ``backend`` (``rules`` or a model) into the QC file ``out``."""

    @abstractmethod
    def quality_apply(self, qc: Path, out_dir: Path, *, data_dir: Path | None) -> dict[str, Any]:
        """Apply a QC file's codes: the filtered task files and a report in ``out_dir``."""

    @abstractmethod
    def quality_sheet(self, qc: Path, out: Path, *, sample: int, seed: int,
                      data_dir: Path | None) -> str:  # fmt: skip
        """Write a reviewers' sheet of a stratified sample; return a one-line summary."""

    @abstractmethod
    def quality_summary(self, sheet: Path) -> dict[str, Any]:
        """Agreement and kappa of a filled sheet."""

    @abstractmethod
    def format_quality(self, kind: str, result: dict[str, Any]) -> str:
        """A result of ``assess``, ``apply`` or ``summarize`` as text."""


CAPABILITIES: dict[str, type] = {
    "solve": ExactGroundTruth,
    "ingest": RawIngest,
    "generate-tasks": TaskGeneration,
    "analyze": RunAnalysis,
    "annotate": Annotation,
    "quality": QualityControl,
    "chains": ChainAnnotation,
}


def capabilities_of(suite: Suite) -> list[str]:
    """The capability names ``suite`` supports, in :data:`CAPABILITIES` order."""
    return [name for name, cap in CAPABILITIES.items() if isinstance(suite, cap)]
