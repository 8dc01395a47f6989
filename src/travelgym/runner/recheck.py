"""``score``'s second look at a run directory: each episode's final answer re-derived from its
own turns (the last answer the agent made) and its score re-derived from that answer with the
scorer the run's manifest records.

The digest chain (:mod:`travelgym.runner.integrity`) says whether the files are as written; this
says whether what they store agrees with itself. A stored answer that is not the last one of
the episode's turns, or a stored score that is not its answer's, is a disagreement (reported
as tampering: the framework never writes one). Where the run's scorer version no longer ships,
scores are not re-derived: the chain alone vouches for them, and the result says so. An id in
an answer that no tool result of its episode showed is a warning only: ids follow documented
formats, so an agent can compose one without a search.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from travelgym.core.answers import NOT_RECORDED
from travelgym.core.errors import UserError
from travelgym.core.outcomes import is_infra_error
from travelgym.core.suite import FIRST_SCORER_VERSION, Suite
from travelgym.runner.chain import split_lines
from travelgym.runner.store import EPISODES, read_manifest
from travelgym.safe_open import read_regular_bytes

SHOWN_PROBLEMS = 5  # disagreements named one by one; the rest are counted


@dataclass
class Recheck:
    """What :func:`recheck_run` found: how many episode lines had their answer and their score
    re-derived, the disagreements (``problems``), ids no tool result showed (``warnings``)
    and what could not be re-derived and why (``notes``)."""

    scorer_version: str
    answers_rederived: int = 0
    scores_rederived: int = 0
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    version_gone: bool = False  # the run's scorer version is not this install's

    @property
    def tampered(self) -> str | None:
        """The disagreements in one line (``None``: none)."""
        if not self.problems:
            return None
        shown = self.problems[:SHOWN_PROBLEMS]
        more = len(self.problems) - len(shown)
        return "; ".join(shown) + (f"; and {more} more disagreement(s)" if more else "")

    def as_json(self) -> dict[str, Any]:
        """The ``recheck`` field of ``score --json``."""
        return {"scorer_version": self.scorer_version, "version_gone": self.version_gone,
                "answers_rederived": self.answers_rederived,
                "scores_rederived": self.scores_rederived, "disagreements": self.problems,
                "warnings": self.warnings, "notes": self.notes}  # fmt: skip


def _tool_results(value: Any, out: list[str]) -> None:
    """The JSON text of every tool call's result found in an episode line (its turns' or its
    steps' ``tool_calls``, code agents' inner calls included)."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "tool_calls" and isinstance(item, list):
                out.extend(json.dumps(c["result"], ensure_ascii=False) for c in item
                           if isinstance(c, dict) and c.get("result") is not None)  # fmt: skip
            _tool_results(item, out)
    elif isinstance(value, list):
        for item in value:
            _tool_results(item, out)


def unseen_ids(ids: set[str], episode: dict[str, Any]) -> list[str] | None:
    """The ids of ``ids`` that no tool result of ``episode`` holds as a whole token; ``None``
    when the episode kept no tool results (scripted agents do not), so nothing can be said."""
    results: list[str] = []
    _tool_results(episode, results)
    if not results:
        return None
    text = "\n".join(results)
    return sorted(i for i in ids if not re.search(rf"(?<!\w){re.escape(i)}(?!\w)", text))


