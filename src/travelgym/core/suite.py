"""The Suite protocol: what a benchmark gives the shared layers (runner, CLI, MCP, report,
training), so that none of them ever names a benchmark.

A suite is a package that subclasses :class:`Suite` and registers the class under the
``travelgym.suites`` entry-point group. The protocol covers what every suite has (data, tools,
tasks, agents, episodes, scores); what only some suites can do is a separate small capability
class (:mod:`travelgym.core.capabilities`) that the suite also derives from, so a command asks
the registry which suites support it (:func:`travelgym.core.registry.capable`).
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from travelgym.core.answers import NOT_RECORDED
from travelgym.core.columns import Column
from travelgym.core.episode import EPISODE_FORMAT, EpisodeBase
from travelgym.core.options import SuiteOptions as SuiteOptions
from travelgym.core.options import suite_flag as suite_flag
from travelgym.core.outcomes import add_outcome
from travelgym.core.suite_run import AgentFactory as AgentFactory
from travelgym.core.suite_run import ProgressTally as ProgressTally
from travelgym.core.suite_run import SuiteRun


class Imported:
    """A suite's class attribute read from a module when first asked (``"package.module:NAME"``),
    so that listing suites never imports their heavy modules (a scorer's version, ...)."""

    def __init__(self, target: str) -> None:
        self.target = target

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        module, name = self.target.split(":")
        return getattr(importlib.import_module(module), name)


#: the scorer version of a run whose manifest records none (made before versions were recorded)
FIRST_SCORER_VERSION = "1"
#: :meth:`Suite.rescorer`'s function: ``(episode line, answer) -> the score the run stores``
Rescore = Callable[[dict[str, Any], Any], "dict[str, Any] | None"]


@dataclass(frozen=True)
class AgentKind:
    """One ``KIND[:ARG]`` form of a suite's agent specs. ``arg``: the argument's metavar
    (``None``: the kind takes no argument); ``choices``: the only arguments allowed."""

    name: str
    arg: str | None = "MODEL"
    choices: tuple[str, ...] = ()
    runs_code: bool = False  # its agents run model-written code (needs the sandbox)
    calls_llm: bool = True


@dataclass(frozen=True)
class SftFilter:
    """An option a suite adds to ``export sft``: ``--FLAG``, a flag or a number in [0, 1] (for
    the suite's runs only), which :meth:`Suite.sft_keep` receives as the keyword :attr:`name`."""

    flag: str  # without the dashes, e.g. ``keep-failing``
    help: str
    is_flag: bool = False

    @property
    def name(self) -> str:
        return self.flag.replace("-", "_")


@dataclass(frozen=True)
class BuiltData:
    """A suite's database as built (or found current): where it is and its metadata."""

    path: Path
    metadata: dict[str, str]
    built: bool


# what the shell adds to a suite's summary (counts, usage, pass^k, the session's wall time)
SHELL_SUMMARY_KEYS = frozenset({"outcomes", "usage", "pass_k", "episodes_wall_s"})


class Suite(ABC):
    """A benchmark behind one interface. An evaluation-only suite gives ten members: ``name``,
    ``title``, ``episode_model``, ``agent_kinds``, and implements :meth:`build`,
    :meth:`toolset`, :meth:`list_tasks`, :meth:`open_run`, :meth:`summarize_episodes`
    and :meth:`succeeded`; everything else has a default it may override (its own flags in
    ``Options``, text, statistics, a report page, an answers-file format, training, ...).
    Expensive imports stay inside the methods, so listing suites stays cheap."""

    name: ClassVar[str]
    title: ClassVar[str]
    description: ClassVar[str] = ""
    order: ClassVar[int] = 100  # where listings put it (then by name)
    Options: ClassVar[type[SuiteOptions]] = SuiteOptions
    episode_model: ClassVar[type[EpisodeBase]]
    episode_format: ClassVar[str] = EPISODE_FORMAT  # the current format_version of its lines
    # format_version -> function upgrading a line's dict to the next version
    episode_upgraders: ClassVar[dict[str, Callable[[dict[str, Any]], dict[str, Any]]]] = {
        "1": add_outcome
    }
    agent_kinds: ClassVar[tuple[AgentKind, ...]]
    answer_markers: ClassVar[tuple[str, ...]] = ()  # keys only this suite's answers carry
    summary_details: ClassVar[tuple[str, ...]] = ()  # summary keys left out of ``run --json``
    # the columns of the suite's metrics (key in a summary's ``overall``, label, unit,
    # precision, legend), in the order every table prints them: ``run``, ``score``,
    # ``analyze`` and the report name and round a figure the same way through them
    metric_columns: ClassVar[tuple[Column, ...]] = ()
    optional_metrics: ClassVar[tuple[str, ...]] = ()  # columns left out where no row has a value
    tools_run_code: ClassVar[bool] = False  # a tool runs model-written code (the sandbox)
    # the agent kind (one of agent_kinds, taking a MODEL) that drives a chat model through the
    # suite's tools: what integrations that bring their own model (inspect_ai, play) run
    model_agent: ClassVar[str | None] = None
    # the option (a field of Options) naming the simulated user, for suites with one in the loop;
    # its value ``human`` puts a person at the terminal in the user's place (``travelgym play``)
    user_option: ClassVar[str | None] = None
    # Unicode ranges (first, last code point) of the suite's text beyond Latin script (e.g.
    # CJK), for integrations whose spaces list their characters (Gymnasium's Text)
    text_ranges: ClassVar[tuple[tuple[int, int], ...]] = ()

    # the task fields hidden from the agent: an answer key (a witness plan, an annotated plan)
    # and what it must find out itself (a profile it infers). Declared once here, they are kept
    # out of every task record handed out (exported datasets without --ground-truth, Gymnasium
    # info, inspect metadata, MCP) by public_task, and make up hidden_task
    answer_key_fields: ClassVar[tuple[str, ...]] = ()
    dataset_column_help: ClassVar[dict[str, str]] = {}  # what its dataset_columns mean

    def public_task(self, task: Any) -> dict[str, Any]:
        """``task``'s record as JSON with nothing hidden from the agent at its start: by
        default without :attr:`answer_key_fields` (a suite whose tasks hide parts of a field,
        e.g. constraints revealed later, narrows it further)."""
        return task.model_dump(mode="json", exclude=set(self.answer_key_fields))

    def listed_task(self, task: Any) -> dict[str, Any]:
        """``task`` as ``travelgym tasks --json`` lists it: by default :meth:`public_task` (a
        suite whose tasks are large lists a summary of the same public fields)."""
        return self.public_task(task)

    def hidden_task(self, task: Any) -> dict[str, Any]:
        """What :meth:`public_task` leaves out of ``task``, as JSON by name (an export's
        ground truth): by default the :attr:`answer_key_fields`."""
        dump = task.model_dump(mode="json", include=set(self.answer_key_fields))
        return {name: dump.get(name) for name in self.answer_key_fields}

    def dataset_splits(self, options: SuiteOptions,
                       data_dir: Path | None = None) -> dict[str, SuiteOptions]:  # fmt: skip
        """The splits ``export dataset`` writes for ``options`` (over the data in ``data_dir``):
        split name -> the options that open its tasks (default: one ``test`` split)."""
        return {"test": options}

    def dataset_columns(self, task: Any) -> dict[str, Any]:
        """The columns a person browses of ``task`` in an exported dataset (level, city...):
        by default its record's top-level text, number and flag fields, answer key left out."""
        dump = self.public_task(task)
        return {k: v for k, v in dump.items() if isinstance(v, str | int | float | bool)}

    def dataset_ground_truth(self, run: SuiteRun) -> dict[str, dict[str, Any]]:
        """The answer key kept apart from the tasks of ``run`` (an open :class:`SuiteRun`), by
        task id: name -> JSON value (e.g. an exact ground truth); none by default."""
        return {}

    def options(self, **given: Any) -> SuiteOptions:
        """The suite's options from the flags given (``None`` values mean "not given")."""
        return self.Options(**{k: v for k, v in given.items() if v is not None})

    def options_of_run(self, manifest: dict[str, Any]) -> SuiteOptions:
        """The options a run directory's ``manifest`` was made with, as far as they pick its
        data (e.g. the database scale); the defaults for a suite with none."""
        return self.options()

    def options_call_llm(self, options: SuiteOptions) -> bool:
        """Whether the options make the run call an LLM besides the agent (a simulated user)."""
        return False

    @property
    def agent_usage(self) -> str:
        """The agent spec forms, for error messages and help (default: every agent kind's
        ``KIND:ARG``, its choices listed)."""
        forms = []
        for kind in self.agent_kinds:
            if kind.arg is None:
                forms.append(kind.name)
            else:
                forms.append(f"{kind.name}:{'|'.join(kind.choices) if kind.choices else kind.arg}")
        return ", ".join(forms)

    @property
    def default_agents(self) -> tuple[str, ...]:
        """The agents ``travelgym run`` runs when none is named (default: the first agent kind
        that calls no model, with its first choice)."""
        for kind in self.agent_kinds:
            if not kind.calls_llm:
                return (f"{kind.name}:{kind.choices[0]}" if kind.choices else kind.name,)
        return ()

    # data
    @abstractmethod
    def build(self, options: SuiteOptions, seed: int, data_dir: Path | None,
              force: bool = False) -> BuiltData:  # fmt: skip
        """Build the suite's database where it is missing or stale."""

    def stats(self, options: SuiteOptions, seed: int, db: Path | None, data_dir: Path | None,
              plots: Path | None) -> dict[str, Any]:  # fmt: skip
        """Statistics of the database (``db`` or the generated one), plots written to ``plots``
        (default: its path, metadata and rows per table; no plots)."""
        from travelgym.core.suite_defaults import database_stats

        return database_stats(db if db is not None else self.build(options, seed, data_dir).path)

    def format_stats(self, result: dict[str, Any]) -> str:
        """:meth:`stats` as text."""
        from travelgym.core.text_table import format_fields

        return format_fields(result)

    # tools
    @abstractmethod
    def toolset(self) -> Any:
        """The suite's tools (a :class:`~travelgym.toolkit.toolset.ToolSet`: the functions, the
        wording of their reference and the MCP server's instructions)."""

    def tool_registry(self) -> Any:
        """The suite's :class:`~travelgym.toolkit.registry.ToolRegistry` (its toolset's)."""
        return self.toolset().registry()

    def tool_reference(self) -> str:
        """The tools' Markdown reference (its toolset's)."""
        return self.toolset().reference()

    def tool_server(self, options: SuiteOptions, seed: int, db: Path | None,
                    data_dir: Path | None) -> tuple[Callable[[], Any], str]:  # fmt: skip
        """``(context factory, instructions)`` for serving the tools (one context per MCP
        connection; default: the tools' context class, over the database where it opens one,
        and the toolset's introduction)."""
        from travelgym.core.suite_defaults import tool_server

        return tool_server(self, db if db is not None else self.build(options, seed, data_dir).path)

    # tasks
    @abstractmethod
    def list_tasks(self, options: SuiteOptions, data_dir: Path | None = None) -> list[Any]:
        """Every task the options select (for ``travelgym tasks``), from the data in
        ``data_dir`` (the default data directory for ``None``)."""

    def format_tasks(self, tasks: list[Any]) -> str:
        """:meth:`list_tasks` as a table (default: each task's :meth:`dataset_columns`)."""
        from travelgym.core.text_table import format_table

        rows = [self.dataset_columns(t) for t in tasks]
        header = list(dict.fromkeys(k for row in rows for k in row))
        return format_table(header, [[row.get(k) for k in header] for row in rows])

    # runs
    @abstractmethod
    def open_run(self, options: SuiteOptions, task_ids: list[str] | None, limit: int | None,
                 db_seed: int, data_dir: Path | None) -> SuiteRun:  # fmt: skip
        """Prepare a run: build data where missing, choose the tasks (explicit ids in order,
        else by the options, then the first ``limit``)."""

    def tally(self) -> ProgressTally:
        """The progress bar's running figures (default: the episode count only)."""
        return ProgressTally(())

    def format_results(self, results: dict[str, dict[str, Any]]) -> str:
        """Summaries by agent label, as the table ``travelgym run`` prints (the outcome counts
        are printed under it by the shell: :func:`travelgym.core.summary_table.outcome_table`;
        default: the :meth:`headline_metrics` of each, through :attr:`metric_columns` where
        the suite declares them)."""
        from travelgym.core.columns import N, table, text_column
        from travelgym.core.text_table import metrics_table

        if not self.metric_columns:
            return metrics_table({k: self.headline_metrics(v) for k, v in results.items()})
        rows = [{"agent": label, **(s.get("overall") or s)} for label, s in results.items()]
        return table([text_column("agent"), N, *self.columns_of(rows)], rows)

    def columns_of(self, records: list[dict[str, Any]]) -> list[Column]:
        """:attr:`metric_columns` less the :attr:`optional_metrics` that no record (a group's
        figures: ``n``, ``FR``, ...) has a value for."""
        from travelgym.core.columns import present

        return present(self.metric_columns, records, self.optional_metrics)

    @abstractmethod
    def summarize_episodes(self, episodes: list[dict[str, Any]],
                           manifest: dict[str, Any] | None = None) -> dict[str, Any]:  # fmt: skip
        """The suite's metrics of ``episodes`` (JSON dicts, as a run directory stores them) of a
        run with ``manifest``: every episode given counts (which ones do is decided before, by
        :func:`travelgym.core.summary.summarize_episodes`, the one caller)."""

    #: the name of the headline metric: the share (percent) of the counted episodes that
    #: :meth:`succeeded`, each task's trials averaged; what the report's leaderboard ranks by
    headline_metric: ClassVar[str] = "success"

    @abstractmethod
    def succeeded(self, episode: dict[str, Any]) -> bool:
        """Whether an episode (a JSON dict) meets the suite's success criterion, the one pass^k
        and pass@k count."""

    def headline_metrics(self, summary: dict[str, Any]) -> dict[str, float]:
        """The headline figures of a :meth:`summarize_episodes` summary, flat (name -> value),
        as integrations report them; by default the rates (floats, counts left out) of its
        ``overall`` entry, or of the summary itself when it has none."""
        overall = summary.get("overall") or {k: v for k, v in summary.items()
                                             if k not in SHELL_SUMMARY_KEYS}  # fmt: skip
        return {k: v for k, v in overall.items() if isinstance(v, float)}

    def task_text(self, task: Any) -> str:
        """What a person reads as ``task`` (a request, a story), e.g. an integration's sample
        input; by default its id."""
        return str(task.task_id)

    # scores
    def score(self, answers: Path, seed: int, data_dir: Path | None, notes: list[str],
              options: SuiteOptions | None = None,
              base_url: str | None = None) -> dict[str, Any] | None:  # fmt: skip
        """Score an answers file or re-score a run directory (``notes``: what is missing, e.g.
        episodes of a killed run; ``options``: the suite's options given to ``score``, ``None``
        for the defaults; ``base_url``: the endpoint of a model the options name, e.g. a
        judge). ``None`` for a run directory: its stored scores stand, summarised by the
        caller (:func:`travelgym.runner.run_summary.score_answers`). Default: run directories
        only."""
        if not answers.is_dir():
            from travelgym.core.errors import UserError

            raise UserError(f"{self.name} scores run directories only, not answers files "
                            f"({answers})")  # fmt: skip
        return None

    # re-deriving a run's answers and scores from its own turns (``score`` of a run directory:
    # travelgym.runner.recheck). A change of what a stored score means is a new scorer_version
    scorer_version: ClassVar[str] = "1"
    scorer_version_key: ClassVar[str] = "scorer_version"  # its key in a run's manifest
    answer_field: ClassVar[str] = "final_answer"  # where an episode line keeps its final answer

    def answer_from_turns(self, episode: dict[str, Any]) -> Any:
        """The final answer of an episode line as its own turns give it: the last answer the
        agent made (``None``: it made none); :data:`NOT_RECORDED` where its turns do not record
        answers (a run written before they did, or a suite that cannot say)."""
        return NOT_RECORDED

    def rescorer(self, run_dir: Path, seed: int, data_dir: Path | None,
                 options: SuiteOptions) -> AbstractContextManager[Rescore | None]:  # fmt: skip
        """A context giving a function that scores one episode line's answer as the run
        scored it (the stored ``score`` the run would have written for that answer), or
        ``None`` where this suite cannot re-score a run (the default)."""
        return nullcontext(None)

    def answer_ids(self, answer: Any) -> set[str]:
        """The ids an answer names (the tools' ids of hotels, places, ...), for the warning
        about ids that no tool result of the episode showed; default none."""
        return set()

    def format_score(self, result: dict[str, Any]) -> str:
        """:meth:`score` as text (default: its :meth:`headline_metrics`)."""
        from travelgym.core.text_table import format_fields

        return format_fields(self.headline_metrics(result))

    # report
    def report_body(self, runs: list[Any], *, data_dir: Path | None, max_result_chars: int,
                    include_analysis: bool) -> Any:  # fmt: skip
        """The suite's part of the HTML report of ``runs`` (all of this suite, each a
        :class:`~travelgym.report.body.ReportRun`: directory, manifest, episodes, label), as a
        :class:`~travelgym.report.body.ReportBody`: its sections, viewer words, keys of the
        embedded data, CSS and viewer script, verdict count, notes and timings. The shell
        (:mod:`travelgym.report.shell`) reads the runs and writes the page; ``max_result_chars``:
        cut tool results longer than this in the data; ``include_analysis``: add analysis
        tables and figures where the suite has them. Default: a table of each run's
        :meth:`headline_metrics`."""
        from travelgym.core.suite_defaults import report_body

        return report_body(self, runs)

    # training ----------------------------------------------------------------------------
    # What :mod:`travelgym.training` needs of a suite (GRPO, SFT export, TRL environments, the
    # tiny test model); it reaches a suite's training side only through these. A suite without
    # one keeps the defaults, which raise :class:`~travelgym.core.errors.Unsupported`.
    trainable: ClassVar[bool] = False  # it implements the training methods (``train``, ``export``)
    training_task_key: ClassVar[str] = "task_id"  # the reset option / dataset column of an item
    training_default: ClassVar[bool] = False  # the suite ``train grpo`` trains by default
    # GRPO settings only this suite reads: setting one away from its default for another
    # suite is an error (and the ``train grpo`` help names the suites that read it)
    training_settings: ClassVar[tuple[str, ...]] = ()
    # the suite's own ``train grpo`` settings (which tasks, which user, the data's scale): a
    # model whose :func:`suite_flag` fields, declared for the command ``grpo``, are its flags
    # and whose values :meth:`grpo_env` reads from ``settings.suite_options``
    TrainingOptions: ClassVar[type[SuiteOptions] | None] = None
    # the models of the suite's flags of the commands that read only them (``chains``,
    # ``quality assess``, ``export sft``: the commands their :func:`suite_flag` fields name),
    # each validating the values given to its commands for this suite
    command_options: ClassVar[tuple[type[SuiteOptions], ...]] = ()
    sft_min_score: ClassVar[float] = 1.0  # ``export sft``'s default ``--min-score``
    sft_min_score_note: ClassVar[str] = ""  # what that minimum means, for the help
    sft_filters: ClassVar[tuple[SftFilter, ...]] = ()  # its own ``export sft`` options
    # its training environment's action is an OpenAI-style assistant message whose native tool
    # calls it runs (the schemas: ``tool_registry().openai_schemas()``); else the message text
    training_tool_calls: ClassVar[bool] = False

    def _no_training(self, what: str) -> Any:
        from travelgym.core.errors import Unsupported

        raise Unsupported(f"{self.name} has no {what}")

    def training_env(self, **kwargs: Any) -> Any:
        """The suite's environment over its shipped data (database built when missing;
        ``kwargs``: ``db_seed``, ``data_dir``, ``limit``, the suite's selection and environment
        options): the environment protocol (:mod:`travelgym.core.environment`: ``areset``,
        ``atransition``, ``fail``, ``breakdown``, ``cut``, ``episode``, ``close``, ``task_key``,
        ``item_ids``, ``native_tools``, ``tool_schemas``) that the one episode loop, GRPO
        rollouts and the integrations drive, plus the Gymnasium-style ``reset``/``step``."""
        return self._no_training("training environment")

    def grpo_env(self, settings: Any) -> Any:
        """:meth:`training_env` for ``travelgym train grpo``'s
        :class:`~travelgym.training.grpo_config.GRPOSettings`."""
        return self._no_training("training environment")

    def reward(self, episode: Any, **kwargs: Any) -> Any:
        """The reward of a scored episode (its model or JSON dict) as a breakdown model whose
        ``total`` is the scalar reward; an unscored episode is a ValueError."""
        return self._no_training("reward")

    def warmup_reward(self, episode: Any, breakdown: dict[str, Any] | None) -> float:
        """The warm-up reward of a rollout's episode and reward breakdown (``--reward
        format``)."""
        return self._no_training("warm-up reward")

    def compact_prompt(self) -> Callable[[list[dict[str, Any]], Any], list[dict[str, Any]]]:
        """A rollout ``prompt_fn(messages, env)`` giving small models a short prompt
        (``--prompt compact``)."""
        return self._no_training("compact prompt")

    def sft_keep(self, episode: dict[str, Any], min_score: float, **filters: Any) -> str | None:
        """Why a scored episode (JSON dict, not an error) is left out of an SFT export (a
        reason such as ``below_min_score``), or ``None`` to keep it. ``filters``: the values
        of the suite's :attr:`sft_filters` that were given (by name; those not given absent)."""
        return self._no_training("SFT export")

    def sft_chat(self, episode: dict[str, Any],
                 source: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:  # fmt: skip
        """``(OpenAI chat messages, tool schemas)`` of a kept episode: its transcript, or one
        rebuilt from its trajectory (``source``: the run, a
        :class:`~travelgym.training.sft.RunSource` with ``conn``, ``manifest``, ``episodes``,
        ``data_dir``, ``dir`` and a ``cache`` dict for the suite); raises
        :class:`~travelgym.training.chat.ReplayError` when it cannot be rebuilt."""
        return self._no_training("SFT export")

    def tiny_texts(self) -> list[str]:
        """Texts for the tiny test model's tokenizer (prompts, tool schemas, example actions,
        tasks); none by default."""
        return []