def _episode_lines(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` of each complete line of ``episodes.jsonl`` that is a JSON
    object; the run's strict reader reports the others (a torn last line, bad JSON)."""
    try:
        data = read_regular_bytes(path)
    except FileNotFoundError:
        return []
    lines, _torn = split_lines(data)
    out = []
    for number, raw in enumerate(lines, 1):
        try:
            value = json.loads(raw)
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict):
            out.append((number, value))
    return out


def _first_difference(stored: Any, rescored: Any) -> str:
    """Which field of two scores differs first (for the message)."""
    if isinstance(stored, dict) and isinstance(rescored, dict):
        for key in sorted(set(stored) | set(rescored)):
            if stored.get(key) != rescored.get(key):
                return f"its {key} is {stored.get(key)!r:.60}, its answer's is {rescored.get(key)!r:.60}"
    return "it is not its answer's"


def run_scorer_version(suite: Any, run_dir: Path) -> str:
    """The scorer version a run directory's manifest records (a run made before versions were
    recorded: the first)."""
    return str(read_manifest(run_dir).get(suite.scorer_version_key, FIRST_SCORER_VERSION))


def recheck_run(suite: Any, run_dir: Path, seed: int, data_dir: Path | None,
                options: Any) -> Recheck:  # fmt: skip
    """Re-derive every episode line of ``run_dir``: its final answer from its turns
    (:meth:`~travelgym.core.suite.Suite.answer_from_turns`, compared with its
    ``answer_field``) and, where the run's scorer version is this install's, its score from that
    answer (:meth:`~travelgym.core.suite.Suite.rescorer`, compared with its ``score``). Lines
    that are not episode objects are left to the run's reader; infrastructure errors were never
    scored and are not re-scored."""
    version = run_scorer_version(suite, run_dir)
    check = Recheck(version)
    lines = _episode_lines(Path(run_dir) / EPISODES)
    if not lines:
        return check
    answers: dict[int, Any] = {}
    unrecorded = 0
    for number, episode in lines:
        derived = suite.answer_from_turns(episode)
        if derived is NOT_RECORDED:
            unrecorded += 1
            answers[number] = episode.get(suite.answer_field)
            continue
        check.answers_rederived += 1
        answers[number] = derived
        name = episode.get("episode_id") or f"{episode.get('task_id')}#{episode.get('trial')}"
        if derived != episode.get(suite.answer_field):
            check.problems.append(f"{EPISODES} line {number} ({name!s:.80}): its stored final "
                                  "answer is not the last answer of its own turns")  # fmt: skip
        missing = unseen_ids(suite.answer_ids(derived), episode)
        if missing:
            check.warnings.append(f"{name!s:.80}: id(s) {', '.join(missing[:5])} in its answer "
                                  "appeared in no tool result of the episode")  # fmt: skip
    if unrecorded and type(suite).answer_from_turns is Suite.answer_from_turns:
        check.notes.append(f"{suite.name} does not re-derive answers from turns: the stored "
                           "answers stand, vouched for by the digest chain only")  # fmt: skip
    elif unrecorded:
        check.notes.append(f"{unrecorded} episode(s) do not record their answers in their turns "
                           "(written before they did): their stored answers were not re-derived")  # fmt: skip
    if version != suite.scorer_version:
        check.version_gone = True
        check.notes.append(f"the run was scored with scorer version {version}; this install's is "
                           f"{suite.scorer_version}: its stored scores stand, vouched for by the "
                           "digest chain only (not re-derived)")  # fmt: skip
        return check
    try:
        scored = _rescore_lines(suite, Path(run_dir), seed, data_dir, options, lines, answers)
    except UserError as exc:  # the run's data, tasks or instances are not at hand
        check.notes.append(f"scores not re-derived ({exc}): the stored scores stand, vouched "
                           "for by the digest chain only")  # fmt: skip
        return check
    if scored is None:
        check.notes.append(f"{suite.name} cannot re-derive this run's scores here: its stored "
                           "scores stand, vouched for by the digest chain only")  # fmt: skip
        return check
    check.scores_rederived, problems = scored
    check.problems += problems
    return check


def _rescore_lines(suite: Any, run_dir: Path, seed: int, data_dir: Path | None, options: Any,
                   lines: list[tuple[int, dict[str, Any]]],
                   answers: dict[int, Any]) -> tuple[int, list[str]] | None:  # fmt: skip
    """Re-derive the score of every line from its answer (see :func:`recheck_run`): how many
    were, and the disagreements; ``None`` when the suite cannot re-score the run here."""
    problems: list[str] = []
    count = 0
    with suite.rescorer(run_dir, seed, data_dir, options) as rescore:
        if rescore is None:
            return None
        for number, episode in lines:
            if is_infra_error(episode):
                continue
            try:
                rescored = rescore(episode, answers[number])
            except Exception:  # noqa: BLE001 - as the run records an answer its scorer failed on
                rescored = None
            count += 1
            if rescored != episode.get("score"):
                name = episode.get("episode_id") or episode.get("task_id")
                problems.append(f"{EPISODES} line {number} ({name!s:.80}): its stored score "
                                f"disagrees with its answer's ("
                                f"{_first_difference(episode.get('score'), rescored)})")  # fmt: skip
    return count, problems
